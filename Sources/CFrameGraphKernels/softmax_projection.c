// A softmax over each row followed by a small 1×1 projection, in one pass: the colorizer's decoding
// (logits × 1/T → softmax over the a/b bins → annealed mean, a 1×1 convolution whose weights are the
// bin centres). See fg_kernels.h.
//
// Why our own: as separate operations the softmax writes a probability tensor as large as the logits
// (64×64×169 floats for the colorizer) and the projection reads it back, through a matrix kernel
// that fills only 2 of its 16 columns. Here each row's exponentials stay in a row of scratch and
// the few dot products are taken straight from it.
//
// The AVX2 build sums eight lanes at a time and then adds the lanes in a fixed tree; the scalar
// build does the same sums lane by lane in the same order, with the same exponential (exp.h), so
// the two agree bit for bit.
#include "epilogue.h"
#include "exp.h"
#include <stdint.h>
#include <string.h>

enum { LANES = 8 };

size_t fg_softmax_project_padded(int k) {
    return ((size_t)k + LANES - 1) / LANES * LANES;
}

void fg_softmax_project_pack(const float *weights, int k, int n, float *packed) {
    size_t kp = fg_softmax_project_padded(k);
    for (int c = 0; c < n; c++) {
        for (size_t i = 0; i < kp; i++) packed[(size_t)c * kp + i] = i < (size_t)k ? weights[(size_t)c * (size_t)k + i] : 0.0f;
    }
}

/// The eight lanes' partial sums added as the AVX2 build adds them: lane j with j+4, then with j+2,
/// then the two left.
static inline float tree(const float s[LANES]) {
    float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
    float u0 = t0 + t2, u1 = t1 + t3;
    return u0 + u1;
}

static void rows_scalar(const float *logits, size_t first, size_t end, int k, float scale, const float *packed, const float *bias,
                        int n, float lo, float hi, float *out, float *scratch) {
    size_t kp = fg_softmax_project_padded(k);
    for (size_t row = first; row < end; row++) {
        const float *l = logits + row * (size_t)k;
        float m[LANES];
        for (int j = 0; j < LANES; j++) m[j] = -INFINITY;
        for (size_t i = 0; i < (size_t)k; i++) m[i % LANES] = fmaxf(m[i % LANES], l[i] * scale);
        float top = m[0];
        for (int j = 1; j < LANES; j++) top = fmaxf(top, m[j]);
        float s[LANES] = {0};
        for (size_t i = 0; i < kp; i++) {
            // Two statements, so that the compiler does not fuse the product and the difference
            // into one rounding (the AVX2 build rounds both).
            float t = i < (size_t)k ? l[i] * scale : 0.0f;
            float e = i < (size_t)k ? fg_exp_scalar(t - top) : 0.0f;
            scratch[i] = e;
            s[i % LANES] += e;
        }
        float sum = tree(s);
        for (int c = 0; c < n; c++) {
            const float *w = packed + (size_t)c * kp;
            float acc[LANES] = {0};
            for (size_t i = 0; i < kp; i++) acc[i % LANES] = fmaf(scratch[i], w[i], acc[i % LANES]);
            float v = (bias ? bias[c] : 0.0f) + tree(acc) / sum;
            out[row * (size_t)n + (size_t)c] = fminf(fmaxf(v, lo), hi);
        }
    }
}

#if FG_HAVE_AVX2_BUILD
FG_AVX2 static inline float tree8(__m256 v) {
    float s[LANES];
    _mm256_storeu_ps(s, v);
    return tree(s);
}

FG_AVX2 static void rows_avx2(const float *logits, size_t first, size_t end, int k, float scale, const float *packed, const float *bias,
                              int n, float lo, float hi, float *out, float *scratch) {
    size_t kp = fg_softmax_project_padded(k), full = (size_t)k / LANES * LANES;
    __m256 vs = _mm256_set1_ps(scale);
    __m256i tail = fg_lanes((long)k - (long)full);
    for (size_t row = first; row < end; row++) {
        const float *l = logits + row * (size_t)k;
        __m256 m = _mm256_set1_ps(-INFINITY);
        for (size_t i = 0; i < full; i += LANES) m = _mm256_max_ps(m, _mm256_mul_ps(_mm256_loadu_ps(l + i), vs));
        if (full < (size_t)k) {
            __m256 t = _mm256_mul_ps(_mm256_maskload_ps(l + full, tail), vs);
            m = _mm256_blendv_ps(m, _mm256_max_ps(m, t), _mm256_castsi256_ps(tail));
        }
        float lanes_max[LANES];
        _mm256_storeu_ps(lanes_max, m);
        float top = lanes_max[0];
        for (int j = 1; j < LANES; j++) top = fmaxf(top, lanes_max[j]);
        __m256 vt = _mm256_set1_ps(top), s = _mm256_setzero_ps();
        for (size_t i = 0; i < full; i += LANES) {
            __m256 e = fg_exp8(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(l + i), vs), vt));
            _mm256_storeu_ps(scratch + i, e);
            s = _mm256_add_ps(s, e);
        }
        if (full < (size_t)k) {
            __m256 e = fg_exp8(_mm256_sub_ps(_mm256_mul_ps(_mm256_maskload_ps(l + full, tail), vs), vt));
            e = _mm256_and_ps(e, _mm256_castsi256_ps(tail));
            _mm256_storeu_ps(scratch + full, e);
            s = _mm256_add_ps(s, e);
        }
        float sum = tree8(s);
        for (int c = 0; c < n; c++) {
            const float *w = packed + (size_t)c * kp;
            __m256 acc = _mm256_setzero_ps();
            for (size_t i = 0; i < kp; i += LANES) acc = _mm256_fmadd_ps(_mm256_loadu_ps(scratch + i), _mm256_loadu_ps(w + i), acc);
            float v = (bias ? bias[c] : 0.0f) + tree8(acc) / sum;
            out[row * (size_t)n + (size_t)c] = fminf(fmaxf(v, lo), hi);
        }
    }
}
#endif

void fg_softmax_project(const float *logits, size_t first, size_t end, int k, float scale, const float *packed, const float *bias,
                        int n, float min, float max, float *out, float *scratch, int allow_simd) {
    if (k <= 0 || n <= 0 || first >= end) return;
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        rows_avx2(logits, first, end, k, scale, packed, bias, n, min, max, out, scratch);
        return;
    }
#endif
    (void)allow_simd;
    rows_scalar(logits, first, end, k, scale, packed, bias, n, min, max, out, scratch);
}
