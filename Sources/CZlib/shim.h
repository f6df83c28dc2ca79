// zlib for Swift (Debian's zlib1g-dev): raw inflate for the deflate entries of zip archives (the
// associated files packed behind a TFLite model's metadata).
#ifndef FRAMEGRAPH_CZLIB_SHIM_H
#define FRAMEGRAPH_CZLIB_SHIM_H
#include <zlib.h>

/// inflateInit2 is a macro (it passes the library's version and the stream's size).
static inline int fg_inflate_init_raw(z_stream *stream) { return inflateInit2(stream, -15); }
#endif
