# Sourced by the live benchmarks (repo root as the working directory): the release CLI and the
# emulated camera (Tests/FakeCamera) playing CLIP, scaled to 640×480 YUYV, at 30 fps.
#
#   source tools/bench/emulated-camera.sh CLIP OUT_DIR
#
# Sets `bin` (the CLI) and `camera_env` (the environment for `env "${camera_env[@]}" "$bin" run …
# --camera /tmp/fakecam/video0`); the clip's frames are written to OUT_DIR/clip.yuyv.
bin=.build/release/framegraph
[ -x "$bin" ] || swift build -c release --product framegraph
make -s -C Tests/FakeCamera
mkdir -p "$2"
ffmpeg -loglevel error -y -i "$1" -vf scale=640:480 -frames:v 300 -pix_fmt yuyv422 -f rawvideo "$2/clip.yuyv"
camera_env=(LD_PRELOAD="$PWD/Tests/FakeCamera/build/libfakecam.so" FAKECAM_PATH=/tmp/fakecam/video0 FAKECAM_FORMATS=YUYV
            FAKECAM_SIZE=640x480 FAKECAM_FPS=30 FAKECAM_CLIP="$PWD/$2/clip.yuyv" FAKECAM_CLIP_SIZE=640x480 FAKECAM_STAMP=0
            FRAMEGRAPH_CAMERAS=/tmp/fakecam/video0)
