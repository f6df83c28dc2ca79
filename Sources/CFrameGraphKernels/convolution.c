// Convolutions as matrix products over NHWC rows (1×1 directly; windowed ones through windows
// copied into scratch), with the epilogue fused: bias, the convolution's clamp, a residual
// addition (optionally over only the first channels: a zero channel pad), the addition's clamp,
// and a PReLU or hard-swish. See fg_kernels.h.
//
// Why our own: the XNNPACK snapshot Debian ships builds its AVX2 matrix kernels (5×16 broadcast)
// with GCC, which keeps one accumulator on the stack; each step then waits on a store-to-load
// round trip, and convolutions run at about half the core's FMA rate. The kernel here is
// 6 rows × 16 channels with twelve accumulators in registers, and it applies the operations that
// follow the convolution in the same pass instead of three more passes over the tensor.
#include "fg_kernels.h"
#include "cpu.h"
#include <math.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

enum { PANEL = 16, MAX_ROWS = 6 };

size_t fg_conv_packed_count(int k, int n) {
    size_t panels = ((size_t)n + PANEL - 1) / PANEL;
    return panels * PANEL * ((size_t)k + 1);
}

void fg_conv_pack(const float *weights, const float *bias, int k, int n, float *packed) {
    size_t panels = ((size_t)n + PANEL - 1) / PANEL;
    for (size_t p = 0; p < panels; p++) {
        float *panel = packed + p * PANEL * ((size_t)k + 1);
        for (int j = 0; j < PANEL; j++) {
            size_t c = p * PANEL + (size_t)j;
            panel[j] = (c < (size_t)n && bias) ? bias[c] : 0.0f;
            for (int i = 0; i < k; i++) {
                panel[PANEL * (size_t)(i + 1) + (size_t)j] = c < (size_t)n ? weights[c * (size_t)k + (size_t)i] : 0.0f;
            }
        }
    }
}

/// The epilogue on one value of channel c (the scalar definition both builds follow).
static inline float finish(float v, size_t row, size_t c, const fg_conv_epilogue *e) {
    v = fminf(fmaxf(v, e->min1), e->max1);
    if (e->residual && c < (size_t)e->residual_channels) v += e->residual[row * e->residual_stride + c];
    v = fminf(fmaxf(v, e->min2), e->max2);
    if (e->prelu_slopes) {
        v = v > 0.0f ? v : v * e->prelu_slopes[c];
    } else if (e->hard_swish) {
        v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
    }
    return v;
}

/// Copies `count` floats (a window row) from `src` to `dst`, or zeros when `src` is NULL.
typedef void (*copy_run)(float *dst, const float *src, size_t count);

static void copy_scalar(float *dst, const float *src, size_t count) {
    if (src) memcpy(dst, src, count * sizeof(float));
    else memset(dst, 0, count * sizeof(float));
}

/// Copies the receptive fields of output rows row…row+count−1 into `dst` (count rows of
/// kh·kw·c values in (ky, kx, channel) order, zeros where the window lies in the padding). Where a
/// window row lies wholly inside the input (and the dilation is 1) it is one contiguous run.
static inline __attribute__((always_inline)) void gather_with(const float *input, const fg_conv_geometry *g, size_t row,
                                                               size_t count, float *dst, copy_run copy) {
    size_t c = (size_t)g->in_c, kw = (size_t)g->kernel_w, k = (size_t)g->kernel_h * kw * c;
    for (size_t r = 0; r < count; r++) {
        size_t o = row + r, ox = o % (size_t)g->out_w, oy = (o / (size_t)g->out_w) % (size_t)g->out_h;
        size_t b = o / ((size_t)g->out_w * (size_t)g->out_h);
        float *d = dst + r * k;
        long ix0 = (long)ox * g->stride_w - g->pad_left;
        int whole_row = g->dilation_w == 1 && ix0 >= 0 && ix0 + (long)kw <= g->in_w;
        for (int ky = 0; ky < g->kernel_h; ky++) {
            long iy = (long)oy * g->stride_h + (long)ky * g->dilation_h - g->pad_top;
            if (iy < 0 || iy >= g->in_h) {
                copy(d, NULL, kw * c);
                d += kw * c;
                continue;
            }
            const float *line = input + (b * (size_t)g->in_h + (size_t)iy) * (size_t)g->in_w * c;
            if (whole_row) {
                copy(d, line + (size_t)ix0 * c, kw * c);
                d += kw * c;
                continue;
            }
            for (size_t kx = 0; kx < kw; kx++) {
                long ix = ix0 + (long)kx * g->dilation_w;
                copy(d, ix < 0 || ix >= g->in_w ? NULL : line + (size_t)ix * c, c);
                d += c;
            }
        }
    }
}

static void gather(const float *input, const fg_conv_geometry *g, size_t row, size_t count, float *dst) {
    gather_with(input, g, row, count, dst, copy_scalar);
}

/// Whether `g` is a plain 1×1 convolution (rows of the input are the matrix rows as they are).
static int is_pointwise(const fg_conv_geometry *g) {
    return g->kernel_h == 1 && g->kernel_w == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 && g->pad_left == 0
        && g->out_h == g->in_h && g->out_w == g->in_w;
}

static void conv_scalar(const float *input, const fg_conv_geometry *g, const float *packed, int n, float *out,
                        const fg_conv_epilogue *e, float *scratch, size_t first, size_t rows) {
    size_t k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    size_t panels = ((size_t)n + PANEL - 1) / PANEL;
    int direct = is_pointwise(g);
    for (size_t r = first; r < rows; r++) {
        const float *a = input + r * k;
        if (!direct) {
            gather(input, g, r, 1, scratch);
            a = scratch;
        }
        for (size_t p = 0; p < panels; p++) {
            const float *w = packed + p * PANEL * (k + 1);
            float acc[PANEL];
            for (int j = 0; j < PANEL; j++) acc[j] = w[j];
            for (size_t i = 0; i < k; i++) {
                float x = a[i];
                const float *wr = w + PANEL * (i + 1);
                for (int j = 0; j < PANEL; j++) acc[j] = fmaf(x, wr[j], acc[j]);
            }
            for (int j = 0; j < PANEL; j++) {
                size_t c = p * PANEL + (size_t)j;
                if (c < (size_t)n) out[r * (size_t)n + c] = finish(acc[j], r, c, e);
            }
        }
    }
}

#if FG_HAVE_AVX2_BUILD
/// Lanes 0..count-1 on (count clamped to 0…8), for masked loads and stores.
FG_AVX2 static inline __m256i lanes(long count) {
    if (count < 0) count = 0;
    if (count > 8) count = 8;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Stores the first `count` lanes of `v` (none when count ≤ 0), without a masked store.
FG_AVX2 static inline void store_first(float *o, __m256 v, long count) {
    if (count >= 8) {
        _mm256_storeu_ps(o, v);
    } else if (count > 0) {
        float lanes_out[8];
        _mm256_storeu_ps(lanes_out, v);
        for (long j = 0; j < count; j++) o[j] = lanes_out[j];
    }
}

FG_AVX2 static inline __m256 finish8(__m256 v, size_t row, size_t c, __m256 slope, const fg_conv_epilogue *e,
                                     __m256 min1, __m256 max1, __m256 min2, __m256 max2) {
    v = _mm256_min_ps(_mm256_max_ps(v, min1), max1);
    if (e->residual) {
        long have = (long)e->residual_channels - (long)c;
        if (have >= 8) {
            v = _mm256_add_ps(v, _mm256_loadu_ps(e->residual + row * e->residual_stride + c));
        } else if (have > 0) {
            v = _mm256_add_ps(v, _mm256_maskload_ps(e->residual + row * e->residual_stride + c, lanes(have)));
        }
    }
    v = _mm256_min_ps(_mm256_max_ps(v, min2), max2);
    if (e->prelu_slopes) {
        v = _mm256_blendv_ps(v, _mm256_mul_ps(v, slope), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LE_OQ));
    } else if (e->hard_swish) {
        __m256 g = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, _mm256_set1_ps(3.0f)), _mm256_setzero_ps()), _mm256_set1_ps(6.0f));
        v = _mm256_mul_ps(_mm256_mul_ps(v, g), _mm256_set1_ps(1.0f / 6.0f));
    }
    return v;
}

/// MR rows × 16 channels of one panel; MR is a constant in every call, so the loops unroll and the
/// accumulators stay in registers.
FG_AVX2 __attribute__((always_inline)) static inline void tile(const int mr, const float *a, size_t k, const float *w,
                                                               size_t row, size_t c, int n, float *out,
                                                               const fg_conv_epilogue *e) {
    __m256 acc0[MAX_ROWS], acc1[MAX_ROWS];
    __m256 bias0 = _mm256_loadu_ps(w), bias1 = _mm256_loadu_ps(w + 8);
    for (int r = 0; r < mr; r++) { acc0[r] = bias0; acc1[r] = bias1; }
    const float *wr = w + PANEL;
    for (size_t i = 0; i < k; i++) {
        __m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + 8);
        wr += PANEL;
        for (int r = 0; r < mr; r++) {
            __m256 x = _mm256_broadcast_ss(a + (size_t)r * k + i);
            acc0[r] = _mm256_fmadd_ps(x, w0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(x, w1, acc1[r]);
        }
    }
    __m256 min1 = _mm256_set1_ps(e->min1), max1 = _mm256_set1_ps(e->max1);
    __m256 min2 = _mm256_set1_ps(e->min2), max2 = _mm256_set1_ps(e->max2);
    long left = (long)n - (long)c;
    // The panel's PReLU slopes, loaded once for its rows (lanes past the channels read nothing).
    __m256 slope0 = _mm256_setzero_ps(), slope1 = _mm256_setzero_ps();
    if (e->prelu_slopes) {
        slope0 = _mm256_maskload_ps(e->prelu_slopes + c, lanes(left));
        slope1 = _mm256_maskload_ps(e->prelu_slopes + c + 8, lanes(left - 8));
    }
    for (int r = 0; r < mr; r++) {
        float *o = out + (row + (size_t)r) * (size_t)n + c;
        __m256 v0 = finish8(acc0[r], row + (size_t)r, c, slope0, e, min1, max1, min2, max2);
        __m256 v1 = finish8(acc1[r], row + (size_t)r, c + 8, slope1, e, min1, max1, min2, max2);
        if (left >= 16) {
            _mm256_storeu_ps(o, v0);
            _mm256_storeu_ps(o + 8, v1);
        } else {
            store_first(o, v0, left);
            store_first(o + 8, v1, left - 8);
        }
    }
}

/// Like copy_scalar, but the last vector is stored whole: up to 7 floats past `count` are written
/// (zeros). Runs are copied in increasing address order, so the next run overwrites them; the
/// scratch has room for the last one. (AMD cores store masked vectors slowly.)
FG_AVX2 static void copy_avx2(float *dst, const float *src, size_t count) {
    size_t i = 0;
    if (src) {
        for (; i + 8 <= count; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
        if (i < count) _mm256_storeu_ps(dst + i, _mm256_maskload_ps(src + i, lanes((long)(count - i))));
    } else {
        for (; i < count; i += 8) _mm256_storeu_ps(dst + i, _mm256_setzero_ps());
    }
}

FG_AVX2 static void gather_avx2(const float *input, const fg_conv_geometry *g, size_t row, size_t count, float *dst) {
    gather_with(input, g, row, count, dst, copy_avx2);
}

FG_AVX2 static void conv_avx2(const float *input, const fg_conv_geometry *g, const float *packed, int n, float *out,
                              const fg_conv_epilogue *e, float *scratch, size_t first, size_t rows) {
    size_t kk = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    size_t panels = ((size_t)n + PANEL - 1) / PANEL, panel_size = PANEL * (kk + 1);
    int direct = is_pointwise(g);
    for (size_t row = first; row < rows; row += MAX_ROWS) {
        size_t mr = rows - row < MAX_ROWS ? rows - row : MAX_ROWS;
        const float *a = input + row * kk;
        if (!direct) {
            gather_avx2(input, g, row, mr, scratch);
            a = scratch;
        }
        for (size_t p = 0; p < panels; p++) {
            const float *w = packed + p * panel_size;
            size_t c = p * PANEL;
            switch (mr) {
            case 6: tile(6, a, kk, w, row, c, n, out, e); break;
            case 5: tile(5, a, kk, w, row, c, n, out, e); break;
            case 4: tile(4, a, kk, w, row, c, n, out, e); break;
            case 3: tile(3, a, kk, w, row, c, n, out, e); break;
            case 2: tile(2, a, kk, w, row, c, n, out, e); break;
            default: tile(1, a, kk, w, row, c, n, out, e); break;
            }
        }
    }
}
#endif

size_t fg_conv_scratch_count(const fg_conv_geometry *g) {
    return is_pointwise(g) ? 0 : MAX_ROWS * (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c + 8;
}

size_t fg_conv_rows(const fg_conv_geometry *g) {
    return (size_t)g->batch * (size_t)g->out_h * (size_t)g->out_w;
}

void fg_conv_part(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
                  const fg_conv_epilogue *epilogue, float *scratch, size_t first, size_t end, int allow_simd) {
    if (geometry->batch <= 0 || geometry->out_h <= 0 || geometry->out_w <= 0 || n <= 0 || geometry->in_c <= 0) return;
    size_t rows = fg_conv_rows(geometry);
    if (end > rows) end = rows;
    if (first >= end) return;
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        conv_avx2(input, geometry, packed, n, out, epilogue, scratch, first, end);
        return;
    }
#endif
    (void)allow_simd;
    conv_scalar(input, geometry, packed, n, out, epilogue, scratch, first, end);
}

void fg_conv(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
             const fg_conv_epilogue *epilogue, float *scratch, int allow_simd) {
    fg_conv_part(input, geometry, packed, n, out, epilogue, scratch, 0, SIZE_MAX, allow_simd);
}

void fg_pointwise_conv(const float *input, size_t rows, int k, const float *packed, int n, float *out,
                       const fg_conv_epilogue *epilogue, int allow_simd) {
    if (rows == 0 || n <= 0 || k <= 0 || rows > (size_t)INT_MAX) return;
    fg_conv_geometry g = {1, (int)rows, 1, k, 1, 1, 1, 1, 1, 1, 0, 0, (int)rows, 1};
    fg_conv(input, &g, packed, n, out, epilogue, NULL, allow_simd);
}

int fg_conv_is_preferred(void) {
#if FG_HAVE_AVX2_BUILD
    return fg_has_avx2() && !__builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}
