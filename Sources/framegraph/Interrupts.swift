import Foundation
import FrameGraph
import Synchronization

/// Signals received (SIGINT, SIGTERM): written by the signal handler, which may only do
/// async-signal-safe work (an atomic add, `_exit`), read by the watcher thread.
private let signalsReceived = Atomic<Int>(0)
/// Whether a run will pick up the first signal (until then, it ends the process at once).
private let runWillStop = Atomic<Bool>(false)

/// Ctrl-C and SIGTERM, caught from the first moment of the process: the first asks the run to stop
/// cleanly (finish work in flight, finalize outputs, write the statistics), the second exits at once.
///
/// ``install()`` runs first thing in `main`: a plain signal handler counts signals (nothing is lost
/// between two set-up steps), and a small watcher thread turns the first one into a stop request;
/// an interrupt that arrives while a model loads or a file opens is kept, and the handler set later
/// by ``onInterrupt(_:)`` runs at once when one already arrived.
final class Interrupts: Sendable {
    static let shared = Interrupts()

    private let handler = Protected<(@Sendable () -> Void)?>(nil)
    private let started = Atomic<Bool>(false)

    /// Starts catching SIGINT and SIGTERM. `forRun`: the command is a run, which will finish cleanly
    /// on the first signal whenever it comes (otherwise the first signal ends the process at once).
    func install(forRun: Bool) {
        if forRun { hold() }
        guard !started.exchange(true, ordering: .relaxed) else { return }
        // A parent may start us with these signals blocked (a thread pool's mask is inherited across
        // exec): unblock them, or they would stay pending and Ctrl-C would do nothing.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        for sig in [SIGINT, SIGTERM] {
            signal(sig) { _ in
                let count = signalsReceived.add(1, ordering: .relaxed).newValue
                // Nothing to finish yet, or a second signal: end now (async-signal-safe).
                if count > 1 || !runWillStop.load(ordering: .relaxed) { _exit(130) }
            }
        }
        let watcher = Thread { [self] in
            while signalsReceived.load(ordering: .relaxed) == 0 { usleep(20_000) }
            FileHandle.standardError.write(Data("\nstopping: finishing work in flight and finalizing outputs (Ctrl-C again to abort)\n".utf8))
            handler.withLock { $0 }?()
        }
        watcher.name = "interrupts"
        watcher.start()
    }

    /// Says that a run will pick up an interrupt (until then the first one exits at once).
    func hold() { runWillStop.store(true, ordering: .relaxed) }

    /// What the first interrupt does (stop the run); runs right away if one already arrived.
    func onInterrupt(_ body: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = body }
        if interrupted { body() }
    }

    /// Whether a signal arrived.
    var interrupted: Bool { signalsReceived.load(ordering: .relaxed) > 0 }
}
