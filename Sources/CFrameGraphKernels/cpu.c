// See cpu.h.
#include "cpu.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

int fg_has_avx2(void) {
#if FG_HAVE_AVX2_BUILD
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return cached;
#else
    return 0;
#endif
}

int fg_has_avx512(void) {
#if FG_HAVE_AVX2_BUILD
    static int cached = -1;
    if (cached < 0) cached = fg_has_avx2() && __builtin_cpu_supports("avx512f") && getenv("FRAMEGRAPH_NO_AVX512") == NULL;
    return cached;
#else
    return 0;
#endif
}

#if FG_HAVE_AVX2_BUILD
static int full_width = 0;

/// Reads what fg_avx512_full_width answers; run once.
static void decide_full_width(void) {
    const char *said = getenv("FRAMEGRAPH_AVX512_FULL_WIDTH");
    // Every AVX-512 path by default: on the three cores measured (an Intel Xeon, AMD Zen 5 and Zen 4,
    // whose 512-bit multiply-adds run as two halves) every shipped model ran faster with all of them
    // than with the 1×1 tiles alone (docs/BENCHMARKS.md, Zen 4: 0.85–0.99 of the time, alternated).
    // A timing of multiply-add chains told Zen 4 apart until then, but the wide paths win there by
    // their 32 registers and fewer instructions, not by the width of the units.
    full_width = fg_has_avx512() && !(said && said[0] == '0' && said[1] == 0);
}
#endif

int fg_avx512_full_width(void) {
#if FG_HAVE_AVX2_BUILD
    // Once per process, even when the first calls come from several threads of a pool at once:
    // every kernel of a prediction then takes the same paths.
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, decide_full_width);
    return full_width;
#else
    return 0;
#endif
}

int fg_avx512_level(int allow_simd) {
    if (allow_simd != 1 || !fg_has_avx512()) return FG_AVX512_NONE;
    return fg_avx512_full_width() ? FG_AVX512_FULL : FG_AVX512_HALF;
}

size_t fg_l2_bytes(void) {
    static long cached = 0;
    if (cached == 0) {
        long size = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
        size = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
        // Unknown or implausible: 512 KiB, the smallest L2 of the cores measured here (Zen 3).
        cached = size >= 128 * 1024 && size <= 64 * 1024 * 1024 ? size : 512 * 1024;
    }
    return (size_t)cached;
}
