#!/usr/bin/env bash
# Fetch MediaPipe's TFLite models used by FrameGraph (selfie segmentation, face
# detection and mesh, palm detection and hand landmarks, pose detection and
# landmarks) from the mediapipe==0.10.21 wheel on PyPI, verify the wheel and every model by
# SHA-256, and extract them into a cache directory.
#
#   tools/models/fetch_mediapipe_models.sh [CACHE_DIR]   (default: models/cache)
#
# Idempotent: when the models are already in CACHE_DIR with the pinned
# hashes nothing is downloaded. The wheel (~36 MB) is kept in CACHE_DIR so a
# re-extraction never downloads again. CACHE_DIR gets a '.gitignore' with '*'
# so that nothing in it is ever committed.
#
# Environment: PYTHON (interpreter whose pip is used; default: the repo's
# .venv-tools if present, else python3).
set -euo pipefail

CACHE_DIR="${1:-models/cache}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

WHEEL_NAME="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl"
WHEEL_SHA256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3"

# name  sha256  path-inside-wheel
MODELS=(
  "selfie_segmentation.tflite 9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite"
  "selfie_segmentation_landscape.tflite a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite"
  "face_detection_short_range.tflite bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8 mediapipe/modules/face_detection/face_detection_short_range.tflite"
  "face_landmark.tflite 1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814 mediapipe/modules/face_landmark/face_landmark.tflite"
  "face_detection_full_range_sparse.tflite 2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1 mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite"
  "palm_detection_lite.tflite e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18 mediapipe/modules/palm_detection/palm_detection_lite.tflite"
  "palm_detection_full.tflite 1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54 mediapipe/modules/palm_detection/palm_detection_full.tflite"
  "hand_landmark_lite.tflite 048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6 mediapipe/modules/hand_landmark/hand_landmark_lite.tflite"
  "hand_landmark_full.tflite 11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3 mediapipe/modules/hand_landmark/hand_landmark_full.tflite"
  "pose_detection.tflite 9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c mediapipe/modules/pose_detection/pose_detection.tflite"
  "pose_landmark_full.tflite e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f mediapipe/modules/pose_landmark/pose_landmark_full.tflite"
)

if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$REPO_ROOT/.venv-tools/bin/python" ]]; then PYTHON="$REPO_ROOT/.venv-tools/bin/python"; else PYTHON=python3; fi
fi

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$CACHE_DIR"
[[ -f "$CACHE_DIR/.gitignore" ]] || printf '# downloaded models and wheels: never committed\n*\n' > "$CACHE_DIR/.gitignore"

all_ok() {
  local entry name sha
  for entry in "${MODELS[@]}"; do
    read -r name sha _ <<<"$entry"
    [[ -f "$CACHE_DIR/$name" && "$(sha_of "$CACHE_DIR/$name")" == "$sha" ]] || return 1
  done
}

if all_ok && [[ -f "$CACHE_DIR/face_mesh_connections.json" ]]; then
  echo "fetch_mediapipe_models: all ${#MODELS[@]} models and the face mesh lines present and verified in $CACHE_DIR"
  exit 0
fi

WHEEL="$CACHE_DIR/$WHEEL_NAME"
if [[ ! -f "$WHEEL" || "$(sha_of "$WHEEL")" != "$WHEEL_SHA256" ]]; then
  rm -f "$WHEEL"
  echo "fetch_mediapipe_models: downloading $WHEEL_NAME from PyPI ..."
  "$PYTHON" -m pip download "mediapipe==0.10.21" --no-deps --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 \
    --platform manylinux_2_28_x86_64 -d "$CACHE_DIR" --quiet
fi
got="$(sha_of "$WHEEL")"
if [[ "$got" != "$WHEEL_SHA256" ]]; then
  echo "fetch_mediapipe_models: wheel SHA-256 mismatch: got $got, want $WHEEL_SHA256" >&2
  rm -f "$WHEEL"
  exit 1
fi

status=0
for entry in "${MODELS[@]}"; do
  read -r name sha inner <<<"$entry"
  # extract with Python's zipfile (no dependency on unzip); write atomically
  "$PYTHON" - "$WHEEL" "$inner" "$CACHE_DIR/$name.tmp" <<'EOF'
import sys, zipfile
whl, inner, dst = sys.argv[1:]
with zipfile.ZipFile(whl) as z, open(dst, "wb") as f:
    f.write(z.read(inner))
EOF
  got="$(sha_of "$CACHE_DIR/$name.tmp")"
  if [[ "$got" == "$sha" ]]; then
    mv -f "$CACHE_DIR/$name.tmp" "$CACHE_DIR/$name"
    echo "fetch_mediapipe_models: $name OK ($sha)"
  else
    rm -f "$CACHE_DIR/$name.tmp"
    echo "fetch_mediapipe_models: $name SHA-256 mismatch: got $got, want $sha" >&2
    status=1
  fi
done

# The face mesh's lines (which of the 468 points are joined when drawn), as data: MediaPipe's
# face_mesh_connections.py from the same wheel (Apache-2.0), verified, read with Python's ast
# (literals only, nothing executed) into face_mesh_connections.json.
CONNECTIONS_SHA256="cc7171e44d0612db38720cb2fd2516c395992cdd7457efe341543be6f3c22d87"
"$PYTHON" - "$WHEEL" "$CONNECTIONS_SHA256" "$CACHE_DIR/face_mesh_connections.json" <<'EOF' || status=1
import ast, hashlib, json, os, sys, zipfile
whl, want, dst = sys.argv[1:]
source = zipfile.ZipFile(whl).read("mediapipe/python/solutions/face_mesh_connections.py")
got = hashlib.sha256(source).hexdigest()
if got != want:
    sys.exit(f"fetch_mediapipe_models: face_mesh_connections.py SHA-256 mismatch: got {got}, want {want}")
sets = {}
for node in ast.parse(source).body:
    if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
        continue
    name, call = node.targets[0].id, node.value
    if call.args and isinstance(call.args[0], ast.List) and all(isinstance(e, ast.Tuple) for e in call.args[0].elts):
        sets[name] = set(ast.literal_eval(call.args[0]))          # frozenset([(a, b), ...])
    elif call.args and isinstance(call.args[0], ast.Starred):      # frozenset().union(*[A, B, ...])
        sets[name] = set().union(*(sets[e.id] for e in call.args[0].value.elts))
out = {"source": "mediapipe 0.10.21 face_mesh_connections.py (Apache-2.0)",
       "tesselation": sorted(sets["FACEMESH_TESSELATION"]), "contours": sorted(sets["FACEMESH_CONTOURS"])}
with open(dst + ".tmp", "w") as f:
    json.dump(out, f)
os.replace(dst + ".tmp", dst)
print(f"fetch_mediapipe_models: face_mesh_connections.json OK ({len(out['tesselation'])} mesh lines, {len(out['contours'])} contour lines)")
EOF
exit $status
