#ifndef FRAMEGRAPH_CAVFORMAT_SHIM_H
#define FRAMEGRAPH_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/display.h>

/// The clockwise rotation (degrees, 0 ≤ r < 360) a player applies to `st` from its display matrix
/// (phone videos), 0 when it has none. (FFmpeg stores the matrix as stream side data.)
static inline double fg_stream_rotation(const AVStream *st) {
    size_t size = 0;
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!m || size < 9 * sizeof(int32_t)) return 0;
    double r = -av_display_rotation_get((const int32_t *)m);
    if (r != r) return 0;  /* NaN: a degenerate matrix */
    r -= 360 * (double)(long long)(r / 360);
    if (r < 0) r += 360;
    return r;
}

/// Gives `st` a display matrix that turns its frames `clockwise` degrees when played.
static inline int fg_stream_set_rotation(AVStream *st, double clockwise) {
    uint8_t *m = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (!m) return AVERROR(ENOMEM);
    av_display_rotation_set((int32_t *)m, -clockwise);
    return 0;
}
#endif
