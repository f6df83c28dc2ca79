"""Several inputs in one run, as `framegraph run --input A --input B` (or --inputs FILE): one stream
per input, items from every stream, each naming its stream, counted as the CLI's stats count them."""
from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import FACE_DETECT, run_cli

import framegraph as fg


@pytest.fixture(scope="module")
def short_clip(sample: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A second local clip: the sample's first 45 frames (1.5 s), re-encoded."""
    path = tmp_path_factory.mktemp("inputs") / "short.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", sample, "-frames:v", "45", "-an", "-c:v", "libx264", "-preset", "ultrafast",
                    str(path)], check=True)
    return str(path)


def by_stream(items: List[fg.Item]) -> Dict[str, List[fg.Item]]:
    streams: Dict[str, List[fg.Item]] = defaultdict(list)
    for item in items:
        assert item.stream is not None
        streams[item.stream].append(item)
    return streams


def test_two_inputs_give_items_of_both_streams_with_the_clis_counts_and_results(cli: str, sample: str, short_clip: str,
                                                                               scratch: Path) -> None:
    # The CLI: two streams (portrait: 2 s of media time = 60 frames; short: its 45), one file per stream.
    run_cli(cli, ["run", str(FACE_DETECT), "--input", sample, "--input", short_clip, "--set", "source.duration=2",
                  "--output", str(scratch / "cli-{stream}.mp4"), "--results", str(scratch / "cli-{stream}.jsonl"),
                  "--stats", str(scratch / "cli.json"), "--quiet"])
    cli_stats = json.loads((scratch / "cli.json").read_text())
    cli_counts = {s["name"]: s["framesOut"] for s in cli_stats["streams"]}
    assert cli_counts == {"portrait": 60, "short": 45}

    with fg.run(FACE_DETECT, input=[sample, Path(short_clip)], set={"source.duration": 2},
                output=scratch / "py-{stream}.mp4", stats=scratch / "py.json") as run:
        items = list(run)
    streams = by_stream(items)
    assert {name: len(got) for name, got in streams.items()} == cli_counts
    assert {s["name"]: s["framesOut"] for s in run.stats["streams"]} == cli_counts
    assert {s["name"]: s["framesOut"] for s in json.loads((scratch / "py.json").read_text())["streams"]} == cli_counts
    for name, got in streams.items():
        assert [item.index for item in got] == list(range(cli_counts[name])), f"{name}: every frame, in order"
        frame = got[0].frame
        assert frame is not None and frame.shape == (480, 640, 3)
        # Each stream's results are its own: the lines of the CLI's results file for that stream.
        lines = (scratch / f"cli-{name}.jsonl").read_text().splitlines()
        assert [item.results_text for item in got] == lines
        assert all(item.results["node"] == f"{name}/faces" for item in got)
    assert (scratch / "py-portrait.mp4").is_file() and (scratch / "py-short.mp4").is_file()


def test_a_streams_list_and_batch_pass_through(sample: str, short_clip: str, scratch: Path) -> None:
    listing = scratch / "streams.txt"
    listing.write_text(f"# two cameras\n{sample}\n\n{short_clip}\n")
    with fg.run(FACE_DETECT, inputs=listing, batch=2, set={"source.duration": 1}, output=scratch / "{stream}.mp4", frames=False) as run:
        counts = {name: len(got) for name, got in by_stream(list(run)).items()}
    assert counts == {"portrait": 30, "short": 30}
    # Live, with the shared workers' frame budget: items from both streams, the stats per stream.
    with fg.run(FACE_DETECT, input=[sample, short_clip], mode="live", duration=1, frame_budget=1, output=scratch / "live-{stream}.mp4",
                frames=False) as run:
        live = by_stream(list(run))
    assert set(live) == {"portrait", "short"}
    assert [s["name"] for s in run.stats["streams"]] == ["portrait", "short"]


def test_one_input_is_one_stream_and_several_need_a_file_per_stream(sample: str, short_clip: str, scratch: Path) -> None:
    with fg.run(FACE_DETECT, input=[sample], duration=0.2, frames=False, output=scratch / "one.mp4") as run:
        assert all(item.stream is None for item in run)
    with pytest.raises(fg.PipelineError) as e:
        fg.run(FACE_DETECT, input=[sample, short_clip], output=scratch / "both.mp4")
    assert "{stream}" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(fg.FrameGraphError) as missing:
        fg.run(FACE_DETECT, inputs=scratch / "missing.txt")
    assert "missing.txt" in str(missing.value) and "\n" not in str(missing.value)
