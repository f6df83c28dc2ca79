import Foundation

/// A model file format's importer into the graph IR. A format implements ``load(bytes:fileName:)``;
/// reading from a path or from `Data` comes with it.
public protocol ModelImporter {
    /// Imports a model from its bytes; `fileName` names it in error messages.
    static func load(bytes: [UInt8], fileName: String) throws(ModelError) -> NeuralGraph
}

extension ModelImporter {
    /// Loads the model at `path`. Errors reading the file are passed on as they are; everything about
    /// its content is a ``ModelError``.
    public static func load(path: String) throws -> NeuralGraph {
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        return try load(bytes: [UInt8](data), fileName: (path as NSString).lastPathComponent)
    }

    /// Loads a model from `data`; `fileName` names it in error messages.
    public static func load(data: Data, fileName: String) throws(ModelError) -> NeuralGraph {
        try load(bytes: [UInt8](data), fileName: fileName)
    }
}
