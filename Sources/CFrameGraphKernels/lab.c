// Lab kernels (see fg_kernels.h). The same formulas as FrameGraphFilters/LabColor.swift: f(t) is the
// cube root above 0.008856 (inverse cube root from a bit-level guess and three Newton steps), the
// linear segment below; its inverse is the cube above 0.2068966.
#include "fg_kernels.h"
#include "cpu.h"
#include <stdint.h>
#include <string.h>
#include "lab_f.h"

static inline float fg_clip01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

#define FG_LAB_BODY                                                                       \
    for (size_t i = 0; i < n; i++) {                                                      \
        float x = m[0] * r[i] + m[1] * g[i] + m[2] * b[i];                                \
        float y = m[3] * r[i] + m[4] * g[i] + m[5] * b[i];                                \
        float z = m[6] * r[i] + m[7] * g[i] + m[8] * b[i];                                \
        float fx = fg_f(x), fy = fg_f(y), fz = fg_f(z);                                   \
        l[i] = 116.0f * fy - 16.0f;                                                       \
        a[i] = 500.0f * (fx - fy);                                                        \
        bb[i] = 200.0f * (fy - fz);                                                       \
    }

#define FG_LIGHTNESS_BODY                                                                 \
    for (size_t i = 0; i < n; i++) {                                                      \
        l[i] = 116.0f * fg_f(m[0] * r[i] + m[1] * g[i] + m[2] * b[i]) - 16.0f;            \
    }

#define FG_INDEX_BODY                                                                     \
    for (size_t i = 0; i < n; i++) {                                                      \
        float fy = (l[i] + 16.0f) * (1.0f / 116.0f);                                      \
        float fx = fy + a[i] * (1.0f / 500.0f);                                           \
        float fz = fy - bb[i] * (1.0f / 200.0f);                                          \
        fz = fz > 0.0f ? fz : 0.0f;                                                       \
        float X = fg_finv(fx), Y = fg_finv(fy), Z = fg_finv(fz);                          \
        r[i] = fg_clip01(inv[0] * X + inv[1] * Y + inv[2] * Z) * scale + 0.5f;            \
        g[i] = fg_clip01(inv[3] * X + inv[4] * Y + inv[5] * Z) * scale + 0.5f;            \
        b[i] = fg_clip01(inv[6] * X + inv[7] * Y + inv[8] * Z) * scale + 0.5f;            \
    }

#if FG_HAVE_AVX2_BUILD
static FG_AVX2 void lab_avx2(const float *r, const float *g, const float *b, float *l, float *a, float *bb,
                             size_t n, const float m[9]) { FG_LAB_BODY }
static FG_AVX2 void lightness_avx2(const float *r, const float *g, const float *b, float *l, size_t n,
                                   const float m[3]) { FG_LIGHTNESS_BODY }
static FG_AVX2 void index_avx2(const float *l, const float *a, const float *bb, float *r, float *g, float *b,
                               size_t n, const float inv[9], float scale) { FG_INDEX_BODY }
#else
#define lab_avx2(...) ((void)0)
#define lightness_avx2(...) ((void)0)
#define index_avx2(...) ((void)0)
#endif

static void lab_base(const float *r, const float *g, const float *b, float *l, float *a, float *bb,
                     size_t n, const float m[9]) { FG_LAB_BODY }
static void lightness_base(const float *r, const float *g, const float *b, float *l, size_t n,
                           const float m[3]) { FG_LIGHTNESS_BODY }
static void index_base(const float *l, const float *a, const float *bb, float *r, float *g, float *b,
                       size_t n, const float inv[9], float scale) { FG_INDEX_BODY }

void fg_lab_from_linear(const float *r, const float *g, const float *b, float *l, float *a, float *bb,
                        size_t n, const float m[9]) {
    if (fg_has_avx2()) lab_avx2(r, g, b, l, a, bb, n, m); else lab_base(r, g, b, l, a, bb, n, m);
}

void fg_lightness_from_linear(const float *r, const float *g, const float *b, float *l, size_t n, const float m[3]) {
    if (fg_has_avx2()) lightness_avx2(r, g, b, l, n, m); else lightness_base(r, g, b, l, n, m);
}

void fg_linear_index_from_lab(const float *l, const float *a, const float *bb, float *r, float *g, float *b,
                              size_t n, const float inv[9], float scale) {
    if (fg_has_avx2()) index_avx2(l, a, bb, r, g, b, n, inv, scale); else index_base(l, a, bb, r, g, b, n, inv, scale);
}
