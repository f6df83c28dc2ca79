import Foundation

/// Resident memory of process `pid` in bytes (VmRSS from /proc), or nil when it has exited.
public func residentBytes(of pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ").compactMap { Int($0) }.first
        return kb.map { $0 * 1024 }
    }
    return nil
}
