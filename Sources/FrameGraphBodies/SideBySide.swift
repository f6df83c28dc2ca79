import Dispatch

/// Runs a frame's independent model jobs (the palm detector, each hand's landmark model) on a few
/// threads at once (`DispatchQueue.concurrentPerform`; the calling thread takes part): lane k runs
/// jobs k, k + lanes, k + 2 × lanes… one after another, so that each lane can own its models (a
/// ``Predictor`` runs on one thread at a time). With one lane, or one job, everything runs on the
/// calling thread. Returns when every job has run; the first error any job threw (in job order) is
/// thrown then.
///
/// ```swift
/// try SideBySide.run(jobs: regions.count, lanes: 2) { job, lane in
///     try readers[lane].read(regions[job])
/// }
/// ```
enum SideBySide {
    /// What one job left: set by the one thread that ran it, read after all lanes have ended.
    final class Slot<Value>: @unchecked Sendable {
        var value: Value?
        init() {}
    }

    static func run(jobs: Int, lanes: Int, _ body: (_ job: Int, _ lane: Int) throws -> Void) throws {
        guard jobs > 0 else { return }
        let lanes = max(1, min(lanes, jobs))
        if lanes == 1 {
            for job in 0..<jobs { try body(job, 0) }
            return
        }
        let failures = (0..<jobs).map { _ in Slot<any Error>() }
        withoutActuallyEscaping(body) { body in
            let work = UncheckedWork(body: body)
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for job in stride(from: lane, to: jobs, by: lanes) {
                    do { try work.body(job, lane) } catch { failures[job].value = error }
                }
            }
        }
        if let error = failures.lazy.compactMap(\.value).first { throw error }
    }

    /// The jobs' closure handed to the lanes: each lane calls it for its own jobs, which touch only
    /// that lane's models and those jobs' slots.
    private struct UncheckedWork: @unchecked Sendable {
        let body: (Int, Int) throws -> Void
    }
}
