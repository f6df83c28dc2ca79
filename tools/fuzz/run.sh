#!/usr/bin/env bash
# Builds one of FrameGraph's libFuzzer targets with AddressSanitizer and runs it.
#
#   tools/fuzz/run.sh tflite|onnx|pipeline|results|metadata|metaltensor|exif|deployment|http|streamurl SECONDS [libFuzzer options…]
#
# tflite:   TFLite flatbuffers → import → resource checks → compile → one prediction
# onnx:     ONNX protobuf → the same
# pipeline: pipeline description text → parser → builder
# results:  a results-file line (JSON) → decoder → encoder → annotate's drawing on small frames
# metadata: a TFLite file's metadata buffer and the zip of associated files behind it
# metaltensor: MetalTensor's plist (XML, binary), weight map and PNG readers, and whole small models
# exif:     a JPEG's marker segments and the EXIF orientation in its APP1 segment
# deployment: model archives (.fgarchive), collection manifests and signatures, team keys, machine configs
# http:     an HTTP request head as `--serve` reads it (bounded parser, the access-token check)
# streamurl: a network stream's address and credentials line (StreamURL), and redaction of any text
#
# The corpus lives in .build-fuzz/corpus/TARGET (seeded from the real models and pipeline files, so
# runs build on each other); crashes go to .build-fuzz/artifacts/TARGET/. A crash replays without
# libFuzzer through the normal build: `swift build -c release --product fuzz-TARGET` then
# `.build/release/fuzz-TARGET CRASH-FILE`. Needs the models that scripts/test.sh fetches.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
seconds=${2:-60}
case "$target" in
  tflite|onnx|pipeline|results|metadata|metaltensor|exif|deployment|http|streamurl) ;;
  *) echo "usage: tools/fuzz/run.sh tflite|onnx|pipeline|results|metadata|metaltensor|exif|deployment|http|streamurl SECONDS [libFuzzer options…]" >&2; exit 2 ;;
esac
shift 2 || shift $#
product="fuzz-$target"
# lld: gold fails on the instrumented objects' debug information.
swift build -c release --scratch-path .build-fuzz --product "$product" \
  -Xswiftc -D -Xswiftc FUZZING -Xswiftc -sanitize=fuzzer,address \
  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld 2>&1 | tail -n 1
corpus=".build-fuzz/corpus/$target"
artifacts=".build-fuzz/artifacts/$target/"
mkdir -p "$corpus" "$artifacts"
extra=()
case "$target" in
  tflite)
    cp -n models/cache/*.tflite "$corpus"/ 2>/dev/null || true
    # Quantized models (int8, uint8, dynamic-range; quantization parameters, QUANTIZE/DEQUANTIZE)
    # and SSDs ending in TFLite_Detection_PostProcess (its FlexBuffer options), when the set-up made them.
    for f in models/cache/quantized/opzoo_*.tflite models/cache/quantized/ssd_*.tflite; do
      [ -e "$f" ] && cp -n "$f" "$corpus/quantized_$(basename "$f")"
    done
    extra=(-max_len=800000) ;;   # the largest seed, the sparse full-range face detector, is 677 KB
  onnx)
    cp -n models/colorizer/colorizer.onnx "$corpus"/ 2>/dev/null || true
    cp -n models/cache/*.onnx "$corpus"/ 2>/dev/null || true
    # QDQ, QOperator and fp16 models, when the set-up made them.
    for f in models/cache/quantized/*.onnx; do [ -e "$f" ] && cp -n "$f" "$corpus/quantized_$(basename "$f")"; done
    extra=(-max_len=10000000) ;;
  http)
    printf '\x10GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer fuzz-token-0123456789\r\n\r\n' > "$corpus/metrics"
    printf '\x40GET /picture.jpg?token=fuzz-token-0123456789&x=%%41+b HTTP/1.0\r\nCookie: a=b; framegraph_token=x\r\n\r\n' > "$corpus/query"
    printf '\x80POST /stop HTTP/1.1\r\nContent-Length: 0\r\n\r\n' > "$corpus/stop"
    extra=(-max_len=12000 -dict=tools/fuzz/http.dict) ;;
  streamurl)
    printf 'rtsp://viewer:fuzz-secret-0123@127.0.0.1:8554/cam' > "$corpus/rtsp"
    printf 'srt://127.0.0.1:9000?mode=caller&passphrase=fuzz-secret-0123\n' > "$corpus/srt"
    printf 'rtsp://cam.local/live\nviewer:fuzz-secret-0123' > "$corpus/credentials"
    extra=(-max_len=5000) ;;
  pipeline)
    for f in pipelines/*.fg; do cp -n "$f" "$corpus/$(basename "$f")"; done
    extra=(-max_len=4096 -dict=tools/fuzz/pipeline.dict) ;;
  metadata)
    cp -n models/cache/face_detection_short_range.tflite "$corpus"/ 2>/dev/null || true
    # The same model with a zip of associated files appended (a deflated and a stored entry).
    python3 - models/cache/face_detection_short_range.tflite "$corpus/with_packed_files.tflite" <<'PY' || true
import io, sys, zipfile
model = open(sys.argv[1], "rb").read()
packed = io.BytesIO()
with zipfile.ZipFile(packed, "w") as z:
    z.writestr("labels.txt", "".join(f"class {i}\n" for i in range(200)), compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("notes.txt", "stored entry\n", compress_type=zipfile.ZIP_STORED)
open(sys.argv[2], "wb").write(model + packed.getvalue())
PY
    extra=(-max_len=400000) ;;
  metaltensor)
    # Seeds: the shipped plists (XML and binary), weight maps and mean image, and a small whole model.
    python3 - "$corpus" ../shared/models/metaltensor <<'PY' || true
import os, plistlib, struct, sys
corpus, models = sys.argv[1], sys.argv[2]
def seed(name, mode, data):
    open(os.path.join(corpus, name), "wb").write(bytes([mode]) + data)
for f in sorted(os.listdir(models)) if os.path.isdir(models) else []:
    path = os.path.join(models, f)
    if f.endswith(".plist"):
        data = open(path, "rb").read()
        seed(f, 0, data)
        seed(f + ".binary", 0, plistlib.dumps(plistlib.loads(data), fmt=plistlib.FMT_BINARY))
    elif f.endswith(".json"):
        seed(f, 1, open(path, "rb").read())
    elif f == "mean96.png":
        seed(f, 2, open(path, "rb").read())
plist = (b'<plist><dict><key>input</key><dict><key>type</key><string>input</string><key>inputs</key><string>4,4,3</string>'
         b'<key>targets</key><string>conv</string></dict><key>conv</key><dict><key>inputs</key><string>4,4,3</string>'
         b'<key>kernel</key><string>3</string><key>filters</key><string>2</string><key>stride</key><string>2</string>'
         b'<key>weight</key><string>w</string><key>activation</key><string>relun,0,6</string><key>targets</key><string>out</string></dict>'
         b'<key>out</key><dict><key>type</key><string>output</string><key>inputs</key><string>2,2,2</string></dict></dict></plist>')
blob = struct.pack("<56f", *[((i * 37) % 11 - 5) / 10 for i in range(56)])
seed("small-model", 3, plist + b"\n--json--\n" + b'{"w": "0,224",}' + b"\n--bin--\n" + blob)
PY
    extra=(-max_len=20000) ;;
  exif)
    # Seeds: the first 4 KiB of JPEGs with each EXIF orientation (Pillow), and a BSDS500 photo.
    .venv-tools/bin/python - "$corpus" <<'PY' || true
import io, sys
from PIL import Image
for o in range(1, 9):
    buf = io.BytesIO(); exif = Image.Exif(); exif[0x0112] = o
    Image.new("RGB", (16, 8), (o * 20, 0, 0)).save(buf, "JPEG", exif=exif.tobytes())
    open(f"{sys.argv[1]}/orientation-{o}.jpg", "wb").write(buf.getvalue()[:4096])
PY
    cp -n ../shared/data/bsds500/val/101085.jpg "$corpus"/ 2>/dev/null || true
    extra=(-max_len=8192) ;;
  deployment)
    # Seeds (first byte = reader): a clear and an encrypted archive of a small model (the target's
    # fixed key), a signed collection manifest and its signature, a team key, a machine config.
    .build/release/framegraph --version >/dev/null 2>&1 || swift build -c release --product framegraph 2>&1 | tail -n 1
    seeds=$(mktemp -d)
    printf '{"format":"framegraph-team-key-1","id":"0123456789abcdef","key":"%s"}' \
      "$(printf '07%.0s' $(seq 32))" > "$seeds/team.fgkey"
    .build/release/framegraph model archive models/cache/face_detection_short_range.tflite -o "$seeds/clear.fgarchive" >/dev/null
    .build/release/framegraph model archive models/cache/face_detection_short_range.tflite --encrypt "$seeds/team.fgkey" \
      -o "$seeds/encrypted.fgarchive" >/dev/null
    .build/release/framegraph deploy key new -o "$seeds/publisher.fgsign" >/dev/null
    .build/release/framegraph deploy collection "$seeds/tree" Fuzz --sign "$seeds/publisher.fgsign" >/dev/null
    .build/release/framegraph deploy deployment "$seeds/tree" Fuzz one Model="$seeds/clear.fgarchive" --sign "$seeds/publisher.fgsign" >/dev/null
    .build/release/framegraph deploy rule "$seeds/tree" Fuzz one --device-class kiosk --feature avx2 --sign "$seeds/publisher.fgsign" >/dev/null
    for pair in "0:clear.fgarchive" "0:encrypted.fgarchive" "1:tree/collections/Fuzz/index.json" "2:tree/collections/Fuzz/index.json.sig" "3:team.fgkey"; do
      { printf "\\x$(printf %02x "${pair%%:*}")"; cat "$seeds/${pair#*:}"; } > "$corpus/seed-$(basename "${pair#*:}")-${pair%%:*}"
    done
    { printf '\x04'; printf '{"format":"framegraph-machine-1","server":"https://m.example/deploy/","publisherKey":"%s","deviceClass":"kiosk","caFile":"ca.pem","keyService":{"url":"https://m.example/keys/","token":"t"},"attempts":3}' "$(printf 'ab%.0s' $(seq 32))"; } > "$corpus/seed-machine.json"
    rm -rf "$seeds"
    extra=(-max_len=300000) ;;
  results)
    cp -n tools/fuzz/results-seed.jsonl "$corpus"/ 2>/dev/null || true
    extra=(-max_len=8192 -dict=tools/fuzz/results.dict) ;;
esac
exec ".build-fuzz/release/$product" "$corpus" -max_total_time="$seconds" -rss_limit_mb=3072 -timeout=20 \
  -artifact_prefix="$artifacts" -print_final_stats=1 "${extra[@]}" "$@"
