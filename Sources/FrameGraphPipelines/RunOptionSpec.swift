import Foundation

/// One option of a run, written once: its command-line name, the value it takes (with range,
/// choices and default) and its help. The CLI's parser, `framegraph run --help`, the man page and
/// the completions read it (as a `CommandOption`), and so does the C library's open request
/// (`fg_run_options`, Python's `fg.run` keywords: the name with `_` for `-`). The table is
/// ``all``.
///
/// ```swift
/// RunOptionSpec.all.first { $0.name == "fps" }?.value   // .number(0.1...1000)
/// RunOptionSpec.fps.key                                 // "fps"; serve-token-file's is "serve_token_file"
/// ```
public struct RunOptionSpec: Sendable {
    /// What follows the option on the command line.
    public enum Value: Sendable, Equatable {
        /// Nothing: a switch (`--loop`; `--loop=false` too). A program gives true or false.
        case none
        /// Free text, shown as `metavar` (FILE, PATH, NODE.KEY=VALUE).
        case text(String)
        /// A number within the range.
        case number(ClosedRange<Double>)
        /// An integer within the range.
        case integer(ClosedRange<Int>)
        /// One of these words.
        case choice([String])
    }

    /// The command-line name, without `--` (`serve-token-file`).
    public let name: String
    public let value: Value
    /// The default as people read it ("30", "auto"); nil when there is none.
    public let defaultText: String?
    public let help: String
    /// A one-letter alias (`-o` for `--output`).
    public let short: Character?
    /// May be given more than once (`--set`, `--input`); a program gives a list.
    public let repeatable: Bool
    /// Whether a program (the C library, Python) may give it; false for the command line's own
    /// (`--quiet`: the progress line; `-e`: the pipeline as text).
    public let forPrograms: Bool

    public init(_ name: String, _ value: Value, default defaultText: String? = nil, _ help: String, short: Character? = nil,
                repeatable: Bool = false, forPrograms: Bool = true) {
        self.name = name
        self.value = value
        self.defaultText = defaultText
        self.help = help
        self.short = short
        self.repeatable = repeatable
        self.forPrograms = forPrograms
    }

    /// A switch (no value).
    public init(_ name: String, _ help: String, short: Character? = nil, forPrograms: Bool = true) {
        self.init(name, .none, default: nil, help, short: short, forPrograms: forPrograms)
    }

    /// The name as a program's keyword: `-` becomes `_` (`serve_token_file`).
    public var key: String { Self.key(forName: name) }

    /// A command-line name as a program's keyword: `-` becomes `_`.
    public static func key(forName name: String) -> String { name.replacingOccurrences(of: "-", with: "_") }
}
