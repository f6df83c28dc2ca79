// One 1×1 convolution with bfloat16 products (fg_bconv_part, `precision=bf16`) timed on its own, and
// the core's peak for vdpbf16ps (16 independent sums, nothing else in the loop): how near the peak
// the kernel runs. Built by tools/bench/bf16_pointwise_ab.sh against two versions of
// convolution_bf16.c, alternated; prints each run's median time and GFLOP/s and a checksum of the
// output (equal checksums: the same values bit for bit). Asserts nothing.
//   bench ROWS K N [ROUNDS]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fg_kernels.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

#if defined(__x86_64__)
#define TWELVE(I) I " %%zmm30, %%zmm31, %%zmm0\n" I " %%zmm30, %%zmm31, %%zmm1\n" I " %%zmm30, %%zmm31, %%zmm2\n"      \
                  I " %%zmm30, %%zmm31, %%zmm3\n" I " %%zmm30, %%zmm31, %%zmm4\n" I " %%zmm30, %%zmm31, %%zmm5\n"      \
                  I " %%zmm30, %%zmm31, %%zmm6\n" I " %%zmm30, %%zmm31, %%zmm7\n" I " %%zmm30, %%zmm31, %%zmm8\n"      \
                  I " %%zmm30, %%zmm31, %%zmm9\n" I " %%zmm30, %%zmm31, %%zmm10\n" I " %%zmm30, %%zmm31, %%zmm11\n"
/// GFLOP/s of vdpbf16ps alone: 12 independent sums, 64 multiply-adds counted as 2 each per instruction.
__attribute__((target("avx512f,avx512bf16"))) static double peak(void) {
    long n = 20000000;
    double t = now();
    __asm__ volatile("vpxord %%zmm30, %%zmm30, %%zmm30\n vpxord %%zmm31, %%zmm31, %%zmm31\n mov %0, %%rcx\n1:\n" TWELVE("vdpbf16ps")
                     "dec %%rcx\n jnz 1b\n" ::"r"(n)
                     : "rcx", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11");
    return (double)n * 12 * 64 / (now() - t) / 1e9;
}
#endif

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: bench ROWS K N [ROUNDS]\n"); return 2; }
    int rows = atoi(argv[1]), k = atoi(argv[2]), n = atoi(argv[3]), rounds = argc > 4 ? atoi(argv[4]) : 15;
    if (rows <= 0 || k <= 0 || n <= 0 || rounds <= 0) return 2;
    if (!fg_bconv_has_simd()) { printf("no AVX-512 BF16 on this CPU\n"); return 0; }
    float *w = malloc(sizeof(float) * (size_t)k * n), *b = calloc((size_t)n, sizeof(float));
    float *x = malloc(sizeof(float) * (size_t)rows * k), *o = malloc(sizeof(float) * (size_t)rows * n);
    uint16_t *packed = malloc(2 * fg_bconv_packed_count(k, n) + 64), *scratch = malloc(2 * fg_bconv_scratch_count(k) + 64);
    float *biases = malloc(sizeof(float) * fg_bconv_channels(n) + 64);
    srand(1);
    for (size_t i = 0; i < (size_t)k * n; i++) w[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
    for (size_t i = 0; i < (size_t)rows * k; i++) x[i] = (float)(rand() % 1001) / 1000.0f;
    fg_bconv_pack(w, b, k, n, packed, biases);
    fg_conv_epilogue e;
    memset(&e, 0, sizeof e);
    e.min1 = 0; e.max1 = 6; e.min2 = -3.4e38f; e.max2 = 3.4e38f;
    double *t = malloc(sizeof(double) * rounds);
    int reps = (int)(2e8 / ((double)rows * k * n)) + 1;
    for (int r = 0; r < rounds; r++) {
        double s = now();
        for (int i = 0; i < reps; i++) fg_bconv_part(x, k, packed, biases, n, o, &e, scratch, 0, (size_t)rows, 0, SIZE_MAX, 1);
        t[r] = (now() - s) / reps;
    }
    qsort(t, rounds, sizeof(double), cmp);
    uint64_t sum = 0;
    for (size_t i = 0; i < (size_t)rows * n; i++) { uint32_t u; memcpy(&u, o + i, 4); sum = sum * 1099511628211ull + u; }
    double med = t[rounds / 2];
    printf("%d rows × %d → %d: median %.4f ms, %.1f GFLOP/s", rows, k, n, med * 1e3, 2.0 * rows * k * n / med / 1e9);
#if defined(__x86_64__)
    printf(" (vdpbf16ps alone %.1f)", peak());
#endif
    printf(", output checksum %016llx\n", (unsigned long long)sum);
    return 0;
}
