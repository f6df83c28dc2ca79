"""Finding and declaring libFrameGraphC, the engine's C library (ctypes)."""
from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path
from typing import List, Optional

LIBRARY = "libFrameGraphC.so"
ABI_VERSION = 4


def candidates() -> List[Path]:
    """Where the library is looked for, in order: $FRAMEGRAPH_LIB (the file), $FRAMEGRAPH_PREFIX/lib,
    the checkout this package sits in (an editable install or running from python/), the checkout
    above the current folder, and beside the `framegraph` command on PATH (a build's
    .build/release/, or an install prefix's lib/)."""
    found: List[Path] = []
    given = os.environ.get("FRAMEGRAPH_LIB")
    if given:
        found.append(Path(given))
    prefix = os.environ.get("FRAMEGRAPH_PREFIX")
    if prefix:
        found.append(Path(prefix) / "lib" / LIBRARY)
    here = Path(__file__).resolve().parent
    for folder in [here, *here.parents][:4]:
        found.append(folder / ".build" / "release" / LIBRARY)
    cwd = Path.cwd()
    for folder in [cwd, *cwd.parents][:6]:
        found.append(folder / ".build" / "release" / LIBRARY)
    cli = shutil.which("framegraph")
    if cli:
        binary = Path(cli).resolve()
        found.append(binary.parent / LIBRARY)
        found.append(binary.parent.parent / "lib" / LIBRARY)
    unique: List[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def find() -> Path:
    """The library's path, or ImportError naming the places tried and how to build it."""
    tried = candidates()
    if os.environ.get("FRAMEGRAPH_LIB"):
        tried = tried[:1]  # an explicit choice is not second-guessed
    for path in tried:
        if path.is_file():
            return path
    places = ", ".join(str(p) for p in tried)
    raise ImportError(f"framegraph: no {LIBRARY} (tried {places}); build it with `swift build -c release` in the FrameGraph "
                      "checkout, or set FRAMEGRAPH_LIB to its path")


_c_void_pp = ctypes.POINTER(ctypes.c_void_p)


def load(path: Optional[Path] = None) -> ctypes.CDLL:
    """Loads the library and declares its functions (ctypes releases the GIL during each call)."""
    path = path or find()
    lib = ctypes.CDLL(str(path))
    lib.fg_abi_version.restype = ctypes.c_int32
    lib.fg_abi_version.argtypes = []
    version = lib.fg_abi_version()
    if version != ABI_VERSION:
        raise ImportError(f"framegraph: {path} has ABI version {version}; this package needs {ABI_VERSION} (rebuild both from one checkout)")
    lib.fg_last_error.restype = ctypes.c_char_p
    lib.fg_last_error.argtypes = []
    lib.fg_last_error_kind.restype = ctypes.c_char_p
    lib.fg_last_error_kind.argtypes = []
    lib.fg_open.restype = ctypes.c_int32
    lib.fg_open.argtypes = [ctypes.c_char_p, _c_void_pp]
    lib.fg_next.restype = ctypes.c_int32
    lib.fg_next.argtypes = [ctypes.c_void_p, ctypes.c_double, _c_void_pp]
    lib.fg_stop.restype = ctypes.c_int32
    lib.fg_stop.argtypes = [ctypes.c_void_p]
    lib.fg_wait.restype = ctypes.c_int32
    lib.fg_wait.argtypes = [ctypes.c_void_p, ctypes.c_double]
    lib.fg_stats.restype = ctypes.c_char_p
    lib.fg_stats.argtypes = [ctypes.c_void_p]
    lib.fg_close.restype = None
    lib.fg_close.argtypes = [ctypes.c_void_p]
    lib.fg_item_index.restype = ctypes.c_int64
    lib.fg_item_index.argtypes = [ctypes.c_void_p]
    lib.fg_item_time.restype = ctypes.c_double
    lib.fg_item_time.argtypes = [ctypes.c_void_p]
    lib.fg_item_stream.restype = ctypes.c_char_p
    lib.fg_item_stream.argtypes = [ctypes.c_void_p]
    lib.fg_item_frame.restype = ctypes.c_int32
    lib.fg_item_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int32),
                                  ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)]
    lib.fg_item_results.restype = ctypes.c_char_p
    lib.fg_item_results.argtypes = [ctypes.c_void_p]
    lib.fg_item_free.restype = None
    lib.fg_item_free.argtypes = [ctypes.c_void_p]
    lib.fg_label.restype = ctypes.c_int32
    lib.fg_label.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.fg_string_free.restype = None
    lib.fg_string_free.argtypes = [ctypes.c_void_p]
    lib.fg_push.restype = ctypes.c_int32
    lib.fg_push.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_double]
    lib.fg_run_options.restype = ctypes.c_void_p
    lib.fg_run_options.argtypes = []
    lib.fg_push_end.restype = ctypes.c_int32
    lib.fg_push_end.argtypes = [ctypes.c_void_p]
    return lib
