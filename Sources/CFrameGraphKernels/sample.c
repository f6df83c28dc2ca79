// Rotated-grid bilinear sampling of an rgb24 image into a model's float input (face regions,
// letterboxes), reproducing OpenCV's warpPerspective/warpAffine with INTER_LINEAR on 8-bit images,
// which MediaPipe's ImageToTensor uses: the sample position is rounded to 1/32 of a pixel, the four
// weights are exact multiples of 1/1024 (fixed point, 15 bits), and the result is rounded to an
// 8-bit value before it is normalised.
//
// Two builds of the same arithmetic: a scalar one, and an AVX2 one (chosen at run time) that does
// eight output pixels at a time where all their neighbours are inside the image, and falls back to
// the scalar pixel where any is not. Both give bit-identical output (fg_sample_grid_rgb24_with tests it).
#include <math.h>
#include <stdint.h>
// value × scale + offset is rounded twice in every build: a fused multiply-add in the AVX2 build
// (where the scalar pixel is inlined too) would change the last bit.
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

/// One output pixel at position (qx, qy) in 1/32 pixel, every border rule included.
static inline __attribute__((always_inline)) void sample_pixel(const unsigned char *restrict image, size_t stride, int width, int height,
                                long qx, long qy, float scale, float offset, int black_outside, float *restrict o) {
    long ix = qx >> 5, iy = qy >> 5;              // floor
    int tx = (int)(qx & 31), ty = (int)(qy & 31);
    // Weights ×32768 (exact: (32 − tx)(32 − ty) … in 1/1024 units, times 32).
    const int w00 = (32 - tx) * (32 - ty) * 32, w10 = tx * (32 - ty) * 32, w01 = (32 - tx) * ty * 32, w11 = tx * ty * 32;
    if (ix >= 0 && iy >= 0 && ix + 1 < width && iy + 1 < height) {
        // All four neighbours inside: the common case, without the border rules.
        const unsigned char *a = image + (size_t)iy * stride + (size_t)ix * 3, *c = a + stride;
        for (int k = 0; k < 3; k++) {
            int sum = a[k] * w00 + a[k + 3] * w10 + c[k] * w01 + c[k + 3] * w11;
            int value = (sum + (1 << 14)) >> 15;
            o[k] = (float)(value > 255 ? 255 : value) * scale + offset;
        }
        return;
    }
    int inside00 = ix >= 0 && ix < width && iy >= 0 && iy < height;
    int inside11 = ix + 1 >= 0 && ix + 1 < width && iy + 1 >= 0 && iy + 1 < height;
    if (black_outside && !inside00 && !inside11 && (ix + 1 < 0 || ix >= width || iy + 1 < 0 || iy >= height)) {
        o[0] = o[1] = o[2] = offset;
        return;
    }
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

/// A row's sample positions in 1/32 pixel. They are stepped in 2^-30 fixed point: the rounding can
/// differ from OpenCV's double arithmetic only for a position within 2^-30 of a half step, which
/// real images never show.
static inline void row_start(float x0, float y0, float dxc, float dyc, float dxr, float dyr, int row,
                             long long *ax, long long *ay, long long *sx, long long *sy) {
    const double unit = 32.0 * 1073741824.0;
    *ax = llround(((double)x0 + (double)dxr * row) * unit);
    *ay = llround(((double)y0 + (double)dyr * row) * unit);
    *sx = llround((double)dxc * unit);
    *sy = llround((double)dyc * unit);
}

static void sample_scalar(const unsigned char *restrict image, size_t stride, int width, int height,
                          float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                          int size, float scale, float offset, int black_outside, float *restrict out) {
    for (int row = 0; row < size; row++) {
        float *restrict o = out + (size_t)row * (size_t)size * 3;
        long long ax, ay, sx, sy;
        row_start(x0, y0, dxc, dyc, dxr, dyr, row, &ax, &ay, &sx, &sy);
        for (int col = 0; col < size; col++, o += 3, ax += sx, ay += sy) {
            sample_pixel(image, stride, width, height, (long)((ax + (1LL << 29)) >> 30), (long)((ay + (1LL << 29)) >> 30),
                         scale, offset, black_outside, o);
        }
    }
}

#if FG_HAVE_AVX2_BUILD
/// Channel k of the four neighbours, bilinear in 32-bit lanes: (Σ v·W + 512) >> 10 with W the
/// weights in 1/1024 (the scalar's (Σ v·32W + 2^14) >> 15, exactly).
static FG_AVX2 inline __m256i channel_avx2(__m256i g0, __m256i g1, __m256i g2, __m256i g3, int k,
                                           __m256i wTop, __m256i wBottom) {
    const __m256i byte = _mm256_set1_epi32(255);
    const __m128i shiftLeft = _mm_cvtsi32_si128(8 * k), shiftRight = _mm_cvtsi32_si128(8 * (k + 1));
    __m256i v00 = _mm256_and_si256(_mm256_srl_epi32(g0, shiftLeft), byte);
    __m256i v10 = _mm256_and_si256(_mm256_srl_epi32(g1, shiftRight), byte);
    __m256i v01 = _mm256_and_si256(_mm256_srl_epi32(g2, shiftLeft), byte);
    __m256i v11 = _mm256_and_si256(_mm256_srl_epi32(g3, shiftRight), byte);
    __m256i top = _mm256_or_si256(v00, _mm256_slli_epi32(v10, 16));      // (v00, v10) as 16-bit pairs
    __m256i bottom = _mm256_or_si256(v01, _mm256_slli_epi32(v11, 16));
    __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(top, wTop), _mm256_madd_epi16(bottom, wBottom));
    return _mm256_min_epi32(_mm256_srai_epi32(_mm256_add_epi32(sum, _mm256_set1_epi32(512)), 10), byte);
}

/// Channel k of four neighbours each gathered at its own pixel (byte k of each lane).
static FG_AVX2 inline __m256i channel4_avx2(__m256i g00, __m256i g10, __m256i g01, __m256i g11, int k, __m256i wTop, __m256i wBottom) {
    const __m256i byte = _mm256_set1_epi32(255);
    const __m128i shift = _mm_cvtsi32_si128(8 * k);
    __m256i v00 = _mm256_and_si256(_mm256_srl_epi32(g00, shift), byte);
    __m256i v10 = _mm256_and_si256(_mm256_srl_epi32(g10, shift), byte);
    __m256i v01 = _mm256_and_si256(_mm256_srl_epi32(g01, shift), byte);
    __m256i v11 = _mm256_and_si256(_mm256_srl_epi32(g11, shift), byte);
    __m256i top = _mm256_or_si256(v00, _mm256_slli_epi32(v10, 16));
    __m256i bottom = _mm256_or_si256(v01, _mm256_slli_epi32(v11, 16));
    __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(top, wTop), _mm256_madd_epi16(bottom, wBottom));
    return _mm256_min_epi32(_mm256_srai_epi32(_mm256_add_epi32(sum, _mm256_set1_epi32(512)), 10), byte);
}

/// The four bytes at each lane's pixel offset; a pixel whose three bytes end the image (the last
/// pixel of a tightly packed last row) is read one byte earlier and shifted back, so no byte past
/// the image is touched.
static FG_AVX2 inline __m256i gather_pixel(const unsigned char *image, __m256i offset, __m256i last) {
    __m256i early = _mm256_and_si256(_mm256_cmpeq_epi32(offset, last), _mm256_set1_epi32(1));
    __m256i g = _mm256_i32gather_epi32((const int *)image, _mm256_sub_epi32(offset, early), 1);
    return _mm256_srlv_epi32(g, _mm256_slli_epi32(early, 3));
}

/// The bilinear weights (in 1/1024) of four neighbours as 16-bit pairs for madd: (w00, w10) and (w01, w11).
static FG_AVX2 inline void weights_avx2(__m256i tx, __m256i ty, __m256i *top, __m256i *bottom) {
    const __m256i thirtyTwo = _mm256_set1_epi32(32);
    __m256i ux = _mm256_sub_epi32(thirtyTwo, tx), uy = _mm256_sub_epi32(thirtyTwo, ty);
    *top = _mm256_or_si256(_mm256_mullo_epi32(ux, uy), _mm256_slli_epi32(_mm256_mullo_epi32(tx, uy), 16));
    *bottom = _mm256_or_si256(_mm256_mullo_epi32(ux, ty), _mm256_slli_epi32(_mm256_mullo_epi32(tx, ty), 16));
}

/// Eight pixels' 8-bit R, G, B normalised (value × scale + offset, rounded twice as the scalar build
/// does: no fused multiply-add) and stored interleaved at `chunk`.
static FG_AVX2 inline void store_rgb_avx2(float *restrict chunk, __m256i r8, __m256i g8, __m256i b8, __m256 scale, __m256 offset) {
    float r[8], g[8], b[8];
    _mm256_storeu_ps(r, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(r8), scale), offset));
    _mm256_storeu_ps(g, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(g8), scale), offset));
    _mm256_storeu_ps(b, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(b8), scale), offset));
    for (int j = 0; j < 8; j++) {
        chunk[3 * j] = r[j];
        chunk[3 * j + 1] = g[j];
        chunk[3 * j + 2] = b[j];
    }
}

static FG_AVX2 void sample_avx2(const unsigned char *restrict image, size_t stride, int width, int height,
                                float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                                int size, float scale, float offset, int black_outside, float *restrict out) {
    int32_t qxs[8], qys[8];
    const __m256i zero = _mm256_setzero_si256(), w = _mm256_set1_epi32(width - 1), h = _mm256_set1_epi32(height - 1);
    const __m256i three = _mm256_set1_epi32(3), strideV = _mm256_set1_epi32((int)stride), low5 = _mm256_set1_epi32(31);
    const __m256i one = _mm256_set1_epi32(1);
    // The last pixel's offset, and whether clamped reads are possible (at least 4 bytes of image).
    const __m256i lastPixel = _mm256_set1_epi32((int)((size_t)(height - 1) * stride + (size_t)(width - 1) * 3));
    const int clampable = width >= 1 && height >= 1 && (size_t)(height - 1) * stride + (size_t)width * 3 >= 4;
    const __m256 scaleV = _mm256_set1_ps(scale), offsetV = _mm256_set1_ps(offset);
    for (int row = 0; row < size; row++) {
        float *restrict o = out + (size_t)row * (size_t)size * 3;
        long long ax, ay, sx, sy;
        row_start(x0, y0, dxc, dyc, dxr, dyr, row, &ax, &ay, &sx, &sy);
        // The whole row's positions stay within ±2^30 (they are linear: its ends bound them), so
        // the low 32 bits of a position are the position.
        const long long last = (long long)size - 1;
        const long long qx0 = (ax + (1LL << 29)) >> 30, qy0 = (ay + (1LL << 29)) >> 30;
        const long long qx1 = (ax + sx * last + (1LL << 29)) >> 30, qy1 = (ay + sy * last + (1LL << 29)) >> 30;
        const long long limit = 1LL << 30;
        const int small = qx0 > -limit && qx0 < limit && qy0 > -limit && qy0 < limit &&
                          qx1 > -limit && qx1 < limit && qy1 > -limit && qy1 < limit;
        // Eight positions in 2^-35 pixel as 64-bit lanes (columns 0–3 and 4–7 of the chunk).
        const __m256i step4x = _mm256_set1_epi64x(4 * sx), step4y = _mm256_set1_epi64x(4 * sy);
        const __m256i step8x = _mm256_set1_epi64x(8 * sx), step8y = _mm256_set1_epi64x(8 * sy);
        const __m256i half = _mm256_set1_epi64x(1LL << 29);
        __m256i pxLow = _mm256_add_epi64(_mm256_set_epi64x(ax + 3 * sx, ax + 2 * sx, ax + sx, ax), half);
        __m256i pyLow = _mm256_add_epi64(_mm256_set_epi64x(ay + 3 * sy, ay + 2 * sy, ay + sy, ay), half);
        int col = 0;
        for (; small && col + 8 <= size; col += 8) {
            __m256i pxHigh = _mm256_add_epi64(pxLow, step4x), pyHigh = _mm256_add_epi64(pyLow, step4y);
            // (p + 2^29) >> 30: a logical shift has the arithmetic one's low 34 bits.
            __m256i qxPairs = _mm256_blend_epi32(_mm256_srli_epi64(pxLow, 30), _mm256_slli_epi64(_mm256_srli_epi64(pxHigh, 30), 32), 0xAA);
            __m256i qyPairs = _mm256_blend_epi32(_mm256_srli_epi64(pyLow, 30), _mm256_slli_epi64(_mm256_srli_epi64(pyHigh, 30), 32), 0xAA);
            // Lanes are now (c0, c4, c1, c5, …): put them in column order.
            const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
            __m256i qx = _mm256_permutevar8x32_epi32(qxPairs, order), qy = _mm256_permutevar8x32_epi32(qyPairs, order);
            pxLow = _mm256_add_epi64(pxLow, step8x);
            pyLow = _mm256_add_epi64(pyLow, step8y);
            float *restrict chunk = o + (size_t)col * 3;
            __m256i ix = _mm256_srai_epi32(qx, 5), iy = _mm256_srai_epi32(qy, 5);
            // Inside: 0 ≤ ix < width − 1 and 0 ≤ iy < height − 1, for all eight.
            __m256i outside = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(zero, ix), _mm256_cmpgt_epi32(zero, iy)),
                                              _mm256_or_si256(_mm256_cmpgt_epi32(ix, _mm256_sub_epi32(w, _mm256_set1_epi32(1))),
                                                              _mm256_cmpgt_epi32(iy, _mm256_sub_epi32(h, _mm256_set1_epi32(1)))));
            __m256i tx = _mm256_and_si256(qx, low5), ty = _mm256_and_si256(qy, low5);
            __m256i wTop, wBottom;
            weights_avx2(tx, ty, &wTop, &wBottom);
            if (!_mm256_testz_si256(outside, outside)) {
                if (black_outside || !clampable) {
                    _mm256_storeu_si256((__m256i *)qxs, qx);
                    _mm256_storeu_si256((__m256i *)qys, qy);
                    for (int j = 0; j < 8; j++)
                        sample_pixel(image, stride, width, height, qxs[j], qys[j], scale, offset, black_outside, chunk + 3 * j);
                    continue;
                }
                // The replicated border (OpenCV's BORDER_REPLICATE): each neighbour's column and
                // row clamped to the image on its own, the weights unchanged.
                __m256i x0 = _mm256_max_epi32(zero, _mm256_min_epi32(ix, w)), x1 = _mm256_max_epi32(zero, _mm256_min_epi32(_mm256_add_epi32(ix, one), w));
                __m256i y0 = _mm256_max_epi32(zero, _mm256_min_epi32(iy, h)), y1 = _mm256_max_epi32(zero, _mm256_min_epi32(_mm256_add_epi32(iy, one), h));
                __m256i r0 = _mm256_mullo_epi32(y0, strideV), r1 = _mm256_mullo_epi32(y1, strideV);
                __m256i c0 = _mm256_mullo_epi32(x0, three), c1 = _mm256_mullo_epi32(x1, three);
                __m256i g00 = gather_pixel(image, _mm256_add_epi32(r0, c0), lastPixel), g10 = gather_pixel(image, _mm256_add_epi32(r0, c1), lastPixel);
                __m256i g01 = gather_pixel(image, _mm256_add_epi32(r1, c0), lastPixel), g11 = gather_pixel(image, _mm256_add_epi32(r1, c1), lastPixel);
                store_rgb_avx2(chunk, channel4_avx2(g00, g10, g01, g11, 0, wTop, wBottom), channel4_avx2(g00, g10, g01, g11, 1, wTop, wBottom),
                               channel4_avx2(g00, g10, g01, g11, 2, wTop, wBottom), scaleV, offsetV);
                continue;
            }
            // Byte offsets of the top-left neighbour; the image is smaller than 2^31 bytes (checked).
            __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(iy, strideV), _mm256_mullo_epi32(ix, three));
            __m256i below = _mm256_add_epi32(at, strideV);
            const int *base = (const int *)image, *base2 = (const int *)(image + 2);
            // Four bytes at the neighbour (its R, G, B and the right neighbour's R) and four bytes two
            // further (the right neighbour's R, G, B as bytes 1–3): never past the right neighbour's B.
            __m256i g0 = _mm256_i32gather_epi32(base, at, 1), g1 = _mm256_i32gather_epi32(base2, at, 1);
            __m256i g2 = _mm256_i32gather_epi32(base, below, 1), g3 = _mm256_i32gather_epi32(base2, below, 1);
            store_rgb_avx2(chunk, channel_avx2(g0, g1, g2, g3, 0, wTop, wBottom), channel_avx2(g0, g1, g2, g3, 1, wTop, wBottom),
                           channel_avx2(g0, g1, g2, g3, 2, wTop, wBottom), scaleV, offsetV);
        }
        ax += sx * col;
        ay += sy * col;
        for (; col < size; col++, ax += sx, ay += sy) {
            sample_pixel(image, stride, width, height, (long)((ax + (1LL << 29)) >> 30), (long)((ay + (1LL << 29)) >> 30),
                         scale, offset, black_outside, o + (size_t)col * 3);
        }
    }
}
#endif

void fg_sample_grid_rgb24_with(const unsigned char *restrict image, size_t stride, int width, int height,
                               float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                               int size, float scale, float offset, int black_outside, int allow_simd, float *restrict out) {
#if FG_HAVE_AVX2_BUILD
    // The vector path addresses the image with 32-bit offsets.
    if (allow_simd && fg_has_avx2() && height > 0 && stride * (size_t)height < ((size_t)1 << 31) - 8) {
        sample_avx2(image, stride, width, height, x0, y0, dxc, dyc, dxr, dyr, size, scale, offset, black_outside, out);
        return;
    }
#endif
    (void)allow_simd;
    sample_scalar(image, stride, width, height, x0, y0, dxc, dyc, dxr, dyr, size, scale, offset, black_outside, out);
}

void fg_sample_grid_rgb24(const unsigned char *restrict image, size_t stride, int width, int height,
                          float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                          int size, float scale, float offset, int black_outside, float *restrict out) {
    fg_sample_grid_rgb24_with(image, stride, width, height, x0, y0, dxc, dyc, dxr, dyr, size, scale, offset, black_outside, 1, out);
}
