import CInterrupts
import Foundation
import FrameGraph
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP (a closed terminal), caught from before `main` runs: the handler is
/// installed by a constructor in CInterrupts and only counts signals. The first asks a run to stop
/// cleanly (finish work in flight within `--stop-grace`, finalize outputs, write the statistics);
/// a second one — or any signal outside a run — removes the temporary files being written and
/// ends the process with status 130.
///
/// ``install(forRun:)`` runs first thing in `main`; a small watcher thread turns the first signal
/// into the stop request set by ``onInterrupt(_:)``, which runs at once when one already arrived
/// (an interrupt while a model loads or a file opens is kept).
final class Interrupts: Sendable {
    static let shared = Interrupts()

    private let handler = Protected<(@Sendable () -> Void)?>(nil)
    private let started = Atomic<Bool>(false)

    /// `forRun`: the command is a run, which finishes cleanly on the first signal whenever it comes.
    func install(forRun: Bool) {
        if forRun { fg_interrupts_hold() }
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let watcher = Thread { [self] in
            while fg_interrupts_count() == 0 { usleep(20_000) }
            FileHandle.standardError.write(Data("\nstopping: finishing work in flight and finalizing outputs (Ctrl-C again to abort)\n".utf8))
            handler.withLock { $0 }?()
        }
        watcher.name = "interrupts"
        watcher.start()
    }

    /// What the first interrupt does (stop the run); runs right away if one already arrived.
    func onInterrupt(_ body: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = body }
        if interrupted { body() }
    }

    /// Whether a signal arrived.
    var interrupted: Bool { fg_interrupts_count() > 0 }
}
