/// Reads the pipeline description format (see ``PipelineDocument``), reporting the first syntax error
/// with its line and column.
public enum PipelineParser {
    /// Parses `text`; `file` is used in error messages.
    /// Lines may end in LF or CRLF; a UTF-8 byte-order mark at the start is ignored.
    public static func parse(_ text: String, file: String) throws -> PipelineDocument {
        var document = PipelineDocument(file: file)
        var names: [String: PipelineDocument.Location] = [:]
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        // Split on scalars: in Swift "\r\n" is one Character, so a Character split would miss CRLF.
        let lines = scalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, scalarLine) in lines.enumerated() {
            let lineNumber = index + 1
            var line = String(String.UnicodeScalarView(scalarLine))
            if line.unicodeScalars.last == "\r" { line = String(String.UnicodeScalarView(line.unicodeScalars.dropLast())) }
            let tokens = try tokenize(line, line: lineNumber, file: file)
            guard let first = tokens.first else { continue }
            func fail(_ token: Token, _ message: String) -> PipelineError {
                PipelineError(file: file, line: lineNumber, column: token.column, message: message)
            }
            if tokens.count > 1, tokens[1].kind == .equals {
                // Declaration.
                guard first.kind == .word, isIdentifier(first.text) else {
                    throw fail(first, "a node name must start with a letter and use letters, digits, '_' or '-', got '\(first.text)'")
                }
                if let previous = names[first.text] {
                    throw fail(first, "node '\(first.text)' is already declared on line \(previous.line)")
                }
                guard tokens.count > 2, tokens[2].kind == .word else {
                    throw fail(tokens[1], "expected a node type after '=' (run 'framegraph nodes' for the list)")
                }
                var options: [PipelineDocument.Option] = []
                var i = 3
                while i < tokens.count {
                    let key = tokens[i]
                    guard key.kind == .word, isIdentifier(key.text) else {
                        throw fail(key, "expected an option name, got '\(key.text)'")
                    }
                    guard i + 1 < tokens.count, tokens[i + 1].kind == .equals else {
                        throw fail(key, "option '\(key.text)' needs a value: write \(key.text)=VALUE")
                    }
                    guard i + 2 < tokens.count, tokens[i + 2].kind == .word || tokens[i + 2].kind == .string else {
                        throw fail(tokens[i + 1], "option '\(key.text)' needs a value after '='")
                    }
                    if options.contains(where: { $0.key == key.text }) {
                        throw fail(key, "option '\(key.text)' is given twice")
                    }
                    options.append(.init(key: key.text, value: tokens[i + 2].text,
                                         location: .init(line: lineNumber, column: key.column),
                                         valueLocation: .init(line: lineNumber, column: tokens[i + 2].column), origin: nil))
                    i += 3
                }
                let location = PipelineDocument.Location(line: lineNumber, column: first.column)
                names[first.text] = location
                document.declarations.append(.init(name: first.text, type: tokens[2].text, options: options, location: location,
                                                   typeLocation: .init(line: lineNumber, column: tokens[2].column)))
            } else if tokens.contains(where: { $0.kind == .arrow }) {
                // Connection chain: a -> b -> c.port
                var endpoints: [PipelineDocument.Endpoint] = []
                var expectEndpoint = true
                for token in tokens {
                    if expectEndpoint {
                        guard token.kind == .word else { throw fail(token, "expected a node name, got '\(token.text)'") }
                        let parts = token.text.split(separator: ".", maxSplits: 1).map(String.init)
                        guard let node = parts.first, isIdentifier(node) else {
                            throw fail(token, "expected a node name, got '\(token.text)'")
                        }
                        endpoints.append(.init(node: node, port: parts.count > 1 ? parts[1] : nil,
                                               location: .init(line: lineNumber, column: token.column)))
                    } else if token.kind != .arrow {
                        throw fail(token, "expected '->' between node names, got '\(token.text)'")
                    }
                    expectEndpoint.toggle()
                }
                if expectEndpoint, let last = tokens.last {
                    throw fail(last, "a connection cannot end with '->'")
                }
                for (a, b) in zip(endpoints, endpoints.dropFirst()) {
                    document.connections.append(.init(from: a, to: b))
                }
            } else {
                throw fail(first, "expected a declaration (name = type key=value …) or a connection (a -> b), got '\(first.text)'")
            }
        }
        return document
    }

    struct Token {
        enum Kind { case word, string, equals, arrow }
        var kind: Kind
        var text: String
        var column: Int
    }

    static func tokenize(_ line: String, line lineNumber: Int, file: String) throws -> [Token] {
        var tokens: [Token] = []
        let chars = Array(line)
        if let nul = chars.firstIndex(of: "\0") {
            throw PipelineError(file: file, line: lineNumber, column: nul + 1, message: "a NUL byte: pipeline files are text")
        }
        var i = 0
        while i < chars.count {
            let c = chars[i]
            let column = i + 1
            if c == " " || c == "\t" || c == "\r" {
                i += 1
            } else if c == "#" {
                break
            } else if c == "=" {
                tokens.append(Token(kind: .equals, text: "=", column: column))
                i += 1
            } else if c == "-" && i + 1 < chars.count && chars[i + 1] == ">" {
                tokens.append(Token(kind: .arrow, text: "->", column: column))
                i += 2
            } else if c == "\"" {
                var text = ""
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == "\\" && i + 1 < chars.count {
                        text.append(chars[i + 1])
                        i += 2
                    } else if chars[i] == "\"" {
                        closed = true
                        i += 1
                        break
                    } else {
                        text.append(chars[i])
                        i += 1
                    }
                }
                guard closed else {
                    throw PipelineError(file: file, line: lineNumber, column: column, message: "unterminated string (missing closing '\"')")
                }
                tokens.append(Token(kind: .string, text: text, column: column))
            } else {
                var text = ""
                // A '#' inside a word is part of it (`model=face_landmarker.task#face_detector`); one
                // that starts a token starts a comment.
                while i < chars.count, !" \t\r=\"".contains(chars[i]),
                      !(chars[i] == "-" && i + 1 < chars.count && chars[i + 1] == ">") {
                    text.append(chars[i])
                    i += 1
                }
                tokens.append(Token(kind: .word, text: text, column: column))
            }
        }
        return tokens
    }

    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.first, first.isLetter || first == "_" else { return false }
        return s.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
    }
}
