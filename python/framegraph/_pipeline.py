"""A pipeline fed frames from Python: fg.Pipeline(..., source="python").process(frame)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ._options import PathLike, PipelineOptions, request
from ._run import _OK, Item, RequestError, Run, _Closable, _error

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Pipeline(_Closable):
    """A pipeline whose frames come from Python: its file source is replaced by the frames you give
    (numpy uint8 H×W×3 RGB, one size per pipeline; the run opens at the first frame, with its size).

    Offline (the default) every frame goes through and `process(frame)` returns its Item (the
    pipeline's output frame and results), like a function call. Live (mode="live") `push(frame)`
    returns at once and the pipeline keeps its live behaviour: a frame not yet taken is replaced by
    a newer one, busy networks are skipped (drop-while-busy) and results reused; read the items by
    iterating the pipeline.

        with fg.Pipeline("portrait-segment", source="python") as p:
            out = p.process(frame_rgb)          # out.frame, out.results
        print(p.stats["nodes"])

    The keywords are run()'s (output=, results=, set=, mode=, serve=, frames=, rgb=, queue= …) less
    input= and camera=; close() (or the end of a `with` block) ends the
    input, lets the frames in flight finish and finalizes the outputs.
    """

    def __init__(self, pipeline: PathLike, *, source: str = "python", **options: Unpack[PipelineOptions]):
        if source != "python":
            raise RequestError(f"Pipeline takes its frames from Python (source=\"python\"); got source={source!r} — use fg.run for files and cameras")
        for key in ("input", "camera"):
            if key in options:
                raise RequestError(f"Pipeline takes its frames from Python: give no {key}= (use fg.run for files and cameras)")
        self._request = request(pipeline, options)
        self._run: Optional[Run] = None
        self._size: Optional[Tuple[int, int]] = None
        self._final_stats: Optional[Dict[str, Any]] = None

    def _open(self, width: int, height: int) -> Run:
        if self._run is None:
            if self._final_stats is not None:
                raise RequestError("this Pipeline is closed")
            self._run = Run._from_request({**self._request, "source": "program", "width": int(width), "height": int(height)})
            self._size = (width, height)
        return self._run

    def push(self, frame: "npt.NDArray[np.uint8]", time: Optional[float] = None) -> None:
        """Gives the pipeline one frame (uint8 H×W×3, RGB; copied before this returns). `time`: its
        media time in seconds (default: the time since the first frame). Offline it waits while the
        pipeline still has earlier frames to take; live it never waits."""
        array = np.asarray(frame)
        if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
            raise RequestError(f"a frame is a uint8 array H×W×3 (RGB); got {array.dtype} {array.shape}")
        if array.strides[1] != 3 or array.strides[2] != 1:
            array = np.ascontiguousarray(array)
        height, width = array.shape[0], array.shape[1]
        run = self._open(width, height)
        handle = run._handle
        if handle is None:
            raise RequestError("this Pipeline is closed")
        pixels = array.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        if run._lib.fg_push(handle, pixels, width, height, array.strides[0], -1.0 if time is None else float(time)) != _OK:
            raise _error(run._lib)

    def process(self, frame: "npt.NDArray[np.uint8]", time: Optional[float] = None) -> Item:
        """Pushes `frame` and returns the pipeline's output for it (offline: one item per frame)."""
        self.push(frame, time)
        assert self._run is not None
        return next(self._run)

    def __iter__(self) -> Iterator[Item]:
        """The items made so far and to come (live use); ends when the pipeline is closed."""
        if self._run is None:
            return iter(())
        return self._run

    @property
    def stats(self) -> Dict[str, Any]:
        """The run's statistics (final after close())."""
        if self._final_stats is not None:
            return self._final_stats
        return self._run.stats if self._run is not None else {}

    def close(self) -> None:
        """Ends the input, lets the frames in flight finish and finalizes the outputs."""
        run, self._run = self._run, None
        if run is not None and run._handle is not None:
            run._lib.fg_push_end(run._handle)
            run._lib.fg_wait(run._handle, 30.0)
            run.close()
            self._final_stats = run.stats
        elif self._final_stats is None:
            self._final_stats = {}

