import Foundation
import FrameGraph
import FrameGraphNetwork
import FrameGraphPipelines
import NeuralGraph

// The C ABI of libFrameGraphC (python/framegraph/_library.py loads it with ctypes and declares
// each function; docs/PYTHON.md lists them). The only file with C pointers: handles are retained Swift objects, strings are
// malloc'd copies owned by the object that returned them (a run, an item) or, for errors, by the
// calling thread until its next failing call.
//
// Status codes: 0 ok, 1 error (fg_last_error has the one line), 2 end of the run, 3 timeout,
// 4 invalid argument (a NULL handle).

private let ok: Int32 = 0, failed: Int32 = 1, end: Int32 = 2, timedOut: Int32 = 3, invalid: Int32 = 4

/// The calling thread's last error: a one-line message and its kind.
private final class LastError: @unchecked Sendable {
    var message: UnsafeMutablePointer<CChar>?
    var kind: UnsafeMutablePointer<CChar>?
    deinit {
        free(message)
        free(kind)
    }

    static var current: LastError {
        let key = "framegraph.last-error"
        if let existing = Thread.current.threadDictionary[key] as? LastError { return existing }
        let made = LastError()
        Thread.current.threadDictionary[key] = made
        return made
    }

    static func set(_ message: String, kind: String) -> Int32 {
        let e = current
        free(e.message)
        free(e.kind)
        e.message = strdup(message)
        e.kind = strdup(kind)
        return failed
    }

    /// `error` as a message and a kind: `pipeline` (the file, `--set`, a node's options), `model`,
    /// `request` (the JSON asked for), `run` (anything else: files, the input).
    static func set(_ error: any Error) -> Int32 {
        let kind: String
        switch error {
        case is ModelError, is NetworkNodeError: kind = "model"
        case is PipelineError, is GraphError: kind = "pipeline"
        case is RequestError: kind = "request"
        default: kind = "run"
        }
        return set(describe(error), kind: kind)
    }
}

/// A run and the strings it handed out.
private final class RunHandle: @unchecked Sendable {
    let session: RunSession
    var stats: UnsafeMutablePointer<CChar>?
    var failure: UnsafeMutablePointer<CChar>?
    init(_ session: RunSession) { self.session = session }
    deinit {
        free(stats)
        free(failure)
    }
}

/// An item, its results text and its stream's name.
private final class ItemHandle: @unchecked Sendable {
    let item: RunItem
    let results: UnsafeMutablePointer<CChar>?
    let stream: UnsafeMutablePointer<CChar>?
    init(_ item: RunItem) {
        self.item = item
        results = strdup(item.resultsLines)
        stream = item.stream.flatMap { strdup($0) }
    }
    deinit {
        free(results)
        free(stream)
    }
}

private func run(_ pointer: UnsafeMutableRawPointer?) -> RunHandle? {
    pointer.map { Unmanaged<RunHandle>.fromOpaque($0).takeUnretainedValue() }
}

private func item(_ pointer: UnsafeMutableRawPointer?) -> ItemHandle? {
    pointer.map { Unmanaged<ItemHandle>.fromOpaque($0).takeUnretainedValue() }
}

/// This library's file (its checkout or install prefix holds the shipped pipelines and models): the
/// mapping of /proc/self/maps that holds one of its functions.
private func libraryPath() -> String? {
    let symbol: @convention(c) () -> Int32 = fg_abi_version
    let address = UInt(bitPattern: unsafeBitCast(symbol, to: UnsafeRawPointer.self))
    // Read to the end (a /proc file says its size is 0, so whole-file readers get nothing).
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps"), let data = try? handle.readToEnd() else { return nil }
    try? handle.close()
    let maps = String(decoding: data, as: UTF8.self)
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6 else { continue }
        let path = fields[5].trimmingCharacters(in: .whitespaces)
        guard path.hasPrefix("/") else { continue }
        let range = fields[0].split(separator: "-")
        guard range.count == 2, let low = UInt(range[0], radix: 16), let high = UInt(range[1], radix: 16), (low..<high).contains(address) else { continue }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
    return nil
}

/// The version of this ABI (2: fg_label, fg_string_free, fg_push, fg_push_end; 3: fg_run_options,
/// the request's keys checked against it, frames converted to RGB when fg_item_frame asks; 4:
/// fg_item_stream, several inputs, the run options from the CLI's table): a loader checks it before
/// anything else.
@_cdecl("fg_abi_version")
public func fg_abi_version() -> Int32 { 4 }

/// The options an open request may hold, as JSON (`[{"key", "flag", "kind", "choices"?, "min"?,
/// "max"?, "doc"}]`; `flag` is the `framegraph run` option it stands for, or null): free it with
/// fg_string_free.
@_cdecl("fg_run_options")
public func fg_run_options() -> UnsafeMutablePointer<CChar>? {
    strdup(OpenRequest.optionsJSON())
}

/// The calling thread's last error message (one line; empty when none). Valid until its next error.
@_cdecl("fg_last_error")
public func fg_last_error() -> UnsafePointer<CChar>? {
    UnsafePointer(LastError.current.message)
}

/// The kind of the calling thread's last error: pipeline, model, request or run.
@_cdecl("fg_last_error_kind")
public func fg_last_error_kind() -> UnsafePointer<CChar>? {
    UnsafePointer(LastError.current.kind)
}

/// Opens a run from a JSON request (the pipeline and the command line's changes; see OpenRequest):
/// builds it, opens its input, loads its models and starts it on a thread of its own. 0 and the run
/// in `out`, or 1 with the error.
@_cdecl("fg_open")
public func fg_open(_ request: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    guard let request, let out else {
        _ = LastError.set("fg_open: a NULL argument", kind: "request")
        return invalid
    }
    out.pointee = nil
    do {
        let session = try RunSession(try OpenRequest.decode(String(cString: request)), library: libraryPath())
        out.pointee = Unmanaged.passRetained(RunHandle(session)).toOpaque()
        return ok
    } catch {
        return LastError.set(error)
    }
}

/// The next item, waiting at most `timeout` seconds: 0 and the item in `out` (free it with
/// fg_item_free), 2 at the end of the run, 3 when none came in time, 1 when the run failed (after
/// the items it made).
@_cdecl("fg_next")
public func fg_next(_ handle: UnsafeMutableRawPointer?, _ timeout: Double, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    guard let r = run(handle), let out else { return invalid }
    out.pointee = nil
    switch r.session.queue.next(timeout: timeout) {
    case .item(let i):
        out.pointee = Unmanaged.passRetained(ItemHandle(i)).toOpaque()
        return ok
    case .timeout:
        return timedOut
    case .end:
        // The run's outcome is set before its items end (a lingering server may still be up).
        if let failure = r.session.failure { return LastError.set(failure, kind: "run") }
        return end
    }
}

/// Asks the run to stop (sources stop, work in flight finishes, outputs are finalized); returns
/// at once. Items already made may still be read.
@_cdecl("fg_stop")
public func fg_stop(_ handle: UnsafeMutableRawPointer?) -> Int32 {
    guard let r = run(handle) else { return invalid }
    r.session.stop()
    return ok
}

/// Waits up to `timeout` seconds for the run to end: 0 ended, 3 still running, 1 ended with a failure.
@_cdecl("fg_wait")
public func fg_wait(_ handle: UnsafeMutableRawPointer?, _ timeout: Double) -> Int32 {
    guard let r = run(handle) else { return invalid }
    guard r.session.wait(timeout: timeout) else { return timedOut }
    if let failure = r.session.failure { return LastError.set(failure, kind: "run") }
    return ok
}

/// The run's statistics as JSON (final once it has ended, else so far), or NULL with the error.
/// Valid until the next call of fg_stats on this run, or fg_close.
@_cdecl("fg_stats")
public func fg_stats(_ handle: UnsafeMutableRawPointer?) -> UnsafePointer<CChar>? {
    guard let r = run(handle) else { return nil }
    do {
        let json = try r.session.statsJSON()
        free(r.stats)
        r.stats = strdup(json)
        return UnsafePointer(r.stats)
    } catch {
        _ = LastError.set(error)
        return nil
    }
}

/// Stops the run, waits for it to end (its outputs finalized) and frees it. Items already taken
/// stay valid until freed.
@_cdecl("fg_close")
public func fg_close(_ handle: UnsafeMutableRawPointer?) {
    guard let handle, let r = run(handle) else { return }
    if !r.session.hasEnded { r.session.stop() }
    _ = r.session.wait(timeout: .infinity)
    Unmanaged<RunHandle>.fromOpaque(handle).release()
}

/// The item's frame index (its position in the source's output, from 0).
@_cdecl("fg_item_index")
public func fg_item_index(_ handle: UnsafeMutableRawPointer?) -> Int64 {
    item(handle).map { Int64($0.item.index) } ?? -1
}

/// The item's media time in seconds.
@_cdecl("fg_item_time")
public func fg_item_time(_ handle: UnsafeMutableRawPointer?) -> Double {
    item(handle)?.item.time ?? 0
}

/// The name of the stream the item belongs to in a run with several inputs (valid until
/// fg_item_free); NULL in a one-stream run.
@_cdecl("fg_item_stream")
public func fg_item_stream(_ handle: UnsafeMutableRawPointer?) -> UnsafePointer<CChar>? {
    item(handle)?.stream.map { UnsafePointer($0) }
}

/// The item's frame as packed RGB rows: 0 with the first byte, width, height and the bytes from one
/// row to the next; 2 when the item has no frame (a run opened with frames false); 1 when it cannot
/// be converted. The frame is converted to RGB at the first call (the request's `rgb`: fast or
/// exact), not before: an item whose pixels nobody asks for costs no conversion. The pixels are a
/// pooled buffer of the engine (no copy): read them only, and only until fg_item_free.
@_cdecl("fg_item_frame")
public func fg_item_frame(_ handle: UnsafeMutableRawPointer?, _ pixels: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                          _ width: UnsafeMutablePointer<Int32>?, _ height: UnsafeMutablePointer<Int32>?,
                          _ stride: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let i = item(handle), let pixels, let width, let height, let stride else { return invalid }
    let rgb: Frame?
    do {
        rgb = try i.item.rgb()
    } catch {
        return LastError.set(error)
    }
    guard let frame = rgb, frame.format == .rgb24 else { return end }
    pixels.pointee = UnsafePointer(frame.base(plane: 0).assumingMemoryBound(to: UInt8.self))
    width.pointee = Int32(frame.width)
    height.pointee = Int32(frame.height)
    stride.pointee = Int32(frame.planes[0].stride)
    return ok
}

/// The item's results as JSON Lines text (docs/RESULTS.md's schema; one line per producer). Valid
/// until fg_item_free.
@_cdecl("fg_item_results")
public func fg_item_results(_ handle: UnsafeMutableRawPointer?) -> UnsafePointer<CChar>? {
    item(handle).flatMap { UnsafePointer($0.results) }
}

/// Frees an item (its frame's buffer goes back to the pool).
@_cdecl("fg_item_free")
public func fg_item_free(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<ItemHandle>.fromOpaque(handle).release()
}

/// Labels a photo or a video as ML Kit's image labeler does (the JSON request in LabelRequest:
/// file, model, max_results, threshold, crop, threads, max_frames): 0 and the answer as JSON in
/// `out` (free it with fg_string_free), or 1 with the error.
@_cdecl("fg_label")
public func fg_label(_ request: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard let request, let out else {
        _ = LastError.set("fg_label: a NULL argument", kind: "request")
        return invalid
    }
    out.pointee = nil
    do {
        let answer = try LabelRequest.decode(String(cString: request)).run(library: libraryPath())
        out.pointee = strdup(answer)
        return ok
    } catch {
        return LastError.set(error)
    }
}

/// Frees a string this library handed over to the caller (fg_label's answer).
@_cdecl("fg_string_free")
public func fg_string_free(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

/// Pushes one packed-RGB picture (`width` × `height`, rows `stride` bytes apart) into a run opened
/// with a program source (copied before it returns). `time` in seconds, or a negative value for the
/// time since the first push. Offline it waits while earlier frames are still unread by the
/// pipeline; live it replaces one not yet taken. 0, or 1 with the error (a wrong size, the input
/// ended, a run without a program source).
@_cdecl("fg_push")
public func fg_push(_ handle: UnsafeMutableRawPointer?, _ pixels: UnsafePointer<UInt8>?, _ width: Int32, _ height: Int32,
                    _ stride: Int32, _ time: Double) -> Int32 {
    guard let r = run(handle), let pixels else { return invalid }
    guard let program = r.session.program else {
        return LastError.set("this run reads its own input: open it with source program to push frames", kind: "request")
    }
    do {
        try program.push(pixels, width: Int(width), height: Int(height), stride: Int(stride), time: time >= 0 ? time : nil)
        return ok
    } catch {
        return LastError.set(error)
    }
}

/// Ends a program source's input: the run ends once the frames pushed have gone through.
@_cdecl("fg_push_end")
public func fg_push_end(_ handle: UnsafeMutableRawPointer?) -> Int32 {
    guard let r = run(handle) else { return invalid }
    r.session.program?.end()
    return ok
}
