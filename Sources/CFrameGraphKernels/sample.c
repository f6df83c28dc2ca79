// Rotated-grid bilinear sampling of an rgb24 image into a model's float input (face regions,
// letterboxes), reproducing OpenCV's warpPerspective/warpAffine with INTER_LINEAR on 8-bit images,
// which MediaPipe's ImageToTensor uses: the sample position is rounded to 1/32 of a pixel, the four
// weights are exact multiples of 1/1024 (fixed point, 15 bits), and the result is rounded to an
// 8-bit value before it is normalised.
#include <math.h>
#include "fg_kernels.h"

void fg_sample_grid_rgb24(const unsigned char *restrict image, size_t stride, int width, int height,
                          float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                          int size, float scale, float offset, int black_outside, float *restrict out) {
    for (int row = 0; row < size; row++) {
        float *restrict o = out + (size_t)row * (size_t)size * 3;
        // Positions in 1/32 pixel, rounded (as OpenCV's INTER_TAB_SIZE). Along a row they are
        // stepped in 2^-30 fixed point: the rounding can differ from OpenCV's double arithmetic only
        // for a position within 2^-30 of a half step, which real images never show.
        const double unit = 32.0 * 1073741824.0;
        long long ax = llround(((double)x0 + (double)dxr * row) * unit), ay = llround(((double)y0 + (double)dyr * row) * unit);
        const long long sx = llround((double)dxc * unit), sy = llround((double)dyc * unit);
        for (int col = 0; col < size; col++, o += 3, ax += sx, ay += sy) {
            long qx = (long)((ax + (1LL << 29)) >> 30), qy = (long)((ay + (1LL << 29)) >> 30);
            long ix = qx >> 5, iy = qy >> 5;              // floor
            int tx = (int)(qx & 31), ty = (int)(qy & 31);
            if (ix >= 0 && iy >= 0 && ix + 1 < width && iy + 1 < height) {
                // All four neighbours inside: the common case, without the border rules.
                const int w00 = (32 - tx) * (32 - ty) * 32, w10 = tx * (32 - ty) * 32, w01 = (32 - tx) * ty * 32, w11 = tx * ty * 32;
                const unsigned char *a = image + (size_t)iy * stride + (size_t)ix * 3, *c = a + stride;
                for (int k = 0; k < 3; k++) {
                    int sum = a[k] * w00 + a[k + 3] * w10 + c[k] * w01 + c[k + 3] * w11;
                    int value = (sum + (1 << 14)) >> 15;
                    o[k] = (float)(value > 255 ? 255 : value) * scale + offset;
                }
                continue;
            }
            int inside00 = ix >= 0 && ix < width && iy >= 0 && iy < height;
            int inside11 = ix + 1 >= 0 && ix + 1 < width && iy + 1 >= 0 && iy + 1 < height;
            if (black_outside && !inside00 && !inside11 && (ix + 1 < 0 || ix >= width || iy + 1 < 0 || iy >= height)) {
                o[0] = o[1] = o[2] = offset;
                continue;
            }
            // Weights ×32768 (exact: (32 − tx)(32 − ty) … in 1/1024 units, times 32).
            int w00 = (32 - tx) * (32 - ty) * 32, w10 = tx * (32 - ty) * 32, w01 = (32 - tx) * ty * 32, w11 = tx * ty * 32;
            long xs[2] = {ix, ix + 1}, ys[2] = {iy, iy + 1};
            const unsigned char *p[2][2];
            int zero[2][2];
            for (int a = 0; a < 2; a++) {
                for (int b = 0; b < 2; b++) {
                    long x = xs[b], y = ys[a];
                    int outside = x < 0 || x >= width || y < 0 || y >= height;
                    if (outside && !black_outside) {               // replicate the edge
                        x = x < 0 ? 0 : (x >= width ? width - 1 : x);
                        y = y < 0 ? 0 : (y >= height ? height - 1 : y);
                        outside = 0;
                    }
                    zero[a][b] = outside;
                    p[a][b] = outside ? image : image + (size_t)y * stride + (size_t)x * 3;
                }
            }
            for (int k = 0; k < 3; k++) {
                int v00 = zero[0][0] ? 0 : p[0][0][k], v10 = zero[0][1] ? 0 : p[0][1][k];
                int v01 = zero[1][0] ? 0 : p[1][0][k], v11 = zero[1][1] ? 0 : p[1][1][k];
                int sum = v00 * w00 + v10 * w10 + v01 * w01 + v11 * w11;
                int value = (sum + (1 << 14)) >> 15;
                if (value > 255) value = 255;
                o[k] = (float)value * scale + offset;
            }
        }
    }
}
