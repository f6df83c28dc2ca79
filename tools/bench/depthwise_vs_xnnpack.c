// One depthwise convolution (SAME padding, optional ReLU6 clamp), XNNPACK's operator against
// FrameGraph's fg_dwconv_part on the same data, alternated 51 times; prints the medians, their
// ratio and the largest difference.
//   tools/bench/depthwise_vs_xnnpack.sh      (builds this with the toolchain's clang and runs the cases)
// Arguments: SIZE CHANNELS KERNEL STRIDE (a SIZE×SIZE input).
#include <xnnpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include "fg_kernels.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: %s SIZE CHANNELS KERNEL STRIDE\n", argv[0]); return 2; }
    int H = atoi(argv[1]), C = atoi(argv[2]), K = atoi(argv[3]), S = atoi(argv[4]);
    int OH = (H + S - 1) / S, total = (OH - 1) * S + K - H, pad = total > 0 ? total / 2 : 0, padEnd = total > 0 ? total - pad : 0;
    size_t in_n = (size_t)H * H * C, out_n = (size_t)OH * OH * C;
    float *in = aligned_alloc(64, in_n * 4 + 64), *w = malloc((size_t)K * K * C * 4), *b = malloc((size_t)C * 4);
    float *o1 = aligned_alloc(64, out_n * 4 + 64), *o2 = aligned_alloc(64, out_n * 4 + 64);
    for (size_t i = 0; i < in_n; i++) in[i] = (rand() % 1000) / 500.0f - 1;
    for (int i = 0; i < K * K * C; i++) w[i] = (rand() % 1000) / 2000.0f - 0.25f;
    for (int i = 0; i < C; i++) b[i] = (rand() % 100) / 100.0f;
    xnn_initialize(NULL);
    xnn_operator_t op = NULL;
    // XNNPACK takes depthwise weights as [1, KH, KW, C] with groups = C, 1 channel per group.
    if (xnn_create_convolution2d_nhwc_f32(pad, padEnd, padEnd, pad, K, K, S, S, 1, 1, C, 1, 1, C, C, w, b, 0, 6,
                                          XNN_FLAG_DEPTHWISE_CONVOLUTION, &op)) { puts("create"); return 1; }
    if (xnn_setup_convolution2d_nhwc_f32(op, 1, H, H, in, o1, NULL)) { puts("setup"); return 1; }
    float *packed = aligned_alloc(64, fg_dwconv_packed_count(K * K, C) * 4 + 64);
    fg_dwconv_pack(w, b, K * K, C, packed);
    fg_conv_geometry g = {1, H, H, C, K, K, S, S, 1, 1, pad, pad, OH, OH};
    fg_conv_epilogue e = {0, 6, NULL, 0, 0, -INFINITY, INFINITY, NULL, 0};
    double tx[51], tf[51];
    for (int r = 0; r < 51; r++) {
        double t0 = now(); xnn_run_operator(op, NULL);
        double t1 = now(); fg_dwconv_part(in, &g, packed, o2, &e, 0, (size_t)-1, 1);
        double t2 = now();
        tx[r] = t1 - t0; tf[r] = t2 - t1;
    }
    qsort(tx, 51, 8, cmp); qsort(tf, 51, 8, cmp);
    double md = 0;
    for (size_t i = 0; i < out_n; i++) { double d = fabs(o1[i] - o2[i]); if (d > md) md = d; }
    printf("%3dx%-3d C=%-4d %dx%d/%d  xnnpack %7.1f us  own %7.1f us  ratio %.2f  maxdiff %g\n", H, H, C, K, K, S, tx[25] * 1e6, tf[25] * 1e6,
           tf[25] / tx[25], md);
    return 0;
}
