"""A camera from Python, live: portrait-segment on the emulated V4L2 camera. Runs under
tools/fake-camera.sh (EndToEndTests/PythonPackageTests runs it so), skipped elsewhere:

    tools/fake-camera.sh samples/media/portrait.mp4 --seconds 3 -- .venv-tools/bin/python -m pytest python/tests/test_camera.py
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import playable_frames

import framegraph as fg

CAMERA = os.environ.get("FRAMEGRAPH_CAMERAS", "")


@pytest.mark.skipif(not CAMERA, reason="needs the emulated camera: run under tools/fake-camera.sh")
def test_a_camera_runs_live(scratch: Path) -> None:
    out = scratch / "camera.mp4"
    with fg.run("portrait-segment", camera=CAMERA, camera_size="640x480", camera_fps=30, duration=2, output=str(out)) as run:
        shapes = {item.frame.shape for item in run if item.frame is not None}
    stats = run.stats
    assert stats["mode"] == "live"
    assert shapes == {(480, 640, 3)}
    assert stats["program"]["itemsDelivered"] > 30
    assert playable_frames(out) == stats["framesOut"]
