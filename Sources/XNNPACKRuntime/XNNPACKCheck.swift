import CXNNPACK
import NeuralGraph

/// Turns an XNNPACK status into a thrown error naming what was being done.
func xnnCheck(_ status: xnn_status, _ what: @autoclosure () -> String) throws {
    guard status != xnn_status_success else { return }
    let name: String
    switch status {
    case xnn_status_uninitialized: name = "uninitialized"
    case xnn_status_invalid_parameter: name = "invalid parameter"
    case xnn_status_invalid_state: name = "invalid state"
    case xnn_status_unsupported_parameter: name = "unsupported parameter"
    case xnn_status_unsupported_hardware: name = "unsupported hardware"
    case xnn_status_out_of_memory: name = "out of memory"
    default: name = "status \(status.rawValue)"
    }
    throw ModelError.runtime(operation: what(), reason: "XNNPACK: \(name)")
}

/// Initializes XNNPACK once per process.
enum XNNPACKLibrary {
    static let initialized: Bool = xnn_initialize(nil) == xnn_status_success
}
