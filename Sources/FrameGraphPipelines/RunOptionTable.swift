import Foundation
import FrameGraphServe

extension RunOptionSpec {
    // Options other commands share (framegraph models pull --quiet, model info --model-budget …).
    public static let quiet = RunOptionSpec("quiet", "no progress line or bar (errors still printed)", short: "q", forPrograms: false)
    public static let modelBudget = RunOptionSpec("model-budget", .integer(1...1_048_576), default: "2048",
                                                  "memory the models' tensors may take, in MiB")
    public static let machineConfig = RunOptionSpec("machine-config", .text("FILE"),
                                                    "this machine's deployment config for hosted models (default $FRAMEGRAPH_MACHINE_CONFIG, else ~/.config/framegraph/machine.json)")

    /// Every option of `framegraph run` (and `framegraph check`), in the order `--help` lists them:
    /// the one table. Those ``forPrograms`` are the C library's request keys too (`fg_run_options`).
    public static let all: [RunOptionSpec] = [
        RunOptionSpec("input", .text("PATH"), "replace the path of the pipeline's file source (a video, photo or image sequence); given again, one stream per input in one process (docs/PIPELINES.md)", short: "i", repeatable: true),
        RunOptionSpec("inputs", .text("FILE"), "more streams: a list of inputs, one path per line (# comments), as --input given once per line"),
        RunOptionSpec("batch", .integer(1...64), default: "1", "several streams: most frames of different streams a shared network worker runs in one turn (as one prediction where the model takes a batch and that is faster)"),
        RunOptionSpec("frame-budget", .integer(1...100_000), "several streams, live: the most frames waiting for or running on the shared network workers at once, all streams together (more are dropped-busy; default one per stream)"),
        RunOptionSpec("output", .text("PATH"), "replace the path of the pipeline's first encode/png sink (a run writes only what it is told); several streams: a path with {stream}, or a folder", short: "o"),
        RunOptionSpec("mode", .choice(["live", "offline"]), default: "offline",
                      "live: paced in real time, slow nodes drop while busy, one output frame per clock tick; offline: every frame, as fast as possible"),
        RunOptionSpec("fps", .number(0.1...1000), default: "30 live; offline the input's own timing",
                      "live: the output clock's rate; offline: convert the output to N frames per second (drops and repeats counted)"),
        RunOptionSpec("policy", .choice(["reuse", "skip"]), default: "reuse",
                      "live, a tick with no new frame: repeat the last one, or skip it (a hole in time; the output keeps its length)"),
        RunOptionSpec("duration", .number(0.001...31_536_000), "how much to run, in seconds: offline of media time, live of clock time"),
        RunOptionSpec("stats", .text("FILE"), "write the run's statistics as JSON (schema in docs/CLI.md)"),
        RunOptionSpec("trace", .text("FILE"), "write a Chrome trace-event file (open in Perfetto or chrome://tracing)"),
        RunOptionSpec("results", .text("FILE"), "write what the detectors and classifiers find as JSON Lines (replaces the pipeline's own results file)"),
        RunOptionSpec("preview", "show the output live in a window (q, Escape or closing it stops the run); without --output or --results a preview writes no file"),
        RunOptionSpec("set", .text("NODE.KEY=VALUE"), "set an option of a node (repeatable; framegraph nodes lists them)", repeatable: true),
        RunOptionSpec("loop", "loop file sources (stop with Ctrl-C or --duration)"),
        RunOptionSpec("audio", .choice(["copy", "drop", "aac"]), default: "copy", "the input's audio in the output: copied unchanged, dropped, or re-encoded to AAC"),
        RunOptionSpec("latency", .text("auto|MS"), default: "auto",
                      "live: show each frame at the first tick at or after its capture time + this delay (0…5000 ms; auto raises it when frames miss their tick)"),
        RunOptionSpec("max-latency", .number(0...5000), default: "250", "the most auto may raise the delay to, in ms"),
        RunOptionSpec("stop-grace", .number(0...3600), default: "5",
                      "after a stop (Ctrl-C, --duration, an error), seconds to wait for work in flight before finalizing the outputs without it"),
        quiet,
        modelBudget,
        machineConfig,
        RunOptionSpec("update-interval", .number(1...86_400), "check the pipeline's hosted collections every N seconds (always once at the start)"),
        RunOptionSpec("hot-swap", "switch the running nodes to a new deployment at a frame boundary"),
        RunOptionSpec("camera", .text("PATH"), "read a V4L2 camera (e.g. /dev/video0) instead of the pipeline's file source; the run is live"),
        RunOptionSpec("camera-size", .text("WxH"), default: "640x480", "requested frame size (the driver grants its nearest)"),
        RunOptionSpec("camera-fps", .number(0.1...1000), default: "30", "requested frame rate"),
        RunOptionSpec("camera-format", .choice(["auto", "yuyv", "mjpeg"]), default: "auto", "the camera's own format (auto: YUYV if it offers the size at the rate, else MJPEG)"),
        RunOptionSpec("reconnect", "cameras: when unplugged, wait for them to come back instead of ending the run; streams reconnect by default, --reconnect=false ends the run on a loss"),
        RunOptionSpec("allow-network", "read network streams: --input rtsp://… (rtsps, http(s), srt, udp, rtp, rtmp) and the pipeline's stream sources; refused without it"),
        RunOptionSpec("stream-transport", .choice(["tcp", "udp"]), default: "tcp", "RTSP media over TCP (interleaved) or UDP"),
        RunOptionSpec("on-loss", .choice(["repeat", "no-signal"]), default: "repeat", "while a stream is lost and reconnecting: repeat the last frame, or show a dark no-signal frame"),
        RunOptionSpec("credentials", .text("FILE"), "a file whose first line is user:password for the stream (never printed)"),
        RunOptionSpec("inline", .text("PIPELINE"), "the pipeline written on the command line instead of a file: TYPE key=value … -> TYPE … (see docs/PIPELINES.md)", short: "e",
                      forPrograms: false),
        RunOptionSpec("serve", .text("[ADDRESS:]PORT"),
                      "serve the run over HTTP: dashboard /, /metrics (Prometheus), /picture.jpg, /video.mjpg (?node=NAME: any node's), /hls/index.m3u8 (.ts segments), /events, /stats.json (docs/MONITORING.md); default address 127.0.0.1 ([::1]:PORT for IPv6), port 0 picks a free one"),
        RunOptionSpec("serve-token-file", .text("FILE"), "the token every request to --serve must carry (Authorization: Bearer, or ?token=); required beyond 127.0.0.1"),
        RunOptionSpec("serve-token", .text("TOKEN"), "the token given inline (visible to other users in the process list: prefer --serve-token-file)"),
        RunOptionSpec("serve-clients", .integer(1...1000), default: "32", "most connections --serve takes at once (more are answered 503)"),
        RunOptionSpec("serve-fps", .number(0.5...120), default: String(format: "%g", RunMonitor.defaultPictureRate),
                      "most pictures per second each watched node's /video.mjpg sends (one JPEG each for all its viewers)"),
        RunOptionSpec("serve-linger", .number(0...86_400), default: "0", "keep serving the final figures this many seconds after the run (POST /stop with the token, or Ctrl-C, ends it sooner)"),
    ]
}
