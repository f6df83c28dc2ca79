import CAVCodec
import CAVFormat
import CAVUtil
import Foundation
import FrameGraph

/// Records a stream's own video packets (no decode, no encode: what an NVR does) into a series of
/// container files, cut at keyframes. ``MediaReader`` hands it every video packet it reads (with
/// ``MediaReader/Options/recorder``), so one connection and one demux feed both the decoder and the
/// recording.
///
/// ```swift
/// let recorder = PacketRecorder(plan: .init(nextPath: { _ in "cam1/rec.mkv" }, isDue: { _, _ in false },
///                                           finished: { path, start, end, packets in print(path, packets) }))
/// ```
/// Each file is written under a temporary name beside its destination and renamed into place when it
/// is complete (``OutputFile``), so a crash loses at most the segment being written. The cut comes at
/// the first keyframe after ``Plan/isDue`` says the segment is long enough (a segment must start with
/// a keyframe to play).
public final class PacketRecorder: @unchecked Sendable {
    /// When to cut and what to call the files; told about each finished one.
    public struct Plan: Sendable {
        /// The path of a segment that starts at a date.
        public var nextPath: @Sendable (Date) -> String
        /// Whether a segment with this many packets and seconds of media is long enough to end.
        public var isDue: @Sendable (_ packets: Int, _ seconds: Double) -> Bool
        /// A segment was finished and renamed into place (path, start, end, packets).
        public var finished: @Sendable (String, Date, Date, Int) -> Void
        public init(nextPath: @escaping @Sendable (Date) -> String, isDue: @escaping @Sendable (Int, Double) -> Bool,
                    finished: @escaping @Sendable (String, Date, Date, Int) -> Void) {
            self.nextPath = nextPath
            self.isDue = isDue
            self.finished = finished
        }
    }

    public let plan: Plan
    /// Packets written to finished and current segments; packets skipped while waiting for a keyframe.
    public private(set) var packetsWritten = 0
    public private(set) var packetsSkipped = 0
    /// The first error (the recording stopped; decoding went on).
    public private(set) var failure: String?
    private var current: Segment?

    public init(plan: Plan) {
        self.plan = plan
    }

    deinit {
        current?.abandon()
    }

    /// One packet of the video stream `stream` (called by the reader, on its thread).
    func record(_ packet: UnsafeMutablePointer<AVPacket>, stream: UnsafeMutablePointer<AVStream>) {
        guard failure == nil else { return }
        let key = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
        do {
            if let s = current, s.input != stream {
                try close()  // a new connection: its parameters may differ
            }
            if let s = current, key, plan.isDue(s.packets, s.seconds(of: packet)) {
                try close()
            }
            if current == nil {
                guard key else { packetsSkipped += 1; return }
                let path = plan.nextPath(Date())
                current = try Segment(path: path, input: stream, first: packet)
            }
            try current?.write(packet)
            packetsWritten += 1
        } catch {
            failure = "\(error)"
            current?.abandon()
            current = nil
        }
    }

    /// Finishes the segment being written (renamed into place and reported).
    public func close() throws {
        guard let s = current else { return }
        current = nil
        try s.finish()
        if s.packets > 0 { plan.finished(s.path, s.start, Date(), s.packets) }
    }

    /// One file being written.
    private final class Segment {
        let path: String
        let input: UnsafeMutablePointer<AVStream>
        let start = Date()
        private(set) var packets = 0
        private var format: UnsafeMutablePointer<AVFormatContext>?
        private let output: OutputFile
        private let firstDTS: Int64
        private var lastDTS = Int64.min
        private let outputStream: UnsafeMutablePointer<AVStream>

        init(path: String, input: UnsafeMutablePointer<AVStream>, first: UnsafeMutablePointer<AVPacket>) throws {
            self.path = path
            self.input = input
            let t = first.pointee.dts != fg_nopts_value() ? first.pointee.dts : first.pointee.pts
            firstDTS = t == fg_nopts_value() ? 0 : t
            output = try OutputFile(destination: path)
            var ctx: UnsafeMutablePointer<AVFormatContext>?
            let ext = (path as NSString).pathExtension.lowercased()
            let muxer = ext == "mkv" ? "matroska" : ext == "ts" ? "mpegts" : ext == "mov" ? "mov" : "mp4"
            try check(avformat_alloc_output_context2(&ctx, nil, muxer, output.temporaryPath), "set up the \(muxer) container", path: path)
            guard let ctx, let stream = avformat_new_stream(ctx, nil) else {
                throw FFmpegError(code: fg_averror(ENOMEM), operation: "add the video stream", path: path)
            }
            format = ctx
            outputStream = stream
            do {
                try check(avcodec_parameters_copy(stream.pointee.codecpar, input.pointee.codecpar), "copy the stream's parameters", path: path)
                stream.pointee.codecpar.pointee.codec_tag = 0
                stream.pointee.time_base = input.pointee.time_base
                var ioOptions: OpaquePointer?
                av_dict_set(&ioOptions, "protocol_whitelist", "file", 0)
                defer { av_dict_free(&ioOptions) }
                try check(avio_open2(&ctx.pointee.pb, "file:" + output.temporaryPath, AVIO_FLAG_WRITE, nil, &ioOptions), "create file", path: path)
                try check(avformat_write_header(ctx, nil), "write header", path: path)
            } catch {
                abandon()
                throw error
            }
        }

        /// Seconds of media from the segment's first packet to `packet`.
        func seconds(of packet: UnsafeMutablePointer<AVPacket>) -> Double {
            let t = packet.pointee.dts != fg_nopts_value() ? packet.pointee.dts : packet.pointee.pts
            guard t != fg_nopts_value() else { return 0 }
            return Double(t - firstDTS) * av_q2d(input.pointee.time_base)
        }

        func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
            guard let format, let copy = av_packet_clone(packet) else { return }
            var owned: UnsafeMutablePointer<AVPacket>? = copy
            defer { av_packet_free(&owned) }
            copy.pointee.stream_index = 0
            // Timestamps from the segment's start, never going back (a live stream's can jitter).
            if copy.pointee.dts == fg_nopts_value() { copy.pointee.dts = copy.pointee.pts }
            if copy.pointee.dts != fg_nopts_value() { copy.pointee.dts -= firstDTS }
            if copy.pointee.pts != fg_nopts_value() { copy.pointee.pts -= firstDTS }
            if copy.pointee.dts != fg_nopts_value() {
                if copy.pointee.dts <= lastDTS { copy.pointee.dts = lastDTS + 1 }
                if copy.pointee.pts != fg_nopts_value() && copy.pointee.pts < copy.pointee.dts { copy.pointee.pts = copy.pointee.dts }
                lastDTS = copy.pointee.dts
            }
            av_packet_rescale_ts(copy, input.pointee.time_base, outputStream.pointee.time_base)
            copy.pointee.pos = -1
            try check(av_interleaved_write_frame(format, copy), "write packet \(packets)", path: path)
            packets += 1
        }

        func finish() throws {
            guard format != nil else { return }
            defer { closeFile() }
            try check(av_write_trailer(format), "finalize container", path: path)
            closeFile()
            if packets > 0 { try output.commit() } else { output.discard() }
        }

        func abandon() {
            closeFile()
            output.discard()
        }

        private func closeFile() {
            guard let f = format else { return }
            if f.pointee.pb != nil { avio_closep(&f.pointee.pb) }
            avformat_free_context(f)
            format = nil
        }
    }
}
