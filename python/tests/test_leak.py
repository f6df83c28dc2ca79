"""200 runs in one process: resident memory stays flat (no leaked frames, models or threads)."""
from __future__ import annotations

import threading

from conftest import FACE_DETECT

import framegraph as fg


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def one_run(sample: str) -> int:
    count = 0
    with fg.run(FACE_DETECT, input=sample, duration=0.1) as run:
        for item in run:
            assert item.frame is not None and item.frame.shape == (480, 640, 3)
            count += 1
    return count


def test_200_runs_keep_memory_and_threads_flat(sample: str) -> None:
    counts = [one_run(sample) for _ in range(20)]
    before, threads = rss_mb(), threading.active_count()
    counts += [one_run(sample) for _ in range(180)]
    after = rss_mb()
    assert counts == [3] * 200, "0.1 s of a 30 fps clip: 3 frames a run"
    # The first 20 runs warm the pools and caches; the next 180 may grow memory by less than 40 MB.
    assert after - before < 40, f"resident memory {before:.0f} MB after 20 runs, {after:.0f} MB after 200"
    assert threading.active_count() == threads
