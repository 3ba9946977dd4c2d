#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// One render path to measure: `body` starts something that renders through the backend it is
/// given, calls `backend.waitUntilMeasured(scenario:)`, then stops it.
struct Scenario {
    /// A render path (counted on the device thread, per render), or a read path (counted on
    /// the calling thread over the reads it makes; see ReadScenarios.swift).
    enum Kind { case render, reads }

    let name: String
    let kind: Kind
    /// Heap calls each render should make: zero, except in the controls, which allocate on
    /// purpose to show that the counter sees it.
    let expectedPerRender: (allocations: Int, frees: Int)
    let backend: CountingOutputBackend
    let body: (CountingOutputBackend) throws -> Void

    init(_ name: String, kind: Kind = .render, expectedPerRender: (allocations: Int, frees: Int) = (0, 0),
         backend: CountingOutputBackend = CountingOutputBackend(),
         _ body: @escaping (CountingOutputBackend) throws -> Void)
    {
        self.name = name
        self.kind = kind
        self.expectedPerRender = expectedPerRender
        self.backend = backend
        self.body = body
    }
}

/// Runs scenarios and prints one JSON object per line: a header, then one line per scenario.
///
///     {"supported":true,"build":"debug"}
///     {"scenario":"outputunit-int16-interleaved","expectedAllocationsPerRender":0,
///      "expectedFreesPerRender":0,"renders":200,"framesPerRender":512,"audibleRenders":200,
///      "allocations":0,"frees":0,"bytes":0}
///
/// A scenario that fails prints `"error":"…"` instead of counts; exit status 1 then.
enum Harness {
    static func main(arguments: [String]) -> Never {
        let scenarios = allScenarios + readScenarios
        if arguments.contains("--list") {
            for s in scenarios { print(s.name) }
            exit(0)
        }
        let unknown = arguments.filter { name in !scenarios.contains { $0.name == name } }
        if !unknown.isEmpty {
            print("unknown scenario: \(unknown.joined(separator: " ")); --list shows them")
            exit(2)
        }
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        print("{\"supported\":\(AllocationCounter.isSupported),\"build\":\"\(build)\"}")
        guard AllocationCounter.isSupported else { exit(0) }
        AllocationCounter.trapOnCountedAllocation(getenv("RENDER_ALLOC_TRAP").map { String(cString: $0) } == "1")
        var failed = false
        for s in scenarios where arguments.isEmpty || arguments.contains(s.name) {
            AllocationCounter.reset()
            do {
                try s.body(s.backend)
            } catch {
                failed = true
                line(s.name, ["\"error\":" + quoted("\(error)")])
                continue
            }
            if s.kind == .reads {
                let t = AllocationCounter.totals
                line(s.name, ["\"reads\":\(measuredReads)", "\"allocations\":\(t.allocations)", "\"frees\":\(t.frees)",
                              "\"bytes\":\(t.bytes)"])
                continue
            }
            guard s.backend.progress.isDone else {
                failed = true
                line(s.name, ["\"error\":\"the scenario returned before the measured periods were rendered\""])
                continue
            }
            let t = AllocationCounter.totals
            line(s.name, ["\"expectedAllocationsPerRender\":\(s.expectedPerRender.allocations)",
                          "\"expectedFreesPerRender\":\(s.expectedPerRender.frees)",
                          "\"renders\":\(s.backend.measuredPeriods)",
                          "\"framesPerRender\":\(s.backend.periodFrames)",
                          "\"audibleRenders\":\(s.backend.progress.audibleRenders)",
                          "\"allocations\":\(t.allocations)", "\"frees\":\(t.frees)", "\"bytes\":\(t.bytes)"])
        }
        exit(failed ? 1 : 0)
    }

    /// Reports a scenario that cannot finish and ends the process (its device thread may be stuck).
    static func fail(scenario: String, _ message: String) -> Never {
        line(scenario, ["\"error\":" + quoted(message)])
        exit(1)
    }

    private static func line(_ scenario: String, _ fields: [String]) {
        print("{\"scenario\":" + quoted(scenario) + "," + fields.joined(separator: ",") + "}")
        fflush(nil)    // all streams: Swift 6 will not name the global `stdout`
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
