"""fg.run against `framegraph run` on the same clip: frame counts, pixels, results, stats."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
from conftest import FACE_DETECT, decode, playable_frames, run_cli

import framegraph as fg

# 60 frames (2 s of the 30 fps clip): the same --set on both sides.
SETTINGS = {"source.duration": 2}
Taken = Tuple[int, float, np.ndarray, Dict[str, Any], bool]


def take(**options: Any) -> Tuple[List[Taken], Dict[str, Any]]:
    items: List[Taken] = []
    with fg.run(FACE_DETECT, set=SETTINGS, **options) as run:
        for item in run:
            assert item.frame is not None
            items.append((item.index, item.time, item.frame.copy(), item.results, bool(item.frame.flags.writeable)))
    return items, run.stats


@pytest.fixture(scope="module")
def cli_run(cli: str, sample: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CLI's run: every output frame as a PNG, as an FFV1 (lossless) video, and the results."""
    out = tmp_path_factory.mktemp("cli")
    (out / "png").mkdir()
    words = [f"--set=source.duration={SETTINGS['source.duration']}"]
    run_cli(cli, ["run", str(FACE_DETECT), "--input", sample, "--output", str(out / "png/%05d.png"), "--results", str(out / "cli.jsonl"),
                  "--quiet", *words])
    run_cli(cli, ["run", str(FACE_DETECT), "--input", sample, "--output", str(out / "cli.mkv"), "--set", "output.codec=ffv1", "--quiet", *words])
    return out


def test_results_equal_the_clis_jsonl(cli_run: Path, sample: str) -> None:
    cli_lines = [json.loads(line) for line in (cli_run / "cli.jsonl").read_text().splitlines() if line.strip()]
    with fg.run(FACE_DETECT, input=sample, set=SETTINGS, frames=False) as run:
        got = [(item.index, item.results, item.frame) for item in run]
    assert len(cli_lines) == 60 and len(got) == 60
    assert [g[0] for g in got] == list(range(60))
    assert [g[1] for g in got] == cli_lines
    assert all(g[2] is None for g in got), "frames=False: no frame"
    assert sum(len(line["detections"]) for line in cli_lines) > 0, "the clip has faces: the comparison compares something"


def test_offline_items_come_in_bursts(sample: str) -> None:
    """A reader that keeps up is woken when `queue` items are ready, not once per frame: results
    only, the reader is far faster than the pipeline and would otherwise be woken for each of the 60."""
    with fg.run(FACE_DETECT, input=sample, set=SETTINGS, frames=False, queue=4) as run:
        indices = [item.index for item in run]
    program = run.stats["program"]
    assert indices == list(range(60)) and program["itemsDelivered"] == 60
    # 15 bursts of 4 (a wait that runs out after 0.1 s on a busy machine is not a wake-up), and the end.
    assert 1 <= program["readerWakeups"] <= 60 // 4 + 2, program


def test_frames_let_go_are_recycled(sample: str) -> None:
    """A frame's RGB memory goes back to the engine once the item and its views are gone: reading
    60 frames one at a time makes a few buffers, not one per frame (the queue used to keep taken items)."""
    with fg.run(FACE_DETECT, input=sample, set=SETTINGS, queue=4) as run:
        shapes = {item.frame.shape for item in run if item.frame is not None}
    program = run.stats["program"]
    assert shapes == {(480, 640, 3)} and program["itemsDelivered"] == 60
    assert 1 <= program["rgbBuffersMade"] <= 8, program


def test_exact_frames_equal_the_clis_pngs(cli_run: Path, sample: str) -> None:
    items, stats = take(input=sample, rgb="exact")
    pngs = decode(cli_run / "png/%05d.png", 640, 480)
    assert len(items) == len(pngs) == 60
    assert all(i[2].shape == (480, 640, 3) and i[2].dtype == np.uint8 for i in items)
    assert not any(i[4] for i in items), "frames are read-only views"
    different = [i[0] for i, png in zip(items, pngs) if not np.array_equal(i[2], png)]
    assert different == [], f"frames unlike the CLI's PNGs: {different[:10]}"
    assert stats["program"]["itemsDelivered"] == 60 and "nodes" in stats


def test_fast_frames_equal_ffmpegs_decode_of_the_clis_video(cli_run: Path, sample: str) -> None:
    """rgb="fast" (the default) gives what ffmpeg's rgb24 decode of the CLI's lossless output gives."""
    items, _ = take(input=sample)
    decoded = decode(cli_run / "cli.mkv", 640, 480)
    assert len(items) == len(decoded) == 60
    different = [i[0] for i, d in zip(items, decoded) if not np.array_equal(i[2], d)]
    assert different == [], f"frames unlike ffmpeg's decode of the CLI's FFV1 video: {different[:10]}"
    pngs = decode(cli_run / "png/%05d.png", 640, 480)
    worst = max(int(np.abs(i[2].astype(int) - p.astype(int)).mean() * 1000) for i, p in zip(items, pngs)) / 1000
    assert worst < 3, f"fast against exact: mean difference per frame at most {worst} levels"


def test_indices_times_and_the_runs_own_video(sample: str, scratch: Path) -> None:
    items, stats = take(input=sample, output=str(scratch / "python.mp4"))
    assert [i[0] for i in items] == list(range(60))
    assert abs(items[1][1] - items[0][1] - 1 / 30) < 1e-6
    assert playable_frames(scratch / "python.mp4") == 60
    assert stats["framesOut"] == 60


def test_a_frame_never_read_is_never_converted(sample: str) -> None:
    """Items keep the pipeline's frame until .frame is read; reading it later gives the same pixels."""
    with fg.run(FACE_DETECT, input=sample, set=SETTINGS) as run:
        items = [item for item in run]
    assert len(items) == 60
    late = items[59].frame
    with fg.run(FACE_DETECT, input=sample, set=SETTINGS) as run:
        direct = [item.frame.copy() for item in run if item.frame is not None]
    assert late is not None and np.array_equal(late, direct[59])
