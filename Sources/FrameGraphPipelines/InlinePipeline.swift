import FrameGraph

/// The one-line form of the pipeline language, for quick experiments as `gst-launch` users write
/// them (`framegraph run -e '…'`): chains of elements joined by `->`, chains separated by `;`.
/// An element is a node type with its options (`resize width=320 height=240`), named after its type
/// (`resize`, then `resize-2` …) unless it says `name=NAME`; or a reference to a named element, with
/// an input port (`bg.mask`). The result is an ordinary ``PipelineDocument``: the same checks and
/// errors as a file, with columns counted in the one line (file `-e`).
///
/// ```
/// file path=clip.mp4 name=src -> segment model=selfie_segmentation -> bg.mask; src -> background name=bg mode=blur -> encode path=out.mp4
/// ```
public enum InlinePipeline {
    /// The name errors give as the file.
    public static let fileName = "-e"

    public static func parse(_ text: String, catalog: NodeCatalog = .standard) throws -> PipelineDocument {
        let file = fileName
        var document = PipelineDocument(file: file)
        typealias Token = PipelineParser.Token
        // Tokens of the whole line; `;` ends a chain (outside quoted strings).
        var chains: [[Token]] = [[]]
        for token in try PipelineParser.tokenize(text.replacingOccurrences(of: "\n", with: " "), line: 1, file: file) {
            guard token.kind == .word, token.text.contains(";") else {
                chains[chains.count - 1].append(token)
                continue
            }
            // Split a word at its semicolons ("a;b", "x;", ";").
            var column = token.column
            let parts = token.text.split(separator: ";", omittingEmptySubsequences: false)
            for (k, part) in parts.enumerated() {
                if !part.isEmpty { chains[chains.count - 1].append(Token(kind: .word, text: String(part), column: column)) }
                column += part.count + 1
                if k < parts.count - 1 { chains.append([]) }
            }
        }
        func fail(_ column: Int, _ message: String) -> PipelineError {
            PipelineError(file: file, line: 1, column: column, message: message)
        }
        // Elements of every chain, split at the arrows.
        let elements: [[[Token]]] = try chains.filter { !$0.isEmpty }.map { chain in
            var out: [[Token]] = [[]]
            for t in chain {
                if t.kind == .arrow {
                    guard !(out.last ?? []).isEmpty else { throw fail(t.column, "expected an element before '->'") }
                    out.append([])
                } else {
                    out[out.count - 1].append(t)
                }
            }
            if let last = chain.last, out.last?.isEmpty == true { throw fail(last.column, "a chain cannot end with '->'") }
            return out
        }
        guard !elements.isEmpty else { throw fail(1, "the pipeline is empty: write TYPE key=value -> TYPE … (framegraph nodes lists the types)") }
        // Names given with name=… may be referred to before their element (a branch joining later).
        var given: Set<String> = []
        for chain in elements {
            for e in chain {
                if let i = e.firstIndex(where: { $0.kind == .word && $0.text == "name" }), i + 2 < e.count, e[i + 1].kind == .equals {
                    given.insert(e[i + 2].text)
                }
            }
        }
        var used: [String: Int] = [:]
        for chain in elements {
            var previous: PipelineDocument.Endpoint?
            for element in chain {
                guard let head = element.first, head.kind == .word else {
                    throw fail(element.first?.column ?? 1, "expected a node type or a name, got '\(element.first?.text ?? "")'")
                }
                let location = PipelineDocument.Location(line: 1, column: head.column)
                let reference = head.text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard !reference.contains(where: \.isEmpty) else {
                    throw fail(head.column, "expected a node type, a name or NAME.PORT, got '\(head.text)'")
                }
                let endpoint: PipelineDocument.Endpoint
                if element.count == 1, given.contains(reference[0]) || reference.count == 2 {
                    // A reference to a named element (and an input port).
                    endpoint = .init(node: reference[0], port: reference.count == 2 ? reference[1] : nil, location: location)
                } else {
                    let type = head.text
                    guard catalog.types[type] != nil else {
                        throw fail(head.column, "unknown node type '\(type)'\(didYouMean(type, catalog.names)) — known types: \(catalog.names.joined(separator: ", "))")
                    }
                    var options: [PipelineDocument.Option] = []
                    var name: String?
                    var i = 1
                    while i < element.count {
                        let key = element[i]
                        guard key.kind == .word, PipelineParser.isIdentifier(key.text) else { throw fail(key.column, "expected an option name, got '\(key.text)'") }
                        guard i + 2 < element.count, element[i + 1].kind == .equals, element[i + 2].kind == .word || element[i + 2].kind == .string else {
                            throw fail(key.column, "option '\(key.text)' needs a value: write \(key.text)=VALUE")
                        }
                        let value = element[i + 2]
                        if key.text == "name" {
                            guard PipelineParser.isIdentifier(value.text) else { throw fail(value.column, "a node name must start with a letter and use letters, digits, '_' or '-'") }
                            name = value.text
                        } else {
                            if options.contains(where: { $0.key == key.text }) { throw fail(key.column, "option '\(key.text)' is given twice") }
                            options.append(.init(key: key.text, value: value.text, location: .init(line: 1, column: key.column),
                                                 valueLocation: .init(line: 1, column: value.column), origin: nil))
                        }
                        i += 3
                    }
                    let finalName: String
                    if let name {
                        guard !document.declarations.contains(where: { $0.name == name }) else { throw fail(head.column, "node '\(name)' is already declared") }
                        finalName = name
                    } else {
                        var n = used[type, default: 0]
                        var candidate = type
                        repeat {
                            n += 1
                            candidate = n == 1 ? type : "\(type)-\(n)"
                        } while given.contains(candidate) || document.declarations.contains { $0.name == candidate }
                        used[type] = n
                        finalName = candidate
                    }
                    document.declarations.append(.init(name: finalName, type: type, options: options, location: location, typeLocation: location))
                    endpoint = .init(node: finalName, port: nil, location: location)
                }
                if let from = previous {
                    document.connections.append(.init(from: .init(node: from.node, port: nil, location: from.location), to: endpoint))
                }
                previous = endpoint
            }
        }
        return document
    }
}
