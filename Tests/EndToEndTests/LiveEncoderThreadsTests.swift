import FrameGraphMedia
import Testing

/// How many threads a live run's encoder gets when the pipeline leaves `threads` at 0: one steady
/// thread while x264 takes under half a tick, two at full HD, where one thread took most of a tick
/// and frames queued before it, and the encoder's own choice above.
struct LiveEncoderThreadsTests {
    @Test func oneThreadUpTo1280x800TwoUpToFullHDTheEncodersChoiceAbove() {
        #expect(FileSink.liveThreads(pixels: 640 * 480) == 1)
        #expect(FileSink.liveThreads(pixels: 1280 * 720) == 1)
        #expect(FileSink.liveThreads(pixels: 1280 * 800) == 1)
        #expect(FileSink.liveThreads(pixels: 1600 * 900) == 2)
        #expect(FileSink.liveThreads(pixels: 1920 * 1080) == 2)
        #expect(FileSink.liveThreads(pixels: 1920 * 1088) == 2)
        #expect(FileSink.liveThreads(pixels: 2560 * 1440) == 0)
        #expect(FileSink.liveThreads(pixels: 3840 * 2160) == 0)
    }
}
