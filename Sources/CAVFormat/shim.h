#ifndef FRAMEGRAPH_CAVFORMAT_SHIM_H
#define FRAMEGRAPH_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#endif
