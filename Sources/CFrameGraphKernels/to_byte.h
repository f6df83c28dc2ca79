// Floats on the 0…255 scale → bytes, the one rounding rule of the kernels that make bytes (internal
// to CFrameGraphKernels): + 0.5, clamped to 0…255, truncated.
#ifndef FRAMEGRAPH_KERNELS_TO_BYTE_H
#define FRAMEGRAPH_KERNELS_TO_BYTE_H
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

/// One value (finite: a NaN has no byte).
static inline unsigned char clamp255(float v) {
    v += 0.5f;
    return v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (unsigned char)v);
}

#if FG_HAVE_AVX2_BUILD
/// clamp255 of sixteen floats (lo: the first eight), packed in order into bytes: clamp255's values
/// exactly (a NaN gives 0).
FG_AVX2 static inline __m128i clamp255_16(__m256 lo, __m256 hi) {
    const __m256 half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.0f);
    __m256i a = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(lo, half), zero), top));
    __m256i b = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(hi, half), zero), top));
    __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);  // packus works per 128-bit lane
    return _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
}
#endif
#endif
