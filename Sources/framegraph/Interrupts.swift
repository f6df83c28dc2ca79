import Dispatch
import Foundation
import FrameGraph
import Synchronization

/// Ctrl-C and SIGTERM, caught from the first moment of the process: the first asks the run to stop
/// cleanly (finish work in flight, finalize outputs, write the statistics), the second exits at once.
///
/// ``install()`` runs before anything else in `main`, so an interrupt that arrives while a model
/// loads or a file opens is not lost: the handler set later by ``onInterrupt(_:)`` runs at once when
/// one already arrived.
final class Interrupts: Sendable {
    static let shared = Interrupts()

    private let count = Atomic<Int>(0)
    private let handler = Protected<(@Sendable () -> Void)?>(nil)
    private let sources = Protected<[any DispatchSourceSignal]>([])
    private let holding = Atomic<Bool>(false)

    /// Starts catching SIGINT and SIGTERM.
    func install() {
        sources.withLock { made in
            guard made.isEmpty else { return }
            for sig in [SIGINT, SIGTERM] {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { [self] in received() }
                source.resume()
                made.append(source)
            }
        }
    }

    private func received() {
        if count.add(1, ordering: .relaxed).newValue == 1 {
            guard holding.load(ordering: .relaxed) else { _exit(130) }  // no run to finish: end now
            FileHandle.standardError.write(Data("\nstopping: finishing work in flight and finalizing outputs (Ctrl-C again to abort)\n".utf8))
            handler.withLock { $0 }?()
        } else {
            _exit(130)
        }
    }

    /// Says that a run will pick up an interrupt (until then the first one exits at once).
    func hold() { holding.store(true, ordering: .relaxed) }

    /// What the first interrupt does (stop the run); runs right away if one already arrived.
    func onInterrupt(_ body: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = body }
        if interrupted { body() }
    }

    /// Whether a signal arrived.
    var interrupted: Bool { count.load(ordering: .relaxed) > 0 }
}
