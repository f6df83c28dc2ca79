// A segmentation network's probabilities → the bytes of its mask (SegmentationDecoder in
// FrameGraphInference). See fg_kernels.h.
//
// Why in C: Swift's conversion of a float to UInt8 checks its range, and the check keeps the loop
// scalar; here eight values go through one AVX2 register, with the scalar loop's operations.
// Contraction into fused multiply-adds is off, so both builds give the same bytes.
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

/// One value: below 1e-6 taken as 0 (a NaN too, at the clamp), then (p − low)·scale + 0.5, clamped
/// to 0…255, truncated.
static inline unsigned char probability_byte(float p, float low, float scale) {
    float v = p < 1e-6f ? 0.0f : p;
    v = (v - low) * scale + 0.5f;
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    return (unsigned char)v;
}

#if FG_HAVE_AVX2_BUILD
/// Eight values at a time, the same operations (a product, then a sum: no fused multiply-add);
/// returns the values done (a multiple of 16).
FG_AVX2 static int probability_bytes_avx2(const float *p, unsigned char *dst, int n, float low, float scale) {
    const __m256 tiny = _mm256_set1_ps(1e-6f), lo = _mm256_set1_ps(low), k = _mm256_set1_ps(scale);
    const __m256 half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.0f);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i words[2];
        for (int h = 0; h < 2; h++) {
            __m256 x = _mm256_loadu_ps(p + i + 8 * h);
            x = _mm256_and_ps(x, _mm256_cmp_ps(x, tiny, _CMP_GE_OQ));  // below 1e-6 (or NaN): 0
            x = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x, lo), k), half);
            words[h] = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(x, zero), top));  // max_ps(NaN, 0) is 0
        }
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(words[0], words[1]), 0xD8);
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm_packus_epi16(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1)));
    }
    return i;
}
#endif

void fg_probability_bytes(const float *p, unsigned char *dst, int n, float low, float scale) {
    int i = 0;
#if FG_HAVE_AVX2_BUILD
    if (fg_has_avx2()) i = probability_bytes_avx2(p, dst, n, low, scale);
#endif
    for (; i < n; i++) dst[i] = probability_byte(p[i], low, scale);
}
