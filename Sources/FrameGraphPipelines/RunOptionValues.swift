import Foundation
import FrameGraph
import ModelDeployment

/// The values one run was given for its options — the command line's arguments, or a program's
/// open request (the C library, Python's `fg.run`) — read by the option's command-line name
/// (``RunOptionSpec/name``: `frame-budget`, `stop-grace`). ``FrameGraph/RunOptions/init(values:pipelineFile:hasLiveSource:)``
/// turns them into a run's options the same way for both.
public protocol RunOptionValues {
    /// The option's text, when given.
    func text(_ name: String) -> String?
    /// The option's number, when given (already checked against its range).
    func number(_ name: String) -> Double?
    /// The option's integer, when given (already checked against its range).
    func integer(_ name: String) -> Int?
    /// The option as its user wrote it, for messages: `--stats` on the command line, `stats` in a request.
    func spelling(_ name: String) -> String
}

/// An option's value that its table's kind lets through but the run cannot use (a `latency` that
/// is neither `auto` nor milliseconds); one line naming the option as its user wrote it.
public struct RunOptionValueError: Error, CustomStringConvertible {
    public let description: String
}

extension RunOptions {
    /// A run's options from the values given: mode (a camera or a network stream makes the run
    /// live), clock rate (offline, `fps` converts the output to that rate; without it the source's
    /// timing is kept), tick policy, duration, frame budget, stop grace, trace, stats, presentation
    /// delay, and the files the run reads besides its inputs (the pipeline file, an inputs list, the
    /// machine config), so that no output overwrites them.
    public init(values: some RunOptionValues, pipelineFile: String?, hasLiveSource: Bool) throws {
        self.init()
        mode = try PipelineChanges.mode(requested: values.text("mode").flatMap(RunMode.init(rawValue:)), hasCamera: hasLiveSource)
        if let policy = values.text("policy").flatMap(TickPolicy.init(rawValue:)) { tickPolicy = policy }
        fps = values.number("fps") ?? 30
        if mode == .offline, let rate = values.number("fps") { outputRate = rate }
        if let trace = values.text("trace") { traceURL = URL(fileURLWithPath: trace) }
        if let stats = values.text("stats") { otherOutputs[stats] = values.spelling("stats") }
        if let file = pipelineFile { otherInputs[file] = "the run (the pipeline file)" }
        if let list = values.text("inputs") { otherInputs[list] = "the run (\(values.spelling("inputs")))" }
        otherInputs[MachineConfig.location(explicit: values.text("machine-config"))] = "the run (the machine config)"
        duration = values.number("duration")
        frameBudget = values.integer("frame-budget")
        if let grace = values.number("stop-grace") { stopGrace = grace }
        let text = values.text("latency")
        guard let delay = PresentationDelay.parse(text, maximumMilliseconds: values.number("max-latency")) else {
            throw RunOptionValueError(description: "\(values.spelling("latency")) expects auto or milliseconds from 0 to 5000, got '\((text ?? "").prefix(40))'")
        }
        latency = delay
        tickPhaseFollowsDelay = true
    }
}
