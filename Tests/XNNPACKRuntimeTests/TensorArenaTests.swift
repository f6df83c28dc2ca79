import NeuralGraph
import Testing

@testable import XNNPACKRuntime

/// The arena that a prediction's intermediate tensors share: no two tensors alive at the same stage
/// overlap in memory, tensors whose stages do not meet reuse memory, and a network run over shared
/// memory gives the values it gives with a buffer per tensor.
@Suite struct TensorArenaTests {
    typealias Lifetime = TensorArena.Lifetime

    /// Checks the layout's promise on `lifetimes`: every tensor placed, aligned, inside the arena, and
    /// apart from every tensor whose stages overlap its own.
    func expectSound(_ lifetimes: [Lifetime], _ layout: TensorArena.Layout) {
        #expect(layout.offsets.count == lifetimes.count)
        for a in lifetimes {
            guard let offset = layout.offsets[a.tensor] else {
                Issue.record("tensor \(a.tensor) not placed")
                continue
            }
            #expect(offset % TensorArena.alignment == 0)
            #expect(offset + TensorArena.paddedSize(a.bytes) <= layout.bytes)
            for b in lifetimes where b.tensor != a.tensor && a.overlapsInTime(b) {
                let o = layout.offsets[b.tensor] ?? -1
                let apart = offset + TensorArena.paddedSize(a.bytes) <= o || o + TensorArena.paddedSize(b.bytes) <= offset
                #expect(apart, "tensors \(a.tensor) and \(b.tensor) share stages \(max(a.first, b.first))… and memory")
            }
        }
    }

    @Test func aChainOfTensorsUsesTwoSlotsNotOnePerTensor() {
        // t0 → stage 0 → t1 → stage 1 → t2 … : each tensor is alive at its producer and its consumer.
        let lifetimes = (0..<8).map { Lifetime(tensor: $0, bytes: 1000 * (1 + $0 % 3), first: $0, last: $0 + 1) }
        let layout = TensorArena.layout(lifetimes)
        expectSound(lifetimes, layout)
        // Two neighbours alive at a time: greedy placement is not optimal (two of the largest would
        // do), but far below a buffer per tensor (eight, 16.6 KB).
        #expect(layout.bytes <= 3 * TensorArena.paddedSize(3000))
        #expect(Set(layout.offsets.values).count < lifetimes.count)
    }

    @Test func tensorsAliveTogetherNeverOverlapOnRandomLifetimes() {
        var state: UInt64 = 7
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % n
        }
        for _ in 0..<200 {
            let lifetimes = (0..<(1 + next(24))).map { t -> Lifetime in
                let first = next(16)
                return Lifetime(tensor: t, bytes: 1 + next(5000), first: first, last: first + next(6))
            }
            let layout = TensorArena.layout(lifetimes)
            expectSound(lifetimes, layout)
            // Never more than a buffer per tensor.
            #expect(layout.bytes <= lifetimes.map { TensorArena.paddedSize($0.bytes) }.reduce(0, +))
        }
    }

    @Test func manyTensorsGetAPlaceEachWithoutTheSearch() {
        // A chain longer than the planner searches: still sound, one place per tensor.
        let count = TensorArena.mostPlannedTensors + 1
        let lifetimes = (0..<count).map { Lifetime(tensor: $0, bytes: 4, first: $0, last: $0 + 1) }
        let layout = TensorArena.layout(lifetimes)
        #expect(layout.bytes == count * TensorArena.paddedSize(4))
        #expect(Set(layout.offsets.values).count == count)
    }

    @Test func aNetworkOverSharedMemoryComputesWhatItsLayersDo() throws {
        // x → relu → a → (a + x) → b → relu6-clamped conv 1×1 (2 → 2, weights [1 2; 3 4]) → y: `a` and
        // the sum are intermediate tensors, `x` must stay intact while the sum reads it.
        var g = NeuralGraph()
        let x = g.addTensor(TensorValue(name: "x", shape: [1, 3, 3, 2]))
        let a = g.addTensor(TensorValue(name: "a", shape: [1, 3, 3, 2]))
        let b = g.addTensor(TensorValue(name: "b", shape: [1, 3, 3, 2]))
        let w = g.addTensor(TensorValue(name: "w", shape: [2, 1, 1, 2], constant: ConstantStorage(floats: [1, 2, 3, 4])))
        let c = g.addTensor(TensorValue(name: "c", shape: [1, 3, 3, 2]))
        let y = g.addTensor(TensorValue(name: "y", shape: [1, 3, 3, 2]))
        g.nodes = [
            NeuralNode(operation: .relu, inputs: [x], outputs: [a], name: "relu"),
            NeuralNode(operation: .add(.none), inputs: [a, x], outputs: [b], name: "add"),
            NeuralNode(operation: .conv2d(ConvolutionParameters()), inputs: [b, w], outputs: [c], name: "conv"),
            NeuralNode(operation: .relu, inputs: [c], outputs: [y], name: "relu-out"),
        ]
        g.inputs = [x]
        g.outputs = [y]
        try g.validate()
        for stagePerOperation in [false, true] {
            for kernels in [Predictor.ConvolutionKernels.own, .xnnpack] {
            let predictor = try Predictor(graph: g, options: .init(stagePerOperation: stagePerOperation, convolutions: kernels))
            for round in 0..<2 {
                let input = predictor.input(0)
                let xs = (0..<input.count).map { Float(($0 * 7 + round) % 9) - 4 }
                for i in xs.indices { input.pointer[i] = xs[i] }
                try predictor.predict()
                let out = predictor.output(0)
                for p in 0..<9 {
                    let x0: Float = xs[2 * p], x1: Float = xs[2 * p + 1]
                    let s0: Float = max(0, x0) + x0, s1: Float = max(0, x1) + x1
                    let y0: Float = max(0, s0 + 2 * s1), y1: Float = max(0, 3 * s0 + 4 * s1)
                    #expect(out.pointer[2 * p] == y0)
                    #expect(out.pointer[2 * p + 1] == y1)
                }
                // The input is the caller's: a prediction leaves it as written.
                #expect((0..<input.count).allSatisfy { input.pointer[$0] == xs[$0] })
            }
            }
        }
    }
}
