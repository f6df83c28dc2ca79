"""fg.label: ML Kit's labeler in one call, the figures of `framegraph label`."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

import framegraph as fg


@pytest.fixture(scope="module")
def photo(sample: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("label") / "photo.jpg"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "2", "-i", sample, "-frames:v", "1", "-q:v", "2", str(path)], check=True)
    return str(path)


def test_a_photo_as_the_cli_labels_it(cli: str, photo: str) -> None:
    labels = [label for label in fg.label(photo, max_results=5) if isinstance(label, fg.Label)]
    expected = json.loads(run_cli(cli, ["label", photo, "--json", "--max-results", "5"]).stdout)["labels"]
    assert len(labels) == len(expected) == 5
    assert [label.text for label in labels] == [e["text"] for e in expected]
    assert all(abs(label.confidence - e["confidence"]) < 1e-6 for label, e in zip(labels, expected))


def test_a_video_per_frame(sample: str) -> None:
    video = [f for f in fg.label(sample, max_results=2, max_frames=4) if isinstance(f, fg.FrameLabels)]
    assert [f.index for f in video] == [0, 1, 2, 3]
    assert all(len(f.labels) == 2 for f in video)


def test_label_errors(photo: str, scratch: Path) -> None:
    with pytest.raises(fg.ModelError) as e:
        fg.label(photo, model="no_such_model")
    assert "no_such_model" in str(e.value)
    with pytest.raises(fg.RequestError) as r:
        fg.label(photo, threshold=2)
    assert "threshold" in str(r.value)
