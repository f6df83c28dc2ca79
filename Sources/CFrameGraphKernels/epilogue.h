// What a convolution kernel does to each sum after its bias (fg_conv_epilogue in fg_kernels.h), in
// both builds, plus the lane helpers the AVX2 builds share (internal to CFrameGraphKernels). The
// scalar `fg_finish` is the definition; `fg_finish8` does the same on eight channels, in the same
// order, so the builds agree bit for bit.
#ifndef FRAMEGRAPH_KERNELS_EPILOGUE_H
#define FRAMEGRAPH_KERNELS_EPILOGUE_H
#include "fg_kernels.h"
#include "cpu.h"
#include <math.h>
#if FG_HAVE_AVX2_BUILD
#include <immintrin.h>
#endif

/// What an epilogue does, as bits, so that kernels can be compiled once per combination
/// (`fg_epilogue_flags`, then FG_EPILOGUE_DISPATCH): twelve combinations.
enum {
    FG_EPILOGUE_RESIDUAL = 1,    // add the residual
    FG_EPILOGUE_PRELU = 2,       // PReLU (takes precedence over hard-swish, as in fg_finish)
    FG_EPILOGUE_HSWISH = 4,      // hard-swish
    FG_EPILOGUE_UNCLAMPED = 8,   // every clamp bound is infinite: the clamps are skipped
};

/// Whether every clamp bound of `e` is infinite: then the clamps change no number (only a NaN,
/// which they would turn into a bound), and both builds skip them, so a NaN stays a NaN.
static inline int fg_epilogue_unclamped(const fg_conv_epilogue *e) {
    return isinf(e->min1) && e->min1 < 0 && isinf(e->max1) && e->max1 > 0 && isinf(e->min2) && e->min2 < 0
        && isinf(e->max2) && e->max2 > 0;
}

static inline int fg_epilogue_flags(const fg_conv_epilogue *e) {
    int flags = e->residual ? FG_EPILOGUE_RESIDUAL : 0;
    if (e->prelu_slopes) {
        flags |= FG_EPILOGUE_PRELU;
    } else if (e->hard_swish) {
        flags |= FG_EPILOGUE_HSWISH;
    }
    return flags | (fg_epilogue_unclamped(e) ? FG_EPILOGUE_UNCLAMPED : 0);
}

/// Calls CALL(F) with F the constant equal to `flags` (one of the twelve combinations).
#define FG_EPILOGUE_DISPATCH(flags, CALL)                                                                   \
    switch (flags) {                                                                                        \
    case 0: CALL(0); break;                                                                                 \
    case 1: CALL(1); break;                                                                                 \
    case 2: CALL(2); break;                                                                                 \
    case 3: CALL(3); break;                                                                                 \
    case 4: CALL(4); break;                                                                                 \
    case 5: CALL(5); break;                                                                                 \
    case 8: CALL(8); break;                                                                                 \
    case 9: CALL(9); break;                                                                                 \
    case 10: CALL(10); break;                                                                               \
    case 11: CALL(11); break;                                                                               \
    case 12: CALL(12); break;                                                                               \
    default: CALL(13); break;                                                                               \
    }

/// The epilogue on one value of channel c of output pixel `row`.
static inline float fg_finish(float v, size_t row, size_t c, const fg_conv_epilogue *e) {
    int clamped = !fg_epilogue_unclamped(e);
    if (clamped) v = fminf(fmaxf(v, e->min1), e->max1);
    if (e->residual && c < (size_t)e->residual_channels) v += e->residual[row * e->residual_stride + c];
    if (clamped) v = fminf(fmaxf(v, e->min2), e->max2);
    if (e->prelu_slopes) {
        v = v > 0.0f ? v : v * e->prelu_slopes[c];
    } else if (e->hard_swish) {
        v = v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
    }
    return v;
}

#if FG_HAVE_AVX2_BUILD
/// Lanes 0..count-1 on (count clamped to 0…8), for masked loads.
FG_AVX2 static inline __m256i fg_lanes(long count) {
    if (count < 0) count = 0;
    if (count > 8) count = 8;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Stores the first `count` lanes of `v` (none when count ≤ 0), without a masked store (AMD cores
/// store masked vectors slowly).
FG_AVX2 static inline void fg_store_first(float *o, __m256 v, long count) {
    if (count >= 8) {
        _mm256_storeu_ps(o, v);
    } else if (count > 0) {
        float lanes_out[8];
        _mm256_storeu_ps(lanes_out, v);
        for (long j = 0; j < count; j++) o[j] = lanes_out[j];
    }
}

/// Eight channels c…c+7 of output pixel `row` (`slope`: their PReLU slopes, when there are any;
/// the bounds broadcast from the epilogue), doing what `flags` (a constant) says.
FG_AVX2 __attribute__((always_inline)) static inline __m256 fg_finish8(const int flags, __m256 v, size_t row, size_t c, __m256 slope,
                                                                      const fg_conv_epilogue *e, __m256 min1, __m256 max1,
                                                                      __m256 min2, __m256 max2) {
    if (!(flags & FG_EPILOGUE_UNCLAMPED)) v = _mm256_min_ps(_mm256_max_ps(v, min1), max1);
    if (flags & FG_EPILOGUE_RESIDUAL) {
        long have = (long)e->residual_channels - (long)c;
        if (have >= 8) {
            v = _mm256_add_ps(v, _mm256_loadu_ps(e->residual + row * e->residual_stride + c));
        } else if (have > 0) {
            v = _mm256_add_ps(v, _mm256_maskload_ps(e->residual + row * e->residual_stride + c, fg_lanes(have)));
        }
    }
    if (!(flags & FG_EPILOGUE_UNCLAMPED)) v = _mm256_min_ps(_mm256_max_ps(v, min2), max2);
    if (flags & FG_EPILOGUE_PRELU) {
        v = _mm256_blendv_ps(v, _mm256_mul_ps(v, slope), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LE_OQ));
    } else if (flags & FG_EPILOGUE_HSWISH) {
        __m256 g = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, _mm256_set1_ps(3.0f)), _mm256_setzero_ps()), _mm256_set1_ps(6.0f));
        v = _mm256_mul_ps(_mm256_mul_ps(v, g), _mm256_set1_ps(1.0f / 6.0f));
    }
    return v;
}

/// Lanes 0..count-1 of sixteen (count clamped to 0…16), for AVX-512 masked loads and stores.
static inline __mmask16 fg_lanes16(long count) {
    if (count <= 0) return 0;
    if (count >= 16) return 0xFFFF;
    return (__mmask16)((1u << count) - 1u);
}

/// fg_finish8 on sixteen channels c…c+15 at once (AVX-512F): the same operations on each lane, so
/// the results are those of fg_finish8 and fg_finish bit for bit.
FG_AVX512 __attribute__((always_inline)) static inline __m512 fg_finish16(const int flags, __m512 v, size_t row, size_t c,
                                                                         __m512 slope, const fg_conv_epilogue *e, __m512 min1,
                                                                         __m512 max1, __m512 min2, __m512 max2) {
    if (!(flags & FG_EPILOGUE_UNCLAMPED)) v = _mm512_min_ps(_mm512_max_ps(v, min1), max1);
    if (flags & FG_EPILOGUE_RESIDUAL) {
        long have = (long)e->residual_channels - (long)c;
        if (have >= 16) {
            v = _mm512_add_ps(v, _mm512_loadu_ps(e->residual + row * e->residual_stride + c));
        } else if (have > 0) {
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(fg_lanes16(have), e->residual + row * e->residual_stride + c));
        }
    }
    if (!(flags & FG_EPILOGUE_UNCLAMPED)) v = _mm512_min_ps(_mm512_max_ps(v, min2), max2);
    if (flags & FG_EPILOGUE_PRELU) {
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LE_OQ), v, slope);
    } else if (flags & FG_EPILOGUE_HSWISH) {
        __m512 g = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, _mm512_set1_ps(3.0f)), _mm512_setzero_ps()), _mm512_set1_ps(6.0f));
        v = _mm512_mul_ps(_mm512_mul_ps(v, g), _mm512_set1_ps(1.0f / 6.0f));
    }
    return v;
}

/// The epilogue of MR rows of sixteen channels from c in AVX-512F registers (rows `n` floats apart
/// in `out`, from row `row`: a convolution's output rows, or a depthwise row's pixels), applied to
/// the accumulators `acc` and stored (masked where fewer than 16 channels are left). A macro, not a
/// function: the accumulator array must never have its address taken, or the compiler keeps it in
/// memory.
#define FINISH_TILE512(flags, mr, acc, row, c, n, out, e)                                                          \
    do {                                                                                                            \
        __m512 min1_ = _mm512_set1_ps((e)->min1), max1_ = _mm512_set1_ps((e)->max1);                                 \
        __m512 min2_ = _mm512_set1_ps((e)->min2), max2_ = _mm512_set1_ps((e)->max2);                                 \
        long left_ = (long)(n) - (long)(c);                                                                         \
        __m512 slope_ = _mm512_setzero_ps();                                                                        \
        if ((flags) & FG_EPILOGUE_PRELU) slope_ = _mm512_maskz_loadu_ps(fg_lanes16(left_), (e)->prelu_slopes + (c)); \
        for (int r_ = 0; r_ < (mr); r_++) {                                                                         \
            float *o_ = (out) + ((row) + (size_t)r_) * (size_t)(n) + (c);                                           \
            __m512 v_ = fg_finish16(flags, acc[r_], (row) + (size_t)r_, (c), slope_, e, min1_, max1_, min2_, max2_); \
            if (left_ >= 16) {                                                                                      \
                _mm512_storeu_ps(o_, v_);                                                                           \
            } else {                                                                                                \
                _mm512_mask_storeu_ps(o_, fg_lanes16(left_), v_);                                                   \
            }                                                                                                       \
        }                                                                                                           \
    } while (0)
#endif
#endif
