import Foundation
import NeuralGraph
import Testing
@testable import ONNXImport

/// Resize and Upsample against hand computations of ONNX's formulas.
struct ResizeTests {
    @Test func linearHalfPixelTwice() throws {
        let xs = [1, 2, 3, 4]
        let x = randomValues(24, seed: 30)
        var m = ONNXModelBuilder()
        m.input("x", xs)
        m.initializer("scales", [4], [1, 1, 2, 2])
        m.node("Resize", ["x", "", "scales"], ["y"], ["mode": .string("linear"), "coordinate_transformation_mode": .string("half_pixel")])
        m.output("y")
        let y = try runONNX(m, [x])[0]
        #expect(maxAbsDiff(y, referenceResizeLinearHalfPixel(x, xs, outH: 6, outW: 8)) < 1e-5)
        // By hand, one row [a, b] → [a, .75a + .25b, .25a + .75b, b].
        var row = ONNXModelBuilder()
        row.input("x", [1, 1, 1, 2])
        row.ints("sizes", [1, 1, 1, 4])
        row.node("Resize", ["x", "", "", "sizes"], ["y"], ["mode": .string("linear")])
        row.output("y")
        #expect(try runONNX(row, [[0, 4]])[0] == [0, 1, 3, 4])
    }

    @Test func nearestModes() throws {
        // Upsample (asymmetric, floor) and Resize's default (half_pixel, round_prefer_floor) agree for 2×.
        for op in ["Upsample", "Resize"] {
            var m = ONNXModelBuilder()
            m.opset = op == "Upsample" ? 9 : 13
            m.input("x", [1, 1, 2, 2])
            m.initializer("scales", [4], [1, 1, 2, 2])
            m.node(op, op == "Upsample" ? ["x", "scales"] : ["x", "", "scales"], ["y"])
            m.output("y")
            let y = try runONNX(m, [[1, 2, 3, 4]])[0]
            #expect(y == [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4], "\(op)")
        }
        // align_corners linear 2 → 3: [a, (a+b)/2, b].
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 1, 2])
        m.ints("sizes", [1, 1, 1, 3])
        m.node("Resize", ["x", "", "", "sizes"], ["y"], ["mode": .string("linear"), "coordinate_transformation_mode": .string("align_corners")])
        m.output("y")
        #expect(try runONNX(m, [[2, 6]])[0] == [2, 4, 6])
    }

    @Test func cubicIsRefusedWithItsMode() throws {
        var m = ONNXModelBuilder()
        m.input("x", [1, 1, 2, 2])
        m.initializer("scales", [4], [1, 1, 2, 2])
        m.node("Resize", ["x", "", "scales"], ["y"], ["mode": .string("cubic")])
        m.output("y")
        #expect(throws: ModelError.unsupportedOperations(file: "c.onnx", operations: ["Resize (mode 'cubic')"])) {
            try ONNXImporter.load(bytes: m.bytes(), fileName: "c.onnx")
        }
    }
}
