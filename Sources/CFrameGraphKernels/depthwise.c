// Depthwise convolutions (one filter per channel, multiplier 1) over NHWC, read straight from the
// input (no indirection buffer, no copies), with the same fused epilogue as the dense kernel. See
// fg_kernels.h.
//
// Why our own: the XNNPACK snapshot's depthwise kernels go through an indirection buffer, one output
// pixel at a time with a pointer load per tap, and they end at the convolution's clamp, so a
// hard-swish or a residual addition after them is another pass. Here four output pixels of one row
// are done at once for sixteen channels (eight accumulators in registers, two weight vectors per
// tap). Pixels whose windows reach into the padding go through the same tile with each column
// checked; taps in the padding are skipped (in both builds, so they agree bit for bit).
#include "epilogue.h"
#include <stdint.h>
#include <string.h>

enum { BLOCK = 8 };

size_t fg_dwconv_packed_count(int taps, int c) {
    size_t blocks = ((size_t)c + BLOCK - 1) / BLOCK;
    return blocks * BLOCK * ((size_t)taps + 1);
}

void fg_dwconv_pack(const float *weights, const float *bias, int taps, int c, float *packed) {
    size_t blocks = ((size_t)c + BLOCK - 1) / BLOCK;
    for (size_t b = 0; b < blocks; b++) {
        float *block = packed + b * BLOCK * ((size_t)taps + 1);
        for (int j = 0; j < BLOCK; j++) {
            size_t ch = b * BLOCK + (size_t)j;
            int real = ch < (size_t)c;
            block[j] = real && bias ? bias[ch] : 0.0f;
            for (int t = 0; t < taps; t++) block[BLOCK * (size_t)(t + 1) + (size_t)j] = real ? weights[(size_t)t * (size_t)c + ch] : 0.0f;
        }
    }
}

size_t fg_dwconv_rows(const fg_conv_geometry *g) {
    return (size_t)g->batch * (size_t)g->out_h;
}

/// Where one output row's windows lie: its image, the kernel rows inside the input, and the output
/// columns whose windows lie wholly inside it horizontally ([inner_lo, inner_hi)).
typedef struct {
    size_t image, oy;
    long top;
    int ky_lo, ky_hi;
    int inner_lo, inner_hi;
} row_span;

static row_span span_of(const fg_conv_geometry *g, size_t row) {
    row_span s;
    s.image = row / (size_t)g->out_h;
    s.oy = row % (size_t)g->out_h;
    s.top = (long)s.oy * g->stride_h - g->pad_top;
    s.ky_lo = 0;
    while (s.ky_lo < g->kernel_h && s.top + (long)s.ky_lo * g->dilation_h < 0) s.ky_lo++;
    s.ky_hi = g->kernel_h;
    while (s.ky_hi > s.ky_lo && s.top + (long)(s.ky_hi - 1) * g->dilation_h >= g->in_h) s.ky_hi--;
    // Column ox is inner when ox·sw − pl ≥ 0 and ox·sw − pl + (kw−1)·dw ≤ in_w − 1.
    long lo = ((long)g->pad_left + g->stride_w - 1) / g->stride_w;
    long last = (long)g->in_w - 1 + g->pad_left - (long)(g->kernel_w - 1) * g->dilation_w;
    long hi = last < 0 ? 0 : last / g->stride_w + 1;
    if (lo > g->out_w) lo = g->out_w;
    if (hi > g->out_w) hi = g->out_w;
    if (hi < lo) hi = lo;
    s.inner_lo = (int)lo;
    s.inner_hi = (int)hi;
    return s;
}

static void dw_scalar(const float *input, const fg_conv_geometry *g, const float *packed, float *out,
                      const fg_conv_epilogue *e, size_t first, size_t end, size_t c0, size_t c1) {
    size_t c = (size_t)g->in_c, taps = (size_t)g->kernel_h * (size_t)g->kernel_w, bsize = BLOCK * (taps + 1);
    for (size_t row = first; row < end; row++) {
        row_span s = span_of(g, row);
        for (int ox = 0; ox < g->out_w; ox++) {
            size_t pixel = row * (size_t)g->out_w + (size_t)ox;
            long left = (long)ox * g->stride_w - g->pad_left;
            for (size_t ch = c0; ch < c1; ch++) {
                const float *w = packed + (ch / BLOCK) * bsize + ch % BLOCK;
                float acc = w[0];
                for (int ky = s.ky_lo; ky < s.ky_hi; ky++) {
                    const float *line = input + (s.image * (size_t)g->in_h + (size_t)(s.top + (long)ky * g->dilation_h)) * (size_t)g->in_w * c;
                    for (int kx = 0; kx < g->kernel_w; kx++) {
                        long ix = left + (long)kx * g->dilation_w;
                        if (ix < 0 || ix >= g->in_w) continue;
                        acc = fmaf(line[(size_t)ix * c + ch], w[BLOCK * (size_t)(1 + ky * g->kernel_w + kx)], acc);
                    }
                }
                out[pixel * c + ch] = fg_finish(acc, pixel, ch, e);
            }
        }
    }
}

#if FG_HAVE_AVX2_BUILD
enum { PIXELS = 4 };

/// One output row as the AVX2 tiles see it.
typedef struct {
    const float *image;  // the row's image (batch element)
    const fg_conv_geometry *g;
    const row_span *s;
    const float *packed;
    const fg_conv_epilogue *e;
    float *out;
    size_t c, bsize, row_pixel;
    size_t c0, c1;  // the channels this call computes: c0…c1−1 (c0 a multiple of 8)
    __m256 min1, max1, min2, max2;
} dw_row;

/// The epilogue of eight channels from cb of output pixel `pixel` (its accumulator `acc`), stored:
/// the first `have` only when `masked`.
FG_AVX2 __attribute__((always_inline)) static inline void finish_store8(const int flags, const int masked, const dw_row *r, __m256 acc,
                                                                        size_t pixel, size_t cb, __m256 slope, long have) {
    float *o = r->out + pixel * r->c + cb;
    __m256 v = fg_finish8(flags, acc, pixel, cb, slope, r->e, r->min1, r->max1, r->min2, r->max2);
    if (masked) {
        fg_store_first(o, v, have);
    } else {
        _mm256_storeu_ps(o, v);
    }
}

/// The fields of a dw_row that stay the same from row to row.
FG_AVX2 __attribute__((always_inline)) static inline dw_row dw_row_of(const fg_conv_geometry *g, const float *packed, float *out,
                                                                      const fg_conv_epilogue *e, size_t c0, size_t c1) {
    dw_row r;
    r.c0 = c0;
    r.c1 = c1;
    r.g = g;
    r.packed = packed;
    r.e = e;
    r.out = out;
    r.c = (size_t)g->in_c;
    r.bsize = BLOCK * ((size_t)g->kernel_h * (size_t)g->kernel_w + 1);
    r.min1 = _mm256_set1_ps(e->min1);
    r.max1 = _mm256_set1_ps(e->max1);
    r.min2 = _mm256_set1_ps(e->min2);
    r.max2 = _mm256_set1_ps(e->max2);
    r.s = NULL;
    r.image = NULL;
    r.row_pixel = 0;
    return r;
}

/// `r` moved to output row `row`, whose windows `s` describes.
FG_AVX2 __attribute__((always_inline)) static inline void dw_row_at(dw_row *r, const row_span *s, const float *input, size_t row) {
    r->s = s;
    r->image = input + s->image * (size_t)r->g->in_h * (size_t)r->g->in_w * r->c;
    r->row_pixel = row * (size_t)r->g->out_w;
}

/// Sixteen channels as one AVX-512F register from two blocks of eight of the packing.
FG_AVX512 __attribute__((always_inline)) static inline __m512 two_blocks(const float *low, const float *high) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(low))),
                                               _mm256_castps_pd(_mm256_loadu_ps(high)), 1));
}

/// Eight channels from `p`: the first `have` only when `masked` (the rest read as zero).
FG_AVX2 __attribute__((always_inline)) static inline __m256 load8(const float *p, int masked, __m256i mask) {
    return masked ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

/// `nb` blocks (1 or 2 × 8 channels from cb; with `masked`, one block of `have` < 8 channels) of
/// PIXELS output pixels from column ox, epilogue applied and stored (the first `count` pixels).
/// `checked`: each pixel's columns are checked (columns in the padding and pixels past `count` are
/// skipped), else every column of every pixel is inside the input. `flags`: what the epilogue does
/// (FG_EPILOGUE_…); `known_kw`: the kernel's width when it is one of the common ones (else 0). The
/// flags are constants at every call, so the loops unroll and the accumulators stay in registers.
FG_AVX2 __attribute__((always_inline)) static inline void tile(const int flags, const int known_kw, const int nb, const int masked,
                                                               const int checked, const dw_row *r, int ox, int count, size_t cb) {
    const fg_conv_geometry *g = r->g;
    const int kw = known_kw ? known_kw : g->kernel_w;
    size_t c = r->c;
    long have = (long)c - (long)cb;
    __m256i mask = fg_lanes(have);
    const float *w0 = r->packed + (cb / BLOCK) * r->bsize, *w1 = w0 + r->bsize;
    __m256 acc0[PIXELS], acc1[PIXELS];
    __m256 bias0 = _mm256_loadu_ps(w0), bias1 = nb > 1 ? _mm256_loadu_ps(w1) : bias0;
    for (int j = 0; j < PIXELS; j++) { acc0[j] = bias0; acc1[j] = bias1; }
    long left = (long)ox * g->stride_w - g->pad_left;
    size_t step = (size_t)g->stride_w * c, kstep = (size_t)g->dilation_w * c;
    // Checked: the kernel columns inside the input, per pixel ([lo, hi); none past `count`).
    int lo[PIXELS], hi[PIXELS];
    if (checked) {
        for (int j = 0; j < PIXELS; j++) {
            long ix = left + (long)j * g->stride_w;
            int l = 0, h = kw;
            while (l < h && ix + (long)l * g->dilation_w < 0) l++;
            while (h > l && ix + (long)(h - 1) * g->dilation_w >= g->in_w) h--;
            lo[j] = j < count ? l : 0;
            hi[j] = j < count ? h : 0;
        }
    }
    for (int ky = r->s->ky_lo; ky < r->s->ky_hi; ky++) {
        const float *line = r->image + (size_t)(r->s->top + (long)ky * g->dilation_h) * (size_t)g->in_w * c + cb;
        const float *k = w0 + BLOCK * (1 + (size_t)ky * (size_t)kw);
        if (checked) {
            for (int kx = 0; kx < kw; kx++, k += BLOCK) {
                __m256 k0 = _mm256_loadu_ps(k), k1 = nb > 1 ? _mm256_loadu_ps(k + r->bsize) : k0;
                for (int j = 0; j < PIXELS; j++) {
                    if (kx < lo[j] || kx >= hi[j]) continue;
                    const float *p = line + (size_t)(left + (long)j * g->stride_w + (long)kx * g->dilation_w) * c;
                    acc0[j] = _mm256_fmadd_ps(load8(p, masked, mask), k0, acc0[j]);
                    if (nb > 1) acc1[j] = _mm256_fmadd_ps(_mm256_loadu_ps(p + BLOCK), k1, acc1[j]);
                }
            }
        } else {
            const float *p = line + (size_t)left * c;
            for (int kx = 0; kx < kw; kx++, k += BLOCK, p += kstep) {
                __m256 k0 = _mm256_loadu_ps(k), k1 = nb > 1 ? _mm256_loadu_ps(k + r->bsize) : k0;
                for (int j = 0; j < PIXELS; j++) {
                    acc0[j] = _mm256_fmadd_ps(load8(p + (size_t)j * step, masked, mask), k0, acc0[j]);
                    if (nb > 1) acc1[j] = _mm256_fmadd_ps(_mm256_loadu_ps(p + (size_t)j * step + BLOCK), k1, acc1[j]);
                }
            }
        }
    }
    const fg_conv_epilogue *e = r->e;
    __m256 slope0 = _mm256_setzero_ps(), slope1 = _mm256_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) {
        slope0 = _mm256_maskload_ps(e->prelu_slopes + cb, mask);
        if (nb > 1) slope1 = _mm256_loadu_ps(e->prelu_slopes + cb + BLOCK);
    }
    for (int j = 0; j < PIXELS; j++) {
        if (checked && j >= count) break;
        size_t pixel = r->row_pixel + (size_t)ox + (size_t)j;
        finish_store8(flags, masked, r, acc0[j], pixel, cb, slope0, have);
        if (nb > 1) finish_store8(flags, 0, r, acc1[j], pixel, cb + BLOCK, slope1, 0);
    }
}

/// Eight channels from cb (the first `have` only, when `masked`) of WIDE consecutive output pixels
/// from column ox (the first `count` stored), for a kernel `kw` wide moved by `sw` (both constants;
/// dilation 1). Each input column of a window row is loaded once and multiplied into every output
/// pixel whose window holds it: WIDE + kw − 1 loads per kernel row for stride 1, instead of
/// WIDE · kw. `checked`: columns outside the input are skipped (they are padding for every pixel
/// that would use them). The taps of each output still come in (kernel row, kernel column) order,
/// as in the other paths.
enum { WIDE = 8 };
#if defined(__clang__)
#define FG_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define FG_UNROLL _Pragma("GCC unroll 64")
#else
#define FG_UNROLL
#endif
FG_AVX2 __attribute__((always_inline)) static inline void tile_wide(const int flags, const int kw, const int sw, const int masked,
                                                                    const int checked, const dw_row *r, int ox, int count, size_t cb) {
    const fg_conv_geometry *g = r->g;
    size_t c = r->c;
    long have = (long)c - (long)cb;
    __m256i mask = fg_lanes(have);
    const float *w0 = r->packed + (cb / BLOCK) * r->bsize;
    __m256 acc[WIDE];
    __m256 bias = _mm256_loadu_ps(w0);
    for (int j = 0; j < WIDE; j++) acc[j] = bias;
    long left = (long)ox * sw - g->pad_left;
    for (int ky = r->s->ky_lo; ky < r->s->ky_hi; ky++) {
        const float *line = r->image + (size_t)(r->s->top + ky) * (size_t)g->in_w * c + cb;
        const float *k = w0 + BLOCK * (1 + (size_t)ky * (size_t)kw);
        __m256 wk[5];
        FG_UNROLL
        for (int kx = 0; kx < kw; kx++) wk[kx] = _mm256_loadu_ps(k + BLOCK * (size_t)kx);
        FG_UNROLL
        for (int col = 0; col < (WIDE - 1) * sw + kw; col++) {
            long ix = left + col;
            if (checked && (ix < 0 || ix >= g->in_w)) continue;
            __m256 x = load8(line + (size_t)ix * c, masked, mask);
            FG_UNROLL
            for (int j = 0; j < WIDE; j++) {
                int kx = col - j * sw;
                if (kx >= 0 && kx < kw) acc[j] = _mm256_fmadd_ps(x, wk[kx], acc[j]);
            }
        }
    }
    const fg_conv_epilogue *e = r->e;
    __m256 slope = _mm256_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) slope = _mm256_maskload_ps(e->prelu_slopes + cb, mask);
    for (int j = 0; j < WIDE; j++) {
        if (checked && j >= count) break;
        finish_store8(flags, masked, r, acc[j], r->row_pixel + (size_t)ox + (size_t)j, cb, slope, have);
    }
}

/// Channels c0…c1−1 of WIDE pixels from ox (`count` of them stored when checked), block by block (a
/// partial block only at the end of the channels).
FG_AVX2 __attribute__((always_inline)) static inline void tiles_wide(const int flags, const int kw, const int sw, const int checked,
                                                                     const dw_row *r, int ox, int count) {
    size_t cb = r->c0;
    for (; cb + BLOCK <= r->c1; cb += BLOCK) tile_wide(flags, kw, sw, 0, checked, r, ox, count, cb);
    if (cb < r->c1) tile_wide(flags, kw, sw, 1, checked, r, ox, count, cb);
}

/// Channels c0…c1−1 of PIXELS pixels from ox (`count` of them real when checked): pairs of blocks,
/// then a whole block left over, then a partial one (only at the end of the channels).
FG_AVX2 __attribute__((always_inline)) static inline void tiles(const int flags, const int kw, const int checked, const dw_row *r,
                                                                int ox, int count) {
    size_t cb = r->c0;
    for (; cb + 2 * BLOCK <= r->c1; cb += 2 * BLOCK) tile(flags, kw, 2, 0, checked, r, ox, count, cb);
    if (cb + BLOCK <= r->c1) {
        tile(flags, kw, 1, 0, checked, r, ox, count, cb);
        cb += BLOCK;
    }
    if (cb < r->c1) tile(flags, kw, 1, 1, checked, r, ox, count, cb);
}

/// The sums of tile_wide512 for sixteen channels from cb (weights `w0`, and `w1` for the second
/// block), WIDE output pixels from ox into `acc`: the bias, then each kernel row and column in
/// order (with `masked`, only `lanes` of the input are read). Shared by the float and the bfloat16
/// tiles, so both give the same sums bit for bit.
FG_AVX512 __attribute__((always_inline)) static inline void accumulate_wide512(const int kw, const int sw, const int masked, const int checked,
                                                                               const dw_row *r, int ox, size_t cb, const float *w0,
                                                                               const float *w1, __mmask16 lanes, __m512 acc[WIDE]) {
    const fg_conv_geometry *g = r->g;
    size_t c = r->c;
    __m512 bias = two_blocks(w0, w1);
    for (int j = 0; j < WIDE; j++) acc[j] = bias;
    long left = (long)ox * sw - g->pad_left;
    for (int ky = r->s->ky_lo; ky < r->s->ky_hi; ky++) {
        const float *line = r->image + (size_t)(r->s->top + ky) * (size_t)g->in_w * c + cb;
        size_t at = BLOCK * (1 + (size_t)ky * (size_t)kw);
        __m512 wk[5];
        FG_UNROLL
        for (int kx = 0; kx < kw; kx++) wk[kx] = two_blocks(w0 + at + BLOCK * (size_t)kx, w1 + at + BLOCK * (size_t)kx);
        FG_UNROLL
        for (int col = 0; col < (WIDE - 1) * sw + kw; col++) {
            long ix = left + col;
            if (checked && (ix < 0 || ix >= g->in_w)) continue;
            const float *p = line + (size_t)ix * c;
            __m512 x = masked ? _mm512_maskz_loadu_ps(lanes, p) : _mm512_loadu_ps(p);
            FG_UNROLL
            for (int j = 0; j < WIDE; j++) {
                int kx = col - j * sw;
                if (kx >= 0 && kx < kw) acc[j] = _mm512_fmadd_ps(x, wk[kx], acc[j]);
            }
        }
    }
}

/// tile_wide on sixteen channels from cb in AVX-512F registers (two blocks of the packing; with
/// `masked`, the first `have` of them only, more than 8, so both blocks exist): the same
/// multiply-adds in the same order, the epilogue fg_finish16, bit for bit. On a core with
/// full-width 512-bit units this is twice the work per instruction.
FG_AVX512 __attribute__((always_inline)) static inline void tile_wide512(const int flags, const int kw, const int sw, const int masked,
                                                                         const int checked, const dw_row *r, int ox, int count,
                                                                         size_t cb) {
    size_t c = r->c;
    __mmask16 lanes = masked ? fg_lanes16((long)c - (long)cb) : (__mmask16)0xFFFF;
    const float *w0 = r->packed + (cb / BLOCK) * r->bsize, *w1 = w0 + r->bsize;
    __m512 acc[WIDE];
    accumulate_wide512(kw, sw, masked, checked, r, ox, cb, w0, w1, lanes, acc);
    FINISH_TILE512(flags, checked ? count : WIDE, acc, r->row_pixel + (size_t)ox, cb, c, r->out, r->e);
}

/// tiles_wide with sixteen channels at a time in AVX-512F; eight or fewer left over go through the
/// AVX2 tile.
FG_AVX512 __attribute__((always_inline)) static inline void tiles_wide512(const int flags, const int kw, const int sw,
                                                                          const int checked, const dw_row *r, int ox, int count) {
    size_t cb = r->c0;
    for (; cb + 2 * BLOCK <= r->c1; cb += 2 * BLOCK) tile_wide512(flags, kw, sw, 0, checked, r, ox, count, cb);
    if (cb + BLOCK < r->c1) {
        tile_wide512(flags, kw, sw, 1, checked, r, ox, count, cb);
    } else if (cb + BLOCK == r->c1) {
        tile_wide(flags, kw, sw, 0, checked, r, ox, count, cb);
    } else if (cb < r->c1) {
        tile_wide(flags, kw, sw, 1, checked, r, ox, count, cb);
    }
}

/// rows_avx2's wide tiles (a 3- or 5-wide kernel moved by 1 or 2) in AVX-512F.
FG_AVX512 __attribute__((always_inline)) static inline void rows_wide512(const int flags, const int kw, const int sw, const float *input,
                                                                         const fg_conv_geometry *g, const float *packed, float *out,
                                                                         const fg_conv_epilogue *e, size_t first, size_t end,
                                                                         size_t c0, size_t c1) {
    dw_row r = dw_row_of(g, packed, out, e, c0, c1);
    for (size_t row = first; row < end; row++) {
        row_span s = span_of(g, row);
        dw_row_at(&r, &s, input, row);
        for (int ox = 0; ox < g->out_w; ox += WIDE) {
            if (ox >= s.inner_lo && ox + WIDE <= s.inner_hi) {
                tiles_wide512(flags, kw, sw, 0, &r, ox, WIDE);
            } else {
                tiles_wide512(flags, kw, sw, 1, &r, ox, g->out_w - ox < WIDE ? g->out_w - ox : WIDE);
            }
        }
    }
}

/// The AVX-512F rows of the four common kernels (3- and 5-wide, moved by 1 or 2, no dilation),
/// compiled once per combination of epilogue work; 0 when the kernel is not one of them.
FG_AVX512 static int dw_avx512(const float *input, const fg_conv_geometry *g, const float *packed, float *out,
                               const fg_conv_epilogue *e, size_t first, size_t end, size_t c0, size_t c1) {
    int flags = fg_epilogue_flags(e);
    if (g->dilation_w != 1 || g->dilation_h != 1 || (g->stride_w != 1 && g->stride_w != 2) || (g->kernel_w != 3 && g->kernel_w != 5))
        return 0;
#define FG_DW512_3_1(F) rows_wide512(F, 3, 1, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW512_3_2(F) rows_wide512(F, 3, 2, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW512_5_1(F) rows_wide512(F, 5, 1, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW512_5_2(F) rows_wide512(F, 5, 2, input, g, packed, out, e, first, end, c0, c1)
    if (g->kernel_w == 3 && g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DW512_3_1) }
    else if (g->kernel_w == 3) { FG_EPILOGUE_DISPATCH(flags, FG_DW512_3_2) }
    else if (g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DW512_5_1) }
    else { FG_EPILOGUE_DISPATCH(flags, FG_DW512_5_2) }
#undef FG_DW512_3_1
#undef FG_DW512_3_2
#undef FG_DW512_5_1
#undef FG_DW512_5_2
    return 1;
}

/// The bfloat16 build of the wide AVX-512F rows (fg_dwconv_part_bf16): AVX-512 BF16 to round.
#define FG_DW_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

static int dw_has_bf16(void) {
    static int cached = -1;
    if (cached < 0) cached = fg_has_avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
                             && __builtin_cpu_supports("avx512bf16");
    return cached;
}

/// tile_wide512 for the channels cb…min(cb + 16, c1)−1 (any number of them: the weights of a
/// missing second block are not read), each result rounded to bfloat16 and stored as such in
/// `out16` (pixels × c values). The same multiply-adds in the same order and the same epilogue as
/// the float paths (tile_wide512, and tile_wide for 8 channels or fewer, which agree bit for bit),
/// then the rounding of fg_bf16_round.
FG_DW_BF16 __attribute__((always_inline)) static inline void tile_wide_bf16(const int flags, const int kw, const int sw, const int checked,
                                                                            const dw_row *r, uint16_t *out16, int ox, int count,
                                                                            size_t cb) {
    size_t c = r->c;
    long live = (long)r->c1 - (long)cb;
    __mmask16 lanes = fg_lanes16(live);
    const float *w0 = r->packed + (cb / BLOCK) * r->bsize, *w1 = live > BLOCK ? w0 + r->bsize : w0;
    __m512 acc[WIDE];
    accumulate_wide512(kw, sw, live < 16, checked, r, ox, cb, w0, w1, lanes, acc);
    const fg_conv_epilogue *e = r->e;
    __m512 min1 = _mm512_set1_ps(e->min1), max1 = _mm512_set1_ps(e->max1);
    __m512 min2 = _mm512_set1_ps(e->min2), max2 = _mm512_set1_ps(e->max2);
    __m512 slope = _mm512_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) slope = _mm512_maskz_loadu_ps(lanes, e->prelu_slopes + cb);
    int stored = checked ? count : WIDE;
    for (int j = 0; j < WIDE; j++) {
        if (j >= stored) break;
        size_t pixel = r->row_pixel + (size_t)ox + (size_t)j;
        __m512 v = fg_finish16(flags, acc[j], pixel, cb, slope, e, min1, max1, min2, max2);
        __m256i b = (__m256i)_mm512_cvtneps_pbh(v);
        uint16_t *o = out16 + pixel * c + cb;
        if (live >= 16) _mm256_storeu_si256((__m256i *)o, b);
        else _mm256_mask_storeu_epi16(o, lanes, b);
    }
}

FG_DW_BF16 __attribute__((always_inline)) static inline void rows_wide_bf16(const int flags, const int kw, const int sw, const float *input,
                                                                            const fg_conv_geometry *g, const float *packed, uint16_t *out16,
                                                                            const fg_conv_epilogue *e, size_t first, size_t end,
                                                                            size_t c0, size_t c1) {
    dw_row r = dw_row_of(g, packed, NULL, e, c0, c1);
    for (size_t row = first; row < end; row++) {
        row_span s = span_of(g, row);
        dw_row_at(&r, &s, input, row);
        for (int ox = 0; ox < g->out_w; ox += WIDE) {
            int inner = ox >= s.inner_lo && ox + WIDE <= s.inner_hi;
            int count = g->out_w - ox < WIDE ? g->out_w - ox : WIDE;
            for (size_t cb = c0; cb < c1; cb += 2 * BLOCK) {
                if (inner) tile_wide_bf16(flags, kw, sw, 0, &r, out16, ox, WIDE, cb);
                else tile_wide_bf16(flags, kw, sw, 1, &r, out16, ox, count, cb);
            }
        }
    }
}

FG_DW_BF16 static void dw_bf16(const float *input, const fg_conv_geometry *g, const float *packed, uint16_t *out16,
                               const fg_conv_epilogue *e, size_t first, size_t end, size_t c0, size_t c1) {
    int flags = fg_epilogue_flags(e);
#define FG_DWB_3_1(F) rows_wide_bf16(F, 3, 1, input, g, packed, out16, e, first, end, c0, c1)
#define FG_DWB_3_2(F) rows_wide_bf16(F, 3, 2, input, g, packed, out16, e, first, end, c0, c1)
#define FG_DWB_5_1(F) rows_wide_bf16(F, 5, 1, input, g, packed, out16, e, first, end, c0, c1)
#define FG_DWB_5_2(F) rows_wide_bf16(F, 5, 2, input, g, packed, out16, e, first, end, c0, c1)
    if (g->kernel_w == 3 && g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DWB_3_1) }
    else if (g->kernel_w == 3) { FG_EPILOGUE_DISPATCH(flags, FG_DWB_3_2) }
    else if (g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DWB_5_1) }
    else { FG_EPILOGUE_DISPATCH(flags, FG_DWB_5_2) }
#undef FG_DWB_3_1
#undef FG_DWB_3_2
#undef FG_DWB_5_1
#undef FG_DWB_5_2
}

FG_AVX2 __attribute__((always_inline)) static inline void rows_avx2(const int flags, const int kw, const int sw, const float *input,
                                                                    const fg_conv_geometry *g,
                                                                    const float *packed, float *out, const fg_conv_epilogue *e,
                                                                    size_t first, size_t end, size_t c0, size_t c1) {
    dw_row r = dw_row_of(g, packed, out, e, c0, c1);
    for (size_t row = first; row < end; row++) {
        row_span s = span_of(g, row);
        dw_row_at(&r, &s, input, row);
        int ox = 0;
        if (sw) {
            // Wide tiles along the whole row, checked where they reach past the inner columns.
            for (; ox < g->out_w; ox += WIDE) {
                if (ox >= s.inner_lo && ox + WIDE <= s.inner_hi) {
                    tiles_wide(flags, kw, sw, 0, &r, ox, WIDE);
                } else {
                    tiles_wide(flags, kw, sw, 1, &r, ox, g->out_w - ox < WIDE ? g->out_w - ox : WIDE);
                }
            }
            continue;
        }
        // Checked tiles up to the first inner column, inner ones while four fit, checked ones after.
        while (ox < g->out_w) {
            int count = g->out_w - ox < PIXELS ? g->out_w - ox : PIXELS;
            if (ox < s.inner_lo && ox + count > s.inner_lo) count = s.inner_lo - ox;
            if (ox >= s.inner_lo && ox + PIXELS <= s.inner_hi) {
                tiles(flags, kw, 0, &r, ox, PIXELS);
                ox += PIXELS;
            } else {
                tiles(flags, kw, 1, &r, ox, count);
                ox += count;
            }
        }
    }
}

/// The rows, compiled once per combination of epilogue work, for 3- and 5-wide kernels moved by 1
/// or 2 (the wide tiles), and once for any other kernel.
FG_AVX2 static void dw_avx2(const float *input, const fg_conv_geometry *g, const float *packed, float *out,
                            const fg_conv_epilogue *e, size_t first, size_t end, size_t c0, size_t c1) {
    int flags = fg_epilogue_flags(e);
    int common = g->dilation_w == 1 && g->dilation_h == 1 && (g->stride_w == 1 || g->stride_w == 2);
#define FG_DW_ROWS_3_1(F) rows_avx2(F, 3, 1, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW_ROWS_3_2(F) rows_avx2(F, 3, 2, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW_ROWS_5_1(F) rows_avx2(F, 5, 1, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW_ROWS_5_2(F) rows_avx2(F, 5, 2, input, g, packed, out, e, first, end, c0, c1)
#define FG_DW_ROWS_ANY(F) rows_avx2(F, 0, 0, input, g, packed, out, e, first, end, c0, c1)
    if (common && g->kernel_w == 3 && g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DW_ROWS_3_1) return; }
    if (common && g->kernel_w == 3 && g->stride_w == 2) { FG_EPILOGUE_DISPATCH(flags, FG_DW_ROWS_3_2) return; }
    if (common && g->kernel_w == 5 && g->stride_w == 1) { FG_EPILOGUE_DISPATCH(flags, FG_DW_ROWS_5_1) return; }
    if (common && g->kernel_w == 5 && g->stride_w == 2) { FG_EPILOGUE_DISPATCH(flags, FG_DW_ROWS_5_2) return; }
    FG_EPILOGUE_DISPATCH(flags, FG_DW_ROWS_ANY)
#undef FG_DW_ROWS_3_1
#undef FG_DW_ROWS_3_2
#undef FG_DW_ROWS_5_1
#undef FG_DW_ROWS_5_2
#undef FG_DW_ROWS_ANY
}
#endif

size_t fg_dwconv_blocks(const fg_conv_geometry *geometry) {
    return ((size_t)(geometry->in_c > 0 ? geometry->in_c : 0) + BLOCK - 1) / BLOCK;
}

void fg_dwconv_part_channels(const float *input, const fg_conv_geometry *geometry, const float *packed, float *out,
                             const fg_conv_epilogue *epilogue, size_t first, size_t end, size_t first_block, size_t end_block,
                             int allow_simd) {
    if (geometry->batch <= 0 || geometry->out_h <= 0 || geometry->out_w <= 0 || geometry->in_c <= 0 || geometry->kernel_h <= 0
        || geometry->kernel_w <= 0 || geometry->stride_h <= 0 || geometry->stride_w <= 0 || geometry->dilation_h <= 0
        || geometry->dilation_w <= 0) return;
    size_t rows = fg_dwconv_rows(geometry), c = (size_t)geometry->in_c;
    if (end > rows) end = rows;
    size_t blocks = fg_dwconv_blocks(geometry);
    if (end_block > blocks) end_block = blocks;
    if (first >= end || first_block >= end_block) return;
    size_t c0 = first_block * BLOCK, c1 = end_block * BLOCK < c ? end_block * BLOCK : c;
#if FG_HAVE_AVX2_BUILD
    if (fg_avx512_level(allow_simd) == FG_AVX512_FULL && dw_avx512(input, geometry, packed, out, epilogue, first, end, c0, c1)) return;
    if (allow_simd && fg_has_avx2()) {
        dw_avx2(input, geometry, packed, out, epilogue, first, end, c0, c1);
        return;
    }
#endif
    (void)allow_simd;
    dw_scalar(input, geometry, packed, out, epilogue, first, end, c0, c1);
}

void fg_dwconv_part(const float *input, const fg_conv_geometry *geometry, const float *packed, float *out,
                    const fg_conv_epilogue *epilogue, size_t first, size_t end, int allow_simd) {
    fg_dwconv_part_channels(input, geometry, packed, out, epilogue, first, end, 0, SIZE_MAX, allow_simd);
}

int fg_dwconv_bf16_supported(const fg_conv_geometry *geometry) {
#if FG_HAVE_AVX2_BUILD
    const fg_conv_geometry *g = geometry;
    return fg_avx512_level(1) == FG_AVX512_FULL && dw_has_bf16() && g->dilation_w == 1 && g->dilation_h == 1
        && (g->stride_w == 1 || g->stride_w == 2) && (g->kernel_w == 3 || g->kernel_w == 5) && g->kernel_h > 0 && g->stride_h > 0
        && g->batch > 0 && g->in_c > 0 && g->out_h > 0 && g->out_w > 0;
#else
    (void)geometry;
    return 0;
#endif
}

void fg_dwconv_part_bf16(const float *input, const fg_conv_geometry *geometry, const float *packed, uint16_t *out,
                         const fg_conv_epilogue *epilogue, size_t first, size_t end, size_t first_block, size_t end_block) {
    if (!fg_dwconv_bf16_supported(geometry)) return;
#if FG_HAVE_AVX2_BUILD
    size_t rows = fg_dwconv_rows(geometry), c = (size_t)geometry->in_c, blocks = fg_dwconv_blocks(geometry);
    if (end > rows) end = rows;
    if (end_block > blocks) end_block = blocks;
    if (first >= end || first_block >= end_block) return;
    size_t c0 = first_block * BLOCK, c1 = end_block * BLOCK < c ? end_block * BLOCK : c;
    dw_bf16(input, geometry, packed, out, epilogue, first, end, c0, c1);
#else
    (void)input; (void)packed; (void)out; (void)epilogue; (void)first; (void)end; (void)first_block; (void)end_block;
#endif
}
