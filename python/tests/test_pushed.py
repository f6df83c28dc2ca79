"""Frames pushed from Python (fg.Pipeline): process() offline, push() live, wrong frames."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import List, Tuple

import numpy as np
from conftest import playable_frames, run_cli

import framegraph as fg


def iou(a: List[float], b: List[float]) -> float:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = max(0.0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0.0, min(ay + ah, by + bh) - max(ay, by))
    union = aw * ah + bw * bh - w * h
    return w * h / union if union > 0 else 0.0


def test_process_gives_each_frames_item_and_the_clis_faces(cli: str, sample_frames: np.ndarray, scratch: Path) -> None:
    # The same pictures for the CLI, losslessly (FFV1 RGB).
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "640x480", "-r", "30", "-i", "-",
                    "-c:v", "ffv1", "-pix_fmt", "rgb24", str(scratch / "frames.mkv")], input=sample_frames.tobytes(), check=True)
    run_cli(cli, ["run", "face-detect", "--input", str(scratch / "frames.mkv"), "--results", str(scratch / "cli.jsonl"), "--quiet"])
    cli_lines = [json.loads(line) for line in (scratch / "cli.jsonl").read_text().splitlines() if line.strip()]
    outs: List[Tuple[int, Tuple[int, ...], dict]] = []
    with fg.Pipeline("face-detect", source="python", output=str(scratch / "pushed.mp4")) as p:
        for frame in sample_frames:
            out = p.process(frame)
            assert out.frame is not None
            outs.append((out.index, out.frame.shape, out.results))
    assert [o[0] for o in outs] == list(range(30))
    assert all(o[1] == (480, 640, 3) for o in outs)
    assert len(cli_lines) == 30
    assert [len(o[2]["detections"]) for o in outs] == [len(c["detections"]) for c in cli_lines]
    boxes = [iou(a["box"], b["box"]) for o, c in zip(outs, cli_lines) for a, b in zip(o[2]["detections"], c["detections"])]
    assert boxes and min(boxes) > 0.95 and sum(boxes) / len(boxes) > 0.98
    assert p.stats["framesOut"] == 30
    assert playable_frames(scratch / "pushed.mp4") == 30


def test_wrong_frames_raise_request_error(sample_frames: np.ndarray) -> None:
    with fg.Pipeline("face-detect", source="python") as p:
        p.process(sample_frames[0])
        try:
            p.push(np.zeros((240, 320, 3), np.uint8))
            raise AssertionError("a frame of another size raises")
        except fg.RequestError as e:
            assert "320×240" in str(e) and "640×480" in str(e)
        try:
            p.push(np.zeros((480, 640), np.uint8))
            raise AssertionError("a grey frame raises")
        except fg.RequestError as e:
            assert "H×W×3" in str(e)
    try:
        fg.Pipeline("face-detect", source="python", input="clip.mp4")  # type: ignore[call-arg]
        raise AssertionError("input= with frames from Python raises")
    except fg.RequestError as e:
        assert "input=" in str(e)


def test_live_push_never_waits_and_keeps_the_newest(sample_frames: np.ndarray) -> None:
    with fg.Pipeline("face-detect", source="python", mode="live", frames=False) as p:
        started = time.monotonic()
        for frame in np.concatenate([sample_frames] * 4):
            p.push(frame)
        pushing = time.monotonic() - started
    burst = p.stats
    # 120 frames pushed at once: the pipeline takes the newest each time, so fewer than 120 (not a speed
    # assertion: 5 s is a hang guard).
    assert pushing < 5 and 1 <= burst["framesIn"] < 120
    with fg.Pipeline("face-detect", source="python", mode="live", frames=False) as p:
        for frame in np.concatenate([sample_frames] * 2):
            p.push(frame)
            time.sleep(1 / 30)
    assert p.stats["mode"] == "live" and p.stats["framesIn"] >= 50
