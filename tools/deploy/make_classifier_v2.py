#!/usr/bin/env python3
"""A second version of an ONNX image classifier for the deployment tests and demo: the same network,
its labels (the `labels` metadata property) marked with a prefix, so that every result says which
version produced it (`v2 tabby` instead of `tabby`). A stand-in for a retrained classifier: what
deployment must get right (publishing, targeting, download, the switch at the next launch or at a
frame boundary) does not depend on how the weights were made.

    .venv-tools/bin/python tools/deploy/make_classifier_v2.py models/cache/efficientnet_lite0.onnx out/classifier-v2.onnx
"""
import argparse
import sys

import onnx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="an ONNX classifier with a 'labels' metadata property")
    ap.add_argument("output", help="the new .onnx (must not exist)")
    ap.add_argument("--prefix", default="v2 ", help="put before every label (default 'v2 ')")
    a = ap.parse_args()
    m = onnx.load(a.model)
    props = {p.key: p for p in m.metadata_props}
    if "labels" not in props:
        print(f"{a.model}: no 'labels' metadata property", file=sys.stderr)
        return 2
    labels = props["labels"].value.split("\n")
    props["labels"].value = "\n".join(a.prefix + l if l else l for l in labels)
    import os
    if os.path.exists(a.output):
        print(f"{a.output} exists; not overwritten", file=sys.stderr)
        return 2
    onnx.save(m, a.output)
    print(f"{a.output}: {len(labels)} labels prefixed with {a.prefix!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
