"""ML Kit-style image labeling in one call: fg.label("photo.jpg")."""
from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

from ._run import RunError, _error, library


@dataclass(frozen=True)
class Label:
    """One label: its text, the model's confidence (0…1) and the class index."""
    text: str
    confidence: float
    index: int


@dataclass(frozen=True)
class FrameLabels:
    """A video frame's labels: its position, its media time in seconds, the labels (best first)."""
    index: int
    time: float
    labels: List[Label]


def label(file: str, model: Optional[str] = None, max_results: Optional[int] = None, threshold: Optional[float] = None,
          crop: Optional[str] = None, threads: Optional[int] = None,
          max_frames: Optional[int] = None) -> Union[List[Label], List[FrameLabels]]:
    """Labels a photo (a list of Label, best first) or a video (a FrameLabels per frame) as ML Kit's
    image labeler does, as `framegraph label` does.

    model: a classifier with labels (default efficientnet_lite0 from the set-up's models/cache):
        a name, a .tflite with metadata, an .onnx, an archive or collection:NAME/ENTRY.
    max_results: at most this many labels (default 10); threshold: leave out labels below it
        (default: the model's own, else 0); crop: "whole" (default, the picture stretched) or
        "centre"; max_frames: a video's first frames only.

    Raises ModelError (the model), RunError (the file), RequestError (a wrong argument).
    """
    request: Dict[str, Any] = {"file": str(file)}
    for key, value in (("model", model), ("max_results", max_results), ("threshold", threshold), ("crop", crop),
                       ("threads", threads), ("max_frames", max_frames)):
        if value is not None:
            request[key] = value
    lib = library()
    out = ctypes.c_void_p()
    if lib.fg_label(json.dumps(request).encode(), ctypes.byref(out)) != 0:
        raise _error(lib)
    if not out.value:
        raise RunError("fg_label gave no answer")
    try:
        answer: Dict[str, Any] = json.loads(ctypes.string_at(out.value).decode("utf-8"))
    finally:
        lib.fg_string_free(out)

    def labels(items: List[Dict[str, Any]]) -> List[Label]:
        return [Label(l["text"], float(l["confidence"]), int(l["index"])) for l in items]

    if answer.get("photo"):
        return labels(answer.get("labels") or [])
    return [FrameLabels(int(f["index"]), float(f["time"]), labels(f["labels"])) for f in answer.get("frames") or []]
