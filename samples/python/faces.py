"""Faces from Python: run the shipped face-detect pipeline on a clip, print each frame's faces and
the mean brightness of its output frame, and write the annotated video.

    pip install ./python            # after `swift build -c release`, in a virtual environment
    python samples/python/faces.py samples/media/portrait.mp4 faces.mp4
"""
import sys

import framegraph as fg


def main() -> None:
    clip = sys.argv[1] if len(sys.argv) > 1 else "samples/media/portrait.mp4"
    output = sys.argv[2] if len(sys.argv) > 2 else "faces.mp4"
    with fg.run("face-detect", input=clip, output=output) as run:
        for item in run:
            faces = item.results.get("detections", [])
            scores = ", ".join(f"{face['score']:.2f}" for face in faces)
            brightness = item.frame.mean() if item.frame is not None else float("nan")
            print(f"{item.index:4d} {item.time:6.2f}s  {len(faces)} face(s) [{scores}]  mean {brightness:.1f}")
    stats = run.stats
    print(f"{stats['program']['itemsDelivered']} frames, {stats['framesOut']} out; wrote {output}")


if __name__ == "__main__":
    main()
