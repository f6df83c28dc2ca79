// CIE Lab's f and its inverse, shared by lab.c and chroma_recombine.c (internal to
// CFrameGraphKernels): f(t) is the cube root above 0.008856 (inverse cube root from a bit-level
// guess and three Newton steps), the linear segment below; its inverse is the cube above
// 0.2068966. Each including file's FP_CONTRACT setting applies to its copies.
#ifndef FRAMEGRAPH_KERNELS_LAB_F_H
#define FRAMEGRAPH_KERNELS_LAB_F_H
#include <stdint.h>
#include <string.h>

static inline float fg_f(float t) {
    float s = t > 1e-30f ? t : 1e-30f;
    uint32_t bits;
    memcpy(&bits, &s, 4);
    bits = 0x54A2FA8Cu - bits / 3u;
    float r;
    memcpy(&r, &bits, 4);
    r = r * (4.0f - s * r * r * r) * (1.0f / 3.0f);
    r = r * (4.0f - s * r * r * r) * (1.0f / 3.0f);
    r = r * (4.0f - s * r * r * r) * (1.0f / 3.0f);
    float root = s * r * r;
    float linear = 7.787f * t + 16.0f / 116.0f;
    return t > 0.008856f ? root : linear;
}

static inline float fg_finv(float v) {
    float cube = v * v * v;
    float linear = (v - 16.0f / 116.0f) * (1.0f / 7.787f);
    return v > 0.2068966f ? cube : linear;
}

#endif
