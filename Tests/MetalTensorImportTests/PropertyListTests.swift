import Foundation
import MetalTensorImport
import Testing
import TestSupport

/// The plist reader (XML and binary), the lexical rules MetalTensor applies, and the weight map.
@Suite struct PropertyListTests {
    @Test func xmlValuesEntitiesAndEmptyForms() throws {
        let text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <!-- a comment -->
        <plist version="1.0"><dict>
          <key>s</key><string>a &amp; b &lt;c&gt; &#65;&#x42; <![CDATA[<raw>]]></string>
          <key>i</key><integer>-42</integer><key>r</key><real>2.5e3</real>
          <key>t</key><true/><key>f</key><false/><key>e</key><string/>
          <key>a</key><array><string>x</string><array/><dict/></array>
          <key>d</key><data>AAEC</data>
        </dict></plist>
        """
        let v = try PropertyList.read(Array(text.utf8))
        #expect(v["s"] == .string("a & b <c> AB <raw>"))
        #expect(v["i"] == .integer(-42) && v["r"] == .real(2500) && v["t"] == .bool(true) && v["f"] == .bool(false))
        #expect(v["e"] == .string("") && v["a"] == .array([.string("x"), .array([]), .dictionary([])]))
        #expect(v["d"] == .data([0, 1, 2]))
    }

    @Test func damagedXMLGivesTheOffset() {
        for (text, offset) in [("<plist><dict><key>a</key></dict></plist>", 25), ("<plist><dict><key>a</key><string>x</dict></plist>", 34),
                               ("<plist><dict>", 13), ("<plist><foo/></plist>", 7), ("", 0)] {
            do {
                _ = try PropertyList.read(Array(text.utf8))
                Issue.record("'\(text)' was read")
            } catch {
                #expect(error.offset == offset, "'\(text)': \(error)")
            }
        }
        let deep = String(repeating: "<array>", count: 100) + String(repeating: "</array>", count: 100)
        #expect(throws: PropertyListError.self) { try PropertyList.read(Array("<plist>\(deep)</plist>".utf8)) }
    }

    /// A binary plist whose array contains itself, and one whose offset table points past the end.
    @Test func hostileBinaryPlistsAreRefused() {
        // header, object 0 at byte 8: an array of one reference (to itself), offset table, trailer.
        var cycle = Array("bplist00".utf8) + [0xA1, 0x00] + [8]
        cycle += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 10]
        do {
            _ = try PropertyList.read(cycle)
            Issue.record("a cyclic binary plist was read")
        } catch {
            #expect(error.reason.contains("cycle"), "\(error)")
        }
        var outside = cycle
        outside[10] = 200
        #expect(throws: PropertyListError.self) { try PropertyList.read(outside) }
        #expect(throws: PropertyListError.self) { try PropertyList.read(Array(cycle.prefix(30))) }
    }

    @Test(.enabled(if: MetalTensorReference.available && TestEnvironment.sharedFile("models/metaltensor/Landmarks.plist") != nil,
                   "needs the tools venv and ../shared/models/metaltensor"))
    func binaryAndXMLFormsReadTheSame() throws {
        let dir = TestEnvironment.scratch("metaltensor-bplist")
        for name in ["PortraitSegmentNet", "RapidFaceDetect", "Landmarks", "MobileNetV2_1.0", "RapidFaceDetectConfig", "std_mean"] {
            guard let xml = TestEnvironment.sharedFile("models/metaltensor/\(name).plist") else { continue }
            let binary = dir.appendingPathComponent("\(name).bplist").path
            let r = try runCommand(MetalTensorReference.python, ["-c", "import plistlib,sys; d=plistlib.load(open(sys.argv[1],'rb')); "
                                                      + "open(sys.argv[2],'wb').write(plistlib.dumps(d, fmt=plistlib.FMT_BINARY))", xml, binary])
            try #require(r.status == 0, "\(r.stderr)")
            let a = try PropertyList.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: xml))))
            let b = try PropertyList.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: binary))))
            // plistlib writes dictionaries with sorted keys: compare entry by entry.
            guard case .dictionary(let ea) = a, case .dictionary(let eb) = b else { Issue.record("\(name): not dictionaries"); continue }
            #expect(ea.count == eb.count, "\(name)")
            for (key, value) in ea { #expect(b[key] == value || Self.sameUnordered(b[key], value), "\(name): key \(key)") }
        }
    }

    static func sameUnordered(_ a: PropertyList?, _ b: PropertyList) -> Bool {
        guard case .dictionary(let x)? = a, case .dictionary(let y) = b, x.count == y.count else { return false }
        return y.allSatisfy { entry in a?[entry.key].map { $0 == entry.value || sameUnordered($0, entry.value) } ?? false }
    }

    @Test func weightMapAcceptsMetalTensorsTrailingCommaAndSpaces() throws {
        let map = try WeightMap(bytes: Array("{\n\"a\" : \"0,16\",\n\"b\\u0020c\" : \"16, 8\",\n}".utf8))
        #expect(map.entries["a"] == .init(offset: 0, length: 16))
        #expect(map.entries["b c"] == .init(offset: 16, length: 8))
        for bad in ["{\"a\": \"1\"}", "{\"a\": \"-1,4\"}", "{\"a\": \"0,4\", \"a\": \"4,4\"}", "{\"a\": 3}", "[1]", "{\"a\": \"0,4\"} x"] {
            #expect(throws: PropertyListError.self, "\(bad)") { try WeightMap(bytes: Array(bad.utf8)) }
        }
    }

    @Test(.enabled(if: TestEnvironment.sharedFile("models/metaltensor/Landmarks.plist") != nil, "needs ../shared/models/metaltensor"))
    func theShippedModelsImportWithTheirLayerCounts() throws {
        for (name, nodes, outputs) in [("PortraitSegmentNet", 29, [[1, 128, 128, 1]]), ("RapidFaceDetect", 26, [[1, 1, 4, 500], [1, 1, 2, 500]]),
                                       ("Landmarks", 15, [[1, 1, 1, 136]])] {
            guard let path = TestEnvironment.sharedFile("models/metaltensor/\(name).plist") else { continue }
            let graph = try MetalTensorImporter.load(path: path)
            #expect(graph.metadata["nodes"] == String(nodes), "\(name)")
            #expect(graph.outputs.map { graph.tensors[$0].shape } == outputs, "\(name)")
        }
    }
}
