// One-pass resize + colour conversion into a network's input: a 1080p decoded frame becomes a
// 256×256 RGB picture without a full-resolution RGB copy (ResampleToRGB in FrameGraphFilters).
// Separable area filter: a vertical pass accumulates the source rows of one output row (contiguous,
// vectorised), a horizontal pass sums the taps of each output sample. Contraction into fused
// multiply-adds is off in this file, so the AVX2, AVX-512 and baseline builds compute the same
// products and sums, bit for bit (the vertical pass's AVX2 copy used to fuse them).
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"
#include "to_byte.h"
#include <string.h>
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

/// The horizontal pass with AVX-512F permutes instead of gathers. The outputs of a row go in chunks
/// of up to 16 whose taps all lie among 32 consecutive samples from the chunk's first tap; per tap a
/// chunk takes one two-register permute of those samples and one load of the tap's 16 weights (zero
/// where an output has fewer taps, its index then the chunk's first sample). The products are
/// rounded, then added, in the scalar loop's order, so the values are the scalar loop's, bit for bit.
/// The plan is made once per size (fg_area_plan_make, kept by the caller) and serves every row.
enum { PLAN_LANES = 16, PLAN_WINDOW = 32 };
typedef struct {
    int first, outputs, base, taps;
    int pad[PLAN_LANES - 4];  /* the records after it start 64-byte aligned within the plan */
} area_chunk;
typedef struct {
    int index[PLAN_LANES];
    float weight[PLAN_LANES];
} area_tap;

/// The chunk that starts at output `ox`: its outputs and its most taps.
static void area_chunk_at(int dw, const int *xs, const int *xc, int ox, int *outputs, int *taps) {
    int base = xs[ox], n = 0, most = 0;
    while (ox + n < dw && n < PLAN_LANES && xs[ox + n] + xc[ox + n] - base <= PLAN_WINDOW) {
        if (xc[ox + n] > most) most = xc[ox + n];
        n++;
    }
    *outputs = n;
    *taps = most;
}

size_t fg_area_plan_bytes(int dw, const int *xs, const int *xc) {
    if (!fg_has_avx512() || dw <= 0) return 0;
    size_t bytes = 0;
    for (int ox = 0, n, taps; ox < dw; ox += n) {
        if (xc[ox] > PLAN_WINDOW) return 0;  // one output alone needs more than the window
        area_chunk_at(dw, xs, xc, ox, &n, &taps);
        bytes += sizeof(area_chunk) + (size_t)taps * sizeof(area_tap);
    }
    return bytes;
}

void fg_area_plan_make(int dw, const int *xs, const int *xc, const float *xw, int xmax, void *plan) {
    unsigned char *at = plan;
    for (int ox = 0, n, taps; ox < dw; ox += n) {
        area_chunk_at(dw, xs, xc, ox, &n, &taps);
        area_chunk *c = (area_chunk *)(void *)at;
        *c = (area_chunk){.first = ox, .outputs = n, .base = xs[ox], .taps = taps};
        area_tap *t = (area_tap *)(void *)(at + sizeof *c);
        for (int k = 0; k < taps; k++) {
            for (int j = 0; j < PLAN_LANES; j++) {
                int o = ox + j, has = j < n && k < xc[o];
                t[k].index[j] = has ? xs[o] + k - c->base : 0;
                t[k].weight[j] = has ? xw[(size_t)o * (size_t)xmax + (size_t)k] : 0.0f;
            }
        }
        at += sizeof *c + (size_t)taps * sizeof(area_tap);
    }
}

#if FG_HAVE_AVX2_BUILD
/// One row's horizontal pass through a plan: `acc` holds `width` samples (read no further).
static FG_AVX512 void horizontal_plan512(const float *acc, int width, float *out, int dw, const void *plan, size_t bytes) {
    const unsigned char *at = plan, *end = at + bytes;
    while (at < end) {
        const area_chunk *c = (const area_chunk *)(const void *)at;
        const area_tap *t = (const area_tap *)(const void *)(at + sizeof *c);
        long left = (long)width - c->base;
        __mmask16 m0 = left >= 16 ? 0xFFFF : (__mmask16)((1u << (left > 0 ? left : 0)) - 1);
        __mmask16 m1 = left >= 32 ? 0xFFFF : (left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0);
        __m512 lo = _mm512_maskz_loadu_ps(m0, acc + c->base), hi = _mm512_maskz_loadu_ps(m1, acc + c->base + 16);
        __m512 sum = _mm512_setzero_ps();
        for (int k = 0; k < c->taps; k++) {
            __m512 a = _mm512_permutex2var_ps(lo, _mm512_load_si512((const void *)t[k].index), hi);
            sum = _mm512_add_ps(sum, _mm512_mul_ps(_mm512_load_ps(t[k].weight), a));
        }
        // Lanes past the chunk's outputs hold zeros that the next chunk overwrites; only at the row's
        // end is the store masked.
        if (c->first + PLAN_LANES <= dw) _mm512_storeu_ps(out + c->first, sum);
        else _mm512_mask_storeu_ps(out + c->first, (__mmask16)((1u << c->outputs) - 1), sum);
        at += sizeof *c + (size_t)c->taps * sizeof(area_tap);
    }
}
#endif

void fg_area_resize(const unsigned char *src, ptrdiff_t ss, int sw, int sh, int channels, float *dst, int dw, int dh,
                    const int *xs, const int *xc, const float *xw, int xmax,
                    const void *xplan, size_t xplan_bytes, const int *ys, const int *yc, const float *yw, int ymax, float *acc) {
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
            if (xplan && xplan_bytes) {
                horizontal_plan512(acc, width, out, dw, xplan, xplan_bytes);
                continue;
            }
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

#if FG_HAVE_AVX2_BUILD
/// Where each of the 48 bytes of sixteen RGB24 pixels comes from: byte j of output block q (pixel
/// p = (16q + j) / 3, channel (16q + j) mod 3) is byte p of that channel's register; −128: none.
static const signed char interleave[3][3][16] = {
    {{0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128, -128, 5},
     {-128, 0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128, -128},
     {-128, -128, 0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128}},
    {{-128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128, 10, -128},
     {5, -128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128, 10},
     {-128, 5, -128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128}},
    {{-128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15, -128, -128},
     {-128, -128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15, -128},
     {10, -128, -128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15}},
};

/// fg_yuv_float_to_rgb24's vector part, sixteen pixels at a time: the same products and sums in the
/// same order (no fused multiply-add), clamp255, the bytes interleaved by shuffles. Returns the
/// pixels done (a multiple of 16).
FG_AVX2 static int yuv_float_to_rgb24_avx2(const float *y, const float *u, const float *v, unsigned char *dst, int n,
                                           const fg_yuv_to_rgb *c) {
    const __m256 yo = _mm256_set1_ps(c->yo), ys = _mm256_set1_ps(c->ys), mid = _mm256_set1_ps(128.0f);
    const __m256 rv = _mm256_set1_ps(c->rv), gu = _mm256_set1_ps(c->gu), gv = _mm256_set1_ps(c->gv), bu = _mm256_set1_ps(c->bu);
    __m128i masks[3][3];
    for (int q = 0; q < 3; q++)
        for (int ch = 0; ch < 3; ch++) masks[q][ch] = _mm_loadu_si128((const __m128i *)(const void *)interleave[q][ch]);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 r[2], g[2], b[2];
        for (int h = 0; h < 2; h++) {
            const int at = i + 8 * h;
            __m256 l = _mm256_mul_ps(ys, _mm256_sub_ps(_mm256_loadu_ps(y + at), yo));
            __m256 cb = _mm256_sub_ps(_mm256_loadu_ps(u + at), mid), cr = _mm256_sub_ps(_mm256_loadu_ps(v + at), mid);
            r[h] = _mm256_add_ps(l, _mm256_mul_ps(rv, cr));
            g[h] = _mm256_sub_ps(_mm256_sub_ps(l, _mm256_mul_ps(gu, cb)), _mm256_mul_ps(gv, cr));
            b[h] = _mm256_add_ps(l, _mm256_mul_ps(bu, cb));
        }
        __m128i channel[3] = {clamp255_16(r[0], r[1]), clamp255_16(g[0], g[1]), clamp255_16(b[0], b[1])};
        for (int q = 0; q < 3; q++) {
            __m128i block = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(channel[0], masks[q][0]), _mm_shuffle_epi8(channel[1], masks[q][1])),
                                         _mm_shuffle_epi8(channel[2], masks[q][2]));
            _mm_storeu_si128((__m128i *)(void *)(dst + 3 * i + 16 * q), block);
        }
    }
    return i;
}

/// fg_float_to_bytes's vector part; returns the values done (a multiple of 16).
FG_AVX2 static int float_to_bytes_avx2(const float *src, unsigned char *dst, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(void *)(dst + i), clamp255_16(_mm256_loadu_ps(src + i), _mm256_loadu_ps(src + i + 8)));
    return i;
}
#endif

void fg_yuv_float_to_rgb24(const float *y, const float *u, const float *v, unsigned char *dst, int n, const fg_yuv_to_rgb *c) {
    int i = 0;
#if FG_HAVE_AVX2_BUILD
    if (fg_has_avx2()) i = yuv_float_to_rgb24_avx2(y, u, v, dst, n, c);
#endif
    for (; i < n; i++) {
        const float l = c->ys * (y[i] - c->yo), cb = u[i] - 128.0f, cr = v[i] - 128.0f;
        dst[3 * i + 0] = clamp255(l + c->rv * cr);
        dst[3 * i + 1] = clamp255(l - c->gu * cb - c->gv * cr);
        dst[3 * i + 2] = clamp255(l + c->bu * cb);
    }
}

void fg_float_to_bytes(const float *src, unsigned char *dst, int n) {
    int i = 0;
#if FG_HAVE_AVX2_BUILD
    if (fg_has_avx2()) i = float_to_bytes_avx2(src, dst, n);
#endif
    for (; i < n; i++) dst[i] = clamp255(src[i]);
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
