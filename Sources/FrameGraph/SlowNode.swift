/// Passes frames through after sleeping a fixed time on the run's clock, on its own worker thread:
/// a stand-in for a slow network, to demonstrate and test drop-while-busy scheduling.
///
/// ```swift
/// source --> SlowNode(name: "net", delay: 0.050) --> sink   // 50 ms per frame
/// ```
public final class SlowNode: FilterNode, @unchecked Sendable {
    /// Seconds spent per frame.
    public let delay: Double

    public init(name: String = "slow", delay: Double = OptionSpecs.ms.defaultValue / 1000) {
        self.delay = delay
        super.init(name: name)
    }

    override public var kind: String { "slow" }
    override public var execution: Execution { .worker }

    override public func process(_ frame: Frame, context: RunContext) throws -> Frame? {
        context.clock.sleep(for: delay, lane: Lane.current.id)
        return frame
    }
}

extension SlowNode {
    /// The options of the `slow` node type.
    public enum OptionSpecs {
        public static let ms = NodeOption.number("ms", default: 50, 0...60_000, "milliseconds per frame")
        public static let all = [ms.spec]
    }
}
