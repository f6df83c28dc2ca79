enum Help {
    static let main = """
    framegraph — real-time video machine learning on Linux CPUs

    USAGE
      framegraph run PIPELINE [options]    run a pipeline description file
      framegraph check PIPELINE [options]  validate a pipeline (wiring, formats) without running it
      framegraph nodes                     list node types, their ports and options, and the
                                           video codecs this machine's FFmpeg can encode
      framegraph probe FILE                what FrameGraph sees in a media file: streams, timing,
                                           colour tags, rotation, duration, frame count
      framegraph devices [PATH…]           list cameras (/dev/video* and $FRAMEGRAPH_CAMERAS, a
                                           colon-separated list) with formats, sizes and frame rates
      framegraph model info MODEL          inputs, outputs, operations, parameters, FLOPs
      framegraph model bench MODEL [--runs N] [--warmup N] [--threads N] [--conv-kernels auto|own|xnnpack] [--stages N]
                                           load/compile time, median/p95 prediction time,
                                           time per operation type, the N slowest stages (6); who runs the
                                           convolutions (auto: both timed at compile time, the
                                           faster kept; XNNPACK without AVX2)
      framegraph model run MODEL --input-rgb X.rgb|--input-f32 X.f32 --output-dir D [--scale S --offset O]
                                           one prediction; outputs as D/NAME.f32 (NHWC float32),
                                           for tools/models/validate.py
                                           MODEL: .tflite, .onnx or a MetalTensor NAME.plist (json and
                                           bin beside it); for a plist: --precision fp32|fp16,
                                           --weights X.bin, --map X.json, --all-layers (every node's
                                           result also an output); for bench and run, any model:
                                           --precision int8 (dense convolutions in 8-bit integers)
      framegraph model compare MODEL CLIP|PHOTO… [--precision int8] [--frames N] [--threads N]
                                           the model in float32 and in int8 on the same frames:
                                           the outputs' differences, a mask's IoU, both times
      framegraph label [--model M] [--threshold T] [--max-results N] [--crop whole|centre] [--json] FILE…
                                           image labeling as ML Kit: the labels of each photo, or of
                                           every frame of a video (JSON Lines with --json); default
                                           model efficientnet_lite0 (built by the setup)
      framegraph model key new -o team.fgkey
                                           a team key (AES-256) for encrypted model archives
      framegraph model archive MODEL [--name N] [--version V] [--encrypt team.fgkey] -o X.fgarchive
                                           pack a model (and its labels, or a plist's json and bin)
                                           for deployment, optionally encrypted
      framegraph deploy key new -o publisher.fgsign
                                           the publisher's Ed25519 signing key (prints the public key)
      framegraph deploy collection|deployment|rule|default|show TREE COLLECTION … --sign publisher.fgsign
                                           publish into a deploy tree served by any web server:
                                           deployment NAME ENTRY=ARCHIVE… [--default];
                                           rule DEPLOYMENT --device-class C --arch A --feature F
                                           --min-cores N --min-memory MIB --os OS [--position N]
      framegraph models list|pull COLLECTION…|status [COLLECTION…]|clear [--keys] [--machine-config F]
                                           this machine's deployed models: cached deployments,
                                           download now (progress bar), what the server offers, clear
      framegraph --help | --version

    RUN OPTIONS
      --input PATH          replace the path of the pipeline's file source
      --output PATH         replace the path of the pipeline's first encode/png sink
      --mode live|offline   live: paced in real time, slow nodes drop while busy, one output frame
                            per clock tick; offline: every frame, as fast as possible (default)
      --fps N               live: output clock rate (default 30); offline: convert the output to
                            N frames per second (frames dropped or repeated, counted) instead of
                            keeping the input's own timing (the default)
      --audio copy|drop|aac the input's audio in the output: copied unchanged (default), dropped,
                            or re-encoded to AAC
      --policy reuse|skip   live mode, a tick with no new frame: repeat the last one (default) or skip
      --stats FILE          write the run's statistics as JSON (schema in docs/CLI.md)
      --trace FILE          write a Chrome trace-event file (open in Perfetto or chrome://tracing)
      --results FILE        write what the pipeline's detectors and classifiers find to FILE as
                            JSON Lines, one line per frame (schema in docs/RESULTS.md)
      --preview             show the output live in a window (SDL2) beside the pipeline's own
                            outputs; closing it or pressing q/Escape ends the run like Ctrl-C;
                            with no display, a warning and the run goes on
      --set NODE.KEY=VALUE  set an option of a node (repeatable)
      --loop                loop file sources (stop with Ctrl-C or --duration)
      --duration SECONDS    stop after this long (clock time)
      --quiet               no progress line and no table (errors still printed)
      --latency auto|MS     live mode: show each frame at the first tick at or after its capture
                            time + this delay (default auto: from the latency frames show, raised
                            when frames keep missing their tick); more delay, smoother output
      --max-latency MS      the most auto may raise it to (default 250)
      --model-budget MB     memory the models' tensors may take (default 2048; also for model)
      --machine-config F    the machine's deployment config for model=collection:NAME/ENTRY
                            (default $FRAMEGRAPH_MACHINE_CONFIG, ~/.config/framegraph/machine.json)
      --update-interval S   check the collections the pipeline uses every S seconds (always once at
                            the start); a new deployment is downloaded and used from the next launch
      --hot-swap            switch the running network nodes to a new deployment at a frame boundary

    CAMERA OPTIONS (run, check; a camera is always live: --mode offline is refused)
      --camera PATH         read a V4L2 camera (e.g. /dev/video0) instead of the pipeline's file source
      --camera-size WxH     requested frame size (default 640x480; the driver grants its nearest)
      --camera-fps N        requested frame rate (default 30)
      --camera-format F     the camera's own format: yuyv, mjpeg or auto (default: YUYV if it offers
                            the size at the rate, else MJPEG)
      --reconnect           when the camera is unplugged, wait for it to come back (Ctrl-C to stop)
                            instead of ending the run with status 1

    EXAMPLES
      framegraph run pipelines/transcode.fg --input talk.mp4 --output small.mp4   (sound kept)
      framegraph run pipelines/transcode.fg --input clip.mkv --output clip.webm --set output.codec=av1
      framegraph probe phone.mov
      framegraph run pipelines/slow.fg --mode live --stats stats.json --trace trace.json
      framegraph run pipelines/transcode.fg --set small.width=320 --set small.height=240
      framegraph check pipelines/slow.fg
      framegraph devices
      framegraph run pipelines/portrait-segment.fg --camera /dev/video0 --output live.mp4 --stats s.json

    Ctrl-C stops the sources, finishes work in flight, finalizes the output file and prints the
    statistics; a second Ctrl-C aborts at once.
    EXIT STATUS: 0 done, 1 the run stopped on an error (outputs kept), 2 bad command line, pipeline
    or input, 130 interrupted.
    """
}
