import CAVCodec
import CAVFormat
import CAVUtil
import CSWResample
import FrameGraph

/// Re-encodes one audio stream of an input file into a stream of the output (AAC, or Opus for WebM):
/// decode → libswresample (to the encoder's sample format, and 48 kHz where the encoder needs it) →
/// a FIFO cut into the encoder's frame size → encode. Timestamps follow the input's, shifted as the
/// video was, counted in samples so they never drift.
final class AudioTranscoder {
    let outputStream: UnsafeMutablePointer<AVStream>
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private var fifo: OpaquePointer?
    private var decoded: UnsafeMutablePointer<AVFrame>?
    private var converted: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let inputTimeBase: AVRational
    private let path: String
    /// Sample position (in the encoder's time base, 1/sample rate) of the next sample into the FIFO's tail … head.
    private var nextPTS: Int64?
    private var samplesQueued: Int64 = 0

    /// Adds an output stream to `output` that will hold `input` re-encoded with `encoderName`.
    init(input: UnsafeMutablePointer<AVStream>, encoderName: String, output: UnsafeMutablePointer<AVFormatContext>, path: String) throws {
        self.path = path
        inputTimeBase = input.pointee.time_base
        guard let decoderCodec = avcodec_find_decoder(input.pointee.codecpar.pointee.codec_id) else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find a decoder for audio stream \(input.pointee.index)", path: path)
        }
        guard let encoderCodec = avcodec_find_encoder_by_name(encoderName) else {
            throw FFmpegError(code: fg_averror(ENOSYS), operation: "find audio encoder '\(encoderName)'", path: path)
        }
        guard let stream = avformat_new_stream(output, nil) else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "add audio stream", path: path) }
        outputStream = stream
        decoder = avcodec_alloc_context3(decoderCodec)
        encoder = avcodec_alloc_context3(encoderCodec)
        guard let decoder, let encoder else { throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate audio codecs", path: path) }
        try check(avcodec_parameters_to_context(decoder, input.pointee.codecpar), "configure audio decoder", path: path)
        decoder.pointee.pkt_timebase = input.pointee.time_base
        try check(avcodec_open2(decoder, decoderCodec, nil), "open audio decoder", path: path)

        let inRate = decoder.pointee.sample_rate
        var rate = inRate > 0 ? inRate : 48000
        if let rates = encoderCodec.pointee.supported_samplerates {
            var supported: [Int32] = []
            var i = 0
            while rates[i] != 0 && i < 64 { supported.append(rates[i]); i += 1 }
            if !supported.isEmpty && !supported.contains(rate) { rate = supported.contains(48000) ? 48000 : supported[0] }
        }
        encoder.pointee.sample_rate = rate
        encoder.pointee.sample_fmt = encoderCodec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_FLTP
        var layout = AVChannelLayout()
        if decoder.pointee.ch_layout.nb_channels > 0 {
            _ = av_channel_layout_copy(&layout, &decoder.pointee.ch_layout)
        } else {
            av_channel_layout_default(&layout, 2)
        }
        if layout.nb_channels > 2 && encoderName == "libopus" { av_channel_layout_uninit(&layout); av_channel_layout_default(&layout, 2) }
        _ = av_channel_layout_copy(&encoder.pointee.ch_layout, &layout)
        av_channel_layout_uninit(&layout)
        encoder.pointee.bit_rate = Int64(64_000 * max(1, min(6, Int(encoder.pointee.ch_layout.nb_channels))))
        encoder.pointee.time_base = AVRational(num: 1, den: rate)
        if output.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 { encoder.pointee.flags |= fg_codec_flag_global_header() }
        try check(avcodec_open2(encoder, encoderCodec, nil), "open audio encoder '\(encoderName)'", path: path)
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), "configure audio stream", path: path)
        stream.pointee.time_base = encoder.pointee.time_base

        try check(swr_alloc_set_opts2(&resampler, &encoder.pointee.ch_layout, encoder.pointee.sample_fmt, rate,
                                      &decoder.pointee.ch_layout, decoder.pointee.sample_fmt, inRate, 0, nil), "set up audio resampling", path: path)
        try check(swr_init(resampler), "set up audio resampling", path: path)
        fifo = av_audio_fifo_alloc(encoder.pointee.sample_fmt, encoder.pointee.ch_layout.nb_channels, 4096)
        decoded = av_frame_alloc()
        converted = av_frame_alloc()
        packet = av_packet_alloc()
        guard fifo != nil, decoded != nil, converted != nil, packet != nil else {
            throw FFmpegError(code: fg_averror(ENOMEM), operation: "allocate audio buffers", path: path)
        }
    }

    deinit {
        av_packet_free(&packet)
        av_frame_free(&converted)
        av_frame_free(&decoded)
        if let fifo { av_audio_fifo_free(fifo) }
        swr_free(&resampler)
        avcodec_free_context(&encoder)
        avcodec_free_context(&decoder)
    }

    /// The input jumped (a looping source's next pass): take the next decoded frame's timestamp
    /// as the new start instead of counting on from the last sample.
    func restartTiming() {
        if let fifo { av_audio_fifo_reset(fifo) }
        if let decoder { avcodec_flush_buffers(decoder) }
        nextPTS = nil
    }

    /// Decodes `input` (a packet of the input stream, timestamps already shifted to output time in
    /// the input's time base) and writes every full encoder frame to `output`.
    func feed(_ input: UnsafeMutablePointer<AVPacket>?, output: UnsafeMutablePointer<AVFormatContext>) throws {
        guard let decoder, let decoded else { return }
        let sent = avcodec_send_packet(decoder, input)
        if sent < 0 && sent != fg_averror_eof() && sent != fg_averror_invaliddata() {
            try check(sent, "decode audio", path: path)
        }
        while true {
            let status = avcodec_receive_frame(decoder, decoded)
            if status == fg_averror_eagain() || status == fg_averror_eof() { break }
            if status == fg_averror_invaliddata() { continue }
            try check(status, "decode audio", path: path)
            defer { av_frame_unref(decoded) }
            try queue(decoded)
            try encodeFullFrames(output: output, final: false)
        }
        if input == nil {
            try queue(nil)
            try encodeFullFrames(output: output, final: true)
        }
    }

    /// Resamples `frame` (nil: what the resampler still holds) into the FIFO.
    private func queue(_ frame: UnsafeMutablePointer<AVFrame>?) throws {
        guard let encoder, let fifo, let converted else { return }
        if nextPTS == nil, let frame {
            var pts = frame.pointee.best_effort_timestamp
            if pts == fg_nopts_value() { pts = frame.pointee.pts }
            nextPTS = pts == fg_nopts_value() ? 0 : av_rescale_q(pts, inputTimeBase, encoder.pointee.time_base)
        }
        let inSamples = frame.map { Int32($0.pointee.nb_samples) } ?? 0
        let capacity = swr_get_out_samples(resampler, inSamples)
        guard capacity > 0 else { return }
        try allocate(converted, samples: capacity, like: encoder)
        let outData = converted.pointee.extended_data
        let produced = frame.map { frame in
            frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { inData in
                swr_convert(resampler, outData, capacity, inData, inSamples)
            }
        } ?? swr_convert(resampler, outData, capacity, nil, 0)
        try check(produced, "resample audio", path: path)
        if produced > 0 {
            let written = converted.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) {
                av_audio_fifo_write(fifo, $0, produced)
            }
            try check(written, "queue audio", path: path)
        }
    }

    /// Gives `frame` fresh sample memory for `samples` samples in the encoder's format, rate and layout.
    private func allocate(_ frame: UnsafeMutablePointer<AVFrame>, samples: Int32, like encoder: UnsafeMutablePointer<AVCodecContext>) throws {
        av_frame_unref(frame)
        frame.pointee.format = encoder.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = encoder.pointee.sample_rate
        frame.pointee.nb_samples = samples
        _ = av_channel_layout_copy(&frame.pointee.ch_layout, &encoder.pointee.ch_layout)
        try check(av_frame_get_buffer(frame, 0), "allocate audio frame", path: path)
    }

    /// Encodes whole encoder frames from the FIFO (and, when `final`, the short remainder and the
    /// encoder's delay).
    private func encodeFullFrames(output: UnsafeMutablePointer<AVFormatContext>, final: Bool) throws {
        guard let encoder, let fifo, let converted else { return }
        let frameSize = encoder.pointee.frame_size > 0 ? encoder.pointee.frame_size : 1024
        while av_audio_fifo_size(fifo) >= frameSize || (final && av_audio_fifo_size(fifo) > 0) {
            let count = min(frameSize, av_audio_fifo_size(fifo))
            try allocate(converted, samples: count, like: encoder)
            let read = converted.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) {
                av_audio_fifo_read(fifo, $0, count)
            }
            try check(read, "read queued audio", path: path)
            converted.pointee.pts = nextPTS ?? 0
            nextPTS = (nextPTS ?? 0) + Int64(count)
            try check(avcodec_send_frame(encoder, converted), "encode audio", path: path)
            try drain(output: output)
        }
        if final {
            _ = avcodec_send_frame(encoder, nil)
            try drain(output: output)
        }
    }

    private func drain(output: UnsafeMutablePointer<AVFormatContext>) throws {
        guard let encoder, let packet else { return }
        while true {
            let status = avcodec_receive_packet(encoder, packet)
            if status == fg_averror_eagain() || status == fg_averror_eof() { return }
            try check(status, "encode audio", path: path)
            av_packet_rescale_ts(packet, encoder.pointee.time_base, outputStream.pointee.time_base)
            packet.pointee.stream_index = outputStream.pointee.index
            try check(av_interleaved_write_frame(output, packet), "write audio packet", path: path)
        }
    }
}
