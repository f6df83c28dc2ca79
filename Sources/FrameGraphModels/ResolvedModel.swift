import ModelFormats

/// A model reference resolved by the ``ModelService``: the file importers read, and where it came
/// from (for the log and the run's stats, `modelSource`).
public struct ResolvedModel: Sendable, Equatable {
    /// What importers load: a file, or `memory:N/NAME` for an archive's or a collection's files.
    public var path: String
    /// The file's format, from its content.
    public var format: ModelFormat
    /// `collection FlowerModels/FlowerClassifier …, deployment spring (sequence 3, rule 1 …)`,
    /// `fallback models/flowers.tflite (…why…)`, `archive …`, or the file.
    public var source: String
    /// Set for collection references: the collection, entry and the active deployment used.
    public var collection: String?
    public var entry: String?
    public var deployment: String?
    public var sequence: Int?
    /// Whether the reference could not be had and the fallback was used instead.
    public var usedFallback: Bool
    /// The in-memory folder to release when the model is no longer used (``ModelService/release(_:)``).
    public var memoryFolder: String?

    public init(path: String, format: ModelFormat, source: String, collection: String? = nil, entry: String? = nil, deployment: String? = nil,
                sequence: Int? = nil, usedFallback: Bool = false, memoryFolder: String? = nil) {
        self.path = path
        self.format = format
        self.source = source
        self.collection = collection
        self.entry = entry
        self.deployment = deployment
        self.sequence = sequence
        self.usedFallback = usedFallback
        self.memoryFolder = memoryFolder
    }
}
