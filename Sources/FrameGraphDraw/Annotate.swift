import Foundation
import FrameGraph

/// Draws results onto the video at full resolution: boxes in a colour per class with their label
/// and score, keypoints, landmark points and the lines between them, classifications as text, and
/// an optional status line (HUD: frames per second, frames admitted, dropped-busy, latency).
///
/// Ports: 0 `frame` (any 8-bit format; drawn on a copy, never in place), then ``resultPorts``
/// results ports (`results`, `results2`, …) from detectors or classifiers. Results the frame itself
/// carries are drawn too. Results are paired with frames like masks: the newest live, the frame's
/// own offline. Text is rendered with FreeType (anti-aliased), by default in DejaVu Sans.
///
/// ```swift
/// let marks = Annotate(name: "marks", style: .init(hud: true))
/// camera --> marks.port(0); faces --> marks.port(1); marks --> display
/// ```
public final class Annotate: CompositeNode, @unchecked Sendable {
    /// How things are drawn. Sizes of 0 are chosen from the frame height (readable at 480 and 1080 lines).
    public struct Style: Sendable, Equatable {
        /// Box outline width in pixels (0: height / 240, at least 2).
        public var thickness: Int
        /// Text size in pixels (0: height / 30, at least 12).
        public var textSize: Int
        /// Point radius in pixels (0: height / 240, at least 2).
        public var pointRadius: Int
        /// Whether boxes get their label and score.
        public var labels: Bool
        /// Whether the status line is drawn at the top left.
        public var hud: Bool
        /// Detections below this score are not drawn.
        public var minScore: Float
        /// The font file; nil: DejaVu Sans from fonts-dejavu-core.
        public var font: String?

        public init(thickness: Int = OptionSpecs.thickness.defaultValue, textSize: Int = OptionSpecs.textSize.defaultValue,
                    pointRadius: Int = OptionSpecs.pointRadius.defaultValue, labels: Bool = OptionSpecs.labels.defaultValue,
                    hud: Bool = OptionSpecs.hud.defaultValue, minScore: Float = Float(OptionSpecs.minScore.defaultValue), font: String? = nil) {
            self.thickness = thickness
            self.textSize = textSize
            self.pointRadius = pointRadius
            self.labels = labels
            self.hud = hud
            self.minScore = minScore
            self.font = font
        }
    }

    public let style: Style
    /// Number of results ports after the frame port.
    public let resultPorts: Int
    private var fontFace: FontFace?
    private var sizes = (thickness: 2, text: 16, point: 2)
    private let pool = BufferPool(maxFreePerSize: 4)
    /// Clock times of recent outputs (for the HUD's frames per second).
    private var recent: [Double] = []

    public init(name: String = "annotate", style: Style = Style(), resultPorts: Int = OptionSpecs.resultPorts.defaultValue) {
        self.style = style
        self.resultPorts = max(0, min(resultPorts, OptionSpecs.maxResultPorts))
        super.init(name: name)
    }

    override public var kind: String { "annotate" }
    override public var inputPorts: [String] { ["frame"] + (0..<resultPorts).map { $0 == 0 ? "results" : "results\($0 + 1)" } }
    override public var inputKinds: [StreamKind?] { [.frames] + Array(repeating: .results, count: resultPorts) }
    override public var filesRead: [String] { style.font.map { [$0] } ?? [] }

    override public func negotiate(inputs: [FrameDescription]) throws -> FrameDescription? {
        guard let frame = inputs.first else { return nil }
        guard Canvas.supports(frame.format) else {
            throw GraphError.mismatch(node: name, port: "frame", field: "pixel format", expected: "an 8-bit format (rgb24, rgba, bgra, gray8, yuv420p, nv12)",
                                      got: frame.format.description)
        }
        let h = frame.height
        sizes = (style.thickness > 0 ? style.thickness : max(2, h / 240),
                 style.textSize > 0 ? style.textSize : max(12, h / 30),
                 style.pointRadius > 0 ? style.pointRadius : max(2, h / 240))
        guard let path = style.font ?? FontFace.defaultFontPath else {
            throw GraphError.invalidOption(node: name, option: "font",
                                           reason: "no font given and DejaVu Sans is not installed (install fonts-dejavu-core, or give font=FILE.ttf)")
        }
        do {
            fontFace = try FontFace(path: path, pixelSize: sizes.text)
        } catch let error as DrawError {
            throw GraphError.invalidOption(node: name, option: "font", reason: error.description)
        }
        return frame
    }

    override public func combine(_ frames: [Frame], context: RunContext) throws -> Frame? {
        guard let input = frames.first else { return nil }
        var out = Frame.make(input.description, pool: pool)
        out.copyPixels(from: input)
        out.copyTiming(from: input)
        var all: [Results] = input.results.map { [$0] } ?? []
        for f in frames.dropFirst() { if let r = f.results { all.append(r) } }
        draw(all, on: out, hudLine: style.hud ? hudText(for: input, context: context) : nil)
        return out
    }

    /// Draws `results` (and the status line, when given) onto `frame`, which the caller owns.
    public func draw(_ results: [Results], on frame: Frame, hudLine: String? = nil) {
        guard let canvas = Canvas(frame) else { return }
        let w = Float(frame.width), h = Float(frame.height)
        func paint(_ rgb: UInt32) -> Paint { Paint(rgb: rgb, for: frame.color, height: frame.height) }
        let white = paint(0xFFFFFF), shade = paint(0x000000)
        var textLines: [String] = []
        if let hudLine { textLines.append(hudLine) }
        for r in results {
            for set in r.landmarks {
                let colour = paint(Paint.forClass(index: nil, label: set.label ?? r.producer))
                if let topology = set.topology {
                    let t = max(1, sizes.thickness / 2)
                    for c in topology.connections where set.points.indices.contains(c.from) && set.points.indices.contains(c.to) {
                        let a = set.points[c.from], b = set.points[c.to]
                        canvas.line(x0: a.x * w, y0: a.y * h, x1: b.x * w, y1: b.y * h, thickness: t, colour)
                    }
                }
                let radius = Float(max(1, sizes.point - 1))
                for p in set.points { canvas.disc(cx: p.x * w, cy: p.y * h, radius: radius, colour) }
            }
            for d in r.detections where d.score >= style.minScore {
                let colour = paint(Paint.forClass(index: d.index, label: d.label))
                let x0 = Canvas.pixel(d.box.x * w), y0 = Canvas.pixel(d.box.y * h)
                let x1 = Canvas.pixel((d.box.x + d.box.width) * w), y1 = Canvas.pixel((d.box.y + d.box.height) * h)
                canvas.stroke(x0: x0, y0: y0, x1: x1, y1: y1, thickness: sizes.thickness, colour)
                for k in d.keypoints { canvas.disc(cx: k.x * w, cy: k.y * h, radius: Float(sizes.point), colour) }
                if style.labels, let font = fontFace {
                    let text = (d.label ?? d.index.map { "#\($0)" }).map { "\($0) \(Self.percent(d.score))" } ?? Self.percent(d.score)
                    let pad = max(2, sizes.text / 6)
                    let boxHeight = font.lineHeight + pad
                    // Above the box when there is room, else just inside its top edge.
                    let top = y0 - boxHeight >= 0 ? y0 - boxHeight : max(0, y0)
                    canvas.fill(x0: x0, y0: top, x1: x0 + font.width(of: text) + 2 * pad, y1: top + boxHeight, colour, alpha: 200)
                    canvas.text(text, font: font, x: x0 + pad, baseline: top + pad / 2 + font.ascender, shade)
                }
            }
            for c in r.classifications { textLines.append("\(c.label) \(Self.percent(c.confidence))") }
        }
        guard let font = fontFace, !textLines.isEmpty else { return }
        let pad = max(2, sizes.text / 6)
        var top = pad
        for line in textLines {
            canvas.fill(x0: pad, y0: top, x1: pad + font.width(of: line) + 2 * pad, y1: top + font.lineHeight + pad, shade, alpha: 150)
            canvas.text(line, font: font, x: 2 * pad, baseline: top + pad / 2 + font.ascender, white)
            top += font.lineHeight + pad + pad / 2
        }
    }

    /// "93%"
    static func percent(_ score: Float) -> String {
        guard score.isFinite else { return "?" }
        return "\(Int((max(0, min(1, score)) * 100).rounded()))%"
    }

    /// "30.0 fps · admitted 290 · dropped-busy 12 · latency 41 ms" (latency: the median capture-to-output
    /// time so far)
    private func hudText(for frame: Frame, context: RunContext) -> String {
        let now = context.clock.now()
        recent.append(now)
        recent.removeAll { now - $0 > 1.0 }
        let fps = recent.count > 1 ? Double(recent.count - 1) / max(1e-6, now - (recent.first ?? now)) : 0
        let totals = context.liveTotals()
        // Capture to output as the sinks measure it; before the first output, capture to here.
        let latency = max(0, (totals.endToEndMedian ?? (now - frame.captureTime)) * 1000)
        return String(format: "%.1f fps · admitted %d · dropped-busy %d · latency %.0f ms", fps, totals.admitted, totals.droppedBusy, latency)
    }
}

extension Annotate {
    /// The options of the `annotate` node type, each written once.
    public enum OptionSpecs {
        public static let maxResultPorts = 4
        public static let resultPorts = NodeOption.int("results", default: 1, 0...maxResultPorts, "number of results ports (results, results2, …)")
        public static let thickness = NodeOption.int("thickness", default: 0, 0...64, "box outline in pixels (0: by frame height)")
        public static let textSize = NodeOption.int("text-size", default: 0, 0...256, "text height in pixels (0: by frame height)")
        public static let pointRadius = NodeOption.int("point-size", default: 0, 0...64, "point radius in pixels (0: by frame height)")
        public static let labels = NodeOption.flag("labels", default: true, "label and score above each box")
        public static let hud = NodeOption.flag("hud", default: false, "status line: fps, admitted, dropped-busy, latency")
        public static let minScore = NodeOption.number("min-score", default: 0, 0...1, "hide detections scoring below this")
        public static let font = NodeOption<String?>.text("font", required: false, "TrueType/OpenType font file (default: DejaVu Sans)")
        public static let all = [resultPorts.spec, thickness.spec, textSize.spec, pointRadius.spec, labels.spec, hud.spec, minScore.spec, font.spec,
                                 PairingChoice.option.spec]
    }
}
