import Foundation

/// The shared shape of FrameGraph's fuzz targets. Built with `-D FUZZING -sanitize=fuzzer,address`
/// (tools/fuzz/run.sh), a target's `main` hands its callback to libFuzzer's driver; built
/// normally (as by `swift build`), the same target is a replay tool: `fuzz-tflite FILE…` runs each
/// file once, so a crash found by the fuzzer is reproduced, and regression-tested, without libFuzzer.
public enum FuzzHarness {
    /// Runs `body` on the bytes of every file named on the command line (replay mode).
    public static func replay(_ body: ([UInt8]) -> Void) -> Int32 {
        let files = CommandLine.arguments.dropFirst()
        guard !files.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(CommandLine.arguments.first ?? "fuzz-target") FILE… (replays each input once)\n".utf8))
            return 2
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                return 2
            }
            body([UInt8](data))
            print("\(file): ok")
        }
        return 0
    }

    /// The bytes libFuzzer hands over.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// The fuzz target's `main`: under `-D FUZZING`, libFuzzer drives `body`; otherwise each file named
    /// on the command line is replayed through it once.
    public static func main(_ body: @escaping ([UInt8]) -> Void) -> Never {
        #if FUZZING
        target = body
        exit(runLibFuzzer { data, size in
            FuzzHarness.target?(FuzzHarness.bytes(data, size))
            return 0
        })
        #else
        exit(replay(body))
        #endif
    }

    /// The body libFuzzer's C callback calls (set once, before fuzzing starts, on one thread).
    nonisolated(unsafe) private static var target: (([UInt8]) -> Void)?

    #if FUZZING
    /// Runs libFuzzer on `callback` with this process's command line (libFuzzer's own options).
    public static func runLibFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
        var argc = CommandLine.argc
        var argv = Optional(CommandLine.unsafeArgv)
        return LLVMFuzzerRunDriver(&argc, &argv, callback)
    }
    #endif
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32
#endif
