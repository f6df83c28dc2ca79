#!/usr/bin/env python3
"""Golden files for FrameGraph's Swift model-runtime tests (reference: LiteRT + XNNPACK).

For each of the four MediaPipe models and each of two real webcam frames:
  1. decode the frame to RGB24 with the ffmpeg CLI (`-pix_fmt rgb24`),
  2. fit it to the model's W x H (selfie: stretch; face detection: letterbox, as
     MediaPipe's keep_aspect_ratio; face landmark: square crop around the face
     found by the face detector golden, scale 1.5, no rotation) with Pillow's
     BILINEAR resize, and STORE THAT uint8 IMAGE as the golden input, so the
     Swift side only has to normalise: float32 = float32(u8) * scale + offset,
  3. run LiteRT (ai-edge-litert Interpreter, default XNNPACK delegate, 1 thread),
  4. write Tests/Golden/<model>-<k>.input.rgb (raw HxWx3 uint8),
     Tests/Golden/<model>-<k>.<output>.f32 (raw little-endian float32, TFLite's
     NHWC shape) and Tests/Golden/goldens.json.

The reference noise floor per case is max |LiteRT+XNNPACK - LiteRT built-in
kernels|; for the selfie models LiteRT's built-in kernels cannot run
(MediaPipe's custom op Convolution2DTransposeBias exists only in the XNNPACK
delegate), so their floor is max |LiteRT+XNNPACK - onnxruntime| on the model
converted by tools/models/tflite_to_onnx.py.

  .venv-tools/bin/python tools/models/make_goldens.py [--out Tests/Golden] [--cache models/cache]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import mpmodels as mp

# (clip relative to shared/, frame index)
FRAMES = [("media/webcam/again.mkv", 10), ("media/webcam/thanks.mkv", 40)]
FACE_ROI_SCALE = 1.5


def fit_input(spec: mp.ModelSpec, frame: np.ndarray, face_box_px: dict | None):
    if spec.fit == "stretch":
        return mp.resize(frame, spec.width, spec.height), {"fit": "stretch"}
    if spec.fit == "letterbox":
        img, rect = mp.letterbox(frame, spec.width, spec.height)
        return img, {"fit": "letterbox (keep aspect ratio, centred, black u8 0 bars)", "content_rect": rect}
    if spec.fit == "face-crop":
        if face_box_px is None:
            raise RuntimeError("face-crop needs a face box")
        side = FACE_ROI_SCALE * max(face_box_px["w"], face_box_px["h"])
        crop, rect = mp.crop_square(frame, face_box_px["cx"], face_box_px["cy"], side)
        return mp.resize(crop, spec.width, spec.height), {
            "fit": f"square crop around the best face_detection_short_range box of the same frame, side = "
                   f"{FACE_ROI_SCALE} x max(box w, h), no rotation, black outside the frame; then resized",
            "crop_rect_in_frame": rect}
    raise ValueError(spec.fit)


def face_box_in_frame(det: dict, rect: dict, frame_w: int, frame_h: int, size: int = 128) -> dict:
    """BlazeFace box (normalised letterboxed tensor coords) -> frame pixels."""
    def fx(v):
        return (v * size - rect["x"]) / rect["width"] * frame_w

    def fy(v):
        return (v * size - rect["y"]) / rect["height"] * frame_h
    return {"cx": fx(det["cx"]), "cy": fy(det["cy"]),
            "w": det["w"] * size / rect["width"] * frame_w, "h": det["h"] * size / rect["height"] * frame_h}


def noise_floor(path: str, spec: mp.ModelSpec, x: np.ndarray, ref: dict, onnx_dir: str) -> dict:
    try:
        other = mp.litert_run(path, x, xnnpack=False)
        return {"method": "max |LiteRT + XNNPACK - LiteRT built-in kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES)|",
                "max_abs_diff": mp.max_abs_diff(ref, other)}
    except (RuntimeError, ValueError) as e:
        reason = str(e).splitlines()[0]
    import tflite_to_onnx
    onnx_path = os.path.join(onnx_dir, spec.name + ".onnx")
    if not os.path.exists(onnx_path):
        tflite_to_onnx.convert_file(path, onnx_path)
    other = mp.onnxruntime_run(onnx_path, x)
    return {"method": "max |LiteRT + XNNPACK - onnxruntime (1 thread) on the model converted by "
                      "tools/models/tflite_to_onnx.py|",
            "litert_without_xnnpack": f"unavailable: {reason} (MediaPipe custom op; only the XNNPACK delegate "
                                      f"implements it in LiteRT)",
            "max_abs_diff": mp.max_abs_diff(ref, other)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(mp.REPO, "Tests", "Golden"))
    ap.add_argument("--cache", default=mp.DEFAULT_CACHE, help="models dir (fetch_mediapipe_models.sh output)")
    ap.add_argument("--shared", default=mp.SHARED)
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    onnx_dir = a.cache if os.access(a.cache, os.W_OK) else tempfile.mkdtemp()

    frames = []
    for clip, idx in FRAMES:
        frames.append((clip, idx, mp.decode_frame(os.path.join(a.shared, clip), idx)))

    order = ["face_detection_short_range", "face_landmark", "selfie_segmentation", "selfie_segmentation_landscape"]
    face_boxes: dict[int, dict] = {}
    cases = []
    for name in order:
        spec = mp.MODELS[name]
        path = mp.model_path(name, a.cache)
        sha = mp.sha256_file(path)
        if sha != spec.sha256:
            raise SystemExit(f"{path}: sha256 {sha} != pinned {spec.sha256}")
        for k, (clip, idx, frame) in enumerate(frames):
            u8, fit = fit_input(spec, frame, face_boxes.get(k))
            assert u8.shape == (spec.height, spec.width, 3) and u8.dtype == np.uint8
            x = mp.normalise(u8, spec)
            ref = mp.litert_run(path, x, xnnpack=True, threads=1)
            case_id = f"{name}-{k}"
            in_file = f"{case_id}.input.rgb"
            u8.tofile(os.path.join(a.out, in_file))
            outputs = []
            for oname, arr in ref.items():
                fn = f"{case_id}.{oname}.f32"
                arr.astype("<f4").tofile(os.path.join(a.out, fn))
                outputs.append({"name": oname, "shape": list(arr.shape), "dtype": "float32", "byte_order": "little",
                                "file": fn, "max_abs": float(np.max(np.abs(arr)))})
            case = {
                "id": case_id,
                "model": {"file": spec.filename, "sha256": sha},
                "source": {"clip": clip, "frame_index": idx, "frame_size": [frame.shape[1], frame.shape[0]],
                           "decode": "ffmpeg CLI, -pix_fmt rgb24", "resize": mp.RESIZE_METHOD, **fit},
                "input": {"file": in_file, "dtype": "uint8", "layout": "HWC, RGB", "shape": list(u8.shape),
                          "tensor_shape": [1, spec.height, spec.width, 3], "tensor_dtype": "float32",
                          "normalisation": {"scale": spec.scale, "offset": spec.offset,
                                            "formula": "float32(u8) * float32(scale) + float32(offset)",
                                            "source": spec.norm_source}},
                "outputs": outputs,
                "noise_floor": noise_floor(path, spec, x, ref, onnx_dir),
            }
            if name == "face_detection_short_range":
                det = mp.blazeface_best(ref["regressors"], ref["classificators"])
                case["decoded_best_detection"] = {**det, "note": "sigmoid(clip(logit, +-100)), centre = anchor + "
                                                  "reg/128, size = reg/128, in letterboxed tensor coordinates; no NMS"}
                face_boxes[k] = face_box_in_frame(det, fit["content_rect"], frame.shape[1], frame.shape[0])
            if name == "face_landmark":
                logit = float(ref["conv2d_31"].reshape(-1)[0])
                presence = float(1 / (1 + np.exp(-logit)))
                case["decoded"] = {"face_presence_logit": logit, "face_presence": presence}
                if presence < 0.1:  # FaceLandmarkCpu's ThresholdingCalculator threshold
                    case["note"] = ("negative case: the detector's top box in this frame is the skull print on the "
                                    "shirt (MediaPipe, which keeps the top-scoring face, would crop it too); face "
                                    "presence is below MediaPipe's 0.1 threshold, landmarks are meaningless but "
                                    "still a valid numeric golden")
            cases.append(case)
            nf = case["noise_floor"]["max_abs_diff"]
            print(f"{case_id:34s} " + "  ".join(f"{o['name']}: max|y|={o['max_abs']:.4g} floor={nf[o['name']]:.2g}"
                                                 for o in outputs))

    doc = {
        "format": 1,
        "generated_by": "tools/models/make_goldens.py",
        "reference": {"runtime": "LiteRT (ai-edge-litert) Interpreter, default XNNPACK delegate, num_threads=1",
                      "versions": mp.versions(), "ffmpeg": mp.ffmpeg_version()},
        "models_from": "mediapipe==0.10.21 wheel on PyPI (tools/models/fetch_mediapipe_models.sh)",
        "frames_from": "shared/media/webcam (Intel sample-videos, CC-BY 4.0); only the small resized inputs are kept",
        "cases": cases,
    }
    with open(os.path.join(a.out, "goldens.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out))
    print(f"wrote {len(cases)} cases to {a.out} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
