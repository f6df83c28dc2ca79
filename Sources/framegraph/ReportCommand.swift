import Foundation
import FrameGraph
import FrameGraphServe

/// `framegraph report STATS.json [--trace TRACE.json] -o report.html`: a run's statistics (and
/// trace) as one self-contained HTML page, written beside its destination and renamed into place;
/// it never overwrites the files it reads.
struct ReportCommand {
    let arguments: Arguments

    func execute() throws -> Int32 {
        guard let stats = arguments.positional.dropFirst().first else {
            throw Arguments.UsageError(description: "report needs the statistics file: framegraph report STATS.json -o report.html")
        }
        guard let output = arguments.value("output") else {
            throw Arguments.UsageError(description: "report needs -o FILE.html (where to write the page)")
        }
        let trace = arguments.value("trace")
        let inputs = [(stats, "the report"), trace.map { ($0, "the report") }].compactMap { $0 }
        try OutputFile.checkLocal(output)
        try FileCheck.checkOutputs([(output, "report -o")], inputs: inputs)
        let report: RunReport
        do {
            report = try JSONDecoder().decode(RunReport.self, from: try FileCheck.read(stats, what: "statistics file", maxBytes: 64 << 20))
        } catch let error as DecodingError {
            throw Arguments.UsageError(description: "\(stats): not a statistics file written by framegraph run --stats (\(Self.reason(error)))")
        }
        var summary: TraceSummary?
        if let trace {
            let data = try FileCheck.read(trace, what: "trace file", maxBytes: 1 << 30)
            // The output's spans are those of the run's first sink that wrote frames.
            let output = report.nodes.first { $0.kind != "results" && $0.endToEnd != nil && $0.emitted > 0 }?.name
            do {
                summary = try TraceSummary(data: data, outputNode: output)
            } catch {
                throw Arguments.UsageError(description: "\(trace): \(error)")
            }
        }
        let title = ([stats] + (trace.map { [$0] } ?? [])).joined(separator: " + ")
        try OutputFile.write(Data(RunReportPage.render(report: report, trace: summary, title: title).utf8), to: output)
        print("wrote: \(output)")
        return 0
    }

    static func reason(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): return "no \(key.stringValue)"
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return c.codingPath.map(\.stringValue).joined(separator: ".") + ": " + c.debugDescription
        @unknown default: return "unreadable"
        }
    }
}
