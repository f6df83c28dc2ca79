// An inverted-residual block in one pass: a 1×1 "expansion" convolution, the depthwise convolution
// that alone reads its result, and the 1×1 "projection" that alone reads the depthwise one's (each of
// the two 1×1 convolutions optional), a band of rows at a time, with the intermediate tensors in
// scratch that stays in the core's caches. See fg_kernels.h.
//
// Why: in MobileNet-style networks the expanded tensor is the largest of the block (EfficientNet-
// Lite0's first one is 112×112×96, 4.8 MB), written once by one kernel and read once by the next;
// those passes then run at the speed of memory. Banding keeps it in L2. The values are those of the
// kernels run one after the other (the same calls on the same rows), bit for bit.
#include "fg_kernels.h"
#include <stdint.h>
#include <string.h>

size_t fg_banded_block_band_rows(const fg_conv_geometry *dw, size_t budget_floats) {
    if (dw->in_w <= 0 || dw->in_c <= 0 || dw->kernel_h <= 0 || dw->stride_h <= 0 || dw->dilation_h <= 0) return 1;
    size_t row = (size_t)dw->in_w * (size_t)dw->in_c;
    size_t reach = (size_t)(dw->kernel_h - 1) * (size_t)dw->dilation_h + 1;
    size_t fit = budget_floats / row;
    // At least one output row's window; the band never needs more rows than the input has.
    size_t rows = fit > reach ? fit : reach;
    size_t most = (size_t)dw->in_h > reach ? (size_t)dw->in_h : reach;
    return rows < most ? rows : most;
}

void fg_banded_block_part(const float *input, const fg_pointwise_stage *expansion, const fg_conv_geometry *dw,
                          const float *packed_dw, const fg_conv_epilogue *dw_epilogue, const fg_pointwise_stage *projection,
                          float *out, float *band, size_t band_rows, float *mid, size_t mid_rows, size_t first, size_t end,
                          int allow_simd) {
    if (dw->batch <= 0 || dw->in_h <= 0 || dw->in_w <= 0 || dw->in_c <= 0 || dw->out_h <= 0 || dw->out_w <= 0
        || dw->kernel_h <= 0 || dw->stride_h <= 0 || dw->dilation_h <= 0) return;
    if (expansion && (expansion->k <= 0 || expansion->n != dw->in_c)) return;
    if (projection && (projection->k != dw->in_c || projection->n <= 0 || mid_rows == 0)) return;
    size_t rows = fg_dwconv_rows(dw);
    if (end > rows) end = rows;
    const long in_h = dw->in_h, out_h = dw->out_h, stride = dw->stride_h, pad = dw->pad_top;
    const long reach = (long)(dw->kernel_h - 1) * dw->dilation_h + 1;
    if (expansion && band_rows < (size_t)reach) return;
    const size_t in_row = (size_t)dw->in_w * (size_t)dw->in_c, c = (size_t)dw->in_c;
    const size_t x_row = expansion ? (size_t)dw->in_w * (size_t)expansion->k : 0;
    // Output rows per band: as many as the band's input rows cover, and the middle scratch holds.
    long per_band = expansion ? ((long)band_rows - reach) / stride + 1 : out_h;
    if (projection && (long)mid_rows < per_band) per_band = (long)mid_rows;
    const size_t out_c = projection ? (size_t)projection->n : c;
    // Input rows [held_lo, held_hi) of image `held_image` are in the band now.
    long held_lo = 0, held_hi = 0;
    size_t held_image = (size_t)-1;
    size_t r = first;
    while (r < end) {
        size_t image = r / (size_t)out_h;
        long o0 = (long)(r % (size_t)out_h);
        long o1 = o0 + per_band;
        if (o1 > out_h) o1 = out_h;
        if ((long)(end - r) < o1 - o0) o1 = o0 + (long)(end - r);
        // The input rows the band's windows reach, inside the image.
        long lo = o0 * stride - pad, hi = (o1 - 1) * stride - pad + reach;
        if (lo < 0) lo = 0;
        if (hi > in_h) hi = in_h;
        const float *source;
        if (lo >= hi) {
            // Every window of these rows lies in the padding: a zero row far outside them stands in.
            memset(band, 0, in_row * sizeof(float));
            source = band;
            held_image = (size_t)-1;
        } else if (!expansion) {
            source = input + (image * (size_t)in_h + (size_t)lo) * in_row;
        } else {
            const float *x = input + image * (size_t)in_h * x_row;
            if (image == held_image && lo >= held_lo && lo < held_hi && hi >= held_hi) {
                // Rows already expanded move to the front; only the new ones are computed.
                memmove(band, band + (size_t)(lo - held_lo) * in_row, (size_t)(held_hi - lo) * in_row * sizeof(float));
                if (hi > held_hi)
                    fg_pointwise_conv(x + (size_t)held_hi * x_row, (size_t)(hi - held_hi) * (size_t)dw->in_w, expansion->k,
                                      expansion->packed, expansion->n, band + (size_t)(held_hi - lo) * in_row, expansion->epilogue,
                                      allow_simd);
            } else {
                fg_pointwise_conv(x + (size_t)lo * x_row, (size_t)(hi - lo) * (size_t)dw->in_w, expansion->k, expansion->packed,
                                  expansion->n, band, expansion->epilogue, allow_simd);
            }
            held_image = image;
            held_lo = lo;
            held_hi = hi;
            source = band;
        }
        // The band as an image of its own: its first row is input row `lo` (or a zero row).
        fg_conv_geometry g = *dw;
        g.batch = 1;
        g.in_h = (int)(hi > lo ? hi - lo : 1);
        g.pad_top = (int)(hi > lo ? pad - o0 * stride + lo : pad - o0 * stride);
        g.out_h = (int)(o1 - o0);
        size_t first_pixel = (image * (size_t)out_h + (size_t)o0) * (size_t)dw->out_w;
        size_t pixels = (size_t)(o1 - o0) * (size_t)dw->out_w;
        fg_conv_epilogue e = *dw_epilogue;
        if (e.residual) e.residual += first_pixel * e.residual_stride;
        fg_dwconv_part(source, &g, packed_dw, projection ? mid : out + first_pixel * c, &e, 0, SIZE_MAX, allow_simd);
        if (projection) {
            fg_conv_epilogue p = *projection->epilogue;
            if (p.residual) p.residual += first_pixel * p.residual_stride;
            fg_pointwise_conv(mid, pixels, projection->k, projection->packed, projection->n, out + first_pixel * out_c, &p,
                              allow_simd);
        }
        r += (size_t)(o1 - o0);
    }
}
