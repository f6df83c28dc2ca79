/// Anything that loads models (a network node, a face tracker, a MetalTensor node, those to come):
/// it says which models it needs and loads them through the ``ModelService`` it is given. The CLI
/// and the pipeline builder give every model user the run's service, so search paths, budgets and
/// hosted models apply to all of them alike, without anyone knowing their classes.
///
/// ```swift
/// for user in pipeline.nodes.compactMap({ $0.node as? any ModelUser }) { user.models = service }
/// ```
public protocol ModelUser: AnyObject {
    /// The user's name in messages (a node's name).
    var name: String { get }
    /// The models (and files that go with them) as written: names, paths, `collection:…`.
    var modelReferences: [String] { get }
    /// The service models load through; set before the graph is validated.
    var models: ModelService { get set }
}

/// A model user whose model can be replaced while it runs (a hosted collection's new deployment).
public protocol HotSwappableModelUser: ModelUser {
    /// Whether this user's model is the collection entry `collection`/`entry`.
    func uses(collection: String, entry: String) -> Bool
    /// Loads `model` now, off the running thread, and switches to it before the next frame; throws
    /// when it does not fit (another input or output shape).
    func stageSwap(to model: ResolvedModel) throws
}
