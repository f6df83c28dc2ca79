"""A FrameGraph run seen from Python: an iterator of items (frame + results), stop, stats."""
from __future__ import annotations

import ctypes
import json
import threading
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _library

_OK, _FAILED, _END, _TIMEOUT, _INVALID = 0, 1, 2, 3, 4
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
        self.handle = handle

    def __del__(self):
        if self.handle:
            self.lib.fg_item_free(self.handle)
            self.handle = None


class Item:
    """One output frame of a run.

    index: the frame's position in the source's output (from 0).
    time: its media time in seconds.
    frame: numpy uint8 array H×W×3 (RGB), read-only, a view of the engine's buffer (no copy; take
        `frame.copy()` to change it or keep it beyond the item); None for a run with frames=False.
    results: the results of the frame as a dict, in the results file's schema (docs/RESULTS.md:
        node, index, time, width, height, detections, landmarks, classifications) — for the first
        results producer when the pipeline has several (all_results has them all).
    """

    __slots__ = ("index", "time", "frame", "_results_text", "_results", "_handle")

    def __init__(self, lib: ctypes.CDLL, handle: int):
        owner = _ItemHandle(lib, handle)
        self._handle = owner
        self.index: int = int(lib.fg_item_index(handle))
        self.time: float = float(lib.fg_item_time(handle))
        self._results_text: str = (lib.fg_item_results(handle) or b"").decode()
        self._results: Optional[List[Dict[str, Any]]] = None
        pixels, width, height, stride = ctypes.c_void_p(), ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
        if lib.fg_item_frame(handle, ctypes.byref(pixels), ctypes.byref(width), ctypes.byref(height), ctypes.byref(stride)) == _OK:
            h, w, s = height.value, width.value, stride.value
            raw = (ctypes.c_uint8 * (s * (h - 1) + w * 3)).from_address(pixels.value)
            raw._owner = owner  # the view keeps the C item (and its buffer) alive
            frame = np.ndarray((h, w, 3), dtype=np.uint8, buffer=raw, strides=(s, 3, 1))
            frame.flags.writeable = False
            self.frame: Optional[np.ndarray] = frame
        else:
            self.frame = None

    @property
    def all_results(self) -> List[Dict[str, Any]]:
        """Every results line of the frame (one per producer), as dicts."""
        if self._results is None:
            self._results = [json.loads(line) for line in self._results_text.splitlines() if line.strip()]
        return self._results

    @property
    def results(self) -> Dict[str, Any]:
        lines = self.all_results
        return lines[0] if lines else {}

    @property
    def results_text(self) -> str:
        """The results as JSON Lines text, exactly as a results file would hold them."""
        return self._results_text

    def __repr__(self) -> str:
        shape = "×".join(map(str, self.frame.shape)) if self.frame is not None else "no frame"
        return f"<framegraph.Item {self.index} t={self.time:.3f}s {shape}>"


def _settings(values: Union[None, Mapping[str, Any], Sequence[str]]) -> List[str]:
    if values is None:
        return []
    if isinstance(values, Mapping):
        def text(v: Any) -> str:
            return ("true" if v else "false") if isinstance(v, bool) else str(v)
        return [f"{k}={text(v)}" for k, v in values.items()]
    return [str(v) for v in values]


class Run:
    """A pipeline running on the engine's own threads; iterate it for its items.

    Offline (the default for files) every frame is delivered, each with its own results; when
    `queue` items wait unread the pipeline waits for the reader (nothing is dropped). Live (a camera,
    or mode="live") the pipeline never waits: each frame carries the newest results, and when the
    reader falls `queue` items behind the oldest are dropped (stats["program"]["itemsDropped"]).

    stop() asks the run to end (sources stop, outputs are finalized, so a video file stays
    playable); close() stops it and waits for that. A `with` block, the end of iteration, and
    Ctrl-C (KeyboardInterrupt) while iterating all close it.
    """

    def __init__(self, pipeline: str, *, input: Optional[str] = None, output: Optional[str] = None,
                 results: Optional[str] = None, set: Union[None, Mapping[str, Any], Sequence[str]] = None,
                 mode: Optional[str] = None, camera: Optional[str] = None, loop: bool = False,
                 duration: Optional[float] = None, frames: bool = True, queue: int = 4,
                 _program: Optional[Dict[str, Any]] = None):
        self._lib = library()
        request: Dict[str, Any] = {"pipeline": str(pipeline), "set": _settings(set), "loop": bool(loop),
                                   "frames": bool(frames), "queue": int(queue), **(_program or {})}
        for key, value in (("input", input), ("output", output), ("results", results), ("mode", mode), ("camera", camera)):
            if value is not None:
                request[key] = str(value)
        if duration is not None:
            request["duration"] = float(duration)
        handle = ctypes.c_void_p()
        if self._lib.fg_open(json.dumps(request).encode(), ctypes.byref(handle)) != _OK:
            raise _error(self._lib)
        self._handle: Optional[int] = handle.value
        self._final_stats: Optional[Dict[str, Any]] = None
        self._failure: Optional[FrameGraphError] = None

    def __iter__(self) -> Iterator[Item]:
        return self

    def __next__(self) -> Item:
        if self._handle is None:
            raise StopIteration
        item = ctypes.c_void_p()
        try:
            while True:
                # Short waits: Python handles Ctrl-C between them.
                code = self._lib.fg_next(self._handle, 0.1, ctypes.byref(item))
                if code == _OK:
                    return Item(self._lib, item.value)
                if code == _TIMEOUT:
                    continue
                if code == _END:
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
        return json.loads(text)

    def stop(self) -> None:
        """Asks the run to end; returns at once (close() waits)."""
        if self._handle is not None:
            self._lib.fg_stop(self._handle)

    def close(self) -> None:
        """Stops the run if it is still going, waits until its outputs are finalized, keeps its final stats."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        self._lib.fg_stop(handle)
        self._lib.fg_wait(handle, float("inf"))
        text = self._lib.fg_stats(handle)
        self._final_stats = json.loads(text) if text else {}
        self._lib.fg_close(handle)

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def run(pipeline: str, **options: Any) -> Run:
    """Opens and starts a pipeline (a file, or a shipped pipeline's name such as "face-detect") with
    the CLI's changes: input=, output=, results=, set={"node.key": value}, mode="live"|"offline",
    camera=, loop=, duration=; frames=False for results only; queue= items that may wait unread.
    Errors while building it (the file, a --set, a model) raise here, with the CLI's message."""
    return Run(pipeline, **options)
