#ifndef FRAMEGRAPH_CAVCODEC_SHIM_H
#define FRAMEGRAPH_CAVCODEC_SHIM_H
#include <libavcodec/avcodec.h>
/// AV_CODEC_FLAG_GLOBAL_HEADER as a plain constant.
static inline int fg_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
/// FF_COMPLIANCE_NORMAL as a plain constant (avformat_query_codec's strictness).
static inline int fg_compliance_normal(void) { return FF_COMPLIANCE_NORMAL; }
#endif
