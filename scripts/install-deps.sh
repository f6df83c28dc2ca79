#!/usr/bin/env bash
# Installs the Debian packages FrameGraph needs (only those missing). Used by demo.sh and test.sh.
set -euo pipefail
packages=(pkg-config libavformat-dev libavcodec-dev libswscale-dev libswresample-dev libavutil-dev ffmpeg
          libxnnpack-dev libpthreadpool-dev libv4l-dev python3 python3-pip python3-venv
          gcc make libjpeg62-turbo-dev   # these three build the emulated camera (Tests/FakeCamera); libjpeg-turbo also makes --serve's JPEGs (CJPEGTurbo)
          stress-ng                      # tools/test-under-load.sh keeps a core busy with it
          libfreetype-dev fonts-dejavu-core libsdl2-dev   # annotate (text) and display (preview window)
          zlib1g-dev                     # deflate entries of the files packed behind TFLite metadata
          libssl-dev libcurl4-openssl-dev openssl nginx-light curl  # model deployment: AES-GCM/Ed25519, downloads; the tests' HTTPS server (and the HLS test's)
          xvfb xdotool x11-apps x11-utils   # the preview-window tests: a virtual X server, key presses, screenshots (xwd, xwininfo)
          prometheus chromium              # --serve tests: promtool check metrics; the dashboard and report rendered headless
          python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
          gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
          glib-networking)   # network-source tests: a local RTSP server (glib-networking: its TLS, for rtsps)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v swift >/dev/null; then
  echo "swift is not on PATH: install the Swift 6 toolchain for Linux first (swift.org), then re-run." >&2
  exit 1
fi
