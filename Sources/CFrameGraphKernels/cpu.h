// Run-time choice between a kernel's baseline x86-64 build and its AVX2+FMA build (internal to
// CFrameGraphKernels): mark the AVX2 copy with FG_AVX2 and pick it when fg_has_avx2() says so.
#ifndef FRAMEGRAPH_KERNELS_CPU_H
#define FRAMEGRAPH_KERNELS_CPU_H
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define FG_HAVE_AVX2_BUILD 1
#define FG_AVX2 __attribute__((target("avx2,fma")))
#define FG_AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define FG_HAVE_AVX2_BUILD 0
#define FG_AVX2
#endif
#include <stddef.h>

/// Whether this CPU runs AVX2 and FMA (asked once).
int fg_has_avx2(void);

/// Whether the AVX-512F tiles are to run: the CPU has AVX-512F and AVX2 + FMA, and
/// FRAMEGRAPH_NO_AVX512 is not set in the environment (to compare the two builds; asked once).
int fg_has_avx512(void);

/// Whether every AVX-512F path runs (1), or only the 1×1 tiles with at least 64 inputs per output
/// (0, the rule once used for AMD's Zen 4, which runs 512-bit multiply-adds as two 256-bit halves):
/// 1 wherever fg_has_avx512(), unless FRAMEGRAPH_AVX512_FULL_WIDTH=0 is in the environment (to
/// compare the two); read once per process.
int fg_avx512_full_width(void);

/// Which AVX-512F paths a kernel call with this `allow_simd` (FG_SIMD_…) takes: none (0; AVX2 at
/// most, or no AVX-512F), the tiles that pay on a core that splits 512-bit work into halves (1), or
/// every one (2: fg_avx512_full_width). The one place the kernels ask.
enum { FG_AVX512_NONE = 0, FG_AVX512_HALF = 1, FG_AVX512_FULL = 2 };
int fg_avx512_level(int allow_simd);

/// The L2 cache of one core in bytes (sysconf; 512 KiB when unknown), read once.
size_t fg_l2_bytes(void);
#endif
