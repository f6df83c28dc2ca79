// Dense convolutions in bfloat16 products (a network's `precision=bf16`): float input and output,
// weights rounded once to bfloat16 (8 significant bits, float32's range), each block of rows rounded
// to bfloat16 as it runs, the products added in float32 by AVX-512 BF16 (vdpbf16ps: two bfloat16
// products added to each float sum per instruction, twice the multiply-adds of a float FMA). See
// fg_kernels.h.
//
// Unlike int8 there is no range to measure: every value keeps its own exponent, so a channel of
// large values costs the small ones nothing, and the error is float rounding at 8 significant bits
// (each factor within 2⁻⁸, 0.4 %, of itself) instead of a step of 1/255 of a block's range.
//
// Windowed convolutions copy each block's windows first (fg_conv_gather) and go on as 1×1 ones with
// those as their rows. The scalar build is the definition of the arithmetic: each output channel's
// sum starts at 0, takes the products of the pairs of inputs 2g + 1 then 2g (each exact in float32)
// one rounded addition at a time, as the instruction's definition does, then the bias and the
// epilogue of the float kernels (bias, clamps, residual, PReLU or hard-swish). How a processor
// rounds inside vdpbf16ps is its own, so the two builds agree to float rounding, not bit for bit
// (the tests allow 1e-5 of the sums' size).
#include "epilogue.h"
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/// A panel's channels; a tile's rows; the rows rounded to bfloat16 together (a block).
enum { BPANEL = 16, BROWS = 12, FG_BCONV_BLOCK = 12 };

size_t fg_bconv_row_count(int k) { return k > 0 ? ((size_t)k + 1) / 2 * 2 : 0; }

size_t fg_bconv_channels(int n) { return n > 0 ? ((size_t)n + BPANEL - 1) / BPANEL * BPANEL : 0; }

size_t fg_bconv_packed_count(int k, int n) { return fg_bconv_channels(n) * fg_bconv_row_count(k); }

size_t fg_bconv_scratch_count(int k) { return (FG_BCONV_BLOCK + BROWS) * fg_bconv_row_count(k) + 32; }

size_t fg_bconv_window_floats(int k) { return k > 0 ? FG_BCONV_BLOCK * (size_t)k + 16 : 0; }

uint16_t fg_bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);   // NaN stays a (quiet) NaN
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);            // zero and denormals: signed zero
    u += 0x7fffu + ((u >> 16) & 1u);                                                 // to nearest, ties to even
    return (uint16_t)(u >> 16);
}

static inline float bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void fg_bconv_pack(const float *weights, const float *bias, int k, int n, uint16_t *packed, float *biases) {
    if (k <= 0 || n <= 0) return;
    size_t k2 = fg_bconv_row_count(k), channels = fg_bconv_channels(n);
    memset(packed, 0, channels * k2 * sizeof(uint16_t));
    for (size_t c = 0; c < channels; c++) {
        biases[c] = c < (size_t)n && bias ? bias[c] : 0.0f;
        if (c >= (size_t)n) continue;
        const float *w = weights + c * (size_t)k;
        size_t p = c / BPANEL, j = c % BPANEL;
        // Panel p, pair of inputs i/2: 16 channels × 2 values.
        for (int i = 0; i < k; i++) packed[(p * (k2 / 2) + (size_t)i / 2) * 32 + j * 2 + (size_t)i % 2] = fg_bf16_round(w[i]);
    }
}

static void round_rows_scalar(const float *input, size_t k, size_t count, uint16_t *dst, size_t k2) {
    for (size_t r = 0; r < count; r++, dst += k2) {
        for (size_t i = 0; i < k; i++) dst[i] = fg_bf16_round(input[r * k + i]);
        for (size_t i = k; i < k2; i++) dst[i] = 0;
    }
}

/// A float sum as the instruction keeps it: denormal results flushed to zero.
static inline float flushed(float v) { return fabsf(v) < 1.17549435e-38f ? copysignf(0.0f, v) : v; }

static void block_scalar(const uint16_t *a, size_t k2, const uint16_t *packed, const float *biases, int n, float *out,
                         const fg_conv_epilogue *e, size_t first, size_t end, size_t first_panel, size_t end_panel) {
    for (size_t r = first; r < end; r++, a += k2) {
        for (size_t p = first_panel; p < end_panel; p++) {
            const uint16_t *panel = packed + p * k2 * BPANEL;
            for (size_t j = 0; j < BPANEL; j++) {
                size_t c = p * BPANEL + j;
                if (c >= (size_t)n) break;
                float acc = 0.0f;
                for (size_t g = 0; g < k2 / 2; g++) {
                    acc = flushed(acc + bf16_value(a[2 * g + 1]) * bf16_value(panel[g * 32 + j * 2 + 1]));
                    acc = flushed(acc + bf16_value(a[2 * g]) * bf16_value(panel[g * 32 + j * 2]));
                }
                out[r * (size_t)n + c] = fg_finish(acc + biases[c], r, c, e);
            }
        }
    }
}

#if FG_HAVE_AVX2_BUILD
#define FG_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

static int has_bf16(void) {
    static int cached = -1;
    if (cached < 0) cached = fg_has_avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
    return cached;
}

FG_BF16 static void round_rows_bf16(const float *input, size_t k, size_t count, uint16_t *dst, size_t k2) {
    if (k == k2) {
        // Rows as long in both: one run of count · k values, whole vectors but the last.
        size_t total = count * k;
        for (size_t i = 0; i < total; i += 16) {
            __mmask16 m = fg_lanes16((long)(total - i));
            __m256bh b = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, input + i));
            _mm256_mask_storeu_epi16(dst + i, m, (__m256i)b);
        }
        return;
    }
    for (size_t r = 0; r < count; r++, dst += k2) {
        const float *x = input + r * k;
        for (size_t i = 0; i < k; i += 16) {
            __mmask16 m = fg_lanes16((long)(k - i));
            __m256bh b = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i));
            _mm256_mask_storeu_epi16(dst + i, m, (__m256i)b);
        }
        for (size_t i = k; i < k2; i++) dst[i] = 0;
    }
}

/// MR rows (a constant; `live` of them stored) × the 16 channels of a panel, from bfloat16 rows `a`.
FG_BF16 __attribute__((always_inline)) static inline void btile(const int flags, const int mr, size_t live, const uint16_t *a, size_t k2,
                                                                 const uint16_t *panel, __m512 bias, size_t row, size_t c, int n,
                                                                 float *out, const fg_conv_epilogue *e) {
    __m512 acc[BROWS];
    for (int r = 0; r < mr; r++) acc[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < k2 / 2; g++) {
        __m512bh w = (__m512bh)_mm512_loadu_si512(panel + g * 32);
        for (int r = 0; r < mr; r++) {
            int32_t two;
            memcpy(&two, a + (size_t)r * k2 + 2 * g, 4);
            // The row's pair is the instruction's last operand, so that it is read as an embedded
            // broadcast ({1to16}) instead of a separate vbroadcastss: on Zen 4 the separate
            // broadcast of a 512-bit register takes issue slots beside the products, and the
            // products ran at two thirds of the core's peak (a 14×14 layer of 112 → 672 channels
            // 0.187 → 0.140 ms). The products are the same either way round (each exact in float32).
            acc[r] = _mm512_dpbf16_ps(acc[r], w, (__m512bh)_mm512_set1_epi32(two));
        }
    }
    __m512 min1_ = _mm512_set1_ps(e->min1), max1_ = _mm512_set1_ps(e->max1);
    __m512 min2_ = _mm512_set1_ps(e->min2), max2_ = _mm512_set1_ps(e->max2);
    long left = (long)n - (long)c;
    __m512 slope = _mm512_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) slope = _mm512_maskz_loadu_ps(fg_lanes16(left), e->prelu_slopes + c);
    for (int r = 0; r < mr; r++) {
        if ((size_t)r >= live) break;
        float *o = out + (row + (size_t)r) * (size_t)n + c;
        __m512 v = fg_finish16(flags, _mm512_add_ps(acc[r], bias), row + (size_t)r, c, slope, e, min1_, max1_, min2_, max2_);
        if (left >= 16) _mm512_storeu_ps(o, v);
        else _mm512_mask_storeu_ps(o, fg_lanes16(left), v);
    }
}

FG_BF16 __attribute__((always_inline)) static inline void block_bf16_with(const int flags, const uint16_t *a, size_t k2,
                                                                           const uint16_t *packed, const float *biases, int n, float *out,
                                                                           const fg_conv_epilogue *e, size_t first, size_t end,
                                                                           size_t first_panel, size_t end_panel) {
    for (size_t row = first; row < end; row += BROWS, a += BROWS * k2) {
        size_t live = end - row < BROWS ? end - row : BROWS;
        for (size_t p = first_panel; p < end_panel; p++) {
            size_t c = p * BPANEL;
            __m512 bias = _mm512_loadu_ps(biases + c);
            const uint16_t *panel = packed + p * k2 * BPANEL;
            // Rows past `end` in the last tile read the zeroed scratch after the block and are not stored.
            if (live > 6) btile(flags, BROWS, live, a, k2, panel, bias, row, c, n, out, e);
            else btile(flags, 6, live, a, k2, panel, bias, row, c, n, out, e);
        }
    }
}

FG_BF16 static void block_bf16(const int flags, const uint16_t *a, size_t k2, const uint16_t *packed, const float *biases, int n,
                               float *out, const fg_conv_epilogue *e, size_t first, size_t end, size_t first_panel, size_t end_panel) {
#define FG_BBLOCK(F) block_bf16_with(F, a, k2, packed, biases, n, out, e, first, end, first_panel, end_panel)
    FG_EPILOGUE_DISPATCH(flags, FG_BBLOCK)
#undef FG_BBLOCK
}
#endif

int fg_bconv_has_simd(void) {
#if FG_HAVE_AVX2_BUILD
    return has_bf16();
#else
    return 0;
#endif
}

/// Output rows row…stop−1 (at most FG_BCONV_BLOCK) from their float rows `x` (k values each, the
/// first being row's): the rows in bfloat16 in `scratch`, the products and the epilogue.
static void bconv_block(const float *x, size_t k, size_t k2, const uint16_t *packed, const float *biases, int n, float *out,
                        const fg_conv_epilogue *epilogue, uint16_t *scratch, size_t row, size_t stop, size_t first_panel,
                        size_t end_panel, int simd) {
    size_t count = stop - row;
#if FG_HAVE_AVX2_BUILD
    if (simd) {
        round_rows_bf16(x, k, count, scratch, k2);
        // A block is one tile: when it has fewer rows, the tile's rows past `stop` are zeros (read,
        // never stored).
        if (count < BROWS) memset(scratch + count * k2, 0, (BROWS - count) * k2 * sizeof(uint16_t));
        block_bf16(fg_epilogue_flags(epilogue), scratch, k2, packed, biases, n, out, epilogue, row, stop, first_panel, end_panel);
        return;
    }
#endif
    (void)simd;
    round_rows_scalar(x, k, count, scratch, k2);
    block_scalar(scratch, k2, packed, biases, n, out, epilogue, row, stop, first_panel, end_panel);
}

static int bconv_simd(int allow_simd) {
#if FG_HAVE_AVX2_BUILD
    return allow_simd && has_bf16();
#else
    (void)allow_simd;
    return 0;
#endif
}

void fg_bconv_part(const float *input, int k, const uint16_t *packed, const float *biases, int n, float *out,
                   const fg_conv_epilogue *epilogue, uint16_t *scratch, size_t first, size_t end, size_t first_panel, size_t end_panel,
                   int allow_simd) {
    size_t k2 = fg_bconv_row_count(k), panels = fg_bconv_channels(n) / BPANEL;
    if (end_panel > panels) end_panel = panels;
    if (k <= 0 || n <= 0 || first >= end || first_panel >= end_panel) return;
    int simd = bconv_simd(allow_simd);
    for (size_t row = first; row < end; row += FG_BCONV_BLOCK) {
        size_t stop = end - row < FG_BCONV_BLOCK ? end : row + FG_BCONV_BLOCK;
        bconv_block(input + row * (size_t)k, (size_t)k, k2, packed, biases, n, out, epilogue, scratch, row, stop, first_panel, end_panel,
                    simd);
    }
}

void fg_bconv_part_rounded(const uint16_t *input, int k, const uint16_t *packed, const float *biases, int n, float *out,
                           const fg_conv_epilogue *epilogue, uint16_t *scratch, size_t first, size_t end, size_t first_panel,
                           size_t end_panel, int allow_simd) {
    size_t k2 = fg_bconv_row_count(k), panels = fg_bconv_channels(n) / BPANEL;
    if (end_panel > panels) end_panel = panels;
    if (k <= 0 || k % 2 != 0 || n <= 0 || first >= end || first_panel >= end_panel) return;
    int simd = bconv_simd(allow_simd);
    for (size_t row = first; row < end; row += FG_BCONV_BLOCK) {
        size_t stop = end - row < FG_BCONV_BLOCK ? end : row + FG_BCONV_BLOCK, count = stop - row;
        const uint16_t *rows = input + row * k2;
#if FG_HAVE_AVX2_BUILD
        if (simd) {
            // A whole tile is read straight from the input; a shorter last one from scratch, with
            // zero rows after it (read, never stored).
            if (count < BROWS) {
                memcpy(scratch, rows, count * k2 * sizeof(uint16_t));
                memset(scratch + count * k2, 0, (BROWS - count) * k2 * sizeof(uint16_t));
                rows = scratch;
            }
            block_bf16(fg_epilogue_flags(epilogue), rows, k2, packed, biases, n, out, epilogue, row, stop, first_panel, end_panel);
            continue;
        }
#endif
        block_scalar(rows, k2, packed, biases, n, out, epilogue, row, stop, first_panel, end_panel);
    }
}

void fg_bconv_windows_part(const float *input, const fg_conv_geometry *g, const uint16_t *packed, const float *biases, int n, float *out,
                           const fg_conv_epilogue *epilogue, float *windows, uint16_t *scratch, size_t first, size_t end,
                           size_t first_panel, size_t end_panel, int allow_simd) {
    if (g->batch <= 0 || g->out_h <= 0 || g->out_w <= 0 || g->in_c <= 0 || g->kernel_h <= 0 || g->kernel_w <= 0) return;
    size_t rows = fg_conv_rows(g), k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    if (k > INT_MAX) return;
    size_t k2 = fg_bconv_row_count((int)k), panels = fg_bconv_channels(n) / BPANEL;
    if (end > rows) end = rows;
    if (end_panel > panels) end_panel = panels;
    if (n <= 0 || first >= end || first_panel >= end_panel) return;
    int simd = bconv_simd(allow_simd);
    for (size_t row = first; row < end; row += FG_BCONV_BLOCK) {
        size_t stop = end - row < FG_BCONV_BLOCK ? end : row + FG_BCONV_BLOCK;
        fg_conv_gather(input, g, row, stop - row, windows);
        bconv_block(windows, k, k2, packed, biases, n, out, epilogue, scratch, row, stop, first_panel, end_panel, simd);
    }
}
