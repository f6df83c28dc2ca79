// See cpu.h.
#include "cpu.h"

int fg_has_avx2(void) {
#if FG_HAVE_AVX2_BUILD
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return cached;
#else
    return 0;
#endif
}
