// libswresample for Swift: sample-format, rate and channel-layout conversion of audio (used when
// an audio track is re-encoded).
#ifndef FRAMEGRAPH_CSWRESAMPLE_SHIM_H
#define FRAMEGRAPH_CSWRESAMPLE_SHIM_H
#include <libswresample/swresample.h>
#endif
