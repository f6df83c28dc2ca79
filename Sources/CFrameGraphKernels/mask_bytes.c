// A segmentation network's probabilities → the bytes of its mask (SegmentationDecoder in
// FrameGraphNetwork). See fg_kernels.h.
//
// Why in C: Swift's conversion of a float to UInt8 checks its range, and the check keeps the loop
// scalar; here eight values go through one AVX2 register, with the scalar loop's operations.
// Contraction into fused multiply-adds is off, so both builds give the same bytes.
#pragma STDC FP_CONTRACT OFF
#include "fg_kernels.h"
#include "cpu.h"
#include "to_byte.h"

/// One value: below 1e-6 (or NaN) taken as 0, then clamp255((p − low)·scale).
static inline unsigned char probability_byte(float p, float low, float scale) {
    float v = p >= 1e-6f ? p : 0.0f;
    return clamp255((v - low) * scale);
}

#if FG_HAVE_AVX2_BUILD
/// Sixteen values at a time, the same operations (a product, then a sum: no fused multiply-add);
/// returns the values done (a multiple of 16).
FG_AVX2 static int probability_bytes_avx2(const float *p, unsigned char *dst, int n, float low, float scale) {
    const __m256 tiny = _mm256_set1_ps(1e-6f), lo = _mm256_set1_ps(low), k = _mm256_set1_ps(scale);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v[2];
        for (int h = 0; h < 2; h++) {
            __m256 x = _mm256_loadu_ps(p + i + 8 * h);
            x = _mm256_and_ps(x, _mm256_cmp_ps(x, tiny, _CMP_GE_OQ));  // below 1e-6 (or NaN): 0
            v[h] = _mm256_mul_ps(_mm256_sub_ps(x, lo), k);
        }
        _mm_storeu_si128((__m128i *)(void *)(dst + i), clamp255_16(v[0], v[1]));
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
