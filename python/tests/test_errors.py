"""Errors as Python exceptions carrying the CLI's one line."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FACE_DETECT

import framegraph as fg


def test_a_set_naming_no_node(sample: str) -> None:
    with pytest.raises(fg.PipelineError) as e:
        fg.run(FACE_DETECT, input=sample, set={"facez.min-score": 0.5})
    assert "no node 'facez'" in str(e.value) and "did you mean 'faces'" in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_pipeline() -> None:
    with pytest.raises(fg.PipelineError) as e:
        fg.run("no-such-pipeline")
    assert "no pipeline file 'no-such-pipeline'" in str(e.value) and "face-detect" in str(e.value)


def test_a_missing_input(scratch: Path) -> None:
    with pytest.raises(fg.FrameGraphError) as e:
        fg.run(FACE_DETECT, input=str(scratch / "missing.mp4"))
    assert "missing.mp4" in str(e.value) and "\n" not in str(e.value)


def test_a_damaged_input(scratch: Path) -> None:
    bad = scratch / "bad.mp4"
    bad.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\xff" * 4000)
    with pytest.raises(fg.FrameGraphError) as e:
        for _ in fg.run(FACE_DETECT, input=str(bad)):
            pass
    assert "bad.mp4" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("options, words", [
    ({"mode": "sideways"}, "mode expects one of live, offline"),
    ({"fps": "fast"}, "fps expects a number from 0.1 to 1000"),
    ({"queue": 0}, "queue expects an integer from 1 to 1024"),
    ({"loop": 1}, "loop expects true or false"),
    ({"serve_tokn": "x"}, "unknown option 'serve_tokn' (did you mean 'serve_token'?)"),
    ({"latency": "soon"}, "latency expects auto or milliseconds from 0 to 5000"),
    ({"serve": "nowhere:port"}, "--serve expects PORT"),
    ({"serve_clients": 4}, "serve_clients goes with serve="),
])
def test_a_wrong_keyword(sample: str, options: dict, words: str) -> None:
    with pytest.raises(fg.RequestError) as e:
        fg.run(FACE_DETECT, input=sample, **options)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_model_that_does_not_fit(sample: str) -> None:
    with pytest.raises(fg.ModelError) as e:
        fg.run(FACE_DETECT, input=sample, model_budget=1)
    assert "\n" not in str(e.value)
