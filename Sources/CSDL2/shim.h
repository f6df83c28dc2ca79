// SDL2 for Swift (Debian's libsdl2-dev): a window, a renderer and a streaming texture for the
// display sink, and the events that close it. SDL_main is not used (SDL_MAIN_HANDLED).
#ifndef FRAMEGRAPH_CSDL2_SHIM_H
#define FRAMEGRAPH_CSDL2_SHIM_H
#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>   /* no pkg-config: its -D_REENTRANT is a flag SwiftPM refuses */

/// SDL_WINDOWPOS_CENTERED is a macro Swift cannot import.
static inline int fg_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }
#endif
