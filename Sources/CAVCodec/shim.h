#ifndef FRAMEGRAPH_CAVCODEC_SHIM_H
#define FRAMEGRAPH_CAVCODEC_SHIM_H
#include <libavcodec/avcodec.h>
/// AV_CODEC_FLAG_GLOBAL_HEADER as a plain constant.
static inline int fg_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
#endif
