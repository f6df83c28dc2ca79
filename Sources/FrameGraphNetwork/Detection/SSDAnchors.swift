/// Anchor boxes of a single-shot detector (SSD), generated as MediaPipe's `SsdAnchorsCalculator`
/// does: one grid per stride, a few anchors per cell (one per aspect ratio, plus one at the
/// interpolated scale), centres at the cell centre (offset 0.5), all in normalised input coordinates.
public struct SSDAnchorOptions: Sendable, Equatable {
    public var inputWidth: Int
    public var inputHeight: Int
    public var minScale: Float
    public var maxScale: Float
    /// Where in a cell the anchor centre is (0.5: its middle).
    public var offsetX: Float = 0.5
    public var offsetY: Float = 0.5
    /// One entry per layer; layers with the same stride share one grid.
    public var strides: [Int]
    public var aspectRatios: [Float] = [1]
    /// Whether every anchor is 1×1 (the regressors then give sizes directly, BlazeFace).
    public var fixedAnchorSize: Bool = true
    /// An extra anchor per cell at the geometric mean of this and the next layer's scale, with this
    /// aspect ratio (0: none).
    public var interpolatedScaleAspectRatio: Float = 1
    /// MediaPipe's option: the lowest layer gets three fixed anchors (1.0 at 0.1, 2.0 and 0.5 at its scale).
    public var reduceBoxesInLowestLayer: Bool = false

    public init(inputWidth: Int, inputHeight: Int, minScale: Float, maxScale: Float, strides: [Int]) {
        self.inputWidth = inputWidth
        self.inputHeight = inputHeight
        self.minScale = minScale
        self.maxScale = maxScale
        self.strides = strides
    }

    /// BlazeFace short range (`face_detection_short_range.tflite`, 128×128): 896 anchors.
    public static let blazeFaceShortRange = SSDAnchorOptions(inputWidth: 128, inputHeight: 128, minScale: 0.1484375, maxScale: 0.75,
                                                             strides: [8, 16, 16, 16])
    /// BlazeFace full range (`face_detection_full_range*.tflite`, 192×192): 2,304 anchors.
    public static let blazeFaceFullRange: SSDAnchorOptions = {
        var o = SSDAnchorOptions(inputWidth: 192, inputHeight: 192, minScale: 0.1484375, maxScale: 0.75, strides: [4])
        o.interpolatedScaleAspectRatio = 0
        return o
    }()
}

/// One anchor: centre and size, normalised.
public struct SSDAnchor: Sendable, Equatable {
    public var x: Float, y: Float, width: Float, height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

extension SSDAnchorOptions {
    private func scale(_ index: Int) -> Float {
        strides.count == 1 ? (minScale + maxScale) / 2 : minScale + (maxScale - minScale) * Float(index) / Float(strides.count - 1)
    }

    /// The anchors, layer by layer, row by row, cell by cell (the order of the model's outputs).
    public func anchors() -> [SSDAnchor] {
        var out: [SSDAnchor] = []
        var layer = 0
        while layer < strides.count {
            var ratios: [Float] = [], scales: [Float] = []
            var last = layer
            while last < strides.count && strides[last] == strides[layer] {
                let s = scale(last)
                if last == 0 && reduceBoxesInLowestLayer {
                    ratios += [1, 2, 0.5]
                    scales += [0.1, s, s]
                } else {
                    for r in aspectRatios {
                        ratios.append(r)
                        scales.append(s)
                    }
                    if interpolatedScaleAspectRatio > 0 {
                        let next = last == strides.count - 1 ? 1 : scale(last + 1)
                        scales.append((s * next).squareRoot())
                        ratios.append(interpolatedScaleAspectRatio)
                    }
                }
                last += 1
            }
            let stride = max(1, strides[layer])
            let rows = (inputHeight + stride - 1) / stride, columns = (inputWidth + stride - 1) / stride
            for y in 0..<rows {
                for x in 0..<columns {
                    for (r, s) in zip(ratios, scales) {
                        let root = r.squareRoot()
                        out.append(SSDAnchor(x: (Float(x) + offsetX) / Float(columns), y: (Float(y) + offsetY) / Float(rows),
                                             width: fixedAnchorSize ? 1 : s * root, height: fixedAnchorSize ? 1 : s / root))
                    }
                }
            }
            layer = last
        }
        return out
    }
}
