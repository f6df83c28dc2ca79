"""The Python package on a camera: run under tools/fake-camera.sh (the test suite's emulated V4L2
camera), portrait-segment.fg reads /dev/video0 for 2 s, live, and writes a video.

    tools/fake-camera.sh samples/media/portrait.mp4 --seconds 3 -- python python/tests/check_camera.py SCRATCH
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import framegraph as fg  # noqa: E402

scratch = Path(sys.argv[1])
scratch.mkdir(parents=True, exist_ok=True)
out = scratch / "camera.mp4"
with fg.run("portrait-segment", camera="/dev/video0", duration=2, output=str(out)) as run:
    shapes = {item.frame.shape for item in run}
stats = run.stats
frames = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                         "-of", "csv=p=0", str(out)], capture_output=True, text=True).stdout.strip()
delivered = stats["program"]["itemsDelivered"]
ok = stats["mode"] == "live" and shapes == {(480, 640, 3)} and delivered > 30 and frames == str(stats["framesOut"])
print(f"{'ok' if ok else 'FAIL'}: camera, live: {delivered} items {sorted(shapes)}, stats framesOut {stats['framesOut']}, camera.mp4 plays {frames} frames")
sys.exit(0 if ok else 1)
