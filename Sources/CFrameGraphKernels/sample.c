// Rotated-grid bilinear sampling of an rgb24 image into a model's float input (face regions,
// letterboxes). Plain C: the compiler keeps the per-pixel arithmetic in registers.
#include "fg_kernels.h"

void fg_sample_grid_rgb24(const unsigned char *image, size_t stride, int width, int height,
                          float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                          int size, float scale, float offset, int black_outside, float *out) {
    const float maxx = (float)(width - 1), maxy = (float)(height - 1);
    for (int row = 0; row < size; row++) {
        float fx = x0 + dxr * (float)row, fy = y0 + dyr * (float)row;
        float *o = out + (size_t)row * (size_t)size * 3;
        for (int col = 0; col < size; col++, fx += dxc, fy += dyc, o += 3) {
            if (black_outside && (fx < -0.5f || fy < -0.5f || fx >= (float)width - 0.5f || fy >= (float)height - 0.5f)) {
                o[0] = o[1] = o[2] = offset;
                continue;
            }
            float px = fx < 0 ? 0 : (fx > maxx ? maxx : fx);
            float py = fy < 0 ? 0 : (fy > maxy ? maxy : fy);
            int ix = (int)px, iy = (int)py;
            float tx = px - (float)ix, ty = py - (float)iy;
            int jx = ix + 1 < width ? ix + 1 : width - 1, jy = iy + 1 < height ? iy + 1 : height - 1;
            const unsigned char *a = image + (size_t)iy * stride + (size_t)ix * 3, *b = image + (size_t)iy * stride + (size_t)jx * 3;
            const unsigned char *c = image + (size_t)jy * stride + (size_t)ix * 3, *d = image + (size_t)jy * stride + (size_t)jx * 3;
            for (int k = 0; k < 3; k++) {
                float top = (float)a[k] + ((float)b[k] - (float)a[k]) * tx;
                float bottom = (float)c[k] + ((float)d[k] - (float)c[k]) * tx;
                o[k] = (top + (bottom - top) * ty) * scale + offset;
            }
        }
    }
}
