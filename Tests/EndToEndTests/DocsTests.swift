import Foundation
import Testing
import TestSupport

/// The documentation as a user reads it: every ```` ```sh runnable ```` block of README.md and
/// docs/*.md runs as written against the CLI built beside these tests (tools/run-doc-blocks.py; the
/// convention is in docs/CONTRIBUTING.md), and the pages people read first stay short.
@Suite(.serialized) struct DocsTests {
    @Test func everyRunnableDocBlockRunsAsWritten() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.cli), "build the CLI first: swift build --build-tests")
        let script = TestEnvironment.root.appendingPathComponent("tools/run-doc-blocks.py").path
        // The runner limits each block (120 s unless the block says otherwise); this limit is for the whole.
        let r = try runCommand("/usr/bin/env", ["python3", script], environment: ["FRAMEGRAPH_BIN": TestEnvironment.cli],
                               timeout: 1800)
        let output = "\(r.stdout)\n\(r.stderr)"
        #expect(r.status == 0, "tools/run-doc-blocks.py exited \(r.status):\n\(output)")
        // The summary line says how many ran: a docs change that lost the markers would pass silently otherwise
        // (blocks that need ../shared are skipped where it is absent, so they count here too).
        let summary = r.stdout.split(separator: "\n").last { $0.hasPrefix("run-doc-blocks: ") && $0.contains(" passed, ") } ?? ""
        let words = summary.split(separator: " ")
        func count(_ word: String) -> Int {
            zip(words, words.dropFirst()).first { $0.1.hasPrefix(word) }.flatMap { Int($0.0) } ?? 0
        }
        #expect(count("passed") >= 1 && count("passed") + count("skipped") >= 10,
                "expected at least 10 runnable blocks, found '\(summary)':\n\(output)")
    }

    @Test func theFirstPagesStayShort() throws {
        for (file, limit) in [("README.md", 15_000), ("docs/BENCHMARKS.md", 30_000)] {
            let size = try Data(contentsOf: TestEnvironment.root.appendingPathComponent(file)).count
            #expect(size <= limit, "\(file) is \(size) bytes, over its \(limit): move detail into docs/ and link to it")
        }
    }
}
