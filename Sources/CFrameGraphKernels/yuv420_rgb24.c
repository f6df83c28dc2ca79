// Planar 4:2:0 Y'CbCr → packed RGB24 in swscale's 16-bit fixed point (the arithmetic of its unscaled
// SIMD converter, the pixels `ffmpeg -pix_fmt rgb24` gives), 32 pixels a step with AVX2. The
// caller (FrameGraphMedia's RGBConverter) takes the coefficients from swscale's own context and
// checks once that both give the same bytes before using this.
#include "fg_kernels.h"
#include "cpu.h"
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

static inline int16_t sat16(int32_t v) {
    return (int16_t)(v > 32767 ? 32767 : (v < -32768 ? -32768 : v));
}

static inline int16_t mulhi16(int16_t a, int16_t b) {
    return (int16_t)(((int32_t)a * (int32_t)b) >> 16);
}

static inline unsigned char clamp_u8(int16_t v) {
    return (unsigned char)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

/// One row's pixels [x0, x1) (x0 even), each pair sharing one U and one V sample.
static void row_scalar(const unsigned char *y, const unsigned char *u, const unsigned char *v, unsigned char *dst,
                       int x0, int x1, const fg_yuv_fixed *c) {
    for (int x = x0; x < x1; x++) {
        const int k = x >> 1;
        const int16_t us = sat16(((int32_t)u[k] << 3) - c->uv_offset);
        const int16_t vs = sat16(((int32_t)v[k] << 3) - c->uv_offset);
        const int16_t green = sat16((int32_t)mulhi16(us, c->u_to_g) + mulhi16(vs, c->v_to_g));
        const int16_t blue = mulhi16(us, c->u_to_b), red = mulhi16(vs, c->v_to_r);
        const int16_t luma = mulhi16((int16_t)(((int32_t)y[x] << 3) - c->y_offset), c->y_scale);
        dst[3 * x] = clamp_u8(sat16((int32_t)luma + red));
        dst[3 * x + 1] = clamp_u8(sat16((int32_t)luma + green));
        dst[3 * x + 2] = clamp_u8(sat16((int32_t)luma + blue));
    }
}

#if FG_HAVE_AVX2_BUILD
/// 16 pixels of R, G and B (one 128-bit lane each, in pixel order) → 48 bytes of RGB24 at `out`.
FG_AVX2 static inline void store_rgb24_lane(__m128i r, __m128i g, __m128i b, unsigned char *out) {
    // Byte i of each output vector takes R, G or B of pixel i/3 (i counted over the 48 bytes);
    // -128 (high bit set) writes 0, so the three shuffles are OR'ed together.
    const __m128i r0 = _mm_setr_epi8(0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128, -128, 5);
    const __m128i g0 = _mm_setr_epi8(-128, 0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128, -128);
    const __m128i b0 = _mm_setr_epi8(-128, -128, 0, -128, -128, 1, -128, -128, 2, -128, -128, 3, -128, -128, 4, -128);
    const __m128i r1 = _mm_setr_epi8(-128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128, 10, -128);
    const __m128i g1 = _mm_setr_epi8(5, -128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128, 10);
    const __m128i b1 = _mm_setr_epi8(-128, 5, -128, -128, 6, -128, -128, 7, -128, -128, 8, -128, -128, 9, -128, -128);
    const __m128i r2 = _mm_setr_epi8(-128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15, -128, -128);
    const __m128i g2 = _mm_setr_epi8(-128, -128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15, -128);
    const __m128i b2 = _mm_setr_epi8(10, -128, -128, 11, -128, -128, 12, -128, -128, 13, -128, -128, 14, -128, -128, 15);
    const __m128i o0 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, r0), _mm_shuffle_epi8(g, g0)), _mm_shuffle_epi8(b, b0));
    const __m128i o1 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, r1), _mm_shuffle_epi8(g, g1)), _mm_shuffle_epi8(b, b1));
    const __m128i o2 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, r2), _mm_shuffle_epi8(g, g2)), _mm_shuffle_epi8(b, b2));
    _mm_storeu_si128((__m128i *)out, o0);
    _mm_storeu_si128((__m128i *)(out + 16), o1);
    _mm_storeu_si128((__m128i *)(out + 32), o2);
}

/// Pixels [0, n) of one row, n a multiple of 32; the same arithmetic as row_scalar, 16 lanes at once
/// (even pixels and odd pixels apart, each pair's chroma computed once).
FG_AVX2 static void row_avx2(const unsigned char *y, const unsigned char *u, const unsigned char *v, unsigned char *dst,
                             int n, const fg_yuv_fixed *c) {
    const __m256i low_byte = _mm256_set1_epi16(0x00ff);
    const __m256i uv_offset = _mm256_set1_epi16(c->uv_offset), y_offset = _mm256_set1_epi16(c->y_offset);
    const __m256i y_scale = _mm256_set1_epi16(c->y_scale), v_to_r = _mm256_set1_epi16(c->v_to_r);
    const __m256i u_to_g = _mm256_set1_epi16(c->u_to_g), v_to_g = _mm256_set1_epi16(c->v_to_g);
    const __m256i u_to_b = _mm256_set1_epi16(c->u_to_b);
    // After packus(even, odd) a lane holds 8 even pixels then 8 odd ones: back to pixel order.
    const __m256i interleave = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
                                                0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    for (int x = 0; x < n; x += 32) {
        const __m256i luma = _mm256_loadu_si256((const __m256i *)(y + x));
        const __m256i ye = _mm256_mulhi_epi16(_mm256_sub_epi16(_mm256_slli_epi16(_mm256_and_si256(luma, low_byte), 3), y_offset), y_scale);
        const __m256i yo = _mm256_mulhi_epi16(_mm256_sub_epi16(_mm256_slli_epi16(_mm256_srli_epi16(luma, 8), 3), y_offset), y_scale);
        const __m256i us = _mm256_subs_epi16(_mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(u + x / 2))), 3), uv_offset);
        const __m256i vs = _mm256_subs_epi16(_mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(v + x / 2))), 3), uv_offset);
        const __m256i red = _mm256_mulhi_epi16(vs, v_to_r), blue = _mm256_mulhi_epi16(us, u_to_b);
        const __m256i green = _mm256_adds_epi16(_mm256_mulhi_epi16(us, u_to_g), _mm256_mulhi_epi16(vs, v_to_g));
        const __m256i r = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_adds_epi16(ye, red), _mm256_adds_epi16(yo, red)), interleave);
        const __m256i g = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_adds_epi16(ye, green), _mm256_adds_epi16(yo, green)), interleave);
        const __m256i b = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_adds_epi16(ye, blue), _mm256_adds_epi16(yo, blue)), interleave);
        store_rgb24_lane(_mm256_castsi256_si128(r), _mm256_castsi256_si128(g), _mm256_castsi256_si128(b), dst + 3 * x);
        store_rgb24_lane(_mm256_extracti128_si256(r, 1), _mm256_extracti128_si256(g, 1), _mm256_extracti128_si256(b, 1), dst + 3 * x + 48);
    }
}
#endif

void fg_yuv420_to_rgb24_fixed(const unsigned char *y, ptrdiff_t y_stride, const unsigned char *u, ptrdiff_t u_stride,
                              const unsigned char *v, ptrdiff_t v_stride, unsigned char *dst, ptrdiff_t dst_stride,
                              int width, int height, const fg_yuv_fixed *c, int allow_simd) {
    const int simd = allow_simd != FG_SIMD_SCALAR && FG_HAVE_AVX2_BUILD && fg_has_avx2();
    const int wide = simd ? width & ~31 : 0;
    for (int row = 0; row < height; row++) {
        const unsigned char *yr = y + (ptrdiff_t)row * y_stride;
        const unsigned char *ur = u + (ptrdiff_t)(row >> 1) * u_stride, *vr = v + (ptrdiff_t)(row >> 1) * v_stride;
        unsigned char *out = dst + (ptrdiff_t)row * dst_stride;
#if FG_HAVE_AVX2_BUILD
        if (wide > 0) row_avx2(yr, ur, vr, out, wide, c);
#endif
        row_scalar(yr, ur, vr, out, wide, width, c);
    }
}
