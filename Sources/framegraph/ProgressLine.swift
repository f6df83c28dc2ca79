import Foundation
import FrameGraph

/// The run's progress on one updating line of a terminal, as ffmpeg shows it: offline, the share
/// of the input done, frames, frames per second and the time left; live (or with no known length),
/// the counters. Nothing when standard error is not a terminal, or with `--quiet`.
final class ProgressLine: Sendable {
    private let enabled: Bool
    private let runner: GraphRunner

    init(enabled: Bool, runner: GraphRunner) {
        self.enabled = enabled
        self.runner = runner
    }

    /// Called about twice a second with the run's report so far.
    var show: (@Sendable (RunReport) -> Void)? {
        guard enabled else { return nil }
        return { [runner] report in
            FileHandle.standardError.write(Data("\r\u{1B}[K\(Self.line(report, context: runner.context, sources: runner.sources))".utf8))
        }
    }

    /// Clears the line.
    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// `43%  frames 130  61.2 fps  ETA 0:03` offline with a known length, else the report's counters.
    static func line(_ report: RunReport, context: RunContext, sources: [SourceNode]) -> String {
        let lengths = sources.compactMap(\.expectedSeconds)
        guard context.mode == .offline, lengths.count == sources.count, var total = lengths.max(), total > 0 else {
            return report.progressLine()
        }
        if let limit = context.options.duration { total = min(total, limit) }
        let done = min(1, context.mediaProgress / total)
        let elapsed = max(report.elapsedSeconds, 1e-3)
        let fps = Double(report.framesIn) / elapsed
        let eta = done > 0.01 ? elapsed * (1 - done) / done : nil
        return String(format: "%3.0f%%  frames %d  %.1f fps  ETA %@", done * 100, report.framesIn, fps,
                      eta.map { String(format: "%d:%02d", Int($0) / 60, Int($0) % 60) } ?? "?")
    }
}
