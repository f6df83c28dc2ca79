import Glibc

/// The scheduling priority of the calling thread (Linux keeps a nice value per thread).
///
/// A live run gives its network workers a higher nice value than the threads of the output path
/// (sources, composite, output clock and encoder): when the machine has too little CPU for all of
/// them, the kernel takes the time from the network first, so it is admitted less often (its
/// results are reused, counted as dropped-busy) before the video misses ticks.
enum ThreadPriority {
    /// Sets the calling thread's nice value to `nice` (0 … 19; raising it needs no privilege).
    /// Returns whether the kernel accepted it.
    @discardableResult
    static func lowerCurrent(to nice: Int32) -> Bool {
        // `who` 0 with PRIO_PROCESS is the calling thread on Linux (nice values are per thread).
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, max(0, min(19, nice))) == 0
    }

    /// The calling thread's nice value.
    static var current: Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }
}
