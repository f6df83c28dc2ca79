import CAVFormat
import CAVUtil
import Foundation
import Synchronization

/// Bounds every blocking call FFmpeg makes on a network stream: its interrupt callback stops the call
/// when the current deadline passed, when the run asks to stop, or when more than ``byteBudget``
/// bytes arrived since the last packet (a server claiming a 10 GB frame, an endless header).
///
/// The reader arms a deadline before each call (open, stream info, read) with ``arm(seconds:)``;
/// FFmpeg polls the callback while it waits, so no call outlives its deadline by more than a poll.
final class StreamInterrupt: @unchecked Sendable {
    /// Why the last call was stopped.
    enum Reason: Sendable, Equatable {
        case none, timeout, stop, tooManyBytes
    }

    private let deadline = Atomic<Double>(.infinity)
    private let reasonCode = Atomic<Int>(0)
    /// Most bytes accepted between two packets.
    let byteBudget: Int64
    private let shouldStop: @Sendable () -> Bool
    /// The demuxer whose input's byte count is watched (set once it exists; read on the reading thread).
    nonisolated(unsafe) var format: UnsafeMutablePointer<AVFormatContext>?
    nonisolated(unsafe) private var bytesAtLastPacket: Int64 = 0

    init(byteBudget: Int64, shouldStop: @escaping @Sendable () -> Bool) {
        self.byteBudget = byteBudget
        self.shouldStop = shouldStop
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Lets the next blocking call run for at most `seconds`.
    func arm(seconds: Double) {
        reasonCode.store(0, ordering: .relaxed)
        deadline.store(Self.now() + seconds, ordering: .relaxed)
    }

    /// Notes that a packet arrived: the byte budget counts from here.
    func packetArrived() {
        bytesAtLastPacket = format?.pointee.pb?.pointee.bytes_read ?? 0
    }

    /// Why the last call was stopped (``Reason/none`` when it was not).
    var reason: Reason {
        switch reasonCode.load(ordering: .relaxed) {
        case 1: return .timeout
        case 2: return .stop
        case 3: return .tooManyBytes
        default: return .none
        }
    }

    /// The callback's answer: nonzero stops the call.
    fileprivate func poll() -> Int32 {
        if shouldStop() { reasonCode.store(2, ordering: .relaxed); return 1 }
        if Self.now() > deadline.load(ordering: .relaxed) { reasonCode.store(1, ordering: .relaxed); return 1 }
        if let read = format?.pointee.pb?.pointee.bytes_read, read - bytesAtLastPacket > byteBudget {
            reasonCode.store(3, ordering: .relaxed)
            return 1
        }
        return 0
    }

    /// The `AVIOInterruptCB` for a context; `self` must outlive the context (the reader holds both).
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<StreamInterrupt>.fromOpaque(opaque).takeUnretainedValue().poll()
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
