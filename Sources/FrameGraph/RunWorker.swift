/// A worker thread the runner starts, waits for and stops: a node's own ``Worker`` or a
/// ``SharedWorker`` serving a ``WorkerGroup``.
protocol RunWorker: AnyObject, Sendable {
    var lane: Lane { get }
    /// Starts the thread.
    func start()
    /// Whether no job is waiting or in flight.
    var isIdle: Bool { get }
    /// Blocks until no job is waiting or in flight (or the run gave up on it).
    func waitUntilIdle()
    /// Stops waiting for the job in flight (see ``Worker/abandon()``).
    func abandon()
    /// Lets the thread finish once idle, and waits for it.
    func shutdown()
}

extension Worker: RunWorker {}
