import Foundation

extension FileHandle {
    /// The bytes before the first newline (a test server's first line: the JSON with its port or
    /// URLs), read a byte at a time so that nothing after it is taken from the pipe; what was read
    /// when the pipe ends first.
    public func readLine() -> Data {
        var line = Data()
        while true {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { return line }
            line.append(byte)
        }
    }
}
