#!/usr/bin/env python3
"""Benchmark: decode -> resize 256x256 (area) -> x264 veryfast crf 23, offline, FrameGraph against the
ffmpeg command line doing the same job, interleaved A B A B ... in one run. Prints every run, then
medians of fps and CPU seconds and the ratio FrameGraph/ffmpeg. Asserts nothing.

  tools/bench/transcode_vs_ffmpeg.py [--clip samples/media/portrait.mp4] [--runs 7] [--threads auto|1] [--audio]

--audio first gives the clip a sound track (a 1 kHz AAC tone, made with the ffmpeg CLI into
out/bench-audio-input.mp4) and compares FrameGraph's default (audio copied unchanged) with
`ffmpeg -c:a copy`; both outputs are checked to hold the audio stream and every video frame.

--threads 1 pins both to CPU 0 (taskset -c 0) and gives each one decoder and one encoder thread;
auto lets both choose their threads (FFmpeg's defaults on both sides).
"""
import argparse, os, resource, statistics, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu

def frame_count(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0",
                          "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip().split(",")[0])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clip", default=os.path.join(root, "samples/media/portrait.mp4"))
    ap.add_argument("--audio", action="store_true", help="give the clip an AAC track; FrameGraph copies it, ffmpeg -c:a copy")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", default="auto", choices=["auto", "1"])
    a = ap.parse_args()
    fg = os.path.join(root, ".build/release/framegraph")
    if not os.path.exists(fg):
        subprocess.run(["swift", "build", "-c", "release", "--product", "framegraph"], check=True, cwd=root)
    os.makedirs(os.path.join(root, "out"), exist_ok=True)
    out_fg, out_ff = os.path.join(root, "out/bench-fg.mp4"), os.path.join(root, "out/bench-ffmpeg.mp4")
    if a.audio:
        with_audio = os.path.join(root, "out/bench-audio-input.mp4")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", a.clip, "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
                        "-map", "0:v:0", "-map", "1:a", "-shortest", "-c:v", "copy", "-c:a", "aac", with_audio], check=True)
        a.clip = with_audio
    pin = ["taskset", "-c", "0"] if a.threads == "1" else []
    fg_cmd = pin + [fg, "run", os.path.join(root, "pipelines/transcode.fg"), "--input", a.clip, "--output", out_fg,
                    "--mode", "offline", "--quiet"]
    ff_cmd = pin + ["ffmpeg", "-nostdin", "-v", "error", "-y"]
    if a.threads == "1":
        fg_cmd += ["--set", "source.threads=1", "--set", "output.threads=1"]
        ff_cmd += ["-threads", "1"]
    ff_cmd += ["-i", a.clip, "-vf", "scale=256:256:flags=area", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23",
               "-pix_fmt", "yuv420p"] + (["-c:a", "copy"] if a.audio else [])
    if a.threads == "1":
        ff_cmd += ["-threads", "1", "-filter_threads", "1"]
    ff_cmd += [out_ff]
    frames = frame_count(a.clip)
    print(f"clip {a.clip}: {frames} frames; threads {a.threads}; {a.runs} interleaved runs each")
    print("framegraph:", " ".join(fg_cmd))
    print("ffmpeg:    ", " ".join(ff_cmd))
    timed(fg_cmd); timed(ff_cmd)  # warm the page cache and both binaries
    results = {"framegraph": [], "ffmpeg": []}
    for i in range(a.runs):
        for name, cmd in (("framegraph", fg_cmd), ("ffmpeg", ff_cmd)):
            wall, cpu = timed(cmd)
            results[name].append((frames / wall, cpu))
            print(f"  run {i + 1} {name:10s} {frames / wall:8.1f} fps  wall {wall:6.3f} s  cpu {cpu:6.3f} s")
    assert frame_count(out_fg) == frames and frame_count(out_ff) == frames, "both outputs keep every frame"
    if a.audio:
        for path in (out_fg, out_ff):
            kinds = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path],
                                   check=True, capture_output=True, text=True).stdout.split()
            assert kinds == ["video", "audio"], f"{path}: streams {kinds}"
    med = {k: (statistics.median(f for f, _ in v), statistics.median(c for _, c in v)) for k, v in results.items()}
    for k, (fps, cpu) in med.items():
        print(f"median {k:10s} {fps:8.1f} fps  cpu {cpu:6.3f} s")
    print(f"ratio framegraph/ffmpeg: fps {med['framegraph'][0] / med['ffmpeg'][0]:.3f}, "
          f"cpu {med['framegraph'][1] / med['ffmpeg'][1]:.3f}")

if __name__ == "__main__":
    sys.exit(main())
