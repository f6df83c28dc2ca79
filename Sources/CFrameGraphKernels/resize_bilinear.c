// Bilinear resize of an NHWC tensor (a network's RESIZE_BILINEAR), from per-axis tables of source
// indices and weights. See fg_kernels.h.
//
// Why our own: this XNNPACK snapshot resizes through an indirection buffer, four pointer loads per
// output pixel, and ran the selfie model's 64×64 → 128×128 × 16 resize at about 0.12 ms; the rows
// here read two source rows straight and blend sixteen or more channels per pixel in vector
// registers, each horizontal blend once for all the output rows that share its source rows.
// Contraction into fused multiply-adds is off in this file, so the AVX2 and baseline builds compute
// the same products and sums, bit for bit.
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"

/// Output rows with the same two source rows `top` and `bottom` (`rows` of them, at most
/// FG_RESIZE_GROUP, weights `wy[r]` for `bottom`, `out_row` floats apart): each horizontal blend is
/// done once for the group (a 2× enlargement has two output rows per pair of source rows).
enum { FG_RESIZE_GROUP = 4 };

#define FG_RESIZE_ROWS_BODY                                                                                        \
    for (int x = 0; x < ow; x++) {                                                                                 \
        const float *tl = top + (size_t)x0[x] * (size_t)c, *tr = top + (size_t)x1[x] * (size_t)c;                  \
        const float *bl = bottom + (size_t)x0[x] * (size_t)c, *br = bottom + (size_t)x1[x] * (size_t)c;            \
        const float w = wx[x];                                                                                     \
        float *o = out + (size_t)x * (size_t)c;                                                                    \
        for (int k = 0; k < c; k++) {                                                                              \
            const float t = tl[k] + (tr[k] - tl[k]) * w, b = bl[k] + (br[k] - bl[k]) * w;                          \
            for (int r = 0; r < rows; r++) o[(size_t)r * out_row + (size_t)k] = t + (b - t) * wy[r];               \
        }                                                                                                          \
    }

static void rows_base(const float *top, const float *bottom, const float *wy, int rows, float *out, size_t out_row, int ow, int c,
                      const int *x0, const int *x1, const float *wx) {
    FG_RESIZE_ROWS_BODY
}

#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
/// rows_base with eight channels at a time in AVX2 registers (the same operations per channel; the
/// channels past the last multiple of eight as in rows_base).
FG_AVX2 static void rows_avx2(const float *top, const float *bottom, const float *wy, int rows, float *out, size_t out_row, int ow,
                              int c, const int *x0, const int *x1, const float *wx) {
    __m256 vy[FG_RESIZE_GROUP];
    for (int r = 0; r < rows; r++) vy[r] = _mm256_set1_ps(wy[r]);
    for (int x = 0; x < ow; x++) {
        const float *tl = top + (size_t)x0[x] * (size_t)c, *tr = top + (size_t)x1[x] * (size_t)c;
        const float *bl = bottom + (size_t)x0[x] * (size_t)c, *br = bottom + (size_t)x1[x] * (size_t)c;
        const float w = wx[x];
        const __m256 vx = _mm256_set1_ps(w);
        float *o = out + (size_t)x * (size_t)c;
        int k = 0;
        for (; k + 8 <= c; k += 8) {
            __m256 l = _mm256_loadu_ps(tl + k), b = _mm256_loadu_ps(bl + k);
            __m256 t = _mm256_add_ps(l, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(tr + k), l), vx));
            __m256 u = _mm256_add_ps(b, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(br + k), b), vx));
            __m256 d = _mm256_sub_ps(u, t);
            for (int r = 0; r < rows; r++) _mm256_storeu_ps(o + (size_t)r * out_row + (size_t)k, _mm256_add_ps(t, _mm256_mul_ps(d, vy[r])));
        }
        for (; k < c; k++) {
            const float t = tl[k] + (tr[k] - tl[k]) * w, b = bl[k] + (br[k] - bl[k]) * w;
            for (int r = 0; r < rows; r++) o[(size_t)r * out_row + (size_t)k] = t + (b - t) * wy[r];
        }
    }
}
#endif

void fg_resize_bilinear(const float *input, int batch, int ih, int iw, int c, float *out, int oh, int ow, const int *y0,
                        const int *y1, const float *wy, const int *x0, const int *x1, const float *wx, int allow_simd) {
    if (batch <= 0 || ih <= 0 || iw <= 0 || c <= 0 || oh <= 0 || ow <= 0) return;
    const size_t in_row = (size_t)iw * (size_t)c, out_row = (size_t)ow * (size_t)c;
    for (int b = 0; b < batch; b++) {
        const float *image = input + (size_t)b * (size_t)ih * in_row;
        for (int y = 0, rows; y < oh; y += rows) {
            // The output rows from here on that blend the same two source rows.
            for (rows = 1; rows < FG_RESIZE_GROUP && y + rows < oh && y0[y + rows] == y0[y] && y1[y + rows] == y1[y]; rows++) {}
            const float *top = image + (size_t)y0[y] * in_row, *bottom = image + (size_t)y1[y] * in_row;
            float *o = out + ((size_t)b * (size_t)oh + (size_t)y) * out_row;
#if FG_HAVE_AVX2_BUILD
            if (allow_simd && fg_has_avx2()) {
                rows_avx2(top, bottom, wy + y, rows, o, out_row, ow, c, x0, x1, wx);
                continue;
            }
#endif
            rows_base(top, bottom, wy + y, rows, o, out_row, ow, c, x0, x1, wx);
        }
    }
}
