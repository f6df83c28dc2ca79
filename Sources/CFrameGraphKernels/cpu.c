// See cpu.h.
#include "cpu.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

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
enum { CHAINS = 12, STEPS = 4000 };

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/// Seconds for CHAINS independent chains of STEPS 256-bit multiply-adds each (enough chains to
/// fill two FMA units of four cycles' latency).
FG_AVX2 static double time_ymm(float seed) {
    __m256 acc[CHAINS], m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(seed);
    for (int j = 0; j < CHAINS; j++) acc[j] = _mm256_set1_ps((float)j);
    double t0 = seconds_now();
    for (int i = 0; i < STEPS; i++) {
        for (int j = 0; j < CHAINS; j++) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
    }
    double t1 = seconds_now();
    __m256 sum = acc[0];
    for (int j = 1; j < CHAINS; j++) sum = _mm256_add_ps(sum, acc[j]);
    volatile float sink = _mm256_cvtss_f32(sum);
    (void)sink;
    return t1 - t0;
}

/// The same multiply-adds as time_ymm, 512 bits wide.
FG_AVX512 static double time_zmm(float seed) {
    __m512 acc[CHAINS], m = _mm512_set1_ps(0.999f), a = _mm512_set1_ps(seed);
    for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_set1_ps((float)j);
    double t0 = seconds_now();
    for (int i = 0; i < STEPS; i++) {
        for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
    }
    double t1 = seconds_now();
    __m512 sum = acc[0];
    for (int j = 1; j < CHAINS; j++) sum = _mm512_add_ps(sum, acc[j]);
    volatile float sink = _mm512_reduce_add_ps(sum);
    (void)sink;
    return t1 - t0;
}
#endif

#if FG_HAVE_AVX2_BUILD
static int full_width = 0;

/// Measures (or reads from the environment) what fg_avx512_full_width answers; run once.
static void decide_full_width(void) {
    const char *said = getenv("FRAMEGRAPH_AVX512_FULL_WIDTH");
    if (!fg_has_avx512()) {
        full_width = 0;
    } else if (said && (said[0] == '0' || said[0] == '1') && said[1] == 0) {
        full_width = said[0] == '1';
    } else {
        // Best of seven alternated timings of each width: the first 512-bit instructions of a
        // process may run slowly while the core changes its power state, and the host may take
        // the core away during any one of them. Twice the work in the same time is one ratio, the
        // same work in twice the time the other; 1.5 lies between.
        double ymm = 1e9, zmm = 1e9;
        for (int round = 0; round < 7; round++) {
            double z = time_zmm(1e-3f * (float)round), y = time_ymm(1e-3f * (float)round);
            if (z < zmm) zmm = z;
            if (y < ymm) ymm = y;
        }
        full_width = zmm < 1.5 * ymm;
    }
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
