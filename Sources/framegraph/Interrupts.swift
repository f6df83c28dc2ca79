import Dispatch
import Foundation
import FrameGraph
import Synchronization

/// Ctrl-C and SIGTERM: the first asks the run to stop cleanly, the second exits at once.
final class Interrupts: @unchecked Sendable {
    /// Signals received, shared with the handlers.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
    private let count = Counter()
    private let sources: [any DispatchSourceSignal]

    init(onFirst: @escaping @Sendable () -> Void) {
        var made: [any DispatchSourceSignal] = []
        let counter = self.count
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if counter.value.add(1, ordering: .relaxed).newValue == 1 {
                    FileHandle.standardError.write(Data("\nstopping: finishing work in flight and finalizing outputs (Ctrl-C again to abort)\n".utf8))
                    onFirst()
                } else {
                    _exit(130)
                }
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Whether a signal arrived.
    var interrupted: Bool { count.value.load(ordering: .relaxed) > 0 }
}
