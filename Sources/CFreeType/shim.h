// FreeType for Swift (Debian's libfreetype-dev): the face and glyph API the annotate node uses to
// render label text. FT_FREETYPE_H is a macro naming the header, which Swift cannot expand itself.
#ifndef FRAMEGRAPH_CFREETYPE_SHIM_H
#define FRAMEGRAPH_CFREETYPE_SHIM_H
#include <ft2build.h>
#include FT_FREETYPE_H

/// FT_LOAD_RENDER | FT_LOAD_TARGET_NORMAL: load a glyph and render it as an 8-bit coverage bitmap.
static inline int fg_ft_load_render_flags(void) { return FT_LOAD_RENDER | FT_LOAD_TARGET_NORMAL; }
#endif
