import Foundation
import ModelFormats

/// Where a model named by name is looked for, in order, and why each place is on the list.
///
/// The standard order (docs/MODELS.md, "Finding a model"): the pipeline file's folder, the current
/// folder, each folder of `$FRAMEGRAPH_MODELS` (`:`-separated), the installed data folder
/// (`PREFIX/share/framegraph/models` beside an installed `PREFIX/bin/framegraph`), and the checkout's
/// `models/` and `models/cache` (beside a binary built in a checkout). In each folder a name N is
/// `N.tflite`, `N.onnx`, `N.plist`, `N.task` or `N.fgarchive`, or the same inside a folder `N/`
/// (FrameGraph's own models: `models/colorizer/colorizer.onnx`).
public struct ModelSearchPath: Sendable, Equatable {
    /// One folder searched, and why it is searched ("the pipeline's folder").
    public struct Place: Sendable, Equatable, CustomStringConvertible {
        public var folder: String
        public var why: String
        public init(folder: String, why: String) {
            self.folder = folder
            self.why = why
        }
        public var description: String { "\(folder) (\(why))" }
    }

    public var places: [Place]
    /// Folders a relative path (`models/x.onnx`, `../shared/…`) is also tried below, after the
    /// current folder: the pipeline's folder and the folder above it (its project).
    public var relativeRoots: [String]

    public init(places: [Place], relativeRoots: [String] = []) {
        self.places = places
        self.relativeRoots = relativeRoots
    }

    /// The environment variable that adds folders.
    public static let variable = "FRAMEGRAPH_MODELS"

    /// File name extensions a name is tried with, in order.
    public static let extensions = ModelFormat.allCases.flatMap(\.usualExtensions)

    /// The standard search path for a pipeline at `pipelineFile` (nil: none, e.g. `framegraph label`).
    /// `environment` and `currentFolder` are read once by the caller; `dataFolders` are where
    /// installed or checkout data live (``dataFolders(executable:)``).
    public static func standard(pipelineFile: String?, environment: [String: String],
                                currentFolder: String = FileManager.default.currentDirectoryPath,
                                dataFolders: [Place] = dataFolders()) -> ModelSearchPath {
        var places: [Place] = []
        var roots: [String] = []
        if let pipelineFile {
            let folder = URL(fileURLWithPath: pipelineFile, relativeTo: URL(fileURLWithPath: currentFolder, isDirectory: true))
                .deletingLastPathComponent().standardizedFileURL.path
            places.append(Place(folder: folder, why: "the pipeline's folder"))
            roots = [folder, URL(fileURLWithPath: folder).deletingLastPathComponent().path]
        }
        places.append(Place(folder: currentFolder, why: "the current folder"))
        let extra = (environment[variable] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        places += extra.map { Place(folder: $0, why: "$\(variable)") }
        places += dataFolders
        var seen = Set<String>()
        places = places.filter { seen.insert($0.folder).inserted }
        return ModelSearchPath(places: places, relativeRoots: roots)
    }

    /// The data folders of the running binary: `PREFIX/share/framegraph/models` when it is installed
    /// as `PREFIX/bin/framegraph` (or `PREFIX/lib/libFrameGraphC.so`, the library Python loads), and `CHECKOUT/models`, `CHECKOUT/models/cache` when it was built in
    /// a checkout (a folder above it holds `Package.swift` and `models/`).
    public static func dataFolders(executable: String? = Bundle.main.executablePath) -> [Place] {
        guard let executable else { return [] }
        let binary = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        var places: [Place] = []
        let installed = binary.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/framegraph")
        if ["bin", "lib"].contains(binary.deletingLastPathComponent().lastPathComponent), FileManager.default.fileExists(atPath: installed.path) {
            places.append(Place(folder: installed.appendingPathComponent("models").path, why: "installed data"))
        }
        if let checkout = InstalledData.checkout(above: binary) {
            places.append(Place(folder: checkout + "/models", why: "this checkout"))
            places.append(Place(folder: checkout + "/models/cache", why: "this checkout's fetched models"))
        }
        return places
    }

    /// The files a bare name `name` may be in each place, in search order: `name` itself when it
    /// has an extension (`face_mesh_connections.json`), else `name` with each model extension.
    public func candidates(for name: String) -> [String] {
        places.flatMap { place -> [String] in
            let base = URL(fileURLWithPath: place.folder)
            if name.contains(".") { return [base.appendingPathComponent(name).path] }
            return Self.extensions.map { base.appendingPathComponent("\(name).\($0)").path }
                + Self.extensions.map { base.appendingPathComponent(name).appendingPathComponent("\(name).\($0)").path }
        }
    }

    /// The places as an error lists them, with the hint of how to add one.
    public var placesText: [String] { places.map(\.description) }
}

/// Where the running binary's data is: an install prefix's `share/framegraph`, or the checkout it
/// was built in.
public enum InstalledData {
    /// The checkout above `binary`: the nearest folder (at most six levels up) with `Package.swift`
    /// and a `models` folder.
    public static func checkout(above binary: URL) -> String? {
        var folder = binary.deletingLastPathComponent()
        for _ in 0..<6 {
            let fm = FileManager.default
            if fm.fileExists(atPath: folder.appendingPathComponent("Package.swift").path),
               fm.fileExists(atPath: folder.appendingPathComponent("models").path) {
                return folder.path
            }
            let up = folder.deletingLastPathComponent()
            if up.path == folder.path { break }
            folder = up
        }
        return nil
    }

    /// The data folder of the running binary: `PREFIX/share/framegraph` when installed, else its
    /// checkout; nil when neither.
    public static func folder(executable: String? = Bundle.main.executablePath) -> String? {
        guard let executable else { return nil }
        let binary = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        let installed = binary.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/framegraph")
        if ["bin", "lib"].contains(binary.deletingLastPathComponent().lastPathComponent), FileManager.default.fileExists(atPath: installed.path) {
            return installed.path
        }
        return checkout(above: binary)
    }
}
