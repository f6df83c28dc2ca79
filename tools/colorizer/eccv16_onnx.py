#!/usr/bin/env python3
"""The ECCV 2016 colorizer (Zhang, Isola & Efros, "Colorful Image Colorization"), built from the
paper as an ONNX graph with RANDOM weights (numpy + onnx.helper; no PyTorch needed), plus
onnxruntime's output on a seeded input, for FrameGraph's parity test and timing.

Architecture as in the authors' released "eccv16" model: conv1–conv8 blocks of 3×3 convolutions
with ReLU, BatchNorm after each block (not folded: the importer folds it), strides 2 in blocks 1–3,
dilation 2 in blocks 5–6, a 4×4 stride-2 transposed convolution in block 8, a 1×1 classifier over
313 a/b bins, softmax over the bins, a 1×1 convolution to a/b (no bias), ×110, and ×4 bilinear
upsampling (PyTorch's align_corners=False = half-pixel). Input "L" [1,1,256,256] = (L − 50)/100;
output "ab" [1,2,256,256]. About 32 M parameters (≈129 MB): written to --out, never committed.

  .venv-tools/bin/python tools/colorizer/eccv16_onnx.py --out DIR
writes DIR/eccv16.onnx, DIR/input.f32 (NCHW), DIR/output.f32 (NCHW, onnxruntime 1 thread),
DIR/eccv16.json (timing, shapes, output range).
"""
import argparse, json, os, time
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def const(arr, prefix="w"):
        n = name(prefix)
        inits.append(numpy_helper.from_array(arr.astype(np.float32), n))
        return n

    def conv(x, cin, cout, k=3, stride=1, dil=1, pad=None, bias=True):
        pad = dil * (k // 2) if pad is None else pad
        w = rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k))
        ins = [x, const(w)] + ([const(rng.normal(0, 0.01, cout), "b")] if bias else [])
        y = name("conv")
        nodes.append(helper.make_node("Conv", ins, [y], kernel_shape=[k, k], strides=[stride, stride],
                                      dilations=[dil, dil], pads=[pad] * 4))
        return y

    def relu(x):
        y = name("relu"); nodes.append(helper.make_node("Relu", [x], [y])); return y

    def bn(x, c):
        y = name("bn")
        nodes.append(helper.make_node("BatchNormalization",
                                      [x, const(rng.uniform(0.5, 1.5, c), "g"), const(rng.normal(0, 0.1, c), "beta"),
                                       const(rng.normal(0, 0.1, c), "mean"), const(rng.uniform(0.5, 2, c), "var")], [y],
                                      epsilon=1e-5))
        return y

    x = "L"
    spec = [(1, 64, 2, 2, 1), (64, 128, 2, 2, 1), (128, 256, 3, 2, 1), (256, 512, 3, 1, 1),
            (512, 512, 3, 1, 2), (512, 512, 3, 1, 2), (512, 512, 3, 1, 1)]
    for cin, cout, n, stride_last, dil in spec:
        for i in range(n):
            x = relu(conv(x, cin if i == 0 else cout, cout, stride=stride_last if i == n - 1 else 1, dil=dil))
        x = bn(x, cout)
    # conv8: transposed 4×4 stride 2 (512 → 256), two 3×3, then the 313-bin classifier.
    w = rng.normal(0, np.sqrt(2.0 / (512 * 16)), (512, 256, 4, 4))
    y = name("deconv")
    nodes.append(helper.make_node("ConvTranspose", [x, const(w), const(rng.normal(0, 0.01, 256), "b")], [y],
                                  kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = relu(y)
    x = relu(conv(x, 256, 256))
    x = relu(conv(x, 256, 256))
    x = conv(x, 256, 313, k=1, pad=0)
    sm = name("softmax"); nodes.append(helper.make_node("Softmax", [x], [sm], axis=1))
    ab = conv(sm, 313, 2, k=1, pad=0, bias=False)
    scaled = name("mul"); nodes.append(helper.make_node("Mul", [ab, const(np.array([110.0]), "s")], [scaled]))
    scales = name("scales")
    inits.append(numpy_helper.from_array(np.array([1, 1, 4, 4], dtype=np.float32), scales))
    nodes.append(helper.make_node("Resize", [scaled, "", scales], ["ab"], mode="linear",
                                  coordinate_transformation_mode="pytorch_half_pixel"))
    graph = helper.make_graph(nodes, "eccv16", [helper.make_tensor_value_info("L", TensorProto.FLOAT, [1, 1, 256, 256])],
                              [helper.make_tensor_value_info("ab", TensorProto.FLOAT, [1, 2, 256, 256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="framegraph eccv16_onnx.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(a.out, "eccv16.onnx")
    onnx.save(model, path)
    params = sum(int(np.prod(t.dims)) for t in inits)

    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    L = (rng.uniform(0, 100, (1, 1, 256, 256)).astype(np.float32) - 50) / 100
    sess.run(None, {"L": L})
    t0 = time.perf_counter(); out = sess.run(None, {"L": L})[0]; ms = (time.perf_counter() - t0) * 1e3
    L.tofile(os.path.join(a.out, "input.f32"))
    out.astype(np.float32).tofile(os.path.join(a.out, "output.f32"))
    info = {"parameters": params, "bytes": os.path.getsize(path), "onnxruntime": ort.__version__,
            "onnxruntime_ms_1_thread": ms, "output_shape": list(out.shape),
            "output_min": float(out.min()), "output_max": float(out.max())}
    json.dump(info, open(os.path.join(a.out, "eccv16.json"), "w"), indent=1)
    print(json.dumps(info))

if __name__ == "__main__":
    main()
