"""The CLI's run options as keywords: one table (the library's), passed through, each doing what
the CLI's option does."""
from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import threading
from typing import List, Optional
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


def cli_option_names(help_text: str) -> List[str]:
    """`framegraph run --help`'s option names (without --)."""
    return [m.group(1) for m in re.finditer(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)", help_text, re.MULTILINE)]


def test_every_cli_keyword_is_an_option_of_framegraph_run(cli: str) -> None:
    """The CLI parses its run options from the same table as the library (RunOptionSpec.all in
    FrameGraphPipelines): every keyword with a flag is listed by `framegraph run --help`, and every
    option there is a keyword but the command line's own (--quiet, --inline)."""
    listed = cli_option_names(run_cli(cli, ["run", "--help"]).stdout)
    entries = [entry for entry in fg.run_options() if entry["flag"]]
    for entry in entries:
        assert entry["flag"] == "--" + entry["key"].replace("_", "-")
        assert entry["flag"][2:] in listed, f"{entry['flag']} is not an option of framegraph run"
    assert set(listed) - {entry["flag"][2:] for entry in entries} == {"quiet", "inline"}
    kinds = {entry["key"]: entry for entry in fg.run_options()}
    assert kinds["input"]["kind"] == kinds["set"]["kind"] == "texts", "repeatable options take lists"
    assert kinds["fps"]["default"] == "30 live; offline the input's own timing"


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


def test_preview_without_a_display_warns_and_writes_only_what_is_named(sample: str, scratch: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capfd: pytest.CaptureFixture[str]) -> None:
    """As `framegraph run … --preview` with no display: a warning, the run goes on, and the
    pipeline's own output (out/face-detect.mp4) is not recorded; with output= only that file."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(scratch)
    with fg.run(FACE_DETECT, input=sample, set={"source.duration": 0.3}, preview=True, frames=False) as run:
        count = sum(1 for _ in run)
    assert count == 9, "0.3 s of the clip: every frame (offline)"
    assert "no display" in capfd.readouterr().err
    assert os.listdir(scratch) == []
    with fg.run(FACE_DETECT, input=sample, set={"source.duration": 0.3}, preview=True, output="look.mp4", frames=False) as run:
        assert sum(1 for _ in run) == count
    assert os.listdir(scratch) == ["look.mp4"]
    with pytest.raises(fg.PipelineError) as e:
        fg.run(FACE_DETECT, input=[sample, sample], preview=True, output=scratch / "{stream}.mp4")
    assert "a window shows one stream" in str(e.value)


def metric(text: str, name: str) -> float:
    line = next(line for line in text.splitlines() if line.startswith(name + " "))
    return float(line.split()[-1])


def test_serve_linger_keeps_the_final_figures_up_until_post_stop(sample: str, scratch: Path) -> None:
    """As the CLI's --serve-linger: after the run, /metrics serves the final figures (those of the
    stats file); the iteration's end waits while the server lingers; POST /stop ends it."""
    token = "a-token-of-twenty-chars"
    run = fg.run(FACE_DETECT, input=sample, duration=0.5, serve="127.0.0.1:0", serve_token=token, serve_linger=120,
                 stats=scratch / "stats.json", frames=False)
    url = run.stats["program"]["served"]
    counted: List[int] = []
    reader = threading.Thread(target=lambda: counted.append(sum(1 for _ in run)))
    reader.start()
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(600):
        if (scratch / "stats.json").exists():
            break
        reader.join(0.1)
    with urllib.request.urlopen(urllib.request.Request(url + "metrics", headers=auth), timeout=10) as answer:
        text = answer.read().decode()
    written = json.loads((scratch / "stats.json").read_text())
    assert metric(text, "framegraph_run_finished") == 1
    assert metric(text, "framegraph_frames_out_total") == written["framesOut"] == 15
    assert reader.is_alive(), "the iteration's end waits while the server lingers"
    with urllib.request.urlopen(urllib.request.Request(url + "stop", data=b"", headers=auth, method="POST"), timeout=10) as answer:
        assert answer.status == 200
    reader.join(30)
    assert not reader.is_alive() and counted == [15]
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "metrics", timeout=5)
    with pytest.raises(fg.RequestError) as e:
        fg.run(FACE_DETECT, input=sample, serve_linger=5)
    assert "serve_linger goes with serve" in str(e.value)


def test_preview_opens_the_window_and_q_ends_the_run(sample: str, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `framegraph run face-detect --preview` on a display (a virtual one: Xvfb, as the preview
    window's own tests): the window, titled after the pipeline, shows the frames; q ends the run
    as Ctrl-C does, and the iteration ends with it."""
    if not all(shutil.which(tool) for tool in ("Xvfb", "xdotool", "xwininfo")):
        pytest.fail("needs Xvfb, xdotool and xwininfo (scripts/install-deps.sh)")
    server = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x720x24", "-nolisten", "tcp"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        display = ":" + server.stdout.readline().decode().strip()
        monkeypatch.setenv("DISPLAY", display)
        seen: List[bool] = []

        def window() -> Optional[str]:
            """The id of the window titled after the pipeline (xwininfo: in a Python process SDL's
            title is UTF-8 text, which xdotool's --name does not match)."""
            tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True, timeout=10).stdout
            match = re.search(r"^\s*(0x[0-9a-f]+) \"FrameGraph: face-detect\"", tree, re.MULTILINE)
            return match.group(1) if match else None

        def press_q() -> None:
            found = None
            for _ in range(300):
                found = window()
                if found:
                    break
                threading.Event().wait(0.1)
            seen.append(found is not None)
            threading.Event().wait(1.5)  # let it show frames
            if found:
                subprocess.run(["xdotool", "windowfocus", "--sync", found, "key", "q"], capture_output=True, timeout=30)

        presser = threading.Thread(target=press_q)
        with fg.run(FACE_DETECT, input=sample, mode="live", loop=True, duration=60, preview=True, frames=False) as run:
            presser.start()
            count = sum(1 for _ in run)
        presser.join(30)
        assert seen == [True], "no window titled 'FrameGraph: face-detect' appeared"
        stats = run.stats
        preview = next(n for n in stats["nodes"] if n["name"] == "preview")
        assert preview["emitted"] >= 20, f"frames given to the window: {preview['emitted']}"
        assert 0 < count < 60 * 30, "q ended the live run before its 60 s"
        assert not stats.get("failure"), stats.get("failure")
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
