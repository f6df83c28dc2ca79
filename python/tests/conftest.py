"""Shared set-up of the package's pytest suite (python/tests).

Run by EndToEndTests/PythonPackageTests (so by scripts/test.sh and .ci/run) as

    FRAMEGRAPH_LIB=.build/release/libFrameGraphC.so FRAMEGRAPH_CLI=.build/release/framegraph \\
        .venv-tools/bin/python -m pytest python/tests

The package is imported from python/ beside these tests (nothing installed; an installed copy is
not picked up first). The CLI is FRAMEGRAPH_CLI, else .build/release/framegraph in this checkout;
tests that need the set-up's sample (samples/media/portrait.mp4) skip, saying so, without it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("FRAMEGRAPH_LIB", str(ROOT / ".build/release/libFrameGraphC.so"))

SAMPLE = ROOT / "samples/media/portrait.mp4"
FACE_DETECT = ROOT / "pipelines/face-detect.fg"


@pytest.fixture(scope="session")
def cli() -> str:
    """The framegraph command built beside the library."""
    path = os.environ.get("FRAMEGRAPH_CLI") or str(ROOT / ".build/release/framegraph")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no framegraph command at {path}: swift build -c release, or set FRAMEGRAPH_CLI")
    return path


@pytest.fixture(scope="session")
def sample() -> str:
    """The set-up's 640×480 clip (300 frames at 30 fps, faces in it)."""
    if not SAMPLE.is_file():
        pytest.skip("needs samples/media/portrait.mp4 (tools/make-samples.sh)")
    return str(SAMPLE)


@pytest.fixture(scope="session")
def sample_frames(sample: str) -> np.ndarray:
    """The sample's first 30 frames as RGB (ffmpeg's decode)."""
    raw = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", sample, "-frames:v", "30", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    frames = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 480, 640, 3)
    assert len(frames) == 30
    return frames


def decode(path: Path, width: int, height: int) -> np.ndarray:
    """Every frame of a video file or an image sequence (a %05d pattern) as RGB, decoded by ffmpeg."""
    args = ["ffmpeg", "-nostdin", "-v", "error"]
    if "%" in str(path):
        args += ["-start_number", "0"]
    args += ["-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = subprocess.run(args, check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, height, width, 3)


def playable_frames(path: Path) -> int:
    """Frames ffprobe counts in a video file, decoding it to the end (-1: not a playable file)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_frames", "-of", "csv=p=0", str(path)], capture_output=True, text=True)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else -1


def run_cli(cli: str, args: List[str]) -> subprocess.CompletedProcess:
    """The CLI with `args`; the test fails with its message when it fails."""
    done = subprocess.run([cli, *args], capture_output=True, text=True)
    assert done.returncode == 0, f"framegraph {' '.join(args)}: status {done.returncode}: {done.stderr.strip()[:400]}"
    return done


@pytest.fixture()
def scratch(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
