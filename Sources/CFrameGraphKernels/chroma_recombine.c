// Colorization's last step at chroma resolution, one chroma row in one call (see fg_kernels.h):
// the frame's lightness under each chroma sample and the network's a/b → Lab → sRGB bytes → Cb/Cr.
// It used to be five row passes, two of them table loops in Swift, with a packed RGB24 row between
// them; here each block of pixels stays in L1 and goes through the same formulas, in order:
//   1. Y' = the mean of the 2×2 luma samples, with the chroma sample's Cb/Cr → R'G'B' bytes (clamp255);
//   2. linear light of each byte (table), its luminance, L = 116·f(Y) − 16 (lab_f.h's f);
//   3. L with a/b → XYZ → linear RGB, clipped, → 8-bit sRGB through the 16 384-step table;
//   4. those bytes → Cb/Cr with the frame's matrix and range (clamp255).
// The loops without table lookups vectorise; the lookups stay scalar. Contraction into fused
// multiply-adds is off, so the AVX2 and baseline builds compute the same values, bit for bit.
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"
#include "to_byte.h"
#include "lab_f.h"
#include <stdint.h>
#include <string.h>

enum { BLOCK = 64 };

static inline float clip01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

/// Table lookups of a block from index `from` on, one at a time (the AVX2 build gathers eight at a
/// time first).
#define FG_LINEAR_LOOKUPS_SCALAR(from)                                                                  \
    for (int k = from; k < n; k++) {                                                                    \
        lr[k] = p->linear[ri[k]];                                                                       \
        lg[k] = p->linear[gi[k]];                                                                       \
        lb[k] = p->linear[bi[k]];                                                                       \
    }
#define FG_SRGB_LOOKUPS_SCALAR(from)                                                                    \
    for (int k = from; k < n; k++) {                                                                    \
        ri[k] = p->srgb[ri[k]];                                                                         \
        gi[k] = p->srgb[gi[k]];                                                                         \
        bi[k] = p->srgb[bi[k]];                                                                         \
    }

/// One block of n ≤ BLOCK chroma samples starting at chroma column x0 (`LOOKUPS_LINEAR` and
/// `LOOKUPS_SRGB` are the build's table lookups).
#define FG_CHROMA_BLOCK_BODY(LOOKUPS_LINEAR, LOOKUPS_SRGB)                                              \
    int32_t ri[BLOCK], gi[BLOCK], bi[BLOCK];                                                            \
    float lr[BLOCK], lg[BLOCK], lb[BLOCK], lightness[BLOCK], mean[BLOCK];                              \
    const fg_yuv_to_rgb *c = &p->to_rgb;                                                                \
    /* 1. R'G'B' bytes of the 2×2 mean (the last column repeats at an odd width) */                     \
    const int pairs = 2 * (x0 + n) <= width ? n : n - 1;                                                \
    for (int i = 0; i < pairs; i++) {                                                                   \
        const int xa = 2 * (x0 + i);                                                                    \
        mean[i] = 0.25f * (float)(y0[xa] + y0[xa + 1] + y1[xa] + y1[xa + 1]);                           \
    }                                                                                                   \
    if (pairs < n) mean[n - 1] = 0.25f * (float)(2 * y0[width - 1] + 2 * y1[width - 1]);               \
    for (int i = 0; i < n; i++) {                                                                       \
        float l = c->ys * (mean[i] - c->yo), cb = (float)u[x0 + i] - 128.0f, cr = (float)v[x0 + i] - 128.0f; \
        ri[i] = clamp255(l + c->rv * cr);                                                               \
        gi[i] = clamp255(l - c->gu * cb - c->gv * cr);                                                  \
        bi[i] = clamp255(l + c->bu * cb);                                                               \
    }                                                                                                   \
    /* 2. linear light, its luminance, L */                                                             \
    LOOKUPS_LINEAR                                                                                      \
    for (int i = 0; i < n; i++)                                                                         \
        lightness[i] = 116.0f * fg_f(p->lum[0] * lr[i] + p->lum[1] * lg[i] + p->lum[2] * lb[i]) - 16.0f; \
    /* 3. Lab → indices into the linear → sRGB byte table → bytes */                                    \
    const float *inv = p->inv, scale = p->scale;                                                        \
    for (int i = 0; i < n; i++) {                                                                       \
        float fy = (lightness[i] + 16.0f) * (1.0f / 116.0f);                                            \
        float fx = fy + a[x0 + i] * (1.0f / 500.0f);                                                    \
        float fz = fy - b[x0 + i] * (1.0f / 200.0f);                                                    \
        fz = fz > 0.0f ? fz : 0.0f;                                                                     \
        float X = fg_finv(fx), Y = fg_finv(fy), Z = fg_finv(fz);                                     \
        ri[i] = (int32_t)(clip01(inv[0] * X + inv[1] * Y + inv[2] * Z) * scale + 0.5f);                \
        gi[i] = (int32_t)(clip01(inv[3] * X + inv[4] * Y + inv[5] * Z) * scale + 0.5f);                \
        bi[i] = (int32_t)(clip01(inv[6] * X + inv[7] * Y + inv[8] * Z) * scale + 0.5f);                \
    }                                                                                                   \
    LOOKUPS_SRGB                                                                                        \
    /* 4. Cb/Cr */                                                                                      \
    const float kr = p->kr, kb = p->kb, kg = 1.0f - p->kr - p->kb;                                      \
    for (int i = 0; i < n; i++) {                                                                       \
        float r = (float)ri[i], g = (float)gi[i], bl = (float)bi[i];                                    \
        float luma = kr * r + kg * g + kb * bl;                                                         \
        out_u[x0 + i] = clamp255(128.0f + (bl - luma) * p->cbf);                                       \
        out_v[x0 + i] = clamp255(128.0f + (r - luma) * p->crf);                                        \
    }

#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
/// Eight lookups at a time with the CPU's gathers (the srgb table is read four bytes at a time:
/// fg_chroma_recombine promises three readable bytes past its end), the rest one by one.
#define FG_LINEAR_LOOKUPS_AVX2                                                                          \
    {                                                                                                   \
        int i = 0;                                                                                      \
        for (; i + 8 <= n; i += 8) {                                                                    \
            _mm256_storeu_ps(lr + i, _mm256_i32gather_ps(p->linear, _mm256_loadu_si256((const __m256i *)(const void *)(ri + i)), 4)); \
            _mm256_storeu_ps(lg + i, _mm256_i32gather_ps(p->linear, _mm256_loadu_si256((const __m256i *)(const void *)(gi + i)), 4)); \
            _mm256_storeu_ps(lb + i, _mm256_i32gather_ps(p->linear, _mm256_loadu_si256((const __m256i *)(const void *)(bi + i)), 4)); \
        }                                                                                               \
        FG_LINEAR_LOOKUPS_SCALAR(i)                                                                     \
    }
#define FG_SRGB_GATHER(dst)                                                                             \
    _mm256_storeu_si256((__m256i *)(void *)(dst + i),                                                   \
        _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)p->srgb,                     \
                                                _mm256_loadu_si256((const __m256i *)(const void *)(dst + i)), 1), byte));
#define FG_SRGB_LOOKUPS_AVX2                                                                            \
    {                                                                                                   \
        const __m256i byte = _mm256_set1_epi32(0xFF);                                                   \
        int i = 0;                                                                                      \
        for (; i + 8 <= n; i += 8) { FG_SRGB_GATHER(ri) FG_SRGB_GATHER(gi) FG_SRGB_GATHER(bi) }         \
        FG_SRGB_LOOKUPS_SCALAR(i)                                                                       \
    }

static FG_AVX2 void block_avx2(const unsigned char *y0, const unsigned char *y1, const unsigned char *u,
                               const unsigned char *v, int x0, int n, int width, const float *a, const float *b,
                               const fg_chroma_recombine *p, unsigned char *out_u, unsigned char *out_v) {
    FG_CHROMA_BLOCK_BODY(FG_LINEAR_LOOKUPS_AVX2, FG_SRGB_LOOKUPS_AVX2)
}
#else
#define block_avx2(...) ((void)0)
#endif

static void block_base(const unsigned char *y0, const unsigned char *y1, const unsigned char *u,
                       const unsigned char *v, int x0, int n, int width, const float *a, const float *b,
                       const fg_chroma_recombine *p, unsigned char *out_u, unsigned char *out_v) {
    FG_CHROMA_BLOCK_BODY(FG_LINEAR_LOOKUPS_SCALAR(0), FG_SRGB_LOOKUPS_SCALAR(0))
}

void fg_chroma_recombine_row(const unsigned char *y0, const unsigned char *y1, const unsigned char *u,
                             const unsigned char *v, int cw, int width, const float *a, const float *b,
                             const fg_chroma_recombine *p, unsigned char *out_u, unsigned char *out_v,
                             int allow_simd) {
    const int simd = allow_simd && fg_has_avx2();
    for (int x0 = 0; x0 < cw; x0 += BLOCK) {
        const int n = cw - x0 < BLOCK ? cw - x0 : BLOCK;
        if (simd) block_avx2(y0, y1, u, v, x0, n, width, a, b, p, out_u, out_v);
        else block_base(y0, y1, u, v, x0, n, width, a, b, p, out_u, out_v);
    }
}
