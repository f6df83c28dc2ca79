import CXNNPACK

/// How one of FrameGraph's own kernels splits its work over the predictor's thread pool: `count`
/// parts, run on the pool when there are several, on the calling thread otherwise.
final class KernelParts {
    let count: Int
    private let threadpool: pthreadpool_t?
    private var body: (Int) -> Void = { _ in }

    init(count: Int, threadpool: pthreadpool_t?) {
        self.count = max(1, count)
        self.threadpool = self.count > 1 ? threadpool : nil
    }

    /// What part `i` does; set once by the kernel that owns these parts (which it holds unowned).
    func bind(_ body: @escaping (Int) -> Void) { self.body = body }

    func run() {
        guard let threadpool else {
            for part in 0..<count { body(part) }
            return
        }
        pthreadpool_parallelize_1d(threadpool, { context, part in
            guard let context else { return }
            Unmanaged<KernelParts>.fromOpaque(context).takeUnretainedValue().body(part)
        }, Unmanaged.passUnretained(self).toOpaque(), count, 0)
    }
}
