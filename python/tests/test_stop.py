"""Stopping a run: close() early, Ctrl-C, a slow reader live."""
from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path

import pytest
from conftest import FACE_DETECT, playable_frames

import framegraph as fg


def test_close_after_five_items_leaves_a_playable_video(sample: str, scratch: Path) -> None:
    run = fg.run(FACE_DETECT, input=sample, output=str(scratch / "early.mp4"))
    taken = [next(run).index for _ in range(5)]
    run.close()
    assert taken == [0, 1, 2, 3, 4]
    assert playable_frames(scratch / "early.mp4") >= 5
    assert run.stats["program"]["ended"] is True
    assert list(run) == [], "a closed run has no more items"


def test_stop_ends_the_iteration(sample: str) -> None:
    with fg.run(FACE_DETECT, input=sample, frames=False) as run:
        seen = 0
        for _ in run:
            seen += 1
            if seen == 10:
                run.stop()
    assert 10 <= seen < 300


def test_ctrl_c_while_iterating_closes_the_run(sample: str, scratch: Path) -> None:
    run = fg.run(FACE_DETECT, input=sample, output=str(scratch / "interrupted.mp4"), mode="live")
    threading.Timer(1.0, _thread.interrupt_main).start()
    seen = 0
    with pytest.raises(KeyboardInterrupt):
        for _ in run:
            seen += 1
    assert seen > 0 and run._handle is None
    assert playable_frames(scratch / "interrupted.mp4") > 0


def test_live_a_slow_reader_loses_the_oldest_items(sample: str) -> None:
    with fg.run(FACE_DETECT, input=sample, mode="live", queue=1, frames=False) as run:
        slow = []
        for item in run:
            slow.append(item.index)
            time.sleep(0.2)  # 5 items a second against 30 a second
            if len(slow) == 5:
                break
        stats = run.stats
    assert stats["program"]["itemsDropped"] > 0
    assert slow == sorted(slow) and slow[-1] - slow[0] > 4
