import Foundation
import Testing
import TestSupport

/// Many files on a Ray cluster (tools/cluster): the acceptance test of `framegraph-batch` on a
/// two-node local cluster — 12 clips through portrait-segment.fg, a worker killed mid-task and
/// retried, every output once with its input's frame count, totals equal to the stats files, a
/// second invocation doing nothing, the cluster stopped whatever happens. Ray is not part of the
/// two-command set-up: the test installs it into its own venv (.venv-ray, tools/cluster/setup.sh).
@Suite(.serialized) struct ClusterTests {
    @Test(.enabled(if: TestEnvironment.hasSharedMedia || TestEnvironment.portraitSample != nil,
                   "needs samples/media/portrait.mp4 (tools/make-samples.sh) or ../shared/media/webcam: the clips it cuts"))
    func anArchiveOnATwoNodeRayClusterSurvivesAKilledWorker() throws {
        let setup = try runCommand("/bin/bash", [TestEnvironment.root.appendingPathComponent("tools/cluster/setup.sh").path], timeout: 600)
        try #require(setup.status == 0, "tools/cluster/setup.sh: \(setup.stderr.suffix(600))")
        let r = try runCommand("/bin/bash", [TestEnvironment.root.appendingPathComponent("tools/cluster/test_cluster.sh").path],
                               timeout: 600)
        #expect(r.status == 0, "test_cluster.sh failed:\n\(r.stdout.suffix(2000))\n\(r.stderr.suffix(2000))")
        for line in ["each decodes with its input's frame count", "summary totals equal the stats files", "retried: attempts 2",
                     "second invocation: all 12 skipped", "cluster stopped"] {
            #expect(r.stdout.contains(line), "missing '\(line)' in:\n\(r.stdout.suffix(2000))")
        }
    }

    /// Live streams supervised by Ray actors (tools/cluster/framegraph_streams.py): one stream's
    /// framegraph killed is restarted; the other stream's actor killed is restarted by Ray and carries
    /// on; frames counted equal the stats files.
    @Test(.enabled(if: TestEnvironment.hasSharedMedia || TestEnvironment.portraitSample != nil,
                   "needs samples/media/portrait.mp4 (tools/make-samples.sh) or ../shared/media/webcam"))
    func streamActorsRestartWhatDies() throws {
        let setup = try runCommand("/bin/bash", [TestEnvironment.root.appendingPathComponent("tools/cluster/setup.sh").path], timeout: 600)
        try #require(setup.status == 0, "tools/cluster/setup.sh: \(setup.stderr.suffix(600))")
        let r = try runCommand("/bin/bash", [TestEnvironment.root.appendingPathComponent("tools/cluster/test_streams.sh").path], timeout: 600)
        #expect(r.status == 0, "test_streams.sh failed:\n\(r.stdout.suffix(2000))\n\(r.stderr.suffix(2000))")
        for line in ["restarts 1, actor restarts 0, errors ['killed by signal 9']", "actor restarts 1", "both streams served on their own ports",
                     "test_streams: passed", "cluster stopped"] {
            #expect(r.stdout.contains(line), "missing '\(line)' in:\n\(r.stdout.suffix(2000))")
        }
    }
}
