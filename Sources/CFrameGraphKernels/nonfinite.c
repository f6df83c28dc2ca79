// NaN and ±infinity in a network's output, replaced by 0 before any decoder sees them
// (NetworkNode in FrameGraphNetwork). See fg_kernels.h.
//
// Why in C: the check runs over every output value of every prediction, and nearly always finds
// nothing. Swift's loop that stops at the first non-finite value stays scalar; here the first pass
// ORs a whole AVX2 register's verdicts at a time and never writes, and only an output that holds a
// non-finite value is walked a second time to replace it.
#include "fg_kernels.h"
#include "cpu.h"
#include <math.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

#if FG_HAVE_AVX2_BUILD
/// Whether any of the first n − n mod 32 values is non-finite (its exponent bits all set); *done
/// is set to the values looked at.
FG_AVX2 static int any_nonfinite_avx2(const float *p, size_t n, size_t *done) {
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    __m256i seen = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int h = 0; h < 4; h++) {
            __m256i bits = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + i + 8 * h)), exponent);
            seen = _mm256_or_si256(seen, _mm256_cmpeq_epi32(bits, exponent));
        }
    }
    *done = i;
    return !_mm256_testz_si256(seen, seen);
}
#endif

size_t fg_zero_nonfinite(float *p, size_t n) {
    size_t i = 0;
    int found = 0;
#if FG_HAVE_AVX2_BUILD
    if (fg_has_avx2()) found = any_nonfinite_avx2(p, n, &i);
#endif
    for (size_t k = i; k < n && !found; k++) found = !isfinite(p[k]);
    if (!found) return 0;
    size_t replaced = 0;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(p[k])) {
            p[k] = 0.0f;
            replaced++;
        }
    }
    return replaced;
}
