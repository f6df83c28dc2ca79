import Foundation

/// A value behind a lock (a pthread mutex, through `NSLock`), for state several threads touch.
///
/// FrameGraph uses this rather than `Synchronization.Mutex` because the latter locks with raw
/// futexes on Linux, which ThreadSanitizer cannot see: with `Protected`, `swift test
/// --sanitize=thread` checks the graph's threads for real races.
public final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
