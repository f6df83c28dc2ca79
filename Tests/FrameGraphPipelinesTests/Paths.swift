import TestSupport

enum TestSupportPaths {
    static func pipeline(_ name: String) -> String {
        TestEnvironment.root.appendingPathComponent("pipelines/\(name).fg").path
    }
}
