#!/usr/bin/env python3
"""Golden files for the image-labeling parity test (reference: LiteRT, ai-edge-litert, 1 thread).

For two real webcam frames (as tools/models/make_goldens.py picks its frames): decode to RGB24 with
the ffmpeg CLI, resize to 224x224 with Pillow's BILINEAR (the whole frame stretched, ML Kit's way),
STORE THAT uint8 IMAGE, normalise it as the model's metadata says ((x - 127) / 128), run LiteRT on
../shared/models/labeling/efficientnet_lite0_metadata.tflite, and write
  Tests/Golden/labeling/efficientnet_lite0-<k>.input.rgb          (raw 224x224x3 uint8)
  Tests/Golden/labeling/efficientnet_lite0-<k>.probabilities.f32  (raw little-endian float32, 1000)

  .venv-tools/bin/python tools/labeling/make_label_goldens.py [--shared ../shared] [--out Tests/Golden/labeling]
"""
import argparse
import os
import subprocess

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRAMES = [("media/webcam/again.mkv", 10), ("media/webcam/book.mkv", 30)]


def frame(clip, index):
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", clip, "-vf", f"select=eq(n\\,{index})", "-frames:v", "1",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(out, np.uint8).reshape(480, 640, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.environ.get("FRAMEGRAPH_SHARED") or os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--out", default=os.path.join(ROOT, "Tests", "Golden", "labeling"))
    a = ap.parse_args()
    from ai_edge_litert.interpreter import Interpreter
    model = os.path.join(a.shared, "models", "labeling", "efficientnet_lite0_metadata.tflite")
    interpreter = Interpreter(model_path=model, num_threads=1)
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    os.makedirs(a.out, exist_ok=True)
    for k, (clip, index) in enumerate(FRAMES):
        rgb = np.asarray(Image.fromarray(frame(os.path.join(a.shared, clip), index)).resize((224, 224), Image.BILINEAR))
        interpreter.set_tensor(inp["index"], ((rgb.astype(np.float32) - 127) / 128)[None])
        interpreter.invoke()
        p = interpreter.get_tensor(out["index"]).reshape(-1).astype("<f4")
        rgb.tofile(os.path.join(a.out, f"efficientnet_lite0-{k}.input.rgb"))
        p.tofile(os.path.join(a.out, f"efficientnet_lite0-{k}.probabilities.f32"))
        top = np.argsort(-p)[:5]
        print(f"{clip} frame {index}: top-5 {top.tolist()} {p[top].round(4).tolist()}")


if __name__ == "__main__":
    main()
