"""A FrameGraph run seen from Python: an iterator of items (frame + results), stop, stats."""
from __future__ import annotations

import ctypes
import json
import threading
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, TypeVar

import numpy as np
import numpy.typing as npt

from . import _library
from ._options import PathLike, RunOptions, request

if TYPE_CHECKING:
    from typing_extensions import Unpack

_OK, _FAILED, _END, _TIMEOUT, _INVALID = 0, 1, 2, 3, 4
RGBFrame = npt.NDArray[np.uint8]
"""An output frame: uint8 H×W×3, RGB."""
_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def library() -> ctypes.CDLL:
    """The engine's C library, loaded once (see framegraph._library.find for where it is looked for)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _library.load()
        return _lib


class FrameGraphError(Exception):
    """An error from the engine, with its one-line message (the CLI's)."""


class PipelineError(FrameGraphError):
    """The pipeline cannot be built as asked: its file, a --set, a node's options."""


class ModelError(FrameGraphError):
    """A model cannot be found, read or fitted."""


class RunError(FrameGraphError):
    """The run failed: an input or output file, or an error while frames flowed."""


class RequestError(FrameGraphError, ValueError):
    """The request itself is malformed (a wrong type, an unknown mode)."""


_KINDS = {"pipeline": PipelineError, "model": ModelError, "request": RequestError, "run": RunError}


def _error(lib: ctypes.CDLL) -> FrameGraphError:
    message = (lib.fg_last_error() or b"unknown error").decode("utf-8", "replace")
    kind = (lib.fg_last_error_kind() or b"run").decode()
    return _KINDS.get(kind, RunError)(message)


class _ItemHandle:
    """Owns one C item; frees it (its frame's buffer back to the engine's pool) when the last
    reference (the Item, or a numpy view of its frame) is gone."""

    __slots__ = ("lib", "handle")

    def __init__(self, lib: ctypes.CDLL, handle: int):
        self.lib = lib
        self.handle: Optional[int] = handle

    def __del__(self) -> None:
        if self.handle:
            self.lib.fg_item_free(self.handle)
            self.handle = None


class Item:
    """One output frame of a run.

    index: the frame's position in the source's output (from 0; in a run with several inputs, in
        its stream's).
    time: its media time in seconds.
    stream: the name of the stream it belongs to in a run with several inputs (the input's file
        name without its extension, made unique: "clip", "clip-2"; the stats' "streams" names),
        None in a one-stream run.
    frame: numpy uint8 array H×W×3 (RGB), read-only, a view of the engine's buffer (no copy; take
        `frame.copy()` to change it or keep it beyond the item); None for a run with frames=False.
        The engine converts the frame to RGB when `frame` is first read, not before: an item whose
        frame is never read costs no conversion (rgb="fast", the default, gives the pixels of
        `ffmpeg -pix_fmt rgb24` and OpenCV; rgb="exact" those of the png sink).
    results: the results of the frame as a dict, in the results file's schema (docs/RESULTS.md:
        node, index, time, width, height, detections, landmarks, classifications) — for the first
        results producer when the pipeline has several (all_results has them all).
    """

    __slots__ = ("index", "time", "stream", "_frame", "_frame_read", "_results_text", "_results", "_handle")

    def __init__(self, lib: ctypes.CDLL, handle: int):
        owner = _ItemHandle(lib, handle)
        self._handle = owner
        self.index: int = int(lib.fg_item_index(handle))
        self.time: float = float(lib.fg_item_time(handle))
        stream = lib.fg_item_stream(handle)
        self.stream: Optional[str] = stream.decode() if stream is not None else None
        self._results_text: str = (lib.fg_item_results(handle) or b"").decode()
        self._results: Optional[List[Dict[str, Any]]] = None
        self._frame: Optional[RGBFrame] = None
        self._frame_read = False

    @property
    def frame(self) -> Optional[RGBFrame]:
        """The output frame, RGB, H×W×3 uint8, read-only (None for a run with frames=False)."""
        if self._frame_read:
            return self._frame
        owner = self._handle
        lib = owner.lib
        pixels, width, height, stride = ctypes.c_void_p(), ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
        code = lib.fg_item_frame(owner.handle, ctypes.byref(pixels), ctypes.byref(width), ctypes.byref(height), ctypes.byref(stride))
        if code == _OK and pixels.value:
            h, w, s = height.value, width.value, stride.value
            raw = (ctypes.c_uint8 * (s * (h - 1) + w * 3)).from_address(pixels.value)
            raw._owner = owner  # type: ignore[attr-defined]  # the view keeps the C item (and its buffer) alive
            frame: RGBFrame = np.ndarray((h, w, 3), dtype=np.uint8, buffer=memoryview(raw), strides=(s, 3, 1))
            frame.flags.writeable = False
            self._frame = frame
        elif code == _FAILED:
            raise _error(lib)
        self._frame_read = True
        return self._frame

    @property
    def all_results(self) -> List[Dict[str, Any]]:
        """Every results line of the frame (one per producer), as dicts."""
        if self._results is None:
            self._results = [json.loads(line) for line in self._results_text.splitlines() if line.strip()]
        return self._results

    @property
    def results(self) -> Dict[str, Any]:
        """The first producer's results line as a dict (empty when there is none)."""
        lines = self.all_results
        return lines[0] if lines else {}

    @property
    def results_text(self) -> str:
        """The results as JSON Lines text, exactly as a results file would hold them."""
        return self._results_text

    def __repr__(self) -> str:
        frame = self._frame if self._frame_read else None
        shape = "×".join(map(str, frame.shape)) if frame is not None else ("frame" if not self._frame_read else "no frame")
        where = f" {self.stream}" if self.stream is not None else ""
        return f"<framegraph.Item{where} {self.index} t={self.time:.3f}s {shape}>"


_Self = TypeVar("_Self", bound="_Closable")


class _Closable:
    """Something with close(): closed on leaving a `with` block, and when collected (errors then
    ignored). Run and Pipeline."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Run(_Closable):
    """A pipeline running on the engine's own threads; iterate it for its items.

    Offline (the default for files) every frame is delivered, each with its own results; when
    `queue` items wait unread the pipeline waits for the reader (nothing is dropped). Live (a camera,
    or mode="live") the pipeline never waits: each frame carries the newest results, and when the
    reader falls `queue` items behind the oldest are dropped (stats["program"]["itemsDropped"]).

    stop() asks the run to end (sources stop, outputs are finalized, so a video file stays
    playable); close() stops it and waits for that. A `with` block, the end of iteration, and
    Ctrl-C (KeyboardInterrupt) while iterating all close it.
    """

    def __init__(self, pipeline: PathLike, **options: Unpack[RunOptions]):
        self._handle: Optional[int] = None
        self._ended = False
        self._final_stats: Optional[Dict[str, Any]] = None
        self._lib = library()
        self._open(request(pipeline, options))

    @classmethod
    def _from_request(cls, fields: Dict[str, Any]) -> "Run":
        """A run opened from a whole request (fg.Pipeline's, with its program source)."""
        run = cls.__new__(cls)
        run._handle = None
        run._ended = False
        run._final_stats = None
        run._lib = library()
        run._open(fields)
        return run

    def _open(self, fields: Dict[str, Any]) -> None:
        handle = ctypes.c_void_p()
        if self._lib.fg_open(json.dumps(fields).encode(), ctypes.byref(handle)) != _OK:
            raise _error(self._lib)
        self._handle = handle.value

    def __iter__(self) -> Iterator[Item]:
        return self

    def __next__(self) -> Item:
        if self._handle is None:
            raise StopIteration
        item = ctypes.c_void_p()
        handle = self._handle
        try:
            while True:
                # Short waits: Python handles Ctrl-C between them.
                code = self._lib.fg_next(handle, 0.1, ctypes.byref(item))
                if code == _OK and item.value:
                    return Item(self._lib, item.value)
                if code == _TIMEOUT:
                    continue
                if code == _END:
                    self._ended = True  # ran to its end: closing waits for it without stopping a lingering server
                    self.close()
                    raise StopIteration
                error = _error(self._lib)
                self.close()
                raise error
        except KeyboardInterrupt:
            self.close()
            raise

    @property
    def stats(self) -> Dict[str, Any]:
        """The run's statistics (the CLI's --stats JSON, plus "program": items delivered and dropped):
        final once the run has ended, else so far."""
        if self._final_stats is not None:
            return self._final_stats
        if self._handle is None:
            return {}
        text = self._lib.fg_stats(self._handle)
        if text is None:
            raise _error(self._lib)
        stats: Dict[str, Any] = json.loads(text)
        return stats

    def stop(self) -> None:
        """Asks the run to end; returns at once (close() waits)."""
        if self._handle is not None:
            self._lib.fg_stop(self._handle)

    def close(self) -> None:
        """Stops the run if it is still going, waits until its outputs are finalized, keeps its final
        stats. A run that reached its end with serve_linger: waits while its server lingers (until
        the linger's end, POST /stop, or Ctrl-C)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        if not self._ended:
            self._lib.fg_stop(handle)
        try:
            # Short waits: Python handles Ctrl-C between them (a Ctrl-C stops a lingering server).
            while self._lib.fg_wait(handle, 0.1) == _TIMEOUT:
                pass
        except KeyboardInterrupt:
            self._lib.fg_stop(handle)
            self._lib.fg_wait(handle, float("inf"))
            raise
        finally:
            text = self._lib.fg_stats(handle)
            self._final_stats = json.loads(text) if text else {}
            self._lib.fg_close(handle)



def run(pipeline: PathLike, **options: Unpack[RunOptions]) -> Run:
    """Opens and starts a pipeline (a file, or a shipped pipeline's name such as "face-detect") with
    the CLI's run options as keywords, `_` for `-`: input= (a path, or a list of paths: one stream per
    input, each item naming its stream), inputs=, output=, results=, set={"node.key": value},
    mode="live"|"offline", camera=, loop=, duration=, fps=, policy=, latency=, stats=, trace=,
    preview=, serve="127.0.0.1:0" (and serve_token_file=, serve_clients=, serve_fps=, serve_linger=),
    model_budget=, machine_config=, update_interval=, hot_swap= …; and the library's own:
    frames=False for results only, rgb="fast"|"exact", queue= items that may wait unread.
    run_options() lists them all. Errors while building it (the file, a set, a model, an unknown or
    wrong keyword) raise here, with the CLI's message."""
    return Run(pipeline, **options)


def run_options() -> List[Dict[str, Any]]:
    """The keywords run() accepts, from the engine's own table: each with its key, the `framegraph
    run` option it stands for ("flag", None for the library's own), its kind ("text", "flag",
    "number", "integer", "choice", "texts"), range or choices, and a line of doc."""
    lib = library()
    out = lib.fg_run_options()
    if not out:
        raise RunError("fg_run_options gave nothing")
    try:
        table: List[Dict[str, Any]] = json.loads(ctypes.string_at(out).decode("utf-8"))
    finally:
        lib.fg_string_free(out)
    return table
