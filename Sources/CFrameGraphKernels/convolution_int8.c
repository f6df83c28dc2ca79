// Dense convolutions in 8-bit integers (a network's `precision=int8`): float input and output, the
// products in AVX-512 VNNI (vpdpbusd: four unsigned-byte × signed-byte products added to each 32-bit
// sum per instruction, four times the multiply-adds of a float FMA). See fg_kernels.h.
//
// Windowed convolutions copy each block's windows first (fg_conv_gather) and go on as 1×1 ones with
// those as their rows. Weights: per output channel, symmetric, w ≈ scale_c · q (q in −127…127).
// Activations: per block of FG_QCONV_BLOCK output pixels (rows 12·i … 12·i + 11 of the layer),
// asymmetric, x ≈ lo + s · u (u in 0…255), the block's own range measured as it runs, so there is
// nothing to calibrate and a dark frame keeps its resolution. Blocks of 96 rows left 3 of 295
// webcam frames with a selfie mask IoU below 0.99 against float32; blocks of 12, 6 of 1157 frames of
// ../shared's clips (lowest 0.985 on a normal-sized mask); a range per row, 2 of 1157 (0.988), but
// its per-row reductions took back most of the speed (EfficientNet-Lite0 0.80 of float32's time
// against 0.58). docs/BENCHMARKS.md has the figures.
// Then Σ x·w ≈ s · scale_c · Σ u·q + lo · Σ_k scale_c·q_k, and the float epilogue of the float
// kernels (bias, clamps, residual, PReLU or hard-swish) follows.
//
// The scalar build is the definition: for finite inputs the AVX-512 build computes the same range,
// the same bytes, the same integer sums and the same float operations in the same order, bit for bit.
#include "epilogue.h"
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/// A panel's channels; a tile's rows; the rows that share one activation range (a tile's).
enum { QPANEL = 16, QROWS = 12, FG_QCONV_BLOCK = 12 };

size_t fg_qconv_row_bytes(int k) { return k > 0 ? ((size_t)k + 3) / 4 * 4 : 0; }

size_t fg_qconv_channels(int n) { return n > 0 ? ((size_t)n + QPANEL - 1) / QPANEL * QPANEL : 0; }

size_t fg_qconv_packed_bytes(int k, int n) { return fg_qconv_channels(n) * fg_qconv_row_bytes(k); }

size_t fg_qconv_scratch_bytes(int k) { return (FG_QCONV_BLOCK + QROWS) * fg_qconv_row_bytes(k) + 64; }

size_t fg_qconv_window_floats(int k) { return k > 0 ? FG_QCONV_BLOCK * (size_t)k + 16 : 0; }

void fg_qconv_pack(const float *weights, const float *bias, int k, int n, int8_t *packed, float *scales, float *sums,
                   float *biases) {
    if (k <= 0 || n <= 0) return;
    size_t k4 = fg_qconv_row_bytes(k), channels = fg_qconv_channels(n);
    memset(packed, 0, channels * k4);
    for (size_t c = 0; c < channels; c++) {
        scales[c] = 0.0f;
        sums[c] = 0.0f;
        biases[c] = c < (size_t)n && bias ? bias[c] : 0.0f;
        if (c >= (size_t)n) continue;
        const float *w = weights + c * (size_t)k;
        float most = 0.0f;
        for (int i = 0; i < k; i++) most = fmaxf(most, fabsf(w[i]));
        // A channel of zeros (or of non-finite weights, which fmaxf skips only when they are NaN)
        // keeps scale 0: its sums stay 0 and the output is its bias.
        float scale = most > 0.0f && isfinite(most) ? most / 127.0f : 0.0f;
        scales[c] = scale;
        size_t p = c / QPANEL, j = c % QPANEL;
        for (int i = 0; i < k; i++) {
            long q = scale > 0.0f ? lrintf(w[i] / scale) : 0;
            q = q < -127 ? -127 : q > 127 ? 127 : q;
            // Panel p, group of four inputs i/4: 16 channels × 4 bytes.
            packed[(p * (k4 / 4) + (size_t)i / 4) * 64 + j * 4 + (size_t)i % 4] = (int8_t)q;
            sums[c] += (float)q * scale;
        }
    }
}

/// The quantisation step of a block whose values lie in lo…hi: 1 where they are all equal (or the
/// range is too small to divide by), so that every byte is 0 and lo stands for them all.
static inline float fg_qconv_step(float lo, float hi) {
    float step = (hi - lo) / 255.0f;
    return step >= 1e-30f ? step : 1.0f;
}

/// The range of rows first…end−1 (k floats each): lo and the step s (1 when all are equal).
static void block_range_scalar(const float *input, size_t k, size_t first, size_t end, float *lo, float *step) {
    float mn = INFINITY, mx = -INFINITY;
    for (size_t i = first * k; i < end * k; i++) {
        mn = fminf(mn, input[i]);
        mx = fmaxf(mx, input[i]);
    }
    *lo = mn;
    *step = fg_qconv_step(mn, mx);
}

static inline uint8_t quantize_one(float x, float lo, float inv) {
    long u = lrintf((x - lo) * inv);
    return (uint8_t)(u < 0 ? 0 : u > 255 ? 255 : u);
}

static void quantize_scalar(const float *input, size_t k, size_t first, size_t end, float lo, float inv, uint8_t *dst, size_t k4) {
    for (size_t r = first; r < end; r++, dst += k4) {
        for (size_t i = 0; i < k; i++) dst[i] = quantize_one(input[r * k + i], lo, inv);
        for (size_t i = k; i < k4; i++) dst[i] = 0;
    }
}

static void block_scalar(const uint8_t *a, size_t k4, const int8_t *packed, const float *scales, const float *sums, const float *biases,
                         float lo, float step, int n, float *out, const fg_conv_epilogue *e, size_t first, size_t end, size_t first_panel,
                         size_t end_panel) {
    for (size_t r = first; r < end; r++, a += k4) {
        for (size_t p = first_panel; p < end_panel; p++) {
            for (size_t j = 0; j < QPANEL; j++) {
                size_t c = p * QPANEL + j;
                if (c >= (size_t)n) break;
                int32_t acc = 0;
                for (size_t i = 0; i < k4; i++) acc += (int32_t)a[i] * (int32_t)packed[(p * (k4 / 4) + i / 4) * 64 + j * 4 + i % 4];
                float v = fmaf((float)acc, step * scales[c], fmaf(lo, sums[c], biases[c]));
                out[r * (size_t)n + c] = fg_finish(v, r, c, e);
            }
        }
    }
}

#if FG_HAVE_AVX2_BUILD
#define FG_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

static int has_vnni(void) {
    static int cached = -1;
    if (cached < 0) cached = fg_has_avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
    return cached;
}

FG_VNNI static void block_range_vnni(const float *input, size_t k, size_t first, size_t end, float *lo, float *step) {
    __m512 mn = _mm512_set1_ps(INFINITY), mx = _mm512_set1_ps(-INFINITY);
    size_t i = first * k, stop = end * k;
    for (; i + 16 <= stop; i += 16) {
        __m512 v = _mm512_loadu_ps(input + i);
        mn = _mm512_min_ps(mn, v);
        mx = _mm512_max_ps(mx, v);
    }
    float a = _mm512_reduce_min_ps(mn), b = _mm512_reduce_max_ps(mx);
    for (; i < stop; i++) {
        a = fminf(a, input[i]);
        b = fmaxf(b, input[i]);
    }
    *lo = a;
    *step = fg_qconv_step(a, b);
}

FG_VNNI static void quantize_vnni(const float *input, size_t k, size_t first, size_t end, float lo, float inv, uint8_t *dst, size_t k4) {
    const __m512 vlo = _mm512_set1_ps(lo), vinv = _mm512_set1_ps(inv);
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
    for (size_t r = first; r < end; r++, dst += k4) {
        const float *x = input + r * k;
        size_t i = 0;
        for (; i < k; i += 16) {
            __mmask16 m = fg_lanes16((long)(k - i));
            __m512i u = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vlo), vinv));
            u = _mm512_min_epi32(_mm512_max_epi32(u, zero), top);
            _mm_mask_storeu_epi8(dst + i, m, _mm512_cvtepi32_epi8(u));
        }
        for (i = k; i < k4; i++) dst[i] = 0;
    }
}

/// MR rows (a constant; `live` of them stored) × the 16 channels of panel p, from quantised rows `a`.
FG_VNNI __attribute__((always_inline)) static inline void qtile(const int flags, const int mr, size_t live, const uint8_t *a, size_t k4,
                                                                 const int8_t *panel, __m512 scale, __m512 offset, size_t row, size_t c,
                                                                 int n, float *out, const fg_conv_epilogue *e) {
    __m512i acc[QROWS];
    for (int r = 0; r < mr; r++) acc[r] = _mm512_setzero_si512();
    for (size_t g = 0; g < k4 / 4; g++) {
        __m512i w = _mm512_loadu_si512(panel + g * 64);
        for (int r = 0; r < mr; r++) {
            int32_t four;
            memcpy(&four, a + (size_t)r * k4 + 4 * g, 4);
            acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(four), w);
        }
    }
    __m512 fl[QROWS];
    for (int r = 0; r < mr; r++) fl[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r]), scale, offset);
    __m512 min1_ = _mm512_set1_ps(e->min1), max1_ = _mm512_set1_ps(e->max1);
    __m512 min2_ = _mm512_set1_ps(e->min2), max2_ = _mm512_set1_ps(e->max2);
    long left = (long)n - (long)c;
    __m512 slope = _mm512_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) slope = _mm512_maskz_loadu_ps(fg_lanes16(left), e->prelu_slopes + c);
    for (int r = 0; r < mr; r++) {
        if ((size_t)r >= live) break;
        float *o = out + (row + (size_t)r) * (size_t)n + c;
        __m512 v = fg_finish16(flags, fl[r], row + (size_t)r, c, slope, e, min1_, max1_, min2_, max2_);
        if (left >= 16) _mm512_storeu_ps(o, v);
        else _mm512_mask_storeu_ps(o, fg_lanes16(left), v);
    }
}

/// Rows first…end−1 (already quantised into `a`, k4 bytes each) for panels first_panel…end_panel−1.
FG_VNNI __attribute__((always_inline)) static inline void block_vnni_with(const int flags, const uint8_t *a, size_t k4, const int8_t *packed,
                                                                           const float *scales, const float *sums, const float *biases,
                                                                           float lo, float step, int n, float *out, const fg_conv_epilogue *e,
                                                                           size_t first, size_t end, size_t first_panel, size_t end_panel) {
    const __m512 vstep = _mm512_set1_ps(step), vlo = _mm512_set1_ps(lo);
    for (size_t row = first; row < end; row += QROWS, a += QROWS * k4) {
        size_t live = end - row < QROWS ? end - row : QROWS;
        for (size_t p = first_panel; p < end_panel; p++) {
            size_t c = p * QPANEL;
            __m512 scale = _mm512_mul_ps(vstep, _mm512_loadu_ps(scales + c));
            __m512 offset = _mm512_fmadd_ps(vlo, _mm512_loadu_ps(sums + c), _mm512_loadu_ps(biases + c));
            const int8_t *panel = packed + p * k4 * QPANEL;
            // Rows past `end` in the last tile read the zeroed scratch after the block and are not stored.
            if (live > 6) qtile(flags, QROWS, live, a, k4, panel, scale, offset, row, c, n, out, e);
            else qtile(flags, 6, live, a, k4, panel, scale, offset, row, c, n, out, e);
        }
    }
}

FG_VNNI static void block_vnni(const int flags, const uint8_t *a, size_t k4, const int8_t *packed, const float *scales, const float *sums,
                               const float *biases, float lo, float step, int n, float *out, const fg_conv_epilogue *e, size_t first,
                               size_t end, size_t first_panel, size_t end_panel) {
#define FG_QBLOCK(F) block_vnni_with(F, a, k4, packed, scales, sums, biases, lo, step, n, out, e, first, end, first_panel, end_panel)
    FG_EPILOGUE_DISPATCH(flags, FG_QBLOCK)
#undef FG_QBLOCK
}
#endif

int fg_qconv_has_simd(void) {
#if FG_HAVE_AVX2_BUILD
    return has_vnni();
#else
    return 0;
#endif
}

/// Output rows row…stop−1 (at most FG_QCONV_BLOCK) from their float rows `x` (k values each, the
/// first being row's): the block's range, its bytes in `scratch`, the products and the epilogue.
static void qconv_block(const float *x, size_t k, size_t k4, const int8_t *packed, const float *scales, const float *sums,
                        const float *biases, int n, float *out, const fg_conv_epilogue *epilogue, uint8_t *scratch, size_t row,
                        size_t stop, size_t first_panel, size_t end_panel, int simd) {
    float lo, step;
    size_t count = stop - row;
#if FG_HAVE_AVX2_BUILD
    if (simd) {
        block_range_vnni(x, k, 0, count, &lo, &step);
        quantize_vnni(x, k, 0, count, lo, 1.0f / step, scratch, k4);
        // A block is one tile: when it has fewer rows, the tile's rows past `stop` are zeros (read,
        // never stored). A full block needs none.
        if (count < QROWS) memset(scratch + count * k4, 0, (QROWS - count) * k4);
        block_vnni(fg_epilogue_flags(epilogue), scratch, k4, packed, scales, sums, biases, lo, step, n, out, epilogue, row, stop,
                   first_panel, end_panel);
        return;
    }
#endif
    (void)simd;
    block_range_scalar(x, k, 0, count, &lo, &step);
    quantize_scalar(x, k, 0, count, lo, 1.0f / step, scratch, k4);
    block_scalar(scratch, k4, packed, scales, sums, biases, lo, step, n, out, epilogue, row, stop, first_panel, end_panel);
}

static int qconv_simd(int allow_simd) {
#if FG_HAVE_AVX2_BUILD
    return allow_simd && has_vnni();
#else
    (void)allow_simd;
    return 0;
#endif
}

void fg_qconv_part(const float *input, int k, const int8_t *packed, const float *scales, const float *sums, const float *biases, int n,
                   float *out, const fg_conv_epilogue *epilogue, uint8_t *scratch, size_t first, size_t end, size_t first_panel,
                   size_t end_panel, int allow_simd) {
    size_t k4 = fg_qconv_row_bytes(k), panels = fg_qconv_channels(n) / QPANEL;
    if (end_panel > panels) end_panel = panels;
    if (k <= 0 || n <= 0 || first >= end || first_panel >= end_panel) return;
    int simd = qconv_simd(allow_simd);
    for (size_t row = first; row < end; row += FG_QCONV_BLOCK) {
        size_t stop = end - row < FG_QCONV_BLOCK ? end : row + FG_QCONV_BLOCK;
        qconv_block(input + row * (size_t)k, (size_t)k, k4, packed, scales, sums, biases, n, out, epilogue, scratch, row, stop,
                    first_panel, end_panel, simd);
    }
}

void fg_qconv_windows_part(const float *input, const fg_conv_geometry *g, const int8_t *packed, const float *scales,
                           const float *sums, const float *biases, int n, float *out, const fg_conv_epilogue *epilogue, float *windows,
                           uint8_t *scratch, size_t first, size_t end, size_t first_panel, size_t end_panel, int allow_simd) {
    if (g->batch <= 0 || g->out_h <= 0 || g->out_w <= 0 || g->in_c <= 0 || g->kernel_h <= 0 || g->kernel_w <= 0) return;
    size_t rows = fg_conv_rows(g), k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    if (k > INT_MAX) return;
    size_t k4 = fg_qconv_row_bytes((int)k), panels = fg_qconv_channels(n) / QPANEL;
    if (end > rows) end = rows;
    if (end_panel > panels) end_panel = panels;
    if (n <= 0 || first >= end || first_panel >= end_panel) return;
    int simd = qconv_simd(allow_simd);
    for (size_t row = first; row < end; row += FG_QCONV_BLOCK) {
        size_t stop = end - row < FG_QCONV_BLOCK ? end : row + FG_QCONV_BLOCK;
        fg_conv_gather(input, g, row, stop - row, windows);
        qconv_block(windows, k, k4, packed, scales, sums, biases, n, out, epilogue, scratch, row, stop, first_panel, end_panel, simd);
    }
}
