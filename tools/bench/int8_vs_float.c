// Would an int8 path pay here? One 1×1 convolution at the sizes MediaPipe's selfie segmentation
// runs, four ways on the same data, alternated 51 times, medians printed:
//   XNNPACK f32, XNNPACK qc8 (int8 activations, int8 weights with a scale per output channel: the
//   `precision=int8` issue's suggestion, in the XNNPACK snapshot Debian ships), FrameGraph's own f32
//   kernel (what runs today), XNNPACK's f32 → qs8 conversion of the input (the price of entering
//   int8 from a float neighbour), and a plain AVX-512 VNNI loop written here (vpdpbusd, four pixels
//   at a time, the same quantisation as XNNPACK's; checked against XNNPACK's output): what an own
//   int8 kernel could reach on this CPU, a probe, not a kernel of the project.
//   tools/bench/int8_vs_float.sh     (builds this with the toolchain's clang and runs the cases)
#include <xnnpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include "fg_kernels.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

#if defined(__x86_64__)
#include <immintrin.h>
#define VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
/// out[p][n] = clamp(round(Σₖ (u[p][k] − 128)·w[n][k] + bias[n]) · scale[n]), u = input + 128 as
/// bytes. `wz`: per block of 16 outputs and per 4 inputs, 16 lanes of 4 weights; `bias` already
/// holds −128·Σₖ w[n][k]; N padded to 16 in wz, bias and scale, stores masked to N.
VNNI static void vnni_pointwise(const uint8_t *u, size_t M, int K, const __m512i *wz, const int32_t *bias, const float *scale,
                                int N, int8_t *out) {
  const int blocks = (N + 15) / 16, kq = K / 4;
  const __m512i lo = _mm512_set1_epi32(-128), hi = _mm512_set1_epi32(127);
  size_t p = 0;
  for (; p + 4 <= M; p += 4) {
    for (int nb = 0; nb < blocks; nb++) {
      __m512i acc[4];
      const __m512i b = _mm512_loadu_si512(bias + 16 * nb);
      for (int i = 0; i < 4; i++) acc[i] = b;
      for (int q = 0; q < kq; q++) {
        const __m512i w = wz[nb * kq + q];
        for (int i = 0; i < 4; i++) {
          int32_t four;
          __builtin_memcpy(&four, u + (p + i) * K + 4 * q, 4);
          acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_set1_epi32(four), w);
        }
      }
      const __m512 sc = _mm512_loadu_ps(scale + 16 * nb);
      const int left = N - 16 * nb;
      const __mmask16 keep = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
      for (int i = 0; i < 4; i++) {
        __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[i]), sc));
        q = _mm512_min_epi32(_mm512_max_epi32(q, lo), hi);
        _mm_mask_storeu_epi8(out + (p + i) * N + 16 * nb, keep, _mm512_cvtepi32_epi8(q));
      }
    }
  }
  for (; p < M; p++) {
    for (int n = 0; n < N; n++) {
      const int8_t *wn = (const int8_t *)wz;  // scalar rest: unpack from the blocked layout
      int32_t a = bias[n];
      for (int k = 0; k < K; k++) a += (int32_t)u[p * K + k] * wn[((n / 16) * kq + k / 4) * 64 + (n % 16) * 4 + k % 4];
      long r = lrintf((float)a * scale[n]);
      out[p * N + n] = (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
    }
  }
}
#endif
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s H K N\n", argv[0]); return 2; }
  int H = atoi(argv[1]), K = atoi(argv[2]), N = atoi(argv[3]);
  size_t M = (size_t)H * H;
  float *in = aligned_alloc(64, M * K * 4 + 64), *w = malloc(N * K * 4), *b = malloc(N * 4);
  float *o1 = aligned_alloc(64, M * N * 4 + 64), *o2 = aligned_alloc(64, M * N * 4 + 64);
  int8_t *qin = aligned_alloc(64, M * K + 64), *qout = aligned_alloc(64, M * N + 64), *qw = malloc(N * K);
  int32_t *qb = malloc(N * 4);
  float *wscale = malloc(N * 4);
  for (size_t i = 0; i < M * K; i++) in[i] = (rand() % 1000) / 500.0f - 1;
  for (int i = 0; i < N * K; i++) w[i] = (rand() % 1000) / 5000.0f - 0.1f;
  for (int i = 0; i < N; i++) b[i] = (rand() % 100) / 100.0f;
  // Per-output-channel symmetric weights, input scale 1/127 (range ±1), output scale from the range.
  const float in_scale = 1.0f / 127, out_scale = 4.0f / 127;
  for (int n = 0; n < N; n++) {
    float mx = 1e-9f;
    for (int k = 0; k < K; k++) mx = fmaxf(mx, fabsf(w[n * K + k]));
    wscale[n] = mx / 127;
    for (int k = 0; k < K; k++) qw[n * K + k] = (int8_t)lrintf(w[n * K + k] / wscale[n]);
    qb[n] = (int32_t)lrintf(b[n] / (in_scale * wscale[n]));
  }
  if (xnn_initialize(NULL) != xnn_status_success) { puts("xnn_initialize"); return 1; }
  xnn_operator_t f32 = NULL, qc8 = NULL, cvt = NULL;
  if (xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, K, N, K, N, w, b, -INFINITY, INFINITY, 0, &f32) ||
      xnn_setup_convolution2d_nhwc_f32(f32, 1, H, H, in, o1, NULL)) { puts("f32"); return 1; }
  if (xnn_create_convolution2d_nhwc_qc8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, K, N, K, N, 0, in_scale, wscale, qw, qb, 0, out_scale,
                                        -128, 127, 0, &qc8) ||
      xnn_setup_convolution2d_nhwc_qc8(qc8, 1, H, H, qin, qout, NULL)) { puts("qc8"); return 1; }
  if (xnn_create_convert_nc_f32_qs8(K, K, K, in_scale, 0, -128, 127, 0, &cvt) ||
      xnn_setup_convert_nc_f32_qs8(cvt, M, in, qin, NULL)) { puts("convert"); return 1; }
  float *packed = aligned_alloc(64, fg_conv_packed_count(K, N) * 4 + 64);
  fg_conv_pack(w, b, K, N, packed);
  fg_conv_epilogue e = {-INFINITY, INFINITY, NULL, 0, 0, -INFINITY, INFINITY, NULL, 0};
  // The VNNI probe's operands: unsigned input, blocked weights, bias with the 128 offset folded in.
  const int blocks = (N + 15) / 16, kq = K / 4;
  const int vnni = K % 4 == 0 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
  uint8_t *u = aligned_alloc(64, M * K + 64);
  int8_t *vout = aligned_alloc(64, M * N + 64);
  int8_t *wz = aligned_alloc(64, (size_t)blocks * kq * 64 + 64);
  int32_t *vbias = calloc((size_t)blocks * 16, 4);
  float *vscale = calloc((size_t)blocks * 16, 4);
  for (size_t i = 0; i < (size_t)blocks * kq * 64; i++) wz[i] = 0;
  for (int n = 0; n < N; n++) {
    int32_t sum = 0;
    for (int k = 0; k < K; k++) {
      wz[((n / 16) * kq + k / 4) * 64 + (n % 16) * 4 + k % 4] = qw[n * K + k];
      sum += qw[n * K + k];
    }
    vbias[n] = qb[n] - 128 * sum;
    vscale[n] = in_scale * wscale[n] / out_scale;
  }
  double tf[51], tq[51], to[51], tc[51], tv[51];
  for (int r = 0; r < 51; r++) {
    double t0 = now(); xnn_run_operator(f32, NULL);
    double t1 = now(); xnn_run_operator(cvt, NULL);
    double t2 = now(); xnn_run_operator(qc8, NULL);
    double t3 = now(); fg_pointwise_conv(in, M, K, packed, N, o2, &e, 1);
    double t4 = now();
    if (r == 0) for (size_t i = 0; i < M * K; i++) u[i] = (uint8_t)(qin[i] + 128);  // as a u8 neighbour would write it
#if defined(__x86_64__)
    if (vnni) vnni_pointwise(u, M, K, (const __m512i *)(const void *)wz, vbias, vscale, N, vout);
#endif
    double t5 = now();
    tf[r] = t1 - t0; tc[r] = t2 - t1; tq[r] = t3 - t2; to[r] = t4 - t3; tv[r] = t5 - t4;
  }
  qsort(tf, 51, 8, cmp); qsort(tq, 51, 8, cmp); qsort(to, 51, 8, cmp); qsort(tc, 51, 8, cmp); qsort(tv, 51, 8, cmp);
  int vdiff = 0;  // the probe against XNNPACK's int8 result, in output steps
  for (size_t i = 0; i < M * N && vnni; i++) vdiff = abs(vout[i] - qout[i]) > vdiff ? abs(vout[i] - qout[i]) : vdiff;
  double err = 0;  // the int8 result against float, in output steps
  for (size_t i = 0; i < M * N; i++) err = fmax(err, fabs(qout[i] * out_scale - fmaxf(-128 * out_scale, fminf(127 * out_scale, o1[i]))) / out_scale);
  printf("%3dx%-3d K=%-3d N=%-3d  xnnpack f32 %7.1f us  xnnpack qc8 %7.1f us  own f32 %7.1f us  f32→qs8 input %6.1f us  "
         "qc8/own %.2f  max |int8 − f32| %.1f steps", H, H, K, N, tf[25] * 1e6, tq[25] * 1e6, to[25] * 1e6, tc[25] * 1e6,
         tq[25] / to[25], err);
  if (vnni) printf("  VNNI probe %7.1f us  probe/own %.2f  max |probe − qc8| %d step(s)", tv[25] * 1e6, tv[25] / to[25], vdiff);
  printf("\n");
  return 0;
}
