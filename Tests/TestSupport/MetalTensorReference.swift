import Foundation

/// The tools venv's Python and the MetalTensor reference scripts.
public enum MetalTensorReference {
    public static let python = TestEnvironment.root.appendingPathComponent(".venv-tools/bin/python").path
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: python) }
    public static let executor = TestEnvironment.root.appendingPathComponent("tools/metaltensor/mt_reference.py").path
    public static let demos = TestEnvironment.root.appendingPathComponent("tools/metaltensor/mt_demos.py").path

    /// Runs the numpy reference executor on `input` (raw float32 HWC); every layer to `folder`.
    public static func run(_ plist: String, input: String, into folder: URL, precision: String = "fp32", weights: String? = nil,
                    map: String? = nil) throws -> CommandResult {
        var arguments = [executor, plist, "--input-f32", input, "--output-dir", folder.path, "--all-layers", "--precision", precision]
        if let weights { arguments += ["--weights-bin", weights] }
        if let map { arguments += ["--map", map] }
        return try runCommand(python, arguments, timeout: 600)
    }
}

/// Raw little-endian float32 values of a file.
public func readFloats(_ path: String) throws -> [Float] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.withUnsafeBytes { raw in (0..<(data.count / 4)).map { raw.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self) } }
}

public func writeFloats(_ values: [Float], to path: String) throws {
    try values.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
}
