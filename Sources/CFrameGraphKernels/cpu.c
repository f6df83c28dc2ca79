// See cpu.h.
#include "cpu.h"
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
