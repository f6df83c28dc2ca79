// e^x for x ≤ 0 in both builds, bit for bit the same (internal to CFrameGraphKernels): x is clamped
// below at −87 (where e^x is below every normal float), split as n·ln 2 + r with |r| ≤ ln 2 / 2,
// e^r by Cephes' degree-6 polynomial with fused multiply-adds, times 2^n through the exponent bits.
// About 1 ulp; the softmax and sigmoid kernels use it.
#ifndef FRAMEGRAPH_KERNELS_EXP_H
#define FRAMEGRAPH_KERNELS_EXP_H
#include "cpu.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

static const float FG_EXP_LOW = -87.0f, FG_LOG2E = 1.44269504088896341f, FG_LN2_HI = 0.693359375f, FG_LN2_LO = -2.12194440e-4f;
static const float FG_EXP_P0 = 1.9875691500e-4f, FG_EXP_P1 = 1.3981999507e-3f, FG_EXP_P2 = 8.3334519073e-3f,
                   FG_EXP_P3 = 4.1665795894e-2f, FG_EXP_P4 = 1.6666665459e-1f, FG_EXP_P5 = 5.0000001201e-1f;

static inline float fg_exp_scalar(float x) {
    x = fmaxf(x, FG_EXP_LOW);
    float n = nearbyintf(x * FG_LOG2E);
    float r = fmaf(n, -FG_LN2_HI, x);
    r = fmaf(n, -FG_LN2_LO, r);
    float z = r * r;
    float p = fmaf(FG_EXP_P0, r, FG_EXP_P1);
    p = fmaf(p, r, FG_EXP_P2);
    p = fmaf(p, r, FG_EXP_P3);
    p = fmaf(p, r, FG_EXP_P4);
    p = fmaf(p, r, FG_EXP_P5);
    float y = fmaf(p, z, r) + 1.0f;
    int32_t bits;
    memcpy(&bits, &y, sizeof bits);
    bits += (int32_t)n << 23;
    memcpy(&y, &bits, sizeof y);
    return y;
}

/// 1 / (1 + e^−x) through e = e^−|x| (so the exponential never overflows): q = 1 / (1 + e), then q
/// for x ≥ 0 and e · q below (one division).
static inline float fg_sigmoid_scalar(float x) {
    float e = fg_exp_scalar(0.0f - fabsf(x));
    float q = 1.0f / (1.0f + e);
    return x >= 0.0f ? q : e * q;
}

#if FG_HAVE_AVX2_BUILD
FG_AVX2 static inline __m256 fg_exp8(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(FG_EXP_LOW));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(FG_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-FG_LN2_HI), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-FG_LN2_LO), r);
    __m256 z = _mm256_mul_ps(r, r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(FG_EXP_P0), r, _mm256_set1_ps(FG_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FG_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FG_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FG_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(FG_EXP_P5));
    __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, z, r), _mm256_set1_ps(1.0f));
    __m256i bits = _mm256_add_epi32(_mm256_castps_si256(y), _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23));
    return _mm256_castsi256_ps(bits);
}

FG_AVX2 static inline __m256 fg_sigmoid8(__m256 x) {
    __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 e = fg_exp8(_mm256_sub_ps(_mm256_setzero_ps(), magnitude));
    __m256 q = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    return _mm256_blendv_ps(_mm256_mul_ps(e, q), q, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}
#endif
#endif
