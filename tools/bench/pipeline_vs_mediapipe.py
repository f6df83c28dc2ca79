#!/usr/bin/env python3
"""Benchmark: the whole portrait segmentation pipeline on a 640x480 clip, offline, without encoding —
FrameGraph (`framegraph run pipelines/measure-segment.fg`: decode → selfie segmentation → full-resolution
composite → null sink) against MediaPipe's Python selfie segmentation solution (decode with OpenCV +
SelfieSegmentation.process per frame, tools/models/bench_mediapipe_solution.py), interleaved round by
round in one run. Prints each round, medians of fps and CPU seconds per frame, and the ratio.
Asserts nothing.

  tools/bench/pipeline_vs_mediapipe.py [--clip samples/media/portrait.mp4] [--rounds 5] [--pin]
  tools/bench/pipeline_vs_mediapipe.py --face-mesh [...]   face mesh instead: FrameGraph's face-landmarks
      (file → face-landmarks → null) against mp.solutions.face_mesh (max_num_faces=1, refine_landmarks=False)
  tools/bench/pipeline_vs_mediapipe.py --hands [...]   hands: file → hand-landmarks (max-hands=2, full) → null
      against mp.solutions.hands (max_num_hands=2, model_complexity=1), on ../shared's again.mkv by default
  tools/bench/pipeline_vs_mediapipe.py --pose [...]    pose: file → pose-landmarks → null against
      mp.solutions.pose (model_complexity=1, smooth_landmarks=True), on ../shared's again.mkv by default

--variant NAME:OPTIONS (repeatable, with --hands or --pose) adds a FrameGraph run with more node
options, in the same interleaving: `--hands --variant serial:parallel=1` also times the hands node
with its models one after another; an option written source.KEY=VALUE goes to the file source
instead (`--variant dec1:source.threads=1`: one decoder thread).

--pin runs both on CPU 0 only. FrameGraph's fps is frames out / elapsed run time and its CPU per
frame the run's CPU seconds (`runCPUSeconds`) / frames out: model loading and compiling excluded,
as MediaPipe's script excludes its set-up and 5 warm-up frames.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clip")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--face-mesh", action="store_true", help="compare face mesh instead of portrait segmentation")
    ap.add_argument("--hands", action="store_true", help="compare hand landmarks instead of portrait segmentation")
    ap.add_argument("--pose", action="store_true", help="compare pose landmarks instead of portrait segmentation")
    ap.add_argument("--also-xnnpack", action="store_true",
                    help="also run FrameGraph with every convolution left to XNNPACK (FRAMEGRAPH_CONV_KERNELS=xnnpack)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:OPTIONS",
                    help="with --hands or --pose: also run FrameGraph with these node options (e.g. serial:parallel=1)")
    a = ap.parse_args()
    if a.clip is None:
        webcam = os.path.join(root, "..", "shared", "media", "webcam", "again.mkv")
        a.clip = webcam if (a.hands or a.pose) and os.path.exists(webcam) else os.path.join(root, "samples/media/portrait.mp4")
    fg = os.path.join(root, ".build/release/framegraph")
    mp_python = os.path.join(root, ".venv-mediapipe/bin/python")
    pin = ["taskset", "-c", "0"] if a.pin else []
    frames = int(subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                                 "stream=nb_read_packets", "-of", "csv=p=0", a.clip], capture_output=True, text=True).stdout.strip())
    print(f"clip {a.clip} ({frames} frames), {'pinned to CPU 0' if a.pin else 'both cores allowed'}, {a.rounds} rounds"
          f"{', face mesh' if a.face_mesh else ''}")
    pipeline = os.path.join(root, "pipelines/measure-segment.fg")
    solution = []
    if a.face_mesh:
        pipeline = os.path.join(tempfile.mkdtemp(), "face-mesh-bench.fg")
        open(pipeline, "w").write("source = file path=unused.mp4\nmesh = face-landmarks max-faces=1\nout = null\nsource -> mesh -> out\n")
        solution = ["--solution", "face_mesh"]
    pipelines = {}
    for flag, node in (("hands", "hand-landmarks max-hands=2 model=full"), ("pose", "pose-landmarks")):
        if getattr(a, flag):
            for name, extra in [("framegraph", "")] + [v.split(":", 1) for v in a.variant]:
                pipelines[name] = os.path.join(tempfile.mkdtemp(), f"{flag}-bench.fg")
                words = extra.split()
                source = " ".join(w[len("source."):] for w in words if w.startswith("source."))
                extra = " ".join(w for w in words if not w.startswith("source."))
                open(pipelines[name], "w").write(f"source = file path=unused.mp4 {source}\nnet = {node} {extra}\nout = null\nsource -> net -> out\n")
            pipeline = pipelines["framegraph"]
            solution = ["--solution", flag]
    if a.variant and not pipelines:
        sys.exit("--variant needs --hands or --pose")
    variants = [("framegraph", {})] + ([("fg-xnnpack", {"FRAMEGRAPH_CONV_KERNELS": "xnnpack"})] if a.also_xnnpack else [])
    variants += [(name, {}) for name in pipelines if name != "framegraph"]
    rows = {name: [] for name, _ in variants}
    rows["mediapipe"] = []
    for r in range(a.rounds):
        for name, extra in variants:
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                subprocess.run(pin + [fg, "run", pipelines.get(name, pipeline), "--input", a.clip,
                                      "--mode", "offline", "--quiet", "--stats", f.name], check=True, cwd=root,
                               env=dict(os.environ, FRAMEGRAPH_MODELS=os.path.join(root, "models/cache"), **extra))
                s = json.load(open(f.name))
                fps = s["framesOut"] / s["elapsedSeconds"]
                rows[name].append((fps, s["runCPUSeconds"] / s["framesOut"] * 1000))
                print(f"round {r + 1} {name:10s} {fps:7.1f} fps  {rows[name][-1][1]:6.2f} ms CPU/frame  "
                      f"(out {s['framesOut']}, dropped {s['droppedBusy']})")
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run(pin + [mp_python, os.path.join(root, "tools/models/bench_mediapipe_solution.py"), a.clip,
                                  "--frames", str(frames), "--json", f.name] + solution, check=True, cwd=root, capture_output=True)
            m = json.load(open(f.name))
            rows["mediapipe"].append((m["fps"], m["cpu_s"] / m["frames"] * 1000))
            print(f"round {r + 1} mediapipe  {m['fps']:7.1f} fps  {rows['mediapipe'][-1][1]:6.2f} ms CPU/frame  (frames {m['frames']})")
    med = {k: (statistics.median(x for x, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
    for k, (fps, cpu) in med.items():
        print(f"median {k:10s} {fps:7.1f} fps  {cpu:6.2f} ms CPU/frame")
    for name, _ in variants:
        print(f"ratio {name}/mediapipe: fps {med[name][0] / med['mediapipe'][0]:.2f}×, "
              f"CPU per frame {med[name][1] / med['mediapipe'][1]:.2f}×")

if __name__ == "__main__":
    sys.exit(main())
