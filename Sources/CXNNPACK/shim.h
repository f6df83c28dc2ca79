// XNNPACK and pthreadpool for Swift (Debian libxnnpack-dev / libpthreadpool-dev ship no pkg-config
// file, so the module map links them by name).
#ifndef FRAMEGRAPH_CXNNPACK_SHIM_H
#define FRAMEGRAPH_CXNNPACK_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <pthreadpool.h>
#include <xnnpack.h>
#endif
