#ifndef FRAMEGRAPH_CSWSCALE_SHIM_H
#define FRAMEGRAPH_CSWSCALE_SHIM_H
#include <libswscale/swscale.h>
#endif
