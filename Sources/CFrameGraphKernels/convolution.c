// Convolutions as matrix products over NHWC rows (1×1 directly; windowed ones read row by row of
// the window where it lies inside the input, copied into scratch at the borders), with the
// epilogue fused: bias, the convolution's clamp, a residual
// addition (optionally over only the first channels: a zero channel pad), the addition's clamp,
// and a PReLU or hard-swish. See fg_kernels.h.
//
// Why our own: the XNNPACK snapshot Debian ships builds its AVX2 matrix kernels (5×16 broadcast)
// with GCC, which keeps one accumulator on the stack; each step then waits on a store-to-load
// round trip, and convolutions run at about half the core's FMA rate. The kernel here is
// 6 rows × 16 channels with twelve accumulators in registers, and it applies the operations that
// follow the convolution in the same pass instead of three more passes over the tensor.
#include "epilogue.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { PANEL = 16, MAX_ROWS = 6 };

/// The 16-channel panels (output channels 16·first … 16·end − 1) one call computes.
typedef struct {
    size_t first, end;
} panel_range;

size_t fg_conv_packed_count(int k, int n) {
    size_t panels = ((size_t)n + PANEL - 1) / PANEL;
    return panels * PANEL * ((size_t)k + 1);
}

void fg_conv_pack(const float *weights, const float *bias, int k, int n, float *packed) {
    size_t panels = ((size_t)n + PANEL - 1) / PANEL;
    for (size_t p = 0; p < panels; p++) {
        float *panel = packed + p * PANEL * ((size_t)k + 1);
        for (int j = 0; j < PANEL; j++) {
            size_t c = p * PANEL + (size_t)j;
            panel[j] = (c < (size_t)n && bias) ? bias[c] : 0.0f;
            for (int i = 0; i < k; i++) {
                panel[PANEL * (size_t)(i + 1) + (size_t)j] = c < (size_t)n ? weights[c * (size_t)k + (size_t)i] : 0.0f;
            }
        }
    }
}

/// Copies `count` floats (a window row) from `src` to `dst`, or zeros when `src` is NULL.
typedef void (*copy_run)(float *dst, const float *src, size_t count);

static void copy_scalar(float *dst, const float *src, size_t count) {
    if (src) memcpy(dst, src, count * sizeof(float));
    else memset(dst, 0, count * sizeof(float));
}

/// Copies the windows of output pixels row…row+count−1 into `dst` (count rows of kh·kw·c values in
/// (ky, kx, channel) order, zeros where the window lies in the padding). Where a window row lies
/// wholly inside the input (and the dilation is 1) it is one contiguous run. Runs are written in
/// increasing address order, so a vector copy may write a few zeros past a run's end.
static inline __attribute__((always_inline)) void gather_with(const float *input, const fg_conv_geometry *g, size_t row,
                                                              size_t count, float *dst, copy_run copy) {
    size_t c = (size_t)g->in_c, kw = (size_t)g->kernel_w;
    size_t ox = row % (size_t)g->out_w, oy = (row / (size_t)g->out_w) % (size_t)g->out_h;
    size_t b = row / ((size_t)g->out_w * (size_t)g->out_h);
    float *d = dst;
    for (size_t r = 0; r < count; r++) {
        long ix0 = (long)ox * g->stride_w - g->pad_left;
        int whole_row = g->dilation_w == 1 && ix0 >= 0 && ix0 + (long)kw <= g->in_w;
        for (int ky = 0; ky < g->kernel_h; ky++, d += kw * c) {
            long iy = (long)oy * g->stride_h + (long)ky * g->dilation_h - g->pad_top;
            if (iy < 0 || iy >= g->in_h) {
                copy(d, NULL, kw * c);
                continue;
            }
            const float *line = input + (b * (size_t)g->in_h + (size_t)iy) * (size_t)g->in_w * c;
            if (whole_row) {
                copy(d, line + (size_t)ix0 * c, kw * c);
                continue;
            }
            for (size_t kx = 0; kx < kw; kx++) {
                long ix = ix0 + (long)kx * g->dilation_w;
                copy(d + kx * c, ix < 0 || ix >= g->in_w ? NULL : line + (size_t)ix * c, c);
            }
        }
        if (++ox == (size_t)g->out_w) {
            ox = 0;
            if (++oy == (size_t)g->out_h) {
                oy = 0;
                b++;
            }
        }
    }
}

/// Whether `g` is a plain 1×1 convolution (rows of the input are the matrix rows as they are).
static int is_pointwise(const fg_conv_geometry *g) {
    return g->kernel_h == 1 && g->kernel_w == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 && g->pad_left == 0
        && g->out_h == g->in_h && g->out_w == g->in_w;
}

static void conv_scalar(const float *input, const fg_conv_geometry *g, const float *packed, int n, float *out,
                        const fg_conv_epilogue *e, float *scratch, size_t first, size_t rows, panel_range pr) {
    size_t k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    int direct = is_pointwise(g);
    for (size_t r = first; r < rows; r++) {
        const float *a = input + r * k;
        if (!direct) {
            gather_with(input, g, r, 1, scratch, copy_scalar);
            a = scratch;
        }
        for (size_t p = pr.first; p < pr.end; p++) {
            const float *w = packed + p * PANEL * (k + 1);
            float acc[PANEL];
            for (int j = 0; j < PANEL; j++) acc[j] = w[j];
            for (size_t i = 0; i < k; i++) {
                float x = a[i];
                const float *wr = w + PANEL * (i + 1);
                for (int j = 0; j < PANEL; j++) acc[j] = fmaf(x, wr[j], acc[j]);
            }
            for (int j = 0; j < PANEL; j++) {
                size_t c = p * PANEL + (size_t)j;
                if (c < (size_t)n) out[r * (size_t)n + c] = fg_finish(acc[j], r, c, e);
            }
        }
    }
}

#if FG_HAVE_AVX2_BUILD
/// The epilogue of MR rows × 16 channels (from c) of one panel, applied to the accumulators acc0 /
/// acc1 and stored. A macro, not a function: the accumulator arrays must never have their address
/// taken, or the compiler keeps them in memory and stores them after every multiply-add.
#define FINISH_TILE(flags, mr, acc0, acc1, row, c, n, out, e)                                                      \
    do {                                                                                                            \
        __m256 min1_ = _mm256_set1_ps((e)->min1), max1_ = _mm256_set1_ps((e)->max1);                                 \
        __m256 min2_ = _mm256_set1_ps((e)->min2), max2_ = _mm256_set1_ps((e)->max2);                                 \
        long left_ = (long)(n) - (long)(c);                                                                         \
        /* The panel's PReLU slopes, loaded once for its rows (lanes past the channels read nothing). */           \
        __m256 slope0_ = _mm256_setzero_ps(), slope1_ = _mm256_setzero_ps();                                        \
        if ((flags) & FG_EPILOGUE_PRELU) {                                                                          \
            slope0_ = _mm256_maskload_ps((e)->prelu_slopes + (c), fg_lanes(left_));                                 \
            slope1_ = _mm256_maskload_ps((e)->prelu_slopes + (c) + 8, fg_lanes(left_ - 8));                         \
        }                                                                                                           \
        for (int r_ = 0; r_ < (mr); r_++) {                                                                         \
            float *o_ = (out) + ((row) + (size_t)r_) * (size_t)(n) + (c);                                           \
            __m256 v0_ = fg_finish8(flags, acc0[r_], (row) + (size_t)r_, (c), slope0_, e, min1_, max1_, min2_, max2_); \
            __m256 v1_ = fg_finish8(flags, acc1[r_], (row) + (size_t)r_, (c) + 8, slope1_, e, min1_, max1_, min2_, max2_); \
            if (left_ >= 16) {                                                                                      \
                _mm256_storeu_ps(o_, v0_);                                                                          \
                _mm256_storeu_ps(o_ + 8, v1_);                                                                      \
            } else {                                                                                                \
                fg_store_first(o_, v0_, left_);                                                                     \
                fg_store_first(o_ + 8, v1_, left_ - 8);                                                             \
            }                                                                                                       \
        }                                                                                                           \
    } while (0)

/// MR rows (of k values each, consecutive in `a`) × 16 channels of one panel; MR and the flags are
/// constants in every call, so the loops unroll and the accumulators stay in registers.
FG_AVX2 __attribute__((always_inline)) static inline void tile(const int flags, const int mr, const float *a, size_t k, const float *w,
                                                               size_t row, size_t c, int n, float *out, const fg_conv_epilogue *e) {
    __m256 acc0[MAX_ROWS], acc1[MAX_ROWS];
    __m256 bias0 = _mm256_loadu_ps(w), bias1 = _mm256_loadu_ps(w + 8);
    for (int r = 0; r < mr; r++) { acc0[r] = bias0; acc1[r] = bias1; }
    const float *wr = w + PANEL;
    for (size_t i = 0; i < k; i++) {
        __m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + 8);
        wr += PANEL;
        for (int r = 0; r < mr; r++) {
            __m256 x = _mm256_broadcast_ss(a + (size_t)r * k + i);
            acc0[r] = _mm256_fmadd_ps(x, w0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(x, w1, acc1[r]);
        }
    }
    FINISH_TILE(flags, mr, acc0, acc1, row, c, n, out, e);
}

/// MR rows × the first 8 channels of a panel: the last panel of a convolution whose channel count
/// leaves at most 8 in it (24, 40, …) does half the multiply-adds of a full tile. Up to 6 rows in the
/// AVX2 paths, up to 12 in the AVX-512 ones (which have 32 vector registers).
FG_AVX2 __attribute__((always_inline)) static inline void tile_half(const int flags, const int mr, const float *a, size_t k,
                                                                    const float *w, size_t row, size_t c, int n, float *out,
                                                                    const fg_conv_epilogue *e) {
    __m256 acc[2 * MAX_ROWS];
    __m256 bias = _mm256_loadu_ps(w);
    for (int r = 0; r < mr; r++) acc[r] = bias;
    const float *wr = w + PANEL;
    for (size_t i = 0; i < k; i++) {
        __m256 w0 = _mm256_loadu_ps(wr);
        wr += PANEL;
        for (int r = 0; r < mr; r++) acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + (size_t)r * k + i), w0, acc[r]);
    }
    __m256 min1 = _mm256_set1_ps(e->min1), max1 = _mm256_set1_ps(e->max1);
    __m256 min2 = _mm256_set1_ps(e->min2), max2 = _mm256_set1_ps(e->max2);
    long left = (long)n - (long)c;
    __m256 slope = _mm256_setzero_ps();
    if (flags & FG_EPILOGUE_PRELU) slope = _mm256_maskload_ps(e->prelu_slopes + c, fg_lanes(left));
    for (int r = 0; r < mr; r++) {
        __m256 v = fg_finish8(flags, acc[r], row + (size_t)r, c, slope, e, min1, max1, min2, max2);
        float *o = out + (row + (size_t)r) * (size_t)n + c;
        if (left >= 8) _mm256_storeu_ps(o, v);
        else fg_store_first(o, v, left);
    }
}

/// A tile of MR rows (a constant in every call) for panel `p`: half a tile when the panel holds at
/// most 8 channels.
#define FG_TILE(flags, mr, a, k, w, row, c, n, out, e)                                                                  ((long)(n) - (long)(c) <= 8 ? tile_half(flags, mr, a, k, w, row, c, n, out, e) : tile(flags, mr, a, k, w, row, c, n, out, e))

/// Calls CALL(M) with the constant M equal to `mr` (1…6, or 1…12): the tiles need their row count
/// as a constant, so their loops unroll and the accumulators stay in registers.
#define FG_ROWS6_DISPATCH(mr, CALL)                                                                        \
    switch (mr) {                                                                                          \
    case 6: CALL(6); break;                                                                                \
    case 5: CALL(5); break;                                                                                \
    case 4: CALL(4); break;                                                                                \
    case 3: CALL(3); break;                                                                                \
    case 2: CALL(2); break;                                                                                \
    default: CALL(1); break;                                                                               \
    }
#define FG_ROWS12_DISPATCH(mr, CALL)                                                                       \
    switch (mr) {                                                                                          \
    case 12: CALL(12); break;                                                                              \
    case 11: CALL(11); break;                                                                              \
    case 10: CALL(10); break;                                                                              \
    case 9: CALL(9); break;                                                                                \
    case 8: CALL(8); break;                                                                                \
    case 7: CALL(7); break;                                                                                \
    default: FG_ROWS6_DISPATCH(mr, CALL)                                                                   \
    }

/// `rows` rows in tiles of equal height, at most `most` each: returns the number of tiles; the first
/// `*taller` of them hold `*base` + 1 rows, the rest `*base` (49 rows, at most 6: 4 × 6 + 5 × 5, not
/// 8 × 6 + 1: a one-row tile has two sums in flight and waits on each multiply-add).
static inline size_t equal_tiles(size_t rows, size_t most, size_t *base, size_t *taller) {
    size_t tiles = (rows + most - 1) / most;
    *base = rows / tiles;
    *taller = rows % tiles;
    return tiles;
}

/// The order in which the tiles of one block of rows (equal_tiles) meet their panels. Weights that
/// fit in a quarter of L2 stay there while each tile goes through all its panels, so its output rows
/// are written whole, one tile after the other (a 112×112 layer of 16 → 96 channels ran twice as fast
/// so on the Xeon of docs/BENCHMARKS.md as panel by panel, whose writes 384 bytes apart the caches
/// could not hold); larger weights go panel by panel through every tile, each panel read from
/// memory once per block. The order changes no sum.
typedef struct {
    size_t row, base, taller, tiles, first_panel, panels;
    int tiles_outer;
} block_order;

static inline block_order block_order_of(size_t row, size_t stop, size_t most, panel_range pr, size_t panel_size) {
    block_order o;
    o.row = row;
    o.tiles = equal_tiles(stop - row, most, &o.base, &o.taller);
    o.first_panel = pr.first;
    o.panels = pr.end - pr.first;
    o.tiles_outer = o.panels * panel_size * sizeof(float) <= fg_l2_bytes() / 4;
    return o;
}

/// Step `step` (0 … tiles · panels − 1) of `o`: its first row, its rows and its panel.
static inline void block_order_step(const block_order *o, size_t step, size_t *r, size_t *mr, size_t *p) {
    size_t t = o->tiles_outer ? step / o->panels : step % o->tiles;
    *p = o->first_panel + (o->tiles_outer ? step % o->panels : step / o->tiles);
    // The first `taller` tiles are one row taller than the rest.
    *r = o->row + t * o->base + (t < o->taller ? t : o->taller);
    *mr = o->base + (t < o->taller ? 1 : 0);
}

/// MR rows (up to 12) × the 16 channels of one panel in AVX-512F registers, one per row: twice the
/// rows of `tile` for each weight row loaded, so the epilogue and the loop's overhead are spread over
/// twice the work. The sums are the same multiply-adds in the same order as `tile`'s, and the
/// epilogue (fg_finish16) the same operations, bit for bit.
FG_AVX512 __attribute__((always_inline)) static inline void tile512(const int flags, const int mr, const float *a, size_t k,
                                                                    const float *w, size_t row, size_t c, int n, float *out,
                                                                    const fg_conv_epilogue *e, const float *next) {
    __m512 acc[2 * MAX_ROWS];
    __m512 bias = _mm512_loadu_ps(w);
    for (int r = 0; r < mr; r++) acc[r] = bias;
    const float *wr = w + PANEL;
    if (next) {
        // The next panel's weights, one line per weight row read here (see pointwise_block512_with).
        for (size_t i = 0; i < k; i++) {
            __m512 w0 = _mm512_loadu_ps(wr);
            _mm_prefetch((const char *)(next + i * PANEL), _MM_HINT_T1);
            wr += PANEL;
            for (int r = 0; r < mr; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[(size_t)r * k + i]), w0, acc[r]);
        }
        _mm_prefetch((const char *)(next + k * PANEL), _MM_HINT_T1);
    } else {
        for (size_t i = 0; i < k; i++) {
            __m512 w0 = _mm512_loadu_ps(wr);
            wr += PANEL;
            for (int r = 0; r < mr; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[(size_t)r * k + i]), w0, acc[r]);
        }
    }
    FINISH_TILE512(flags, mr, acc, row, c, n, out, e);
}

/// Rows row…stop−1 of a 1×1 convolution (one block) for panels pr: tiles of equal height, up to 12
/// rows, in AVX-512F; a last panel of at most 8 channels in `tile_half`, up to 12 rows too.
FG_AVX512 __attribute__((always_inline)) static inline void pointwise_block512_with(const int flags, const float *input, size_t kk,
                                                                                    const float *packed, size_t panel_size, int n,
                                                                                    float *out, const fg_conv_epilogue *e, size_t row,
                                                                                    size_t stop, panel_range pr) {
    block_order o = block_order_of(row, stop, 2 * MAX_ROWS, pr, panel_size);
    for (size_t step = 0; step < o.tiles * o.panels; step++) {
        size_t r, mr, p;
        block_order_step(&o, step, &r, &mr, &p);
        const float *w = packed + p * panel_size, *a = input + r * kk;
        size_t c = p * PANEL;
        // The first tile to meet a panel reads its weights from memory (in a network every layer's
        // weights are evicted by the others' before the next prediction): it asks for the next
        // panel's lines into L2 as it goes, so the next panel's first tile finds them there instead
        // of waiting on each line (tools/bench/pointwise_vs_xnnpack.sh's `dram` mode: a 7×7 layer of
        // 192 → 1152 channels 300 → 250 µs, 320 → 1280 537 → 422 µs; XNNPACK's 259 and 449).
        int first_meeting = o.tiles_outer ? step < o.panels : step % o.tiles == 0;
        const float *next = first_meeting && p + 1 < o.first_panel + o.panels ? w + panel_size : NULL;
        if ((long)n - (long)c <= 8) {
#define FG_HALF(M) tile_half(flags, M, a, kk, w, r, c, n, out, e)
            FG_ROWS12_DISPATCH(mr, FG_HALF)
#undef FG_HALF
        } else {
#define FG_FULL(M) tile512(flags, M, a, kk, w, r, c, n, out, e, next)
            FG_ROWS12_DISPATCH(mr, FG_FULL)
#undef FG_FULL
        }
    }
}

/// pointwise_block512_with compiled once per combination of epilogue work.
FG_AVX512 static void pointwise_block512(const int flags, const float *input, size_t kk, const float *packed, size_t panel_size,
                                         int n, float *out, const fg_conv_epilogue *e, size_t row, size_t stop, panel_range pr) {
#define FG_BLOCK512(F) pointwise_block512_with(F, input, kk, packed, panel_size, n, out, e, row, stop, pr)
    FG_EPILOGUE_DISPATCH(flags, FG_BLOCK512)
#undef FG_BLOCK512
}

/// One row × four panels (64 channels from c): a matrix-vector product (a layer over a 1×1 input,
/// such as the face mesh's last one, 288 → 1404) has eight independent sums in flight instead of
/// two, and four weight streams at once.
FG_AVX2 __attribute__((always_inline)) static inline void tile_row4(const int flags, const float *a, size_t k, const float *w,
                                                                    size_t panel_size, size_t row, size_t c, int n, float *out,
                                                                    const fg_conv_epilogue *e) {
    __m256 acc[8];
    for (int q = 0; q < 4; q++) {
        acc[2 * q] = _mm256_loadu_ps(w + (size_t)q * panel_size);
        acc[2 * q + 1] = _mm256_loadu_ps(w + (size_t)q * panel_size + 8);
    }
    for (size_t i = 0; i < k; i++) {
        __m256 x = _mm256_broadcast_ss(a + i);
        for (int q = 0; q < 4; q++) {
            const float *wr = w + (size_t)q * panel_size + PANEL * (i + 1);
            acc[2 * q] = _mm256_fmadd_ps(x, _mm256_loadu_ps(wr), acc[2 * q]);
            acc[2 * q + 1] = _mm256_fmadd_ps(x, _mm256_loadu_ps(wr + 8), acc[2 * q + 1]);
        }
    }
    for (int q = 0; q < 4; q++) {
        __m256 acc0[1] = {acc[2 * q]}, acc1[1] = {acc[2 * q + 1]};
        FINISH_TILE(flags, 1, acc0, acc1, row, c + (size_t)q * PANEL, n, out, e);
    }
}

/// Six consecutive output pixels of one output row whose windows lie wholly inside the input, read
/// where they lie (no copy) when the input has few channels (`cin`, a constant: 1 or 3, the first
/// layer of a network on an image) and the stride `sw` is a constant: every value of the six windows is then
/// at a fixed offset from one pointer. `p`: the first pixel's window's top-left value. The sums
/// come in the same (ky, kx, channel) order as in `tile`.
FG_AVX2 __attribute__((always_inline)) static inline void tile_stem(const int flags, const int cin, const int sw, const float *p,
                                                                    const fg_conv_geometry *g, const float *w, size_t row, size_t c,
                                                                    int n, float *out, const fg_conv_epilogue *e) {
    __m256 acc0[MAX_ROWS], acc1[MAX_ROWS];
    __m256 bias0 = _mm256_loadu_ps(w), bias1 = _mm256_loadu_ps(w + 8);
    for (int r = 0; r < MAX_ROWS; r++) { acc0[r] = bias0; acc1[r] = bias1; }
    const float *wr = w + PANEL;
    // One loop over the window's values, as `tile` has (nested loops with run-time bounds, or the
    // channels unrolled, make the compiler keep the accumulators in memory): p steps along a window
    // row and jumps to the next one.
    size_t next_row = (size_t)g->in_w * (size_t)cin * (size_t)g->dilation_h - (size_t)g->kernel_w * (size_t)cin;
    size_t k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)cin, along = 0, run = (size_t)g->kernel_w * (size_t)cin;
    for (size_t i = 0; i < k; i++) {
        __m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + 8);
        wr += PANEL;
        for (int r = 0; r < MAX_ROWS; r++) {
            __m256 x = _mm256_broadcast_ss(p + r * sw * cin);
            acc0[r] = _mm256_fmadd_ps(x, w0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(x, w1, acc1[r]);
        }
        p++;
        if (++along == run) {
            along = 0;
            p += next_row;
        }
    }
    FINISH_TILE(flags, MAX_ROWS, acc0, acc1, row, c, n, out, e);
}

/// Like copy_scalar, but the last vector is stored whole: up to 7 floats past `count` are written
/// (zeros). Runs are copied in increasing address order, so the next run overwrites them; the
/// scratch has room for the last one. (AMD cores store masked vectors slowly.)
FG_AVX2 static void copy_avx2(float *dst, const float *src, size_t count) {
    size_t i = 0;
    if (src) {
        for (; i + 8 <= count; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
        if (i < count) _mm256_storeu_ps(dst + i, _mm256_maskload_ps(src + i, fg_lanes((long)(count - i))));
    } else {
        for (; i < count; i += 8) _mm256_storeu_ps(dst + i, _mm256_setzero_ps());
    }
}

FG_AVX2 static void gather_avx2(const float *input, const fg_conv_geometry *g, size_t row, size_t count, float *dst) {
    gather_with(input, g, row, count, dst, copy_avx2);
}

/// Output pixels row…end−1, six at a time, their windows copied into scratch (1×1: read in place).
/// `avx512` (fg_avx512_level): none, the AVX-512F tiles for layers of at least 64 inputs per
/// output (HALF: FRAMEGRAPH_AVX512_FULL_WIDTH=0), or for every layer (FULL: the default).
FG_AVX2 __attribute__((always_inline)) static inline void copied_rows(const int flags, const int avx512, const float *input,
                                                                      const fg_conv_geometry *g, const float *packed, int n,
                                                                      float *out, const fg_conv_epilogue *e, float *scratch,
                                                                      size_t row, size_t end, panel_range pr) {
    size_t kk = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c;
    size_t panel_size = PANEL * (kk + 1);
    if (is_pointwise(g)) {
        // Rows in blocks whose inputs and outputs fill at most half the core's L2, each panel of
        // weights through every tile of the block: a weight matrix larger than the caches (1×1
        // convolutions over 7×7 or 14×14 pixels with hundreds of channels) is then read once per
        // block, not once per six rows, and each output row's lines, written one panel at a time,
        // stay in L2 until its last panel (a block of 12 544 rows of 96 outputs, 4.8 MB, sent each
        // line to memory and back six times). The blocks are of equal size, so no block of a
        // single row reads the whole weight matrix again for it.
        size_t row_floats = kk + (pr.end - pr.first) * PANEL;
        size_t most = fg_l2_bytes() / 2 / (row_floats * sizeof(float)) / MAX_ROWS * MAX_ROWS;
        if (most < MAX_ROWS) most = MAX_ROWS;
        size_t blocks = (end - row + most - 1) / most;
        size_t block = blocks ? (end - row + blocks - 1) / blocks : MAX_ROWS;
        for (; row < end; row += block) {
            size_t stop = end - row < block ? end : row + block;
            size_t p = pr.first;
            // AVX-512F tiles: for every layer by default; with the HALF rule (once Zen 4's, kept to
            // compare) where each tile has enough multiply-adds to carry the epilogue.
            if (stop - row > 1 && (avx512 == FG_AVX512_FULL || (avx512 == FG_AVX512_HALF && kk >= 64))) {
                pointwise_block512(flags, input, kk, packed, panel_size, n, out, e, row, stop, pr);
                continue;
            }
            if (stop - row == 1) {
                // A single row: four panels at a time.
                for (; p + 4 <= pr.end; p += 4) tile_row4(flags, input + row * kk, kk, packed + p * panel_size, panel_size, row, p * PANEL, n, out, e);
            }
            // Tiles of equal height, at most 6 rows (equal_tiles), in block_order.
            block_order o = block_order_of(row, stop, MAX_ROWS, (panel_range){p, pr.end}, panel_size);
            for (size_t step = 0; step < o.tiles * o.panels; step++) {
                size_t r, mr, q;
                block_order_step(&o, step, &r, &mr, &q);
                const float *w = packed + q * panel_size, *a = input + r * kk;
#define FG_POINTWISE(M) FG_TILE(flags, M, a, kk, w, r, q * PANEL, n, out, e)
                FG_ROWS6_DISPATCH(mr, FG_POINTWISE)
#undef FG_POINTWISE
            }
        }
        return;
    }
    for (; row < end; row += MAX_ROWS) {
        size_t mr = end - row < MAX_ROWS ? end - row : MAX_ROWS;
        gather_avx2(input, g, row, mr, scratch);
        const float *a = scratch;
        for (size_t p = pr.first; p < pr.end; p++) {
            const float *w = packed + p * panel_size;
            size_t c = p * PANEL;
#define FG_GATHERED(M) FG_TILE(flags, M, a, kk, w, row, c, n, out, e)
            FG_ROWS6_DISPATCH(mr, FG_GATHERED)
#undef FG_GATHERED
        }
    }
}

/// copied_rows compiled once per combination of epilogue work, for the stem rows' borders.
FG_AVX2 static void copied_rows_any(const int flags, const float *input, const fg_conv_geometry *g, const float *packed, int n,
                                    float *out, const fg_conv_epilogue *e, float *scratch, size_t row, size_t end, panel_range pr) {
#define FG_COPIED_ROWS(F) copied_rows(F, 0, input, g, packed, n, out, e, scratch, row, end, pr)
    FG_EPILOGUE_DISPATCH(flags, FG_COPIED_ROWS)
#undef FG_COPIED_ROWS
}

/// tile_stem for twelve consecutive output pixels in AVX-512F registers, one per pixel: the same
/// multiply-adds in the same order, the epilogue fg_finish16, bit for bit.
FG_AVX512 __attribute__((always_inline)) static inline void tile_stem512(const int flags, const int cin, const int sw, const float *p,
                                                                         const fg_conv_geometry *g, const float *w, size_t row, size_t c,
                                                                         int n, float *out, const fg_conv_epilogue *e) {
    __m512 acc[2 * MAX_ROWS];
    __m512 bias = _mm512_loadu_ps(w);
    for (int r = 0; r < 2 * MAX_ROWS; r++) acc[r] = bias;
    const float *wr = w + PANEL;
    size_t next_row = (size_t)g->in_w * (size_t)cin * (size_t)g->dilation_h - (size_t)g->kernel_w * (size_t)cin;
    size_t k = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)cin, along = 0, run = (size_t)g->kernel_w * (size_t)cin;
    for (size_t i = 0; i < k; i++) {
        __m512 w0 = _mm512_loadu_ps(wr);
        wr += PANEL;
        for (int r = 0; r < 2 * MAX_ROWS; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(p[r * sw * cin]), w0, acc[r]);
        p++;
        if (++along == run) {
            along = 0;
            p += next_row;
        }
    }
    FINISH_TILE512(flags, 2 * MAX_ROWS, acc, row, c, n, out, e);
}

/// Output pixels row, row+1, … of one output row whose windows lie inside the input (up to
/// `inner_end`), twelve at a time through tile_stem512 for panels pr; `line` is the input row of the
/// windows' top, `ox` the first pixel's column. Returns the first pixel not done (fewer than twelve
/// are left).
FG_AVX512 __attribute__((always_inline)) static inline size_t stem_run512_with(const int flags, const int cin, const int sw,
                                                                               const float *line, const fg_conv_geometry *g,
                                                                               const float *packed, size_t panel_size, int n, float *out,
                                                                               const fg_conv_epilogue *e, size_t row, size_t ox,
                                                                               size_t inner_end, panel_range pr) {
    for (; row + 2 * MAX_ROWS <= inner_end; row += 2 * MAX_ROWS, ox += 2 * MAX_ROWS) {
        const float *p = line + (ox * (size_t)sw - (size_t)g->pad_left) * (size_t)cin;
        for (size_t q = pr.first; q < pr.end; q++) tile_stem512(flags, cin, sw, p, g, packed + q * panel_size, row, q * PANEL, n, out, e);
    }
    return row;
}

/// stem_run512_with compiled for grey and RGB images moved by 1 or 2, once per combination of
/// epilogue work.
FG_AVX512 static size_t stem_run512(const int flags, const int cin, const int sw, const float *line, const fg_conv_geometry *g,
                                    const float *packed, size_t panel_size, int n, float *out, const fg_conv_epilogue *e, size_t row,
                                    size_t ox, size_t inner_end, panel_range pr) {
    size_t done = row;
#define FG_STEM512(CIN, SW, F) done = stem_run512_with(F, CIN, SW, line, g, packed, panel_size, n, out, e, row, ox, inner_end, pr)
#define FG_STEM512_1_1(F) FG_STEM512(1, 1, F)
#define FG_STEM512_1_2(F) FG_STEM512(1, 2, F)
#define FG_STEM512_3_1(F) FG_STEM512(3, 1, F)
#define FG_STEM512_3_2(F) FG_STEM512(3, 2, F)
    if (cin == 1 && sw == 1) { FG_EPILOGUE_DISPATCH(flags, FG_STEM512_1_1) }
    else if (cin == 1) { FG_EPILOGUE_DISPATCH(flags, FG_STEM512_1_2) }
    else if (sw == 1) { FG_EPILOGUE_DISPATCH(flags, FG_STEM512_3_1) }
    else { FG_EPILOGUE_DISPATCH(flags, FG_STEM512_3_2) }
#undef FG_STEM512_1_1
#undef FG_STEM512_1_2
#undef FG_STEM512_3_1
#undef FG_STEM512_3_2
#undef FG_STEM512
    return done;
}

/// Output pixels first…end−1 of a convolution over `cin` (a constant) channels moved by `sw` (a
/// constant): along each output row, the pixels whose windows lie inside the input six at a time
/// through tile_stem, the rest through copied windows.
FG_AVX2 __attribute__((always_inline)) static inline void stem_rows(const int flags, const int wide, const int cin, const int sw,
                                                                    const float *input,
                                                                    const fg_conv_geometry *g, const float *packed, int n, float *out,
                                                                    const fg_conv_epilogue *e, float *scratch, size_t first,
                                                                    size_t end, panel_range pr) {
    size_t kk = (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)cin;
    size_t panel_size = PANEL * (kk + 1);
    size_t width = (size_t)g->out_w;
    // Output columns whose windows lie inside the input horizontally: [lo, hi).
    long lo = ((long)g->pad_left + sw - 1) / sw;
    long last = (long)g->in_w - 1 + g->pad_left - (long)(g->kernel_w - 1) * g->dilation_w;
    long hi = last < 0 ? 0 : last / sw + 1;
    if (lo > g->out_w) lo = g->out_w;
    if (hi > g->out_w) hi = g->out_w;
    if (hi < lo) hi = lo;
    size_t row = first;
    while (row < end) {
        size_t ox = row % width, oy = (row / width) % (size_t)g->out_h, image = row / (width * (size_t)g->out_h);
        size_t row_end = row - ox + width < end ? row - ox + width : end;
        long top = (long)oy * g->stride_h - g->pad_top;
        int rows_inside = top >= 0 && top + (long)(g->kernel_h - 1) * g->dilation_h < g->in_h;
        if (!rows_inside || ox >= (size_t)hi) {
            copied_rows_any(flags, input, g, packed, n, out, e, scratch, row, row_end, pr);
            row = row_end;
            continue;
        }
        if (ox < (size_t)lo) {
            size_t stop = row - ox + (size_t)lo < row_end ? row - ox + (size_t)lo : row_end;
            copied_rows_any(flags, input, g, packed, n, out, e, scratch, row, stop, pr);
            row = stop;
            continue;
        }
        size_t inner_end = row - ox + (size_t)hi < row_end ? row - ox + (size_t)hi : row_end;
        const float *line = input + (image * (size_t)g->in_h + (size_t)top) * (size_t)g->in_w * (size_t)cin;
        if (wide) {
            // Twelve pixels at a time in AVX-512F first (a core with full-width 512-bit units).
            size_t done = stem_run512(flags, cin, sw, line, g, packed, panel_size, n, out, e, row, ox, inner_end, pr);
            ox += done - row;
            row = done;
        }
        for (; row + MAX_ROWS <= inner_end; row += MAX_ROWS, ox += MAX_ROWS) {
            const float *p = line + ((size_t)ox * (size_t)sw - (size_t)g->pad_left) * (size_t)cin;
            for (size_t q = pr.first; q < pr.end; q++) tile_stem(flags, cin, sw, p, g, packed + q * panel_size, row, q * PANEL, n, out, e);
        }
        copied_rows_any(flags, input, g, packed, n, out, e, scratch, row, inner_end, pr);
        row = inner_end;
    }
}

FG_AVX2 __attribute__((always_inline)) static inline void rows_avx2(const int flags, const int avx512, const float *input,
                                                                    const fg_conv_geometry *g, const float *packed, int n, float *out,
                                                                    const fg_conv_epilogue *e, float *scratch, size_t first, size_t rows,
                                                                    panel_range pr) {
    // Images as a network's first layer sees them: grey or RGB, moved by 1 or 2.
    if (g->dilation_w == 1 && (g->stride_w == 1 || g->stride_w == 2) && (g->in_c == 1 || g->in_c == 3) && !is_pointwise(g)) {
        int sw = g->stride_w;
        int wide = avx512 == FG_AVX512_FULL;
        if (g->in_c == 1) {
            sw == 1 ? stem_rows(flags, wide, 1, 1, input, g, packed, n, out, e, scratch, first, rows, pr)
                    : stem_rows(flags, wide, 1, 2, input, g, packed, n, out, e, scratch, first, rows, pr);
        } else {
            sw == 1 ? stem_rows(flags, wide, 3, 1, input, g, packed, n, out, e, scratch, first, rows, pr)
                    : stem_rows(flags, wide, 3, 2, input, g, packed, n, out, e, scratch, first, rows, pr);
        }
        return;
    }
    copied_rows(flags, avx512, input, g, packed, n, out, e, scratch, first, rows, pr);
}

/// The rows, compiled once per combination of epilogue work.
FG_AVX2 static void conv_avx2(const int avx512, const float *input, const fg_conv_geometry *g, const float *packed, int n,
                              float *out, const fg_conv_epilogue *e, float *scratch, size_t first, size_t rows, panel_range pr) {
#define FG_CONV_ROWS(F) rows_avx2(F, avx512, input, g, packed, n, out, e, scratch, first, rows, pr)
    FG_EPILOGUE_DISPATCH(fg_epilogue_flags(e), FG_CONV_ROWS)
#undef FG_CONV_ROWS
}
#endif

void fg_conv_gather(const float *input, const fg_conv_geometry *g, size_t row, size_t count, float *dst) {
#if FG_HAVE_AVX2_BUILD
    if (fg_has_avx2()) {
        gather_avx2(input, g, row, count, dst);
        return;
    }
#endif
    gather_with(input, g, row, count, dst, copy_scalar);
}

size_t fg_conv_scratch_count(const fg_conv_geometry *g) {
    return is_pointwise(g) ? 0 : MAX_ROWS * (size_t)g->kernel_h * (size_t)g->kernel_w * (size_t)g->in_c + 8;
}

size_t fg_conv_rows(const fg_conv_geometry *g) {
    return (size_t)g->batch * (size_t)g->out_h * (size_t)g->out_w;
}

size_t fg_conv_panels(int n) {
    return ((size_t)(n > 0 ? n : 0) + PANEL - 1) / PANEL;
}

void fg_conv_part_channels(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
                           const fg_conv_epilogue *epilogue, float *scratch, size_t first, size_t end, size_t first_panel,
                           size_t end_panel, int allow_simd) {
    if (geometry->batch <= 0 || geometry->out_h <= 0 || geometry->out_w <= 0 || n <= 0 || geometry->in_c <= 0) return;
    size_t rows = fg_conv_rows(geometry), panels = fg_conv_panels(n);
    if (end > rows) end = rows;
    if (end_panel > panels) end_panel = panels;
    if (first >= end || first_panel >= end_panel) return;
    panel_range pr = {first_panel, end_panel};
#if FG_HAVE_AVX2_BUILD
    if (allow_simd && fg_has_avx2()) {
        conv_avx2(fg_avx512_level(allow_simd), input, geometry, packed, n, out, epilogue, scratch, first, end, pr);
        return;
    }
#endif
    (void)allow_simd;
    conv_scalar(input, geometry, packed, n, out, epilogue, scratch, first, end, pr);
}

void fg_conv_part(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
                  const fg_conv_epilogue *epilogue, float *scratch, size_t first, size_t end, int allow_simd) {
    fg_conv_part_channels(input, geometry, packed, n, out, epilogue, scratch, first, end, 0, SIZE_MAX, allow_simd);
}

void fg_conv(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
             const fg_conv_epilogue *epilogue, float *scratch, int allow_simd) {
    fg_conv_part(input, geometry, packed, n, out, epilogue, scratch, 0, SIZE_MAX, allow_simd);
}

void fg_pointwise_conv(const float *input, size_t rows, int k, const float *packed, int n, float *out,
                       const fg_conv_epilogue *epilogue, int allow_simd) {
    if (rows == 0 || n <= 0 || k <= 0 || rows > (size_t)INT_MAX) return;
    fg_conv_geometry g = {1, (int)rows, 1, k, 1, 1, 1, 1, 1, 1, 0, 0, (int)rows, 1};
    fg_conv(input, &g, packed, n, out, epilogue, NULL, allow_simd);
}

int fg_conv_has_simd(void) {
#if FG_HAVE_AVX2_BUILD
    return fg_has_avx2();
#else
    return 0;
#endif
}
