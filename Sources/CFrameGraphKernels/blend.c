// Alpha blending of 8-bit rows through an 8-bit mask (AlphaBlend in FrameGraphFilters): the
// composite of a portrait over its background at the frame's full resolution. See fg_kernels.h.
//
// Every sum fits in 16 bits (255·255 + 128 + 254 < 65 536), so sixteen samples go through one AVX2
// register with 16-bit multiplies; the result is the same integer arithmetic as the scalar loop.
#include "fg_kernels.h"
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

/// (f·a + b·(255 − a)) / 255 rounded to nearest, exact for every input.
static inline unsigned char mix(unsigned f, unsigned b, unsigned a) {
    unsigned v = f * a + b * (255u - a) + 128u;
    return (unsigned char)((v + (v >> 8)) >> 8);
}

#if FG_HAVE_AVX2_BUILD
/// Sixteen samples: f, b and a widened to 16 bits, blended as `mix` does.
FG_AVX2 static inline __m128i mix16(__m128i f8, __m128i b8, __m128i a8) {
    const __m256i full = _mm256_set1_epi16(255), half = _mm256_set1_epi16(128);
    __m256i f = _mm256_cvtepu8_epi16(f8), b = _mm256_cvtepu8_epi16(b8), a = _mm256_cvtepu8_epi16(a8);
    __m256i v = _mm256_add_epi16(_mm256_add_epi16(_mm256_mullo_epi16(f, a), _mm256_mullo_epi16(b, _mm256_sub_epi16(full, a))), half);
    v = _mm256_srli_epi16(_mm256_add_epi16(v, _mm256_srli_epi16(v, 8)), 8);
    __m256i packed = _mm256_packus_epi16(v, v);  // lanes: 0–7 | 0–7 (low half), 8–15 | 8–15 (high half)
    return _mm_unpacklo_epi64(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
}

/// fg_blend_row's vector part; returns the samples done (a multiple of 16).
FG_AVX2 static size_t blend_avx2(const unsigned char *f, const unsigned char *b, const unsigned char *m, unsigned char *o, size_t n,
                                 int mask_step) {
    size_t x = 0;
    if (mask_step == 1) {
        for (; x + 16 <= n; x += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(m + x));
            __m128i r = mix16(_mm_loadu_si128((const __m128i *)(const void *)(f + x)), _mm_loadu_si128((const __m128i *)(const void *)(b + x)), a);
            _mm_storeu_si128((__m128i *)(void *)(o + x), r);
        }
    } else {
        // Every other mask sample: the even bytes of 32 (the 32nd is one past the last sample the
        // row's last output reads, so the last block is left to the scalar loop).
        const __m128i even = _mm_set1_epi16(0x00FF);
        for (; x + 16 < n; x += 16) {
            __m128i m0 = _mm_loadu_si128((const __m128i *)(const void *)(m + 2 * x));
            __m128i m1 = _mm_loadu_si128((const __m128i *)(const void *)(m + 2 * x + 16));
            __m128i a = _mm_packus_epi16(_mm_and_si128(m0, even), _mm_and_si128(m1, even));
            __m128i r = mix16(_mm_loadu_si128((const __m128i *)(const void *)(f + x)), _mm_loadu_si128((const __m128i *)(const void *)(b + x)), a);
            _mm_storeu_si128((__m128i *)(void *)(o + x), r);
        }
    }
    return x;
}
#endif

void fg_blend_row(const unsigned char *f, const unsigned char *b, const unsigned char *m, unsigned char *o, size_t n, int mask_step,
                  int allow_simd) {
    size_t x = 0;
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2() && (mask_step == 1 || mask_step == 2)) x = blend_avx2(f, b, m, o, n, mask_step);
#endif
    (void)allow_simd;
    for (; x < n; x++) o[x] = mix(f[x], b[x], m[x * (size_t)mask_step]);
}
