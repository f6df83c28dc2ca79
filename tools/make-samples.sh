#!/usr/bin/env bash
# Makes the default input of the README's main job, samples/media/portrait.mp4: the public-domain NASA
# astronaut portrait (Eileen Collins) that ships inside the scikit-image wheel on PyPI, fetched by
# version and checked by SHA-256, turned into a 10 s 640x480 30 fps clip with a slow pan and zoom.
# Nothing is copied from ../shared. Re-running is cheap: the wheel and the clip are cached.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=samples/media/cache
mkdir -p "$cache"
wheel_name=scikit_image-0.24.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
wheel_sha256=fa27b3a0dbad807b966b8db2d78da734cb812ca4787f7fbb143764800ce2fa9c
wheel="$cache/$wheel_name"

if [ ! -f samples/media/portrait.mp4 ]; then
  if [ ! -f "$wheel" ] || ! echo "$wheel_sha256  $wheel" | sha256sum -c --status; then
    echo "fetching scikit-image 0.24.0 from PyPI (for its astronaut.png)"
    # Pinned platform and Python tags: the same file (and hash) whatever the local Python is.
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux2014_x86_64 --implementation cp -d "$cache" scikit-image==0.24.0
  fi
  if ! echo "$wheel_sha256  $wheel" | sha256sum -c --status; then
    echo "error: $wheel does not have the expected SHA-256 $wheel_sha256" >&2
    exit 1
  fi
  python3 - "$wheel" "$cache/astronaut.png" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("skimage/data/astronaut.png"))
PY
  # 512x512 portrait -> 4:3 frame around the face, then a gentle hand-held pan and zoom.
  ffmpeg -nostdin -v error -y -loop 1 -framerate 30 -i "$cache/astronaut.png" \
    -vf "scale=1280:1280,crop=1280:960:0:60,zoompan=z='1.15+0.08*sin(on/50)':x='iw/2-(iw/zoom/2)+60*sin(on/40)':y='ih/2-(ih/zoom/2)+30*sin(on/33)':d=1:s=640x480:fps=30,format=yuv420p" \
    -frames:v 300 -c:v libx264 -preset veryfast -crf 18 -movflags +faststart samples/media/portrait.mp4
  echo "made samples/media/portrait.mp4"
fi
