"""The CLI's run options as keywords: one table (the library's), passed through, each doing what
the CLI's option does."""
from __future__ import annotations

import json
import re
from typing import Dict, Tuple
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import FACE_DETECT, playable_frames, run_cli

import framegraph as fg

# The library's own keys that fg.run does not take as keywords (fg.Pipeline sets them).
INTERNAL = {"pipeline", "source", "width", "height"}


def test_the_typed_keywords_are_the_librarys_table() -> None:
    table = {entry["key"] for entry in fg.run_options()}
    assert set(fg.RunOptions.__annotations__) == table - INTERNAL
    assert set(fg.PipelineOptions.__annotations__) <= table - INTERNAL - {"input", "camera"}


def cli_options(help_text: str) -> Dict[str, Tuple[str, str]]:
    """`framegraph run --help`'s options: name → (the value's word, e.g. "N" or "live|offline",
    "" for a flag; the bracketed range and default at the end of its description, or "")."""
    found: Dict[str, Tuple[str, str]] = {}
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)(?: (\S+))?\s*$", line)
        if m:
            description = lines[i + 1] if i + 1 < len(lines) else ""
            bracket = re.search(r"\[([^\]]*)\]\s*$", description)
            found[m.group(1)] = (m.group(2) or "", bracket.group(1) if bracket else "")
    return found


def number(text: str) -> float:
    return float(text.replace("\u2009", ""))


def test_every_cli_keyword_is_an_option_of_framegraph_run_with_its_kind_range_and_choices(cli: str) -> None:
    """The library's table repeats each option's kind, range and choices from the CLI's table
    (framegraph's Commands.runOptions): checked here against `framegraph run --help`, so they
    cannot drift apart."""
    listed = cli_options(run_cli(cli, ["run", "--help"]).stdout)
    entries = [entry for entry in fg.run_options() if entry["flag"]]
    assert len(entries) >= 25
    for entry in entries:
        name = entry["key"].replace("_", "-")
        assert entry["flag"] == "--" + name
        assert name in listed, f"--{name} is not an option of framegraph run"
        word, bracket = listed[name]
        kind = entry["kind"]
        if kind == "flag":
            assert word == "", f"--{name}: a flag here, takes {word} in the CLI"
        elif kind == "choice":
            assert word.split("|") == entry["choices"], f"--{name}: choices {entry['choices']} here, {word} in the CLI"
        elif kind in ("number", "integer"):
            assert word == "N", f"--{name}: a number here, {word} in the CLI"
            bounds = re.match(r"([-\d.]+)…([-\d.]+)", bracket)
            assert bounds, f"--{name}: no range in the CLI's help ({bracket})"
            assert (number(bounds.group(1)), number(bounds.group(2))) == (entry["min"], entry["max"]), \
                f"--{name}: {entry['min']}…{entry['max']} here, {bracket} in the CLI"
        else:
            # A placeholder (PATH, FILE, WxH, auto|MS, NODE.KEY=VALUE …), not a number, a flag or lowercase choices.
            assert word not in ("", "N") and any(c.isupper() for c in word), f"--{name}: text here, {word or 'a flag'} in the CLI"


def test_fps_offline_converts_the_written_rate_as_the_cli_does(cli: str, sample: str, scratch: Path) -> None:
    """Offline, fps converts the video file's rate (the encoder drops and repeats); items are every frame."""
    run_cli(cli, ["run", str(FACE_DETECT), "--input", sample, "--set", "source.duration=2", "--fps", "10", "--output", str(scratch / "cli.mp4"),
                  "--quiet"])
    with fg.run(FACE_DETECT, input=sample, set={"source.duration": 2}, fps=10, output=scratch / "python.mp4", frames=False) as run:
        items = [item.index for item in run]
    assert len(items) == 60
    assert playable_frames(scratch / "cli.mp4") == playable_frames(scratch / "python.mp4") == 20


def test_stats_and_trace_files(sample: str, scratch: Path) -> None:
    with fg.run(FACE_DETECT, input=sample, duration=0.5, stats=scratch / "stats.json", trace=str(scratch / "trace.json"), frames=False) as run:
        count = sum(1 for _ in run)
    written = json.loads((scratch / "stats.json").read_text())
    assert written["framesOut"] == count == run.stats["framesOut"] == 15
    assert "program" not in written, "the file is the CLI's --stats schema"
    trace = json.loads((scratch / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(e.get("name", "").startswith("faces") or "faces" in json.dumps(e) for e in events)


def test_duration_loop_and_live_options(sample: str) -> None:
    # loop offline: more frames than the clip has, ended by duration (of media time).
    with fg.run(FACE_DETECT, input=sample, loop=True, duration=12, frames=False) as run:
        indices = [item.index for item in run]
    assert len(indices) == 360
    # live, with the CLI's latency and policy words.
    with fg.run(FACE_DETECT, input=sample, mode="live", duration=1, latency=0, policy="skip", fps=15, frames=False) as run:
        count = sum(1 for _ in run)
        stats = run.stats
    assert stats["mode"] == "live" and stats["fps"] == 15 and stats["presentationDelayMs"] == 0
    assert 0 < count <= 16


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_serve_passes_through(sample: str, scratch: Path) -> None:
    with fg.run(FACE_DETECT, input=sample, mode="live", serve="127.0.0.1:0", frames=False) as run:
        next(run)
        url = run.stats["program"]["served"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        with urllib.request.urlopen(url + "stats.json", timeout=10) as answer:
            served = json.loads(answer.read())
        assert served["mode"] == "live"
        assert "framegraph_cpu_seconds_total" in urllib.request.urlopen(url + "metrics", timeout=10).read().decode()
    token = scratch / "token"
    token.write_text("a-token-of-twenty-chars")
    with fg.run(FACE_DETECT, input=sample, mode="live", serve=0, serve_token_file=token, serve_clients=4, frames=False) as run:
        next(run)
        url = run.stats["program"]["served"]
        assert get(url + "stats.json") == 401
        assert get(url + "stats.json?token=a-token-of-twenty-chars") == 200
    with pytest.raises(fg.RequestError) as e:
        fg.run(FACE_DETECT, input=sample, serve="0.0.0.0:0")
    assert "listens beyond this machine" in str(e.value)


def test_a_pipeline_takes_the_same_keywords(sample_frames: object, scratch: Path) -> None:
    with fg.Pipeline("face-detect", source="python", stats=scratch / "pushed.json", results=scratch / "pushed.jsonl") as p:
        for frame in sample_frames[:5]:  # type: ignore[index]
            p.process(frame)
    assert json.loads((scratch / "pushed.json").read_text())["framesOut"] == 5
    assert len((scratch / "pushed.jsonl").read_text().splitlines()) == 5
