import Foundation
import FrameGraph

/// A live preview window (SDL2): shows each output frame, at the output clock's rate in live mode,
/// scaled to fit the window with its aspect kept. Closing the window or pressing q or Escape ends
/// the run as Ctrl-C does (work in flight finishes, outputs are finalized, statistics written).
///
/// The window lives on a thread of its own (SDL's calls all come from it); ``consume(_:index:context:)``
/// only hands it the newest frame, so a slow screen never holds the pipeline back.
///
/// With no display (`DISPLAY` and `WAYLAND_DISPLAY` unset) or a window that cannot open, ``start(context:)``
/// throws — unless the sink is ``optional`` (`--preview`): then it warns once and shows nothing.
///
/// ```swift
/// camera --> Annotate(name: "marks", resultPorts: 0, style: .init(hud: true)) --> DisplaySink(name: "window", title: "camera")
/// ```
public final class DisplaySink: SinkNode, @unchecked Sendable {
    /// The window's title.
    public let title: String
    /// Whether a window that cannot open is a warning (the run goes on) rather than an error.
    public let optional: Bool
    private let mailbox = NSCondition()
    private var pending: Frame?
    private var quitting = false
    private var thread: Thread?
    private let exited = DispatchSemaphore(value: 0)
    private let shownCount = Protected(0)
    private let closedByUser = Protected(false)

    public init(name: String = "display", title: String = "FrameGraph", optional: Bool = false) {
        self.title = title
        self.optional = optional
        super.init(name: name)
    }

    override public var kind: String { "display" }

    /// Frames the window has shown so far.
    public var framesShown: Int { shownCount.withLock { $0 } }
    /// Whether the run ended because the window was closed (or q/Escape pressed).
    public var wasClosedByUser: Bool { closedByUser.withLock { $0 } }

    /// Whether a display server is named in the environment (X11 or Wayland).
    public static var displayAvailable: Bool {
        let env = ProcessInfo.processInfo.environment
        return !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        if let input = inputs.first { try requireEightBit(input, hint: "add a 'convert' node") }
        return nil
    }

    override public func start(context: RunContext) throws {
        guard let input = inputs.first else { return }
        guard Self.displayAvailable else { return try unavailable(DisplayError.noDisplay, context: context) }
        quitting = false
        pending = nil
        let opened = DispatchSemaphore(value: 0)
        let failure = Protected<DisplayError?>(nil)
        let thread = Thread { [self] in
            defer { exited.signal() }
            let window: SDLWindow
            do {
                window = try SDLWindow(title: title, width: input.width, height: input.height)
            } catch {
                failure.withLock { $0 = error as? DisplayError ?? .cannotOpen(describe(error)) }
                opened.signal()
                return
            }
            opened.signal()
            runWindow(window, context: context)
            window.close()
        }
        thread.name = "display: \(name)"
        self.thread = thread
        thread.start()
        opened.wait()
        if let error = failure.withLock({ $0 }) {
            exited.wait()
            self.thread = nil
            try unavailable(error, context: context)
        }
    }

    private func unavailable(_ error: DisplayError, context: RunContext) throws {
        guard optional else { throw GraphError.nodeFailed(node: name, reason: error.description) }
        context.warn("preview window '\(name)': \(error.description); the run goes on without it")
    }

    /// The window's loop: show the newest frame, handle events, until the run finishes.
    private func runWindow(_ window: SDLWindow, context: RunContext) {
        while true {
            mailbox.lock()
            if pending == nil && !quitting { _ = mailbox.wait(until: Date(timeIntervalSinceNow: 0.01)) }
            let frame = pending
            pending = nil
            let stop = quitting
            mailbox.unlock()
            if window.pollEvents() == .close {
                closedByUser.withLock { $0 = true }
                context.requestStop()
            }
            if let frame {
                do {
                    try window.show(frame)
                    shownCount.withLock { $0 += 1 }
                } catch {
                    context.fail(error, node: name)
                }
            }
            if stop { return }
        }
    }

    override public func consume(_ frame: Frame, index: Int, context: RunContext) throws {
        guard thread != nil else { return }
        mailbox.lock()
        pending = frame
        mailbox.signal()
        mailbox.unlock()
    }

    override public func finish(context: RunContext) throws {
        guard thread != nil else { return }
        mailbox.lock()
        quitting = true
        mailbox.signal()
        mailbox.unlock()
        exited.wait()
        thread = nil
    }
}

extension DisplaySink {
    /// The options of the `display` node type.
    public enum OptionSpecs {
        public static let title = NodeOption<String?>.text("title", required: false, "window title (default: FrameGraph: PIPELINE)")
        public static let optional = NodeOption.flag("optional", default: false,
                                                     "without a display (or when the window cannot open) warn and go on instead of failing (--preview)")
        public static let all = [title.spec, optional.spec]
    }
}
