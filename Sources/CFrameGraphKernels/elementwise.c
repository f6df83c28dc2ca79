// Two elementwise patterns of MediaPipe's segmentation decoders, each one pass over full-resolution
// tensors instead of two (see fg_kernels.h): a channel gate applied and a skip added
// (out = a · gate[c] + b), and an addition whose only reader is a global average pool (the mean per
// channel of a + b, the sum never written).
#include "cpu.h"
#include "fg_kernels.h"
#include <stddef.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

static void scale_add_scalar(const float *a, const float *gate, const float *b, size_t pixels, size_t c, float *out) {
    for (size_t p = 0; p < pixels; p++) {
        for (size_t ch = 0; ch < c; ch++) {
            // Two roundings, as two separate operations have.
            float v = a[p * c + ch] * gate[ch];
            out[p * c + ch] = v + b[p * c + ch];
        }
    }
}

#if FG_HAVE_AVX2_BUILD
FG_AVX2 static void scale_add_avx2(const float *a, const float *gate, const float *b, size_t pixels, size_t c, float *out) {
    if (c % 8 != 0) {
        scale_add_scalar(a, gate, b, pixels, c, out);
        return;
    }
    for (size_t p = 0; p < pixels; p++) {
        for (size_t ch = 0; ch < c; ch += 8) {
            size_t i = p * c + ch;
            __m256 v = _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(gate + ch));
            _mm256_storeu_ps(out + i, _mm256_add_ps(v, _mm256_loadu_ps(b + i)));
        }
    }
}
#endif

void fg_scale_add(const float *a, const float *gate, const float *b, size_t pixels, size_t channels, float *out, int allow_simd) {
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        scale_add_avx2(a, gate, b, pixels, channels, out);
        return;
    }
#endif
    (void)allow_simd;
    scale_add_scalar(a, gate, b, pixels, channels, out);
}

/// Sums per channel taken in eight interleaved runs of pixels (pixel p into run p mod 8), then the
/// runs added in order: the AVX2 build keeps the eight runs of a channel block in eight registers.
enum { RUNS = 8 };

static void add_mean_scalar(const float *a, const float *b, size_t pixels, size_t c, float *mean) {
    for (size_t ch = 0; ch < c; ch++) {
        float run[RUNS] = {0};
        for (size_t p = 0; p < pixels; p++) {
            float v = a[p * c + ch] + b[p * c + ch];
            run[p % RUNS] += v;
        }
        float s = run[0];
        for (int r = 1; r < RUNS; r++) s += run[r];
        mean[ch] = s / (float)pixels;
    }
}

#if FG_HAVE_AVX2_BUILD
FG_AVX2 static void add_mean_avx2(const float *a, const float *b, size_t pixels, size_t c, float *mean) {
    if (c % 8 != 0) {
        add_mean_scalar(a, b, pixels, c, mean);
        return;
    }
    for (size_t ch = 0; ch < c; ch += 8) {
        __m256 run[RUNS];
        for (int r = 0; r < RUNS; r++) run[r] = _mm256_setzero_ps();
        size_t p = 0;
        for (; p + RUNS <= pixels; p += RUNS) {
            for (int r = 0; r < RUNS; r++) {
                size_t i = (p + (size_t)r) * c + ch;
                run[r] = _mm256_add_ps(run[r], _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
            }
        }
        for (int r = 0; p < pixels; p++, r++) {
            size_t i = p * c + ch;
            run[r] = _mm256_add_ps(run[r], _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
        }
        __m256 s = run[0];
        for (int r = 1; r < RUNS; r++) s = _mm256_add_ps(s, run[r]);
        _mm256_storeu_ps(mean + ch, _mm256_div_ps(s, _mm256_set1_ps((float)pixels)));
    }
}
#endif

void fg_add_mean(const float *a, const float *b, size_t pixels, size_t channels, float *mean, int allow_simd) {
    if (pixels == 0) return;
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        add_mean_avx2(a, b, pixels, channels, mean);
        return;
    }
#endif
    (void)allow_simd;
    add_mean_scalar(a, b, pixels, channels, mean);
}
