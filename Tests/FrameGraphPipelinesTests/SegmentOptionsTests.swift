import FrameGraph
import FrameGraphMedia
import FrameGraphPipelines
import Foundation
import Testing

/// The encode node's segment options and the stream node's opt-in, as a pipeline file gives them.
struct SegmentOptionsTests {
    @Test func durationsAndSizesAreRead() {
        #expect(SegmentPlan.seconds("10m") == 600 && SegmentPlan.seconds("90") == 90 && SegmentPlan.seconds("24h") == 86_400 && SegmentPlan.seconds("7d") == 604_800)
        #expect(SegmentPlan.seconds("ten") == nil && SegmentPlan.seconds("-1m") == nil && SegmentPlan.seconds("") == nil)
        #expect(SegmentPlan.bytes("500M") == 500 << 20 && SegmentPlan.bytes("20G") == 20 << 30 && SegmentPlan.bytes("1000") == 1000)
        #expect(SegmentPlan.bytes("lots") == nil && SegmentPlan.bytes("0") == nil)
    }

    @Test func aBadSegmentValueIsOneLineNamingTheOption() throws {
        let document = try InlinePipeline.parse("pattern -> encode path=cam1/rec.mp4 segment=ten")
        do {
            _ = try Pipeline.build(document)
            Issue.record("segment=ten was accepted")
        } catch {
            #expect("\(error)".contains("option 'segment'") && "\(error)".contains("10m"), "\(error)")
        }
    }

    @Test func aStreamNodeWithoutTheOptInIsRefusedBeforeItOpens() throws {
        let document = try InlinePipeline.parse("stream url=rtsp://admin:hunter2@10.0.0.5/live -> null")
        do {
            _ = try Pipeline.build(document)
            Issue.record("the stream was accepted without network=allow")
        } catch {
            #expect("\(error)".contains("--allow-network") && !"\(error)".contains("hunter2"), "\(error)")
        }
    }
}
