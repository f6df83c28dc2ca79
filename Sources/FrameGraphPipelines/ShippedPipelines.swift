import Foundation
import FrameGraphModels

/// Where a pipeline named on a command line (or by a program) is: a file, or the name of a shipped
/// pipeline (`face-detect` → `PREFIX/share/framegraph/pipelines/face-detect.fg`, or the checkout's
/// `pipelines/`). The CLI and the C library (Python) both use it.
///
/// ```swift
/// let path = try ShippedPipelines.find("face-detect")   // "…/pipelines/face-detect.fg"
/// ```
public enum ShippedPipelines {
    /// The pipeline file `given` names: itself when it exists (or holds a `/`); else, for a bare name,
    /// the shipped pipeline of that name. Throws one line naming the shipped ones. `executable` is
    /// the binary (or library) whose installed data or checkout holds the shipped pipelines.
    public static func find(_ given: String, executable: String? = Bundle.main.executablePath) throws -> String {
        var info = stat()
        if stat(given, &info) == 0 || given.contains("/") { return given }
        let name = given.hasSuffix(".fg") ? given : given + ".fg"
        var places: [String] = []
        if let data = InstalledData.folder(executable: executable) {
            let candidate = URL(fileURLWithPath: data).appendingPathComponent("pipelines").appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            places.append(candidate)
        }
        throw PipelineError(origin: "", message: "no pipeline file '\(given.prefix(80))'"
                            + (places.isEmpty ? "" : " (nor a shipped pipeline \(places.joined(separator: ", ")))")
                            + "; the shipped ones: \(names(executable: executable).joined(separator: ", "))")
    }

    /// The names of the shipped pipelines (installed or in the checkout).
    public static func names(executable: String? = Bundle.main.executablePath) -> [String] {
        guard let data = InstalledData.folder(executable: executable),
              let files = try? FileManager.default.contentsOfDirectory(atPath: data + "/pipelines") else { return [] }
        return files.filter { $0.hasSuffix(".fg") }.map { String($0.dropLast(3)) }.sorted()
    }
}
