// A transposed convolution whose kernel equals its stride and that has no padding (MediaPipe's
// segmentation models end with a 2×2 / 2 one to a single channel), optionally followed by a
// sigmoid: each input pixel gives its own kh × kw block of outputs, a small matrix product over the
// input channels, written straight to where the block lies. See fg_kernels.h.
//
// Why our own: XNNPACK's deconvolution is slow for few output channels; as a 1×1 convolution to
// kh·kw·O channels it is a matrix kernel that fills 4 of its 16 columns, then a depth-to-space pass
// and a sigmoid pass over the full-resolution output.
#include "epilogue.h"
#include "exp.h"
#include <stdint.h>
#include <string.h>

enum { LANES = 8, PIXELS = 8 };

size_t fg_upsample_conv_packed_count(int cin, int outputs) {
    size_t vectors = ((size_t)outputs + LANES - 1) / LANES;
    return vectors * LANES * ((size_t)cin + 1);
}

void fg_upsample_conv_pack(const float *weights, const float *bias, int o, int kh, int kw, int cin, float *packed) {
    size_t nj = (size_t)o * (size_t)kh * (size_t)kw, width = ((nj + LANES - 1) / LANES) * LANES;
    // Output j = (dy·kw + dx)·O + o of a pixel's block; row 0 the bias, row 1 + ci the weights of
    // input channel ci; filter [O][kh][kw][cin] as TFLite stores it.
    for (size_t j = 0; j < width; j++) {
        int real = j < nj;
        size_t oo = real ? j % (size_t)o : 0, cell = real ? j / (size_t)o : 0;
        size_t dy = cell / (size_t)kw, dx = cell % (size_t)kw;
        packed[j] = real && bias ? bias[oo] : 0.0f;
        for (size_t ci = 0; ci < (size_t)cin; ci++) {
            packed[(ci + 1) * width + j] = real ? weights[((oo * (size_t)kh + dy) * (size_t)kw + dx) * (size_t)cin + ci] : 0.0f;
        }
    }
}

/// Writes output j of the input pixel in column x of input row `line` (counting the rows of every
/// image of the batch in turn), for every j < nj: kh rows of kw·O floats.
static inline void store_block(const float *v, const fg_upsample_geometry *g, size_t line, size_t x, float *out) {
    size_t run = (size_t)g->kernel_w * (size_t)g->out_c, ow = (size_t)g->in_w * (size_t)g->kernel_w;
    for (size_t dy = 0; dy < (size_t)g->kernel_h; dy++) {
        float *o = out + ((line * (size_t)g->kernel_h + dy) * ow + x * (size_t)g->kernel_w) * (size_t)g->out_c;
        const float *src = v + dy * run;
        // Runs are short (2 floats for MediaPipe's layer): a loop, not a call to memcpy.
        for (size_t i = 0; i < run; i++) o[i] = src[i];
    }
}

static void rows_scalar(const float *input, const fg_upsample_geometry *g, const float *packed, float *out, size_t first, size_t end) {
    size_t nj = (size_t)g->out_c * (size_t)g->kernel_h * (size_t)g->kernel_w, width = ((nj + LANES - 1) / LANES) * LANES;
    size_t cin = (size_t)g->in_c;
    float v[64 * LANES];
    for (size_t p = first; p < end; p++) {
        const float *x = input + p * cin;
        for (size_t j = 0; j < width; j++) {
            float acc = packed[j];
            for (size_t ci = 0; ci < cin; ci++) acc = fmaf(x[ci], packed[(ci + 1) * width + j], acc);
            acc = fminf(fmaxf(acc, g->min), g->max);
            v[j] = g->sigmoid ? fg_sigmoid_scalar(acc) : acc;
        }
        store_block(v, g, p / (size_t)g->in_w, p % (size_t)g->in_w, out);
    }
}

#if FG_HAVE_AVX2_BUILD
/// PIXELS input pixels from p for one 8-output vector `vec` of their blocks.
FG_AVX2 __attribute__((always_inline)) static inline void tile(const float *input, const fg_upsample_geometry *g, const float *packed,
                                                               size_t width, size_t vec, size_t p, float *v) {
    size_t cin = (size_t)g->in_c;
    __m256 acc[PIXELS];
    __m256 bias = _mm256_loadu_ps(packed + vec * LANES);
    for (int r = 0; r < PIXELS; r++) acc[r] = bias;
    const float *w = packed + width + vec * LANES;
    const float *x = input + p * cin;
    for (size_t ci = 0; ci < cin; ci++, w += width, x++) {
        __m256 wv = _mm256_loadu_ps(w);
        for (int r = 0; r < PIXELS; r++) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(x + (size_t)r * cin), wv, acc[r]);
    }
    __m256 lo = _mm256_set1_ps(g->min), hi = _mm256_set1_ps(g->max);
    for (int r = 0; r < PIXELS; r++) {
        __m256 a = _mm256_min_ps(_mm256_max_ps(acc[r], lo), hi);
        if (g->sigmoid) a = fg_sigmoid8(a);
        _mm256_storeu_ps(v + (size_t)r * width + vec * LANES, a);
    }
}

/// Transposes the 8×8 block rows[0..7] in place (rows become columns).
FG_AVX2 static inline void transpose8(__m256 r[8]) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// MediaPipe's layer (2×2 kernel, one output channel, input channels a multiple of 8): eight
/// consecutive pixels of one input row, vectors running over the pixels (their channels transposed
/// in blocks of 8), the four outputs of each block in four accumulators, and the two output rows they
/// make stored whole. `x`: the first pixel; `out`: where its block's top-left output lies.
FG_AVX2 static void tile_2x2(const float *x, const fg_upsample_geometry *g, const float *packed, size_t width, float *out) {
    size_t cin = (size_t)g->in_c, ow = (size_t)g->in_w * 2;
    __m256 acc[4];
    for (int j = 0; j < 4; j++) acc[j] = _mm256_set1_ps(packed[j]);
    for (size_t cb = 0; cb < cin; cb += 8) {
        __m256 col[8];
        for (int r = 0; r < 8; r++) col[r] = _mm256_loadu_ps(x + (size_t)r * cin + cb);
        transpose8(col);
        for (int ci = 0; ci < 8; ci++) {
            const float *w = packed + (cb + (size_t)ci + 1) * width;
            for (int j = 0; j < 4; j++) acc[j] = _mm256_fmadd_ps(col[ci], _mm256_broadcast_ss(w + j), acc[j]);
        }
    }
    __m256 lo = _mm256_set1_ps(g->min), hi = _mm256_set1_ps(g->max);
    for (int j = 0; j < 4; j++) {
        acc[j] = _mm256_min_ps(_mm256_max_ps(acc[j], lo), hi);
        if (g->sigmoid) acc[j] = fg_sigmoid8(acc[j]);
    }
    // Output j = dy·2 + dx: row dy holds (dx 0, dx 1) of pixel 0, then of pixel 1, …
    for (int dy = 0; dy < 2; dy++) {
        __m256 a = _mm256_unpacklo_ps(acc[2 * dy], acc[2 * dy + 1]), b = _mm256_unpackhi_ps(acc[2 * dy], acc[2 * dy + 1]);
        _mm256_storeu_ps(out + (size_t)dy * ow, _mm256_permute2f128_ps(a, b, 0x20));
        _mm256_storeu_ps(out + (size_t)dy * ow + 8, _mm256_permute2f128_ps(a, b, 0x31));
    }
}

FG_AVX2 static void rows_avx2(const float *input, const fg_upsample_geometry *g, const float *packed, float *out, size_t first, size_t end) {
    size_t nj = (size_t)g->out_c * (size_t)g->kernel_h * (size_t)g->kernel_w, width = ((nj + LANES - 1) / LANES) * LANES;
    float v[PIXELS * 64 * LANES];
    // The input pixel's row and column, kept up to date without divisions.
    size_t line = first / (size_t)g->in_w, x = first % (size_t)g->in_w, p = first;
    if (g->kernel_h == 2 && g->kernel_w == 2 && g->out_c == 1 && g->in_c % 8 == 0) {
        size_t ow = (size_t)g->in_w * 2;
        while (p < end) {
            size_t row_end = p - x + (size_t)g->in_w < end ? p - x + (size_t)g->in_w : end;
            for (; p + PIXELS <= row_end; p += PIXELS, x += PIXELS) {
                tile_2x2(input + p * (size_t)g->in_c, g, packed, width, out + (line * 2 * ow + x * 2));
            }
            // What is left of the row, as the scalar build does it (the same arithmetic per output).
            rows_scalar(input, g, packed, out, p, row_end);
            x += row_end - p;
            p = row_end;
            if (x == (size_t)g->in_w) {
                x = 0;
                line++;
            }
        }
        return;
    }
    for (; p + PIXELS <= end; p += PIXELS) {
        for (size_t vec = 0; vec < width / LANES; vec++) tile(input, g, packed, width, vec, p, v);
        for (size_t r = 0; r < PIXELS; r++) {
            store_block(v + r * width, g, line, x, out);
            if (++x == (size_t)g->in_w) {
                x = 0;
                line++;
            }
        }
    }
    // The last few pixels as the scalar build does them (the same arithmetic per output).
    rows_scalar(input, g, packed, out, p, end);
}
#endif

size_t fg_upsample_conv_pixels(const fg_upsample_geometry *g) {
    return (size_t)g->batch * (size_t)g->in_h * (size_t)g->in_w;
}

void fg_upsample_conv_part(const float *input, const fg_upsample_geometry *g, const float *packed, float *out, size_t first, size_t end,
                           int allow_simd) {
    size_t nj = (size_t)g->out_c * (size_t)g->kernel_h * (size_t)g->kernel_w;
    if (g->batch <= 0 || g->in_h <= 0 || g->in_w <= 0 || g->in_c <= 0 || g->out_c <= 0 || g->kernel_h <= 0 || g->kernel_w <= 0
        || nj > (size_t)FG_UPSAMPLE_MAX_OUTPUTS) return;
    size_t pixels = fg_upsample_conv_pixels(g);
    if (end > pixels) end = pixels;
    if (first >= end) return;
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        rows_avx2(input, g, packed, out, first, end);
        return;
    }
#endif
    (void)allow_simd;
    rows_scalar(input, g, packed, out, first, end);
}
