// One-pass resize + colour conversion into a network's input: a 1080p decoded frame becomes a
// 256×256 RGB picture without a full-resolution RGB copy (ResampleToRGB in FrameGraphFilters).
// Separable area filter: a vertical pass accumulates the source rows of one output row (contiguous,
// vectorised), a horizontal pass sums the taps of each output sample.
#include "fg_kernels.h"
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

int fg_area_taps(int *start, int *count, float *weight, int max_taps, int n, int source) {
    const double f = (double)source / (double)n;
    for (int i = 0; i < n; i++) {
        double a = i * f, b = (i + 1) * f;
        int first = (int)a, last = (int)b;
        if (b == (double)last) last--;  /* b on a sample boundary: that sample is not covered */
        if (last >= source) last = source - 1;
        if (first > last) first = last;
        int taps = last - first + 1;
        if (taps > max_taps) return -1;
        start[i] = first;
        count[i] = taps;
        float total = 0;
        for (int k = 0; k < taps; k++) {
            double lo = first + k, hi = lo + 1;
            double overlap = (hi < b ? hi : b) - (lo > a ? lo : a);
            float w = overlap > 0 ? (float)overlap : 0.0f;
            weight[i * max_taps + k] = w;
            total += w;
        }
        for (int k = 0; k < taps; k++) weight[i * max_taps + k] = total > 0 ? weight[i * max_taps + k] / total : 1.0f / (float)taps;
    }
    return 0;
}

/* acc = w·row (first) or acc += w·row: the vertical pass, the bulk of the work at full HD. */
#define FG_ACCUMULATE_BODY                                                            \
    if (first) { for (int x = 0; x < n; x++) acc[x] = w * (float)row[x]; }            \
    else { for (int x = 0; x < n; x++) acc[x] += w * (float)row[x]; }

#if FG_HAVE_AVX2_BUILD
static FG_AVX2 void accumulate_avx2(float *acc, const unsigned char *row, float w, int n, int first) { FG_ACCUMULATE_BODY }
#else
#define accumulate_avx2(...) ((void)0)
#endif
static void accumulate_base(float *acc, const unsigned char *row, float w, int n, int first) { FG_ACCUMULATE_BODY }

static inline void accumulate(float *acc, const unsigned char *row, float w, int n, int first) {
    if (fg_has_avx2()) accumulate_avx2(acc, row, w, n, first); else accumulate_base(acc, row, w, n, first);
}

#if FG_HAVE_AVX2_BUILD
/// The horizontal pass of one row of one-channel samples, eight outputs at a time: output ox is the
/// sum over its taps k of xw[ox·xmax + k] · acc[xs[ox] + k], both gathered (lanes whose output has
/// fewer taps add a zero). Each product is rounded, then added, in the scalar loop's order (no fused
/// multiply-add), so the values are the scalar loop's, bit for bit. Returns the outputs done (a
/// multiple of 8; the rest are the scalar loop's).
static FG_AVX2 int horizontal_avx2(const float *acc, float *out, int dw, const int *xs, const int *xc, const float *xw, int xmax) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), zero = _mm256_setzero_si256();
    int ox = 0;
    for (; ox + 8 <= dw; ox += 8) {
        __m256i start = _mm256_loadu_si256((const __m256i *)(const void *)(xs + ox));
        __m256i count = _mm256_loadu_si256((const __m256i *)(const void *)(xc + ox));
        __m256i weights = _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32(ox), lanes), _mm256_set1_epi32(xmax));
        int most = 0;
        for (int j = 0; j < 8; j++) most = xc[ox + j] > most ? xc[ox + j] : most;
        __m256 sum = _mm256_setzero_ps();
        for (int k = 0; k < most; k++) {
            __m256i kk = _mm256_set1_epi32(k);
            __m256 has = _mm256_castsi256_ps(_mm256_cmpgt_epi32(count, kk));
            __m256 a = _mm256_mask_i32gather_ps(_mm256_castsi256_ps(zero), acc, _mm256_add_epi32(start, kk), has, 4);
            __m256 w = _mm256_mask_i32gather_ps(_mm256_castsi256_ps(zero), xw, _mm256_add_epi32(weights, kk), has, 4);
            sum = _mm256_add_ps(sum, _mm256_mul_ps(w, a));
        }
        _mm256_storeu_ps(out + ox, sum);
    }
    return ox;
}
#endif

void fg_area_resize(const unsigned char *src, ptrdiff_t ss, int sw, int sh, int channels, float *dst, int dw, int dh,
                    const int *xs, const int *xc, const float *xw, int xmax,
                    const int *ys, const int *yc, const float *yw, int ymax, float *acc) {
    (void)sh;
    const int width = sw * channels;
    for (int oy = 0; oy < dh; oy++) {
        const unsigned char *row = src + (ptrdiff_t)ys[oy] * ss;
        const float *w = yw + oy * ymax;
        for (int k = 0; k < yc[oy]; k++) accumulate(acc, row + (ptrdiff_t)k * ss, w[k], width, k == 0);
        float *out = dst + (ptrdiff_t)oy * dw * channels;
        if (channels == 1) {
            int ox = 0;
#if FG_HAVE_AVX2_BUILD
            if (fg_has_avx2()) ox = horizontal_avx2(acc, out, dw, xs, xc, xw, xmax);
#endif
            for (; ox < dw; ox++) {
                const float *wx = xw + ox * xmax, *a = acc + xs[ox];
                float sum = 0;
                for (int k = 0; k < xc[ox]; k++) sum += wx[k] * a[k];
                out[ox] = sum;
            }
            continue;
        }
        for (int ox = 0; ox < dw; ox++) {
            const float *wx = xw + ox * xmax;
            const float *a = acc + xs[ox] * channels;
            for (int ch = 0; ch < channels; ch++) {
                float sum = 0;
                for (int k = 0; k < xc[ox]; k++) sum += wx[k] * a[k * channels + ch];
                out[ox * channels + ch] = sum;
            }
        }
    }
}

static inline unsigned char clamp255(float v) {
    v += 0.5f;
    return v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (unsigned char)v);
}

void fg_yuv_float_to_rgb24(const float *y, const float *u, const float *v, unsigned char *dst, int n, const fg_yuv_to_rgb *c) {
    for (int i = 0; i < n; i++) {
        const float l = c->ys * (y[i] - c->yo), cb = u[i] - 128.0f, cr = v[i] - 128.0f;
        dst[3 * i + 0] = clamp255(l + c->rv * cr);
        dst[3 * i + 1] = clamp255(l - c->gu * cb - c->gv * cr);
        dst[3 * i + 2] = clamp255(l + c->bu * cb);
    }
}

void fg_float_to_bytes(const float *src, unsigned char *dst, int n) {
    for (int i = 0; i < n; i++) dst[i] = clamp255(src[i]);
}

void fg_chroma_row_to_rgb24(const unsigned char *y0, const unsigned char *y1, const unsigned char *u, const unsigned char *v,
                            int cw, int width, unsigned char *rgb, const fg_yuv_to_rgb *c) {
    for (int x = 0; x < cw; x++) {
        int x0 = 2 * x, x1 = 2 * x + 1 < width ? 2 * x + 1 : width - 1;
        float y = 0.25f * (float)(y0[x0] + y0[x1] + y1[x0] + y1[x1]);
        const float l = c->ys * (y - c->yo), cb = (float)u[x] - 128.0f, cr = (float)v[x] - 128.0f;
        rgb[3 * x + 0] = clamp255(l + c->rv * cr);
        rgb[3 * x + 1] = clamp255(l - c->gu * cb - c->gv * cr);
        rgb[3 * x + 2] = clamp255(l + c->bu * cb);
    }
}

void fg_rgb24_to_cbcr(const unsigned char *rgb, int n, float kr, float kb, float cbf, float crf, unsigned char *u, unsigned char *v) {
    const float kg = 1.0f - kr - kb;
    for (int x = 0; x < n; x++) {
        float r = rgb[3 * x], g = rgb[3 * x + 1], b = rgb[3 * x + 2];
        float luma = kr * r + kg * g + kb * b;
        u[x] = clamp255(128.0f + (b - luma) * cbf);
        v[x] = clamp255(128.0f + (r - luma) * crf);
    }
}

void fg_ab_row(const float *a0, const float *a1, const float *b0, const float *b1, int aw, float wy,
               const int *tx, const float *wx, int n, float *a, float *b, float *scratch) {
    float *ar = scratch, *br = scratch + aw;
    for (int x = 0; x < aw; x++) {
        ar[x] = a0[x] + (a1[x] - a0[x]) * wy;
        br[x] = b0[x] + (b1[x] - b0[x]) * wy;
    }
    for (int x = 0; x < n; x++) {
        int i = tx[x], j = i + 1 < aw ? i + 1 : aw - 1;
        float w = wx[x];
        a[x] = ar[i] + (ar[j] - ar[i]) * w;
        b[x] = br[i] + (br[j] - br[i]) * w;
    }
}
