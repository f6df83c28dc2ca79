"""The keywords fg.run and fg.Pipeline take, typed.

The library's table (`fg_run_options`, framegraph.run_options()) is the one source of what a run
accepts — `framegraph run` parses its options from the same table — : keywords are passed to it
unchanged, as the CLI's `framegraph run` options with `_` for `-` (serve_token_file is
--serve-token-file), and it checks each name, type, range and choice.
RunOptions mirrors that table for type checkers; the test suite checks that both list the same
keys.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Literal, Mapping, Sequence, TypedDict, Union

PathLike = Union[str, "os.PathLike[str]"]
Settings = Union[Mapping[str, Any], Sequence[str]]


class PipelineOptions(TypedDict, total=False):
    """fg.Pipeline's keywords (all optional): the CLI's run options that do not name the input (its
    frames come from Python), and the library's own."""
    output: PathLike
    mode: Literal["live", "offline"]
    fps: float
    policy: Literal["reuse", "skip"]
    duration: float
    stats: PathLike
    trace: PathLike
    results: PathLike
    set: Settings
    audio: Literal["copy", "drop", "aac"]
    latency: Union[str, float]
    max_latency: float
    stop_grace: float
    model_budget: int
    machine_config: PathLike
    serve: Union[str, int]
    serve_token_file: PathLike
    serve_token: str
    serve_clients: int
    serve_fps: float
    serve_linger: float
    preview: bool
    update_interval: float
    hot_swap: bool
    frames: bool
    rgb: Literal["fast", "exact"]
    queue: int


class RunOptions(PipelineOptions, total=False):
    """fg.run's keywords (all optional): fg.Pipeline's and those that name the input. input= takes
    one path, or several (a list: one stream per input, in one run)."""
    input: Union[PathLike, Sequence[PathLike]]
    inputs: PathLike
    batch: int
    frame_budget: int
    loop: bool
    camera: PathLike
    camera_size: str
    camera_fps: float
    camera_format: Literal["auto", "yuyv", "mjpeg"]
    reconnect: bool
    allow_network: bool
    stream_transport: Literal["tcp", "udp"]
    on_loss: Literal["repeat", "no-signal"]
    credentials: PathLike


def settings(values: Settings) -> List[str]:
    """set= as the CLI's NODE.KEY=VALUE words: a mapping ({"matte.mode": "blur"}, booleans as
    true/false) or a sequence of such words."""
    if isinstance(values, Mapping):
        def text(v: Any) -> str:
            return ("true" if v else "false") if isinstance(v, bool) else str(v)
        return [f"{k}={text(v)}" for k, v in values.items()]
    if isinstance(values, (str, bytes)):
        return [str(values)]
    return [str(v) for v in values]


def request(pipeline: PathLike, options: Mapping[str, Any]) -> Dict[str, Any]:
    """The open request for `pipeline` with `options` (keywords passed through; paths as text, a
    list of inputs as a list of text, set= as words, latency= and serve= as text, None left out)."""
    out: Dict[str, Any] = {"pipeline": os.fspath(pipeline)}
    for key, value in options.items():
        if value is None:
            continue
        if key == "set":
            out[key] = settings(value)
        elif key == "input" and isinstance(value, (list, tuple)):
            out[key] = [os.fspath(v) for v in value]
        elif key in ("latency", "serve") and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = str(int(value)) if float(value).is_integer() else str(value)
        elif isinstance(value, os.PathLike):
            out[key] = os.fspath(value)
        else:
            out[key] = value
    return out
