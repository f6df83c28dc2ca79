import Foundation

/// Runs `executable` with `arguments` and extra `environment` variables (added to this process's
/// environment), collecting its exit status and output. Output is read while it runs, so
/// `whileRunning` may take its time (sample memory, send SIGINT) without the child blocking on a
/// full pipe; it returns before the child is waited for.
public func runCommand(_ executable: String, _ arguments: [String], environment: [String: String],
                       timeout: Double = 120, whileRunning: ((Process) -> Void)? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = TestEnvironment.root
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = Locked(Data()), errData = Locked(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { outData.set(out.fileHandleForReading.readDataToEndOfFile()); group.leave() }
    group.enter()
    DispatchQueue.global().async { errData.set(err.fileHandleForReading.readDataToEndOfFile()); group.leave() }
    whileRunning?(process)
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning {
        process.terminate()
        usleep(200_000)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    process.waitUntilExit()
    group.wait()
    return CommandResult(status: process.terminationStatus,
                         stdout: String(decoding: outData.get(), as: UTF8.self),
                         stderr: String(decoding: errData.get(), as: UTF8.self))
}

/// Resident memory of process `pid` in bytes (VmRSS from /proc), or nil when it has exited.
public func residentBytes(of pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ").compactMap { Int($0) }.first
        return kb.map { $0 * 1024 }
    }
    return nil
}
