import Foundation

/// A classifier's score calibration, as TensorFlow Lite metadata describes it
/// (`ScoreCalibrationOptions` and a `TENSOR_AXIS_SCORE_CALIBRATION` file): per class a sigmoid
/// `scale / (1 + e^−(slope · f(score) + offset))`, where f is the identity, log or inverse logistic
/// (log x − log(1 − x), logs clamped smoothly below 1e-16); a class whose line is empty, or whose
/// score is below its optional fourth value (the minimum uncalibrated score), gets the default score.
public struct ScoreCalibration: Sendable, Equatable {
    public enum Transformation: String, Sendable, CaseIterable {
        case identity = "IDENTITY", log = "LOG", inverseLogistic = "INVERSE_LOGISTIC"
    }

    /// One class's sigmoid.
    public struct Sigmoid: Sendable, Equatable {
        public var scale: Float, slope: Float, offset: Float
        public var minScore: Float?
    }

    public var transformation: Transformation
    public var defaultScore: Float
    /// Per class (index = output index); nil: the default score.
    public var sigmoids: [Sigmoid?]

    /// Parses the calibration file: one line per class, `scale,slope,offset[,min_score]` or empty.
    /// `classes` is the output's size; a different line count is an error naming both counts.
    public init(file text: String, transformation: Transformation, defaultScore: Float, classes: Int) throws {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if lines.count == classes + 1, lines.last == "" { lines.removeLast() }  // the file's final newline
        guard lines.count == classes else {
            throw CalibrationError(reason: "the score calibration file has \(lines.count) lines for \(classes) classes")
        }
        self.transformation = transformation
        self.defaultScore = defaultScore
        sigmoids = try lines.enumerated().map { (i, line) -> Sigmoid? in
            guard !line.isEmpty else { return nil }
            let values = line.split(separator: ",", omittingEmptySubsequences: false).map { Float($0.trimmingCharacters(in: .whitespaces)) }
            guard values.count == 3 || values.count == 4, values.allSatisfy({ $0?.isFinite == true }) else {
                throw CalibrationError(reason: "score calibration line \(i + 1) '\(line.prefix(60))' is not 3 or 4 numbers (scale,slope,offset[,min_score])")
            }
            return Sigmoid(scale: values[0] ?? 0, slope: values[1] ?? 0, offset: values[2] ?? 0, minScore: values.count == 4 ? values[3] : nil)
        }
    }

    public struct CalibrationError: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// The calibrated score of class `index`.
    public func calibrate(_ score: Float, index: Int) -> Float {
        guard index < sigmoids.count, let s = sigmoids[index], s.minScore.map({ score >= $0 }) ?? true else { return defaultScore }
        func clampedLog(_ x: Double) -> Double {
            let floor = 1e-16
            return x < floor ? 2 * Foundation.log(floor) - Foundation.log(2 * floor - x) : Foundation.log(x)
        }
        let x = Double(score)
        let f: Double
        switch transformation {
        case .identity: f = x
        case .log: f = clampedLog(x)
        case .inverseLogistic: f = clampedLog(x) - clampedLog(1 - x)
        }
        let z = f * Double(s.slope) + Double(s.offset)
        return Float(z >= 0 ? Double(s.scale) / (1 + exp(-z)) : Double(s.scale) * exp(z) / (1 + exp(z)))
    }
}
