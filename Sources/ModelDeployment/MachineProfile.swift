import Foundation

/// What targeting rules look at: CPU architecture and features, cores, memory, OS, and the
/// `device-class` label the machine declares in its config.
public struct MachineProfile: Sendable, Equatable, Codable {
    public var arch: String
    public var features: Set<String>
    public var cores: Int
    public var memoryMiB: Int
    public var os: String
    public var deviceClass: String?

    public init(arch: String, features: Set<String>, cores: Int, memoryMiB: Int, os: String = "linux", deviceClass: String? = nil) {
        self.arch = arch
        self.features = features
        self.cores = cores
        self.memoryMiB = memoryMiB
        self.os = os
        self.deviceClass = deviceClass
    }

    /// This machine, as the kernel reports it (`uname`, `/proc/cpuinfo`'s flags — on ARM its
    /// "Features", where `asimd` also counts as `neon`).
    public static func current(deviceClass: String?) -> MachineProfile {
        var name = utsname()
        uname(&name)
        let arch = withUnsafeBytes(of: &name.machine) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
        var features = Set<String>()
        if let data = FileManager.default.contents(atPath: "/proc/cpuinfo") {
            for line in String(decoding: data.prefix(1 << 20), as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let key = parts[0].trimmingCharacters(in: .whitespaces)
                guard key == "flags" || key == "Features" else { continue }
                features.formUnion(parts[1].split(separator: " ").map(String.init))
                break
            }
        }
        if features.contains("asimd") { features.insert("neon") }
        return MachineProfile(arch: arch, features: features, cores: ProcessInfo.processInfo.activeProcessorCount,
                              memoryMiB: Int(ProcessInfo.processInfo.physicalMemory >> 20), os: "linux", deviceClass: deviceClass)
    }

    /// One line for logs: `x86_64, 2 cores, 7940 MiB, linux, device-class kiosk, avx2 avx512f …`.
    public var summary: String {
        let notable = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vnni", "avx512_bf16", "amx_tile", "neon", "asimd", "sve"]
        return "\(arch), \(cores) cores, \(memoryMiB) MiB, \(os), device-class \(deviceClass ?? "(none)"), features "
            + notable.filter(features.contains).joined(separator: " ")
    }
}
