"""samples/python runs as its docstring says, and the package's type hints are checked by mypy
(pinned in tools/requirements-ci.txt): the package, the samples and this suite, strict; a
misspelled keyword or a wrong type in a call is a type error."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, playable_frames


def test_the_faces_sample(sample: str, scratch: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "samples/python/faces.py"), sample, str(scratch / "sample.mp4")], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")}, cwd=str(ROOT))
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    assert done.returncode == 0 and last.startswith("300 frames, 300 out"), last
    assert playable_frames(scratch / "sample.mp4") == 300


def mypy(*args: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy is installed by tools/setup-python.sh (tools/requirements-ci.txt)")
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull, *args], capture_output=True, text=True,
                          cwd=str(ROOT), env={**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT / "python/tests")])})


def test_mypy_accepts_the_package_samples_and_suite() -> None:
    done = mypy("--strict", "python/framegraph", "samples/python")
    assert done.returncode == 0, done.stdout + done.stderr
    done = mypy("--explicit-package-bases", "python/tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_refuses_wrong_calls(scratch: Path) -> None:
    wrong = scratch / "wrong.py"
    wrong.write_text('import framegraph as fg\n'
                     'fg.run("face-detect", serve_tokn="x")\n'
                     'fg.run("face-detect", fps="fast")\n'
                     'fg.run("face-detect", mode="sideways")\n'
                     'item = next(fg.run("face-detect"))\n'
                     'item.frame.mean()\n')
    done = mypy("--strict", str(wrong))
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in lines] == ["2", "3", "4", "6"], done.stdout
