// FrameGraph's own C kernels: the convolutions (dense, depthwise, int8 VNNI, banded blocks), resize,
// region sampling, blend, Lab and chroma arithmetic, each built for baseline x86-64, AVX2+FMA and,
// where it pays, AVX-512F, chosen at run time by the CPU. Swift calls them through thin wrappers in
// XNNPACKRuntime, FrameGraphFilters and FrameGraphNetwork; they touch only the arrays they are given.
#ifndef FRAMEGRAPH_KERNELS_H
#define FRAMEGRAPH_KERNELS_H
#include <stddef.h>
#include <stdint.h>

/// What a kernel's `allow_simd` argument says: the scalar build (0), the widest build this CPU runs
/// well (1: AVX-512F where it pays, else AVX2 + FMA, else scalar), or at most AVX2 + FMA (2). All
/// agree bit for bit; tests run each and compare.
enum { FG_SIMD_SCALAR = 0, FG_SIMD_BEST = 1, FG_SIMD_AVX2 = 2 };

/// Lab (scikit-image convention) of n pixels given as linear-light R, G, B rows.
/// m: the 3×3 matrix XYZ/white = m · rgb, row-major.
void fg_lab_from_linear(const float *r, const float *g, const float *b, float *l, float *a, float *bb,
                        size_t n, const float m[9]);

/// Lightness alone of n pixels given as linear-light R, G, B rows (m: the matrix's second row).
void fg_lightness_from_linear(const float *r, const float *g, const float *b, float *l, size_t n, const float m[3]);

/// For n Lab pixels: linear-light R, G, B clipped to 0…1, times `scale`, plus 0.5 (ready to truncate
/// into a table index). inv: the 3×3 matrix rgb = inv · XYZ/white, row-major.
void fg_linear_index_from_lab(const float *l, const float *a, const float *bb, float *r, float *g, float *b,
                              size_t n, const float inv[9], float scale);

/// Y'CbCr → R'G'B' coefficients: R = ys·(Y − yo) + rv·(V − 128), G = ys·(Y − yo) − gu·(U − 128) − gv·(V − 128),
/// B = ys·(Y − yo) + bu·(U − 128) (the range and matrix folded in).
typedef struct {
    float yo, ys, rv, gu, gv, bu;
} fg_yuv_to_rgb;

/// Area (box) filter taps of a resize from `source` samples to `n`: output i averages the source
/// interval [i·f, (i+1)·f), f = source/n, each sample weighted by its overlap (weights sum to 1).
/// For output i: `start[i]`, `count[i]` ≤ `max_taps`, weights at `weight[i·max_taps …]`.
/// `max_taps` must be at least ceil(f) + 1. Returns 0, or -1 when it is too small.
int fg_area_taps(int *start, int *count, float *weight, int max_taps, int n, int source);

/// Bytes of a plan for the horizontal pass of fg_area_resize over one-channel planes, for dw outputs
/// with these taps (from fg_area_taps): 0 where none serves (no AVX-512F on this CPU, or an output
/// with more than 32 taps), and the pass then gathers its taps instead.
size_t fg_area_plan_bytes(int dw, const int *xs, const int *xc);

/// Writes that plan into `plan` (fg_area_plan_bytes of them, 64-byte aligned). Made once per size,
/// it serves every row of every call of fg_area_resize with these taps.
void fg_area_plan_make(int dw, const int *xs, const int *xc, const float *xw, int xmax, void *plan);

/// Area-resizes one 8-bit plane of `channels` interleaved samples per pixel (sw×sh pixels, rows `ss`
/// bytes apart) to dw×dh float samples (dense rows of dw·channels), vertical pass first into `acc`
/// (sw·channels floats of scratch), with taps from fg_area_taps (x: dw outputs, y: dh outputs) and
/// for one channel the x taps' plan (fg_area_plan_make; NULL or 0 bytes: none). Every build gives
/// the same values, bit for bit.
void fg_area_resize(const unsigned char *src, ptrdiff_t ss, int sw, int sh, int channels, float *dst, int dw, int dh,
                    const int *xs, const int *xc, const float *xw, int xmax,
                    const void *xplan, size_t xplan_bytes, const int *ys, const int *yc, const float *yw, int ymax, float *acc);

/// swscale's 16-bit fixed-point Y'CbCr → R'G'B' coefficients (those its context holds after
/// sws_setColorspaceDetails): per pixel, with s = (sample << 3) and 16-bit saturating sums,
/// Y' = hi16((s_Y − y_offset) · y_scale), U = s_U − uv_offset, V = s_V − uv_offset,
/// R = Y' + hi16(V · v_to_r), G = Y' + hi16(U · u_to_g) + hi16(V · v_to_g), B = Y' + hi16(U · u_to_b),
/// each clamped to 0…255 (hi16: the upper half of the 32-bit product).
typedef struct {
    int16_t y_offset, y_scale, uv_offset, v_to_r, u_to_g, v_to_g, u_to_b;
} fg_yuv_fixed;

/// A planar 4:2:0 picture (width even; rows 2k and 2k+1 share chroma row k) → packed RGB24 rows
/// `dst_stride` bytes apart, with `c` (swscale's unscaled converter's arithmetic, bit for bit).
/// allow_simd: FG_SIMD_SCALAR, or any other value for AVX2 where the CPU has it (same bytes).
void fg_yuv420_to_rgb24_fixed(const unsigned char *y, ptrdiff_t y_stride, const unsigned char *u, ptrdiff_t u_stride,
                              const unsigned char *v, ptrdiff_t v_stride, unsigned char *dst, ptrdiff_t dst_stride,
                              int width, int height, const fg_yuv_fixed *c, int allow_simd);

/// n pixels of float Y', Cb, Cr (0…255 scale) → packed RGB24, with `c`.
void fg_yuv_float_to_rgb24(const float *y, const float *u, const float *v, unsigned char *dst, int n, const fg_yuv_to_rgb *c);

/// What colorization's chroma step needs besides the pixels (fg_chroma_recombine_row).
typedef struct {
    /// The frame's Y'CbCr → R'G'B' (matrix and range).
    fg_yuv_to_rgb to_rgb;
    /// 256 floats: the linear light of each sRGB byte.
    const float *linear;
    /// The sRGB byte of linear light i / scale, i = 0 … scale, then three more readable bytes (the
    /// AVX2 build reads four bytes at a time).
    const unsigned char *srgb;
    float scale;
    /// The luminance row of the linear RGB → XYZ matrix, and the XYZ → linear RGB matrix (row-major).
    float lum[3], inv[9];
    /// The output's luma coefficients, and Cb/Cr factors: Cb = 128 + (B − Y')·cbf, Cr = 128 + (R − Y')·crf.
    float kr, kb, cbf, crf;
} fg_chroma_recombine;

/// One chroma row of a 4:2:0 frame coloured from a/b: for each of the `cw` chroma samples, the Lab
/// lightness of the mean of the 2×2 luma samples under it (rows y0, y1 of `width` samples) with its
/// own Cb/Cr, combined with a[i], b[i] → sRGB bytes → Cb/Cr written to out_u[i], out_v[i].
/// `allow_simd` = 0 forces the baseline build (the AVX2 build gives the same bytes).
void fg_chroma_recombine_row(const unsigned char *y0, const unsigned char *y1, const unsigned char *u,
                             const unsigned char *v, int cw, int width, const float *a, const float *b,
                             const fg_chroma_recombine *p, unsigned char *out_u, unsigned char *out_v,
                             int allow_simd);

/// a/b for one output row: rows (a0, a1) and (b0, b1) of width aw mixed by wy, then sampled at n
/// columns (left index tx[i], weight wx[i] of its right neighbour, clamped to aw − 1).
void fg_ab_row(const float *a0, const float *a1, const float *b0, const float *b1, int aw, float wy,
               const int *tx, const float *wx, int n, float *a, float *b, float *scratch);

/// n floats (0…255 scale) → bytes, rounded and clamped.
void fg_float_to_bytes(const float *src, unsigned char *dst, int n);

/// Replaces every NaN and ±infinity among p[0..<n] by 0; returns how many it replaced (nearly
/// always 0, found in one pass that writes nothing).
size_t fg_zero_nonfinite(float *p, size_t n);

/// n probabilities → mask bytes: each below 1e-6 (or NaN) taken as 0, then (p − low)·scale + 0.5
/// clamped to 0…255 and truncated (scale = 255 / (high − low)).
void fg_probability_bytes(const float *p, unsigned char *dst, int n, float low, float scale);
/// Samples a size×size grid of an rgb24 image (width×height, `stride` bytes per row) into
/// size×size×3 floats (value·scale + offset) as OpenCV's warp with INTER_LINEAR does on 8-bit
/// images (MediaPipe's ImageToTensor): output pixel (col, row) reads the image at pixel-index position
/// (x0 + col·dxc + row·dxr, y0 + col·dyc + row·dyr), rounded to 1/32 pixel, bilinear with
/// fixed-point weights, rounded to 8 bits; outside the image, black (`black_outside` ≠ 0: OpenCV's
/// constant border) or the nearest edge pixel (its replicated border).
void fg_sample_grid_rgb24(const unsigned char *image, size_t stride, int width, int height,
                          float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                          int size, float scale, float offset, int black_outside, float *out);
/// The same, with `allow_simd` = 0 forcing the scalar build (tests compare the two bit for bit).
void fg_sample_grid_rgb24_with(const unsigned char *image, size_t stride, int width, int height,
                               float x0, float y0, float dxc, float dyc, float dxr, float dyr,
                               int size, float scale, float offset, int black_outside, int allow_simd, float *out);

/// What a convolution does to each result after its bias, in this order: clamp to
/// [min1, max1] (the convolution's own activation); add `residual` (rows `residual_stride` floats
/// apart; only its first `residual_channels` channels, the rest get nothing: a zero channel pad);
/// clamp to [min2, max2] (the addition's activation); then PReLU with per-channel `prelu_slopes`
/// (NULL: none) or, when `hard_swish` ≠ 0, x·min(max(x+3, 0), 6)/6. Infinite bounds clamp nothing.
typedef struct {
    float min1, max1;
    const float *residual;
    size_t residual_stride;
    int residual_channels;
    float min2, max2;
    const float *prelu_slopes;
    int hard_swish;
} fg_conv_epilogue;

/// Floats that the packed weights of a convolution with `k` values per window (kernel_h·kernel_w·in_c;
/// in_c for 1×1) and `n` output channels take.
size_t fg_conv_packed_count(int k, int n);
/// Packs weights [n][k] (output-major) and `bias` [n] (NULL: zero) into 16-channel panels.
void fg_conv_pack(const float *weights, const float *bias, int k, int n, float *packed);
/// out[r][c] = epilogue(bias[c] + Σᵢ input[r][i]·weights[c][i]) for `rows` rows of `k` inputs,
/// each sum taken in order of i with fused multiply-adds (so the AVX2 and scalar builds agree bit
/// for bit); `allow_simd` = 0 forces the scalar build.
void fg_pointwise_conv(const float *input, size_t rows, int k, const float *packed, int n, float *out,
                       const fg_conv_epilogue *epilogue, int allow_simd);
/// Where a convolution's windows lie: an NHWC input of batch × in_h × in_w × in_c, a kernel_h ×
/// kernel_w window moved by the strides, spread by the dilations, starting pad_top / pad_left
/// pixels before the input (padding reads zeros), out_h × out_w outputs per image.
typedef struct {
    int batch, in_h, in_w, in_c;
    int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int out_h, out_w;
} fg_conv_geometry;

/// Floats of scratch `fg_conv` needs for `geometry` (0 for a plain 1×1 convolution).
size_t fg_conv_scratch_count(const fg_conv_geometry *geometry);
/// A convolution with weights packed by fg_conv_pack (k = kernel_h·kernel_w·in_c, weights
/// [n][kernel_h][kernel_w][in_c]), multiplied like a 1×1 convolution six output pixels at a time,
/// each pixel's window read row by row where it lies inside the input and copied into `scratch`
/// (zeros in the padding) where it does not, with the same epilogue (its residual indexed by output
/// pixel).
void fg_conv(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
             const fg_conv_epilogue *epilogue, float *scratch, int allow_simd);
/// Dense convolutions in 8-bit integers (convolution_int8.c): float rows in and out, weights per
/// output channel as signed bytes, each block of 12 rows (output pixels: their windows, or for a 1×1
/// convolution their input rows) quantised to unsigned bytes over its own range as it runs, the
/// products in AVX-512 VNNI (a scalar build of the same arithmetic elsewhere), the float epilogue of
/// fg_conv after them.
/// Bytes of one quantised row of `k` inputs (a window's kernel_h·kernel_w·in_c; k rounded up to four).
size_t fg_qconv_row_bytes(int k);
/// Output channels rounded up to the 16 of a panel: the length of `scales`, `sums` and `biases`.
size_t fg_qconv_channels(int n);
/// Bytes of the packed weights of `n` outputs × `k` inputs.
size_t fg_qconv_packed_bytes(int k, int n);
/// Bytes of scratch one call of fg_qconv_part needs (one block's quantised rows and a tile past it).
size_t fg_qconv_scratch_bytes(int k);
/// Floats of scratch one call of fg_qconv_windows_part needs besides (one block's windows).
size_t fg_qconv_window_floats(int k);
/// Quantises `weights` ([n][k]) per output channel (scale = max |w| / 127) into `packed`, and fills
/// `scales` (each channel's step), `sums` (Σ of its quantised weights times the step) and `biases`
/// (`bias` or zeros), each fg_qconv_channels(n) long.
void fg_qconv_pack(const float *weights, const float *bias, int k, int n, int8_t *packed, float *scales, float *sums, float *biases);
/// Whether this CPU runs the AVX-512 VNNI build (else only the scalar one: correct, slow).
int fg_qconv_has_simd(void);
/// Output rows first…end−1, channels of the 16-channel panels first_panel…end_panel−1, of
/// out[r][c] = epilogue(Σₖ input[r][k]·w[c][k] + bias[c]) in 8-bit integer products; `scratch`:
/// fg_qconv_scratch_bytes(k) bytes of the caller's (one per thread).
void fg_qconv_part(const float *input, int k, const int8_t *packed, const float *scales, const float *sums, const float *biases, int n,
                   float *out, const fg_conv_epilogue *epilogue, uint8_t *scratch, size_t first, size_t end, size_t first_panel,
                   size_t end_panel, int allow_simd);
/// fg_qconv_part for any dense convolution of `geometry` (k = kernel_h·kernel_w·in_c): each block's
/// windows copied into `windows` (fg_qconv_window_floats(k) floats), zeros where they lie in the
/// padding, then quantised and multiplied as fg_qconv_part's rows.
void fg_qconv_windows_part(const float *input, const fg_conv_geometry *geometry, const int8_t *packed, const float *scales,
                           const float *sums, const float *biases, int n, float *out, const fg_conv_epilogue *epilogue, float *windows,
                           uint8_t *scratch, size_t first, size_t end, size_t first_panel, size_t end_panel, int allow_simd);
/// Dense convolutions with bfloat16 products (convolution_bf16.c): float rows in and out, weights
/// rounded to bfloat16 once, each block of 12 rows rounded to bfloat16 as it runs, the products added
/// in float32 by AVX-512 BF16 (a scalar build of the same arithmetic elsewhere), the float epilogue
/// of fg_conv after them.
/// Values (uint16) of one bfloat16 row of `k` inputs (k rounded up to two).
size_t fg_bconv_row_count(int k);
/// Output channels rounded up to the 16 of a panel: the length of `biases`.
size_t fg_bconv_channels(int n);
/// Values (uint16) of the packed weights of `n` outputs × `k` inputs.
size_t fg_bconv_packed_count(int k, int n);
/// Values (uint16) of scratch one call of fg_bconv_part needs (one block's rows and a tile past it).
size_t fg_bconv_scratch_count(int k);
/// Floats of scratch one call of fg_bconv_windows_part needs besides (one block's windows).
size_t fg_bconv_window_floats(int k);
/// `x` as bfloat16 (to nearest, ties to even; NaN stays NaN; denormals become zero), as the
/// instruction rounds.
uint16_t fg_bf16_round(float x);
/// Rounds `weights` ([n][k]) to bfloat16 into `packed` (16-channel panels of pairs) and fills
/// `biases` (`bias` or zeros, fg_bconv_channels(n) long).
void fg_bconv_pack(const float *weights, const float *bias, int k, int n, uint16_t *packed, float *biases);
/// Whether this CPU runs the AVX-512 BF16 build (else only the scalar one: correct, slow).
int fg_bconv_has_simd(void);
/// Output rows first…end−1, channels of the 16-channel panels first_panel…end_panel−1, of
/// out[r][c] = epilogue(Σₖ input[r][k]·w[c][k] + bias[c]) in bfloat16 products; `scratch`:
/// fg_bconv_scratch_count(k) values of the caller's (one per thread).
void fg_bconv_part(const float *input, int k, const uint16_t *packed, const float *biases, int n, float *out,
                   const fg_conv_epilogue *epilogue, uint16_t *scratch, size_t first, size_t end, size_t first_panel, size_t end_panel,
                   int allow_simd);
/// fg_bconv_part over rows already in bfloat16 (`input`: k values a row, k even; what
/// fg_dwconv_part_bf16 writes): the same products and epilogue as fg_bconv_part of the float rows
/// they round, bit for bit, without rounding them again. Nothing is done for an odd k.
void fg_bconv_part_rounded(const uint16_t *input, int k, const uint16_t *packed, const float *biases, int n, float *out,
                           const fg_conv_epilogue *epilogue, uint16_t *scratch, size_t first, size_t end, size_t first_panel,
                           size_t end_panel, int allow_simd);
/// fg_bconv_part for any dense convolution of `geometry` (k = kernel_h·kernel_w·in_c): each block's
/// windows copied into `windows` (fg_bconv_window_floats(k) floats), zeros where they lie in the
/// padding, then rounded and multiplied as fg_bconv_part's rows.
void fg_bconv_windows_part(const float *input, const fg_conv_geometry *geometry, const uint16_t *packed, const float *biases, int n,
                           float *out, const fg_conv_epilogue *epilogue, float *windows, uint16_t *scratch, size_t first, size_t end,
                           size_t first_panel, size_t end_panel, int allow_simd);
/// Copies the windows of output pixels row…row+count−1 of `geometry` into `dst` (count rows of
/// kernel_h·kernel_w·in_c values, zeros in the padding; up to 8 floats past the last may be written).
void fg_conv_gather(const float *input, const fg_conv_geometry *geometry, size_t row, size_t count, float *dst);
/// Output pixels (matrix rows) of `geometry`: batch × out_h × out_w.
size_t fg_conv_rows(const fg_conv_geometry *geometry);
/// 16-channel panels of a convolution with `n` outputs.
size_t fg_conv_panels(int n);
/// fg_conv for output rows first…end−1 and output panels first_panel…end_panel−1 only (channels
/// 16·first_panel…), so that threads can share a convolution by rows (`first` a multiple of 6) or
/// by channels, each with its own scratch.
void fg_conv_part_channels(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
                           const fg_conv_epilogue *epilogue, float *scratch, size_t first, size_t end, size_t first_panel,
                           size_t end_panel, int allow_simd);
/// fg_conv for output rows first…end−1 only (`first` a multiple of 6), so that threads can share
/// a convolution, each with its own scratch.
void fg_conv_part(const float *input, const fg_conv_geometry *geometry, const float *packed, int n, float *out,
                  const fg_conv_epilogue *epilogue, float *scratch, size_t first, size_t end, int allow_simd);
/// Floats that the packed weights of a depthwise convolution with `taps` (kernel_h·kernel_w) values
/// per channel and `c` channels take.
size_t fg_dwconv_packed_count(int taps, int c);
/// Packs depthwise weights [taps][c] (TFLite's [1, kernel_h, kernel_w, c]) and `bias` [c] (NULL:
/// zero) into 8-channel blocks.
void fg_dwconv_pack(const float *weights, const float *bias, int taps, int c, float *packed);
/// Output rows (one image row each) of a depthwise `geometry`: batch × out_h.
size_t fg_dwconv_rows(const fg_conv_geometry *geometry);
/// A depthwise convolution (multiplier 1: `geometry`'s in_c channels in and out) with weights packed
/// by fg_dwconv_pack, for output rows first…end−1 (fg_dwconv_rows): out = epilogue(bias + Σ taps),
/// the taps taken in (kernel row, kernel column) order with fused multiply-adds, those in the
/// padding skipped (so the AVX2 and scalar builds agree bit for bit); the epilogue's residual is
/// indexed by output pixel. `allow_simd` = 0 forces the scalar build.
void fg_dwconv_part(const float *input, const fg_conv_geometry *geometry, const float *packed, float *out,
                    const fg_conv_epilogue *epilogue, size_t first, size_t end, int allow_simd);
/// 8-channel blocks of a depthwise `geometry` (its in_c channels).
size_t fg_dwconv_blocks(const fg_conv_geometry *geometry);
/// fg_dwconv_part for the channels of blocks first_block…end_block−1 only (channels
/// 8·first_block…), so that threads can share a depthwise convolution with few output rows.
void fg_dwconv_part_channels(const float *input, const fg_conv_geometry *geometry, const float *packed, float *out,
                             const fg_conv_epilogue *epilogue, size_t first, size_t end, size_t first_block, size_t end_block,
                             int allow_simd);
/// Whether fg_dwconv_part_bf16 runs `geometry` here: AVX-512 BF16 on a core with full-width AVX-512
/// (fg_avx512_level 2), a 3- or 5-wide kernel moved by 1 or 2, no dilation.
int fg_dwconv_bf16_supported(const fg_conv_geometry *geometry);
/// fg_dwconv_part_channels with each result rounded to bfloat16 as fg_bf16_round rounds it and stored
/// as such (`out`: pixels × in_c values), for a 1×1 convolution with bfloat16 products to read
/// (fg_bconv_part_rounded) instead of rounding float rows itself; the values are those of the float
/// kernel, rounded, bit for bit. Nothing is done unless fg_dwconv_bf16_supported(geometry).
void fg_dwconv_part_bf16(const float *input, const fg_conv_geometry *geometry, const float *packed, uint16_t *out,
                         const fg_conv_epilogue *epilogue, size_t first, size_t end, size_t first_block, size_t end_block);
/// Input rows of the expanded tensor that a band of fg_banded_block_part holds when it may take
/// about `budget_floats` floats: at least one depthwise window's rows, at most the input's.
size_t fg_banded_block_band_rows(const fg_conv_geometry *dw, size_t budget_floats);
/// A 1×1 convolution of a banded block: weights packed by fg_conv_pack, `k` inputs, `n` outputs,
/// its epilogue (a residual in it is indexed by the block's output pixel).
typedef struct {
    const float *packed;
    int k, n;
    const fg_conv_epilogue *epilogue;
} fg_pointwise_stage;
/// An inverted-residual block for the depthwise output rows first…end−1 (fg_dwconv_rows numbering):
/// `expansion` (NULL: none; then `input` is the depthwise input) over the input rows each band of
/// output rows needs, into `band` (band_rows × dw->in_w × dw->in_c floats, at least one such row;
/// rows the previous band already holds are moved, not recomputed); the depthwise convolution `dw`
/// (packed by fg_dwconv_pack) on the band; then `projection` (NULL: none; k = dw->in_c) over the
/// band's depthwise output, held in `mid` (mid_rows × dw->out_w × dw->in_c floats; mid_rows output
/// rows per band at most), into `out`. The same values, bit for bit, as the kernels run one after the
/// other over whole tensors (fg_pointwise_conv, fg_dwconv_part, fg_pointwise_conv).
void fg_banded_block_part(const float *input, const fg_pointwise_stage *expansion, const fg_conv_geometry *dw,
                          const float *packed_dw, const fg_conv_epilogue *dw_epilogue, const fg_pointwise_stage *projection,
                          float *out, float *band, size_t band_rows, float *mid, size_t mid_rows, size_t first, size_t end,
                          int allow_simd);
/// Floats per packed weight row of fg_softmax_project (k rounded up to a multiple of 8).
size_t fg_softmax_project_padded(int k);
/// Packs projection weights [n][k] into rows of fg_softmax_project_padded(k) floats (zeros past k).
void fg_softmax_project_pack(const float *weights, int k, int n, float *packed);
/// For rows first…end−1 of k logits each: p = softmax(scale · logits) over the row, then
/// out[row][c] = clamp(bias[c] + Σᵢ pᵢ · weights[c][i], min, max) for the n outputs (weights packed by
/// fg_softmax_project_pack; bias NULL: zero), the exponentials in `scratch`
/// (fg_softmax_project_padded(k) floats). The AVX2 and scalar builds agree bit for bit; `allow_simd`
/// = 0 forces the scalar build.
void fg_softmax_project(const float *logits, size_t first, size_t end, int k, float scale, const float *packed, const float *bias,
                        int n, float min, float max, float *out, float *scratch, int allow_simd);

/// A transposed convolution whose kernel equals its stride, without padding: an NHWC input of
/// batch × in_h × in_w × in_c, each pixel giving a kernel_h × kernel_w block of out_c outputs (the
/// output is batch × in_h·kernel_h × in_w·kernel_w × out_c), clamped to [min, max], then a sigmoid
/// when `sigmoid` ≠ 0.
typedef struct {
    int batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w;
    float min, max;
    int sigmoid;
} fg_upsample_geometry;
/// Outputs per input pixel (kernel_h·kernel_w·out_c) up to which fg_upsample_conv_part runs.
#define FG_UPSAMPLE_MAX_OUTPUTS 512
/// Floats the packed weights of such a convolution take (`outputs` = kernel_h·kernel_w·out_c).
size_t fg_upsample_conv_packed_count(int cin, int outputs);
/// Packs its filter [out_c][kernel_h][kernel_w][in_c] (TFLite's layout) and bias [out_c] (NULL: zero).
void fg_upsample_conv_pack(const float *weights, const float *bias, int out_c, int kernel_h, int kernel_w, int in_c, float *packed);
/// Input pixels of `geometry`: batch × in_h × in_w.
size_t fg_upsample_conv_pixels(const fg_upsample_geometry *geometry);
/// The convolution for input pixels first…end−1, each output a sum over the input channels in order
/// with fused multiply-adds (the AVX2 and scalar builds agree bit for bit; `allow_simd` = 0 forces
/// the scalar build).
void fg_upsample_conv_part(const float *input, const fg_upsample_geometry *geometry, const float *packed, float *out, size_t first,
                           size_t end, int allow_simd);

/// out = a · gate[c] + b over `pixels` × `channels` (NHWC; `gate` one value per channel): the product
/// and the sum rounded separately, as the two operations it replaces round them.
void fg_scale_add(const float *a, const float *gate, const float *b, size_t pixels, size_t channels, float *out, int allow_simd);
/// mean[c] = Σₚ (a[p][c] + b[p][c]) / pixels: each channel's sum taken in eight interleaved runs of
/// pixels (pixel p into run p mod 8), then the runs added in order (both builds, so they agree bit
/// for bit).
void fg_add_mean(const float *a, const float *b, size_t pixels, size_t channels, float *mean, int allow_simd);

/// Whether these kernels run their AVX2 build on this CPU (AVX2 and FMA); without it they run
/// scalar code, far slower than XNNPACK's. Whether they beat XNNPACK where they do run AVX2 depends
/// on the core and the network: the Swift side times both (KernelTuning.swift).
int fg_conv_has_simd(void);

/// Bilinear resize of `batch` NHWC images of `c` channels from ih×iw to oh×ow: output row y blends
/// source rows y0[y] and y1[y] (weight wy[y] for the second), column x source columns x0[x] and
/// x1[x] (weight wx[x]); indices must lie inside the source (the caller's tables, from the
/// operation's corner convention). Horizontal blends first, then the vertical one; the AVX2 and
/// baseline builds agree bit for bit (`allow_simd` = 0 forces the baseline one).
void fg_resize_bilinear(const float *input, int batch, int ih, int iw, int c, float *out, int oh, int ow, const int *y0,
                        const int *y1, const float *wy, const int *x0, const int *x1, const float *wx, int allow_simd);

/// n samples of one row: o[x] = (f[x]·a + b[x]·(255 − a)) / 255 rounded to nearest, with
/// a = m[x · mask_step] (1, or 2 for a 4:2:0 chroma row under a full-resolution mask); the mask row
/// must hold (n − 1)·mask_step + 1 samples. The AVX2 and scalar builds give the same bytes.
void fg_blend_row(const unsigned char *f, const unsigned char *b, const unsigned char *m, unsigned char *o, size_t n, int mask_step,
                  int allow_simd);

/// The L2 cache of one core in bytes (sysconf; 512 KiB when unknown): a 1×1 convolution's rows go
/// in blocks whose inputs fill at most half of it.
size_t fg_l2_bytes(void);

/// Whether every AVX-512F path runs: 1 wherever AVX-512F does, unless FRAMEGRAPH_AVX512_FULL_WIDTH=0
/// keeps only the 1×1 tiles of 64 inputs or more (see cpu.h).
int fg_avx512_full_width(void);

#endif
