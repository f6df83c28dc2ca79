@testable import FFmpegSupport
import Foundation
import FrameGraph
import Testing
import TestSupport

/// "Process a video file faithfully", as a user runs it: clips made here with the FFmpeg CLI (25, 60
/// fps and variable rate, with AAC or Opus sound, BT.709 HD colour bars, full-range input, a rotated
/// phone-style clip, subtitles and chapters) go through `pipelines/transcode.fg` or a small pipeline,
/// and the output is decoded back: frame count, timestamps, duration, audio present and in sync
/// (a white flash in the picture and a tone starting at the same instant), colours, orientation.
@Suite(.serialized) struct VideoFileFidelityTests {
    /// Runs ffmpeg (quiet, overwrite) and requires success.
    func ffmpeg(_ args: [String]) throws {
        let tool = try #require(ffmpegPath, "the ffmpeg CLI (installed by scripts/install-deps.sh)")
        let r = try runCommand(tool, ["-v", "error", "-y"] + args)
        try #require(r.status == 0, "ffmpeg \(args.joined(separator: " ")): \(r.stderr)")
    }

    func framegraph(_ args: [String], timeout: Double = 120) throws -> CommandResult {
        try runCommand(TestEnvironment.cli, args, timeout: timeout)
    }

    /// A clip that is black, then white from `flash` seconds on, with a tone that starts at the
    /// same instant (silence before). `vfr` makes the frame times irregular (every 3rd gap doubled).
    func flashClip(_ dir: URL, name: String, fps: Int, seconds: Double, flash: Double, audio: String?, vfr: Bool = false,
                   extra: [String] = []) throws -> String {
        let path = dir.appendingPathComponent(name).path
        var args = ["-f", "lavfi", "-i", "color=c=black:s=320x240:r=\(fps):d=\(seconds),drawbox=c=white:t=fill:enable='gte(t,\(flash))'"]
        if audio != nil {
            args += ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=\(seconds),volume=enable='lt(t,\(flash))':volume=0"]
        }
        if vfr { args += ["-vf", "setpts='(N+floor(N/3))/(\(fps)*TB)'", "-fps_mode", "passthrough"] }
        args += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        if let audio { args += ["-c:a", audio, "-metadata:s:a:0", "language=fra", "-metadata:s:a:0", "title=commentary"] }
        try ffmpeg(args + extra + [path])
        return path
    }

    /// When the picture turns white from black (media times of those frames, mean luma > 128, the
    /// first frame's time being 0).
    func flashOnsets(_ path: String) throws -> [Double] {
        let (_, frames) = try TestEnvironment.decodeAll(path)
        var onsets: [Double] = [], white = false
        for f in frames {
            let now = withExtendedLifetime(f) { f.row(f.height / 2).reduce(0) { $0 + Int($1) } / f.row(0).count } > 128
            if now && !white { onsets.append(f.mediaTime - frames[0].mediaTime) }
            white = now
        }
        return onsets
    }

    /// When the first flash comes.
    func flashTime(_ path: String) throws -> Double? { try flashOnsets(path).first }

    /// When the tone starts after silence (a sample louder than a tenth of full scale after 10 ms of
    /// quiet), in the same time frame as ``flashOnsets(_:)`` (the first video frame's time is 0):
    /// the first audio stream decoded by the FFmpeg CLI at 48 kHz mono, placed by its start time
    /// relative to the video's.
    func toneOnsets(_ path: String) throws -> [Double] {
        let tool = try #require(ffmpegPath)
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("fg-tone-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: raw) }
        let probe = try runCommand(try #require(ffprobePath), ["-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", path])
        var starts: [String: Double] = [:]
        for line in probe.stdout.split(separator: "\n") {
            let parts = line.split(separator: ",")
            if parts.count >= 2, let t = Double(parts[1]) { starts[String(parts[0])] = starts[String(parts[0])] ?? t }
        }
        let r = try runCommand(tool, ["-v", "error", "-y", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "48000", "-f", "s16le", raw.path])
        guard r.status == 0, let data = FileManager.default.contents(atPath: raw.path) else { return [] }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let offset = (starts["audio"] ?? 0) - (starts["video"] ?? 0)
        var onsets: [Double] = [], lastLoud = Int.min / 2
        for (i, sample) in samples.enumerated() where abs(Int(sample)) > 3276 {
            if i - lastLoud > 480 { onsets.append(Double(i) / 48000 + offset) }
            lastLoud = i
        }
        return onsets
    }

    /// When the first tone starts.
    func toneStart(_ path: String) throws -> Double? { try toneOnsets(path).first }

    func streams(_ path: String) throws -> [String] {
        let r = try runCommand(try #require(ffprobePath), ["-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func packetTimes(_ path: String) throws -> [Double] {
        let r = try runCommand(try #require(ffprobePath), ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.sorted()
    }

    /// Checks frame count, timestamps (each within 1 ms of the input's), duration (within one frame)
    /// and audio sync (the tone starts with the flash, as in the input, within one audio frame).
    func expectFaithful(input: String, output: String, audioFrame: Double, line: Int = #line) throws {
        let a = try packetTimes(input), b = try packetTimes(output)
        #expect(a.count == b.count && a.count > 0, "frames in \(a.count), out \(b.count)")
        let shift = (b.first ?? 0) - (a.first ?? 0)
        #expect(zip(a, b).allSatisfy { abs($1 - shift - $0) < 1.5e-3 }, "timestamps differ: \(Array(zip(a, b).prefix(8)))")
        let inDuration = try MediaProbe(path: input).duration ?? 0, outDuration = try MediaProbe(path: output).duration ?? 0
        let period = a.count > 1 ? (a.last! - a.first!) / Double(a.count - 1) : 0.04
        #expect(abs(inDuration - outDuration) <= period + 1e-3, "duration \(inDuration) → \(outDuration)")
        let inOffset = try #require(try toneStart(input)) - (try #require(try flashTime(input)))
        let outOffset = try #require(try toneStart(output), "output has no audio") - (try #require(try flashTime(output)))
        #expect(abs(outOffset - inOffset) <= audioFrame, "audio/video offset \(inOffset) in, \(outOffset) out")
    }

    @Test func clips25And60FpsWithAACKeepTheirTimingAndSound() throws {
        let dir = TestEnvironment.scratch("fidelity-rates")
        for fps in [25, 60] {
            let input = try flashClip(dir, name: "in\(fps).mp4", fps: fps, seconds: 2.56, flash: 1.2, audio: "aac")
            let output = dir.appendingPathComponent("out\(fps).mp4").path
            let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", output, "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            try expectFaithful(input: input, output: output, audioFrame: 1024.0 / 48000)
            #expect(try streams(output) == ["h264,video", "aac,audio"])
            let reader = try MediaReader(path: output)
            #expect(abs(reader.frameRate - Double(fps)) < 0.01)
            // The audio stream's language comes along (MP4 keeps no stream title; the MKV test checks it).
            let tags = try runCommand(try #require(ffprobePath), ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream_tags=language",
                                                                   "-of", "csv=p=0", output])
            #expect(tags.stdout.contains("fra"), "\(tags.stdout)")
        }
    }

    @Test func variableFrameRateWithOpusKeepsEveryTimestamp() throws {
        let dir = TestEnvironment.scratch("fidelity-vfr")
        let input = try flashClip(dir, name: "vfr.mkv", fps: 30, seconds: 3, flash: 1.5, audio: "libopus", vfr: true)
        let gaps = Set(zip(try packetTimes(input), try packetTimes(input).dropFirst()).map { Int((($1 - $0) * 1000).rounded()) })
        try #require(gaps.count >= 2, "the input must have a variable frame rate: gaps \(gaps)")
        for ext in ["mkv", "webm"] {
            let output = dir.appendingPathComponent("out.\(ext)").path
            let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", output, "--quiet"])
            #expect(r.status == 0 && !r.stderr.contains("damaged"), "\(r.stderr)")
            try expectFaithful(input: input, output: output, audioFrame: 960.0 / 48000)
            #expect(try streams(output) == [ext == "webm" ? "vp9,video" : "h264,video", "opus,audio"])
        }
    }

    @Test func fpsConvertsOfflineAndCountsWhatItRepeated() throws {
        let dir = TestEnvironment.scratch("fidelity-fps")
        let input = try flashClip(dir, name: "in.mp4", fps: 25, seconds: 2.56, flash: 1.2, audio: "aac")
        let output = dir.appendingPathComponent("o.mp4").path, stats = dir.appendingPathComponent("s.json")
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", output, "--fps", "30", "--stats", stats.path, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let times = try packetTimes(output)
        #expect(times.count == 77, "2.56 s at 30 fps: \(times.count)")  // slots k/30 up to the last frame's half period
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 1.0 / 30) < 1e-3 })
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: stats))
        let sink = try #require(report.nodes.first { $0.name == "output" })
        #expect(sink.duplicated == 13 && sink.droppedRate == 0, "64 frames into 77 slots: 13 repeats")
        let inOffset = try #require(try toneStart(input)) - (try #require(try flashTime(input)))
        let outOffset = try #require(try toneStart(output)) - (try #require(try flashTime(output)))
        #expect(abs(outOffset - inOffset) <= 1.0 / 30 + 1e-3, "a converted frame may move by up to one output frame")
        // 60 → 25 drops, counted.
        let fast = try flashClip(dir, name: "in60.mp4", fps: 60, seconds: 1, flash: 0.5, audio: nil)
        let r2 = try framegraph(["run", "pipelines/transcode.fg", "--input", fast, "--output", output, "--fps", "25", "--stats", stats.path, "--quiet"])
        #expect(r2.status == 0)
        let report2 = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: stats))
        let sink2 = try #require(report2.nodes.first { $0.name == "output" })
        #expect(try packetTimes(output).count == 25 && sink2.droppedRate == 35, "60 frames into 25 slots: \(sink2.droppedRate) dropped")
    }

    @Test func audioDropAndAACAndLiveModeKeepSync() throws {
        let dir = TestEnvironment.scratch("fidelity-audio")
        let input = try flashClip(dir, name: "in.mkv", fps: 30, seconds: 2.5, flash: 1.0, audio: "libopus")
        let dropped = dir.appendingPathComponent("drop.mp4").path
        #expect(try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", dropped, "--audio", "drop", "--quiet"]).status == 0)
        #expect(try streams(dropped) == ["h264,video"])
        let aac = dir.appendingPathComponent("aac.mp4").path
        #expect(try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", aac, "--audio", "aac", "--quiet"]).status == 0)
        #expect(try streams(aac) == ["h264,video", "aac,audio"])
        try expectFaithful(input: input, output: aac, audioFrame: 1024.0 / 48000)
        // Live from a file: one frame per clock tick, the sound shifted with the pictures.
        let live = dir.appendingPathComponent("live.mp4").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", live, "--mode", "live", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let inOffset = try #require(try toneStart(input)) - (try #require(try flashTime(input)))
        let outOffset = try #require(try toneStart(live), "live output has audio") - (try #require(try flashTime(live)))
        // A live frame is shown at the first tick after it arrives: within one output frame of its time.
        #expect(abs(outOffset - inOffset) <= 1.0 / 30 + 960.0 / 48000, "live offset \(outOffset) vs \(inOffset)")
    }

    @Test func subtitlesChaptersAndMetadataComeAlongWhereTheContainerHoldsThem() throws {
        let dir = TestEnvironment.scratch("fidelity-streams")
        let srt = dir.appendingPathComponent("s.srt"), meta = dir.appendingPathComponent("meta.txt")
        try "1\n00:00:00,200 --> 00:00:01,000\nhello\n\n2\n00:00:01,200 --> 00:00:01,800\nworld\n".write(to: srt, atomically: true, encoding: .utf8)
        try ";FFMETADATA1\ntitle=A talk\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Main\n"
            .write(to: meta, atomically: true, encoding: .utf8)
        let base = try flashClip(dir, name: "base.mkv", fps: 25, seconds: 2, flash: 1, audio: "aac")
        let input = dir.appendingPathComponent("in.mkv").path
        try ffmpeg(["-i", base, "-i", srt.path, "-i", meta.path, "-map", "0", "-map", "1", "-map_metadata", "2", "-map_chapters", "2", "-c", "copy", input])
        let mkv = dir.appendingPathComponent("o.mkv").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", mkv, "--quiet"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(try streams(mkv) == ["h264,video", "aac,audio", "subrip,subtitle"])
        let tags = try runCommand(try #require(ffprobePath), ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream_tags=language,title",
                                                               "-of", "csv=p=0", mkv])
        #expect(tags.stdout.contains("fra") && tags.stdout.contains("commentary"), "\(tags.stdout)")
        let probe = try MediaProbe(path: mkv)
        #expect(probe.chapters.map(\.title) == ["Intro", "Main"])
        #expect(probe.metadata.contains { $0.0.lowercased() == "title" && $0.1 == "A talk" })
        // MP4 cannot hold SubRip: dropped with one warning line, the rest written.
        let mp4 = dir.appendingPathComponent("o.mp4").path
        let r2 = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", mp4, "--quiet"])
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(r2.stderr.split(separator: "\n").count == 1 && r2.stderr.contains("subtitle stream 2 (subrip) dropped"), "\(r2.stderr)")
        // (MP4 keeps the chapters as a chapter track, which ffprobe lists as a data stream.)
        let mp4Streams = try streams(mp4)
        #expect(Array(mp4Streams.prefix(2)) == ["h264,video", "aac,audio"] && !mp4Streams.contains { $0.hasSuffix("subtitle") }, "\(mp4Streams)")
        #expect(try MediaProbe(path: mp4).chapters.map(\.title) == ["Intro", "Main"])
    }

    /// Eight 240-pixel bars of known sRGB colours, 1920×1080, as BT.709 limited range (`range`
    /// tv) or full range (pc, yuvj420p as JPEG-style cameras write it), tagged.
    static let bars: [(r: Int, g: Int, b: Int)] = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
                                                    (191, 0, 191), (191, 0, 0), (0, 0, 191), (16, 16, 16)]

    func barsClip(_ dir: URL, name: String, full: Bool) throws -> String {
        var args: [String] = []
        for c in Self.bars { args += ["-f", "lavfi", "-i", String(format: "color=c=0x%02X%02X%02X:s=240x1080:r=25:d=1,format=rgb24", c.r, c.g, c.b)] }
        let stack = (0..<8).map { "[\($0):v]" }.joined() + "hstack=inputs=8,format=rgb24,scale=out_color_matrix=bt709:out_range=\(full ? "pc" : "tv"):flags=accurate_rnd+full_chroma_int+full_chroma_inp,format=\(full ? "yuvj420p" : "yuv420p")"
        let path = dir.appendingPathComponent(name).path
        args += ["-filter_complex", stack, "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0",
                 "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", full ? "pc" : "tv", path]
        try ffmpeg(args)
        return path
    }

    /// The bars' centre colours of the first frame of `path`, as FrameGraph reads them (RGB).
    func barColours(_ path: String) throws -> [(Int, Int, Int)] {
        let (_, frames) = try TestEnvironment.decodeAll(path)
        let frame = try #require(frames.first)
        let rgb = Frame.make(.rgb24, width: frame.width, height: frame.height)
        try Scaler().scale(frame, into: rgb)
        return withExtendedLifetime(rgb) {
            (0..<8).map { i in
                let p = rgb.packedPixel(x: i * frame.width / 8 + frame.width / 16, y: frame.height / 2)
                return (Int(p[0]), Int(p[1]), Int(p[2]))
            }
        }
    }

    @Test func hdColourBarsAndFullRangeInputKeepTheirColoursAndTags() throws {
        let dir = TestEnvironment.scratch("fidelity-colour")
        let pipeline = dir.appendingPathComponent("rgb.fg").path
        // Through RGB (as a network's input is): decode → RGB → encode, at full size.
        try "source = file path=in.mp4\nrgb = convert to=rgb24\noutput = encode path=o.mp4 crf=4\nsource -> rgb -> output\n"
            .write(toFile: pipeline, atomically: true, encoding: .utf8)
        for full in [false, true] {
            let input = try barsClip(dir, name: full ? "full.mkv" : "bt709.mkv", full: full)
            for (i, c) in try barColours(input).enumerated() {
                let want = Self.bars[i]
                #expect(abs(c.0 - want.r) <= 2 && abs(c.1 - want.g) <= 2 && abs(c.2 - want.b) <= 2, "input bar \(i): \(c) vs \(want)")
            }
            let output = dir.appendingPathComponent(full ? "full-out.mkv" : "bt709-out.mkv").path
            let r = try framegraph(["run", pipeline, "--input", input, "--output", output, "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            for (i, c) in try barColours(output).enumerated() {
                let want = Self.bars[i]
                #expect(abs(c.0 - want.r) <= 2 && abs(c.1 - want.g) <= 2 && abs(c.2 - want.b) <= 2, "bar \(i) after the round trip: \(c) vs \(want)")
            }
            let tags = try MediaReader(path: output).taggedColor
            #expect(tags.matrix == ColorDescription.bt709Code && tags.primaries == 1 && tags.transfer == 1 && tags.range == (full ? .full : .limited),
                    "output tags: \(tags)")
        }
    }

    @Test func rotatedPhoneClipComesOutUprightOrCarriesItsRotation() throws {
        let dir = TestEnvironment.scratch("fidelity-rotation")
        let stored = dir.appendingPathComponent("stored.mp4").path
        // 320×240 stored, a red block in the stored top-left corner, and a display matrix (FFmpeg 5.1's
        // `rotate=90` tag writes one that players apply as a quarter turn).
        try ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=1,drawbox=x=0:y=0:w=80:h=60:c=red:t=fill",
                    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", stored])
        let phone = dir.appendingPathComponent("phone.mp4").path
        try ffmpeg(["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=90", phone])
        let pipeline = dir.appendingPathComponent("copy.fg").path
        try "source = file path=in.mp4\noutput = encode path=o.mp4\nsource -> output\n".write(toFile: pipeline, atomically: true, encoding: .utf8)
        let upright = dir.appendingPathComponent("upright.mp4").path
        #expect(try framegraph(["run", pipeline, "--input", phone, "--output", upright, "--quiet"]).status == 0)
        let (reader, frames) = try TestEnvironment.decodeAll(upright)
        #expect(reader.width == 240 && reader.height == 320 && reader.storedRotation == 0)
        // The reference: the FFmpeg CLI's own autorotation (what players show), as RGB bytes.
        let raw = dir.appendingPathComponent("ffmpeg.rgb")
        try ffmpeg(["-i", phone, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw.path])
        let reference = [UInt8](try Data(contentsOf: raw))
        try #require(reference.count == 240 * 320 * 3, "ffmpeg turned the picture to 240x320")
        let rgb = Frame.make(.rgb24, width: 240, height: 320)
        try Scaler().scale(try #require(frames.first), into: rgb)
        withExtendedLifetime(rgb) {
            for (x, y) in [(10, 10), (230, 10), (10, 310), (230, 310), (120, 160)] {
                let ours = rgb.packedPixel(x: x, y: y), theirs = Array(reference[((y * 240 + x) * 3)..<((y * 240 + x) * 3 + 3)])
                #expect(zip(ours, theirs).allSatisfy { abs(Int($0) - Int($1)) < 20 }, "(\(x), \(y)): ours \(ours), ffmpeg \(theirs)")
            }
            #expect(rgb.packedPixel(x: 10, y: 310)[0] > 200, "the stored top-left block is at the bottom left after the turn")
        }
        // carry: frames as stored, the output tells players to turn them.
        let carried = dir.appendingPathComponent("carried.mp4").path
        #expect(try framegraph(["run", pipeline, "--input", phone, "--output", carried, "--set", "source.orientation=carry", "--quiet"]).status == 0)
        let carriedReader = try MediaReader(path: carried)
        #expect(carriedReader.storedWidth == 320 && carriedReader.storedRotation == 90)
    }

    @Test func everyCodecAndContainerPlaysBack() throws {
        let dir = TestEnvironment.scratch("fidelity-codecs")
        let input = try flashClip(dir, name: "in.mp4", fps: 25, seconds: 2, flash: 1, audio: "aac")
        let cases: [(codec: String, file: String, decoder: String, container: String)] = [
            ("h264", "o-h264.mp4", "h264", "mov,mp4"), ("h265", "o-h265.mp4", "hevc", "mov,mp4"), ("vp9", "o-vp9.webm", "vp9", "matroska,webm"),
            ("av1", "o-av1.mkv", "av1", "matroska,webm"), ("ffv1", "o-ffv1.mkv", "ffv1", "matroska,webm"), ("prores", "o-prores.mov", "prores", "mov,mp4"),
            ("h264", "o-h264.mov", "h264", "mov,mp4"), ("h265", "o-h265-10bit.mkv", "hevc", "matroska,webm"),
        ]
        for c in cases where VideoCodecChoice.named(c.codec)?.availableEncoder != nil {
            let output = dir.appendingPathComponent(c.file).path
            var args = ["run", "pipelines/transcode.fg", "--input", input, "--output", output, "--set", "output.codec=\(c.codec)", "--quiet"]
            if c.file.contains("10bit") { args += ["--set", "output.pixel-format=yuv420p10"] }
            let r = try framegraph(args)
            #expect(r.status == 0, "\(c.codec) in \(c.file): \(r.stderr)")
            let probe = try MediaProbe(path: output)
            #expect(probe.container.hasPrefix(c.container) && probe.streams.first?.codec == c.decoder, "\(c.file): \(probe.text)")
            let (_, frames) = try TestEnvironment.decodeAll(output)
            #expect(frames.count == 50, "\(c.file): \(frames.count) frames decoded back")
            #expect(probe.streams.contains { $0.kind == "audio" }, "\(c.file) keeps the sound")
        }
        // What cannot be: named in one line before anything is written.
        let bad = dir.appendingPathComponent("bad.webm").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", bad, "--set", "output.codec=h265", "--quiet"])
        #expect(r.status == 2 && r.stderr.contains("h265 cannot go in .webm (it holds: vp9, av1") && !FileManager.default.fileExists(atPath: bad), "\(r.stderr)")
        let missing = VideoCodecChoice(name: "h266", summary: "H.266", encoders: ["libvvenc-not-here"], crfRange: 0...63, defaultCRF: 32, defaultPixelFormat: "yuv420p")
        #expect(throws: FFmpegError.self) { _ = try MediaWriter.encoder(for: missing, path: bad) }
        do { _ = try MediaWriter.encoder(for: missing, path: bad) } catch { #expect("\(error)".contains("it has: h264 (libx264)"), "\(error)") }
    }

    @Test func imageSequencesInAndOut() throws {
        let dir = TestEnvironment.scratch("fidelity-images")
        let frames = dir.appendingPathComponent("frames")
        try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=10:d=1.2", frames.appendingPathComponent("%05d.png").path])  // 00001 … 00012
        let output = dir.appendingPathComponent("seq.mp4").path
        let pipeline = dir.appendingPathComponent("seq.fg").path
        try "source = file path=x rate=12\noutput = encode path=o.mp4\nsource -> output\n".write(toFile: pipeline, atomically: true, encoding: .utf8)
        let r = try framegraph(["run", pipeline, "--input", frames.appendingPathComponent("%05d.png").path, "--output", output, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let times = try packetTimes(output)
        #expect(times.count == 12 && zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 1.0 / 12) < 1e-3 }, "\(times)")
        for ext in ["png", "jpg"] {
            let out = dir.appendingPathComponent("out-\(ext)")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let pattern = out.appendingPathComponent("f-%03d.\(ext)").path
            let r2 = try framegraph(["run", pipeline, "--input", frames.appendingPathComponent("%05d.png").path, "--output", pattern, "--quiet"])
            #expect(r2.status == 0, "\(r2.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(files.count == 12 && files.first == "f-000.\(ext)", "\(files)")
            let (_, decoded) = try TestEnvironment.decodeAll(out.appendingPathComponent("f-005.\(ext)").path)
            #expect(decoded.first?.width == 160 && decoded.first?.height == 120)
        }
    }

    @Test func probeSaysWhatIsInTheFile() throws {
        let dir = TestEnvironment.scratch("fidelity-probe")
        let input = try flashClip(dir, name: "in.mp4", fps: 25, seconds: 2, flash: 1, audio: "aac")
        let phone = dir.appendingPathComponent("phone.mp4").path
        try ffmpeg(["-i", input, "-c", "copy", "-metadata:s:v:0", "rotate=270", "-color_primaries", "bt709", phone])
        let r = try framegraph(["probe", phone])
        #expect(r.status == 0, "\(r.stderr)")
        for needle in ["stream 0: video h264", "320x240 yuv420p, 25 fps", "rotation: 90° clockwise", "50 frames, constant frame rate",
                       "stream 1: audio aac [fra]", "48000 Hz, 1 channel", "FrameGraph reads: 240x320", "duration 2.0"] {
            #expect(r.stdout.contains(needle), "probe should say '\(needle)':\n\(r.stdout)")
        }
        let bad = try framegraph(["probe", dir.appendingPathComponent("missing.mp4").path])
        #expect(bad.status == 2 && bad.stderr.split(separator: "\n").count == 1)
    }
}

extension VideoFileFidelityTests {
    @Test func severalSourcesSayWhichOneSetsTheTimingAndSound() throws {
        let dir = TestEnvironment.scratch("fidelity-timing-source")
        let talk = try flashClip(dir, name: "talk.mp4", fps: 25, seconds: 2, flash: 1, audio: "aac")
        let backdrop = try flashClip(dir, name: "backdrop.mkv", fps: 30, seconds: 2, flash: 0.5, audio: nil)
        let pipeline = dir.appendingPathComponent("two.fg").path
        let text = """
            talk = file path=\(talk)
            backdrop = file path=\(backdrop)
            mask = grayscale
            mix = blend
            output = encode path=o.mp4
            talk -> mix.foreground
            backdrop -> mix.background
            talk -> mask -> mix.mask
            mix -> output

            """
        try text.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let output = dir.appendingPathComponent("o.mp4").path
        let refused = try framegraph(["run", pipeline, "--output", output, "--quiet"])
        #expect(refused.status == 2 && refused.stderr.contains("2 sources reach this node (") && refused.stderr.contains("talk")
                && refused.stderr.contains("timing=NAME") && !FileManager.default.fileExists(atPath: output), "\(refused.stderr)")
        let r = try framegraph(["run", pipeline, "--output", output, "--set", "output.timing=talk", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try streams(output) == ["h264,video", "aac,audio"])
        // The output's times are the talk's (its 25 fps grid), not the backdrop's 30 fps ones.
        // Offline, every talk frame is paired with its backdrop frame (the faster source waits): 50 out.
        let times = try packetTimes(output)
        #expect(times.count == 50 && times.allSatisfy { abs($0 * 25 - ($0 * 25).rounded()) < 0.03 }, "\(times)")
        let unknown = try framegraph(["run", pipeline, "--output", output, "--set", "output.timing=nobody", "--quiet"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no source 'nobody' reaches this node"), "\(unknown.stderr)")
    }
}

extension VideoFileFidelityTests {
    @Test func aLoopingFileKeepsItsSoundOnEveryPass() throws {
        let dir = TestEnvironment.scratch("fidelity-loop")
        let input = try flashClip(dir, name: "loop.mp4", fps: 25, seconds: 1, flash: 0.5, audio: "aac")
        let output = dir.appendingPathComponent("o.mp4").path
        let r = try framegraph(["run", "pipelines/transcode.fg", "--input", input, "--output", output, "--loop", "--mode", "live",
                                "--duration", "3.2", "--quiet"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let flashes = try flashOnsets(output), tones = try toneOnsets(output)
        #expect(flashes.count == 3 && tones.count == 3, "three passes: flashes \(flashes), tones \(tones)")
        // Each pass's tone starts with its flash: within one output frame (live) and one audio frame.
        for (f, t) in zip(flashes, tones) { #expect(abs(f - t) <= 1.0 / 30 + 1024.0 / 48000, "flash \(f) s, tone \(t) s") }
    }
}
