// libavutil for Swift: the public headers plus static inline functions for the macros Swift
// cannot import (AVERROR, AVERROR_EOF, av_err2str).
#ifndef FRAMEGRAPH_CAVUTIL_SHIM_H
#define FRAMEGRAPH_CAVUTIL_SHIM_H
#include <errno.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/mathematics.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>

/// AVERROR(EAGAIN): the codec wants more input or has output waiting.
static inline int fg_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: end of stream.
static inline int fg_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR_INVALIDDATA: the input is not what the demuxer or decoder expected.
static inline int fg_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AVERROR(errno) for any errno value.
static inline int fg_averror(int e) { return AVERROR(e); }
/// AVERROR_EXIT: an interrupt callback stopped a blocking call.
static inline int fg_averror_exit(void) { return AVERROR_EXIT; }
/// AV_NOPTS_VALUE as a plain constant.
static inline int64_t fg_nopts_value(void) { return AV_NOPTS_VALUE; }
/// Points a video frame's extended_data at its own data[] (what a get_buffer2 callback must do).
static inline void fg_frame_point_extended_data(AVFrame *frame) { frame->extended_data = frame->data; }
#endif
