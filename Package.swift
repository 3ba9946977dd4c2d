// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tonearm",
    // Playback's lock-free ring uses the Synchronization module's atomics.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Tonearm", targets: ["Tonearm"]),
        .library(name: "TonearmCore", targets: ["TonearmCore"]),
        .library(name: "TonearmFormats", targets: ["TonearmFormats"]),
        .library(name: "TonearmCodecs", targets: ["TonearmCodecs"]),
        .library(name: "TonearmConvert", targets: ["TonearmConvert"]),
        .library(name: "TonearmPlayback", targets: ["TonearmPlayback"]),
        .library(name: "TonearmStreaming", targets: ["TonearmStreaming"]),
        .executable(name: "tonearm", targets: ["tonearm"]),
        .executable(name: "tonearm-bench", targets: ["tonearm-bench"]),
    ],
    targets: [
        .target(name: "TonearmCore"),
        .target(name: "TonearmFormats", dependencies: ["TonearmCore"]),
        .target(name: "TonearmCodecs", dependencies: ["TonearmCore"]),
        .target(name: "TonearmConvert", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs"]),
        .target(name: "TonearmPlayback", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert"]),
        .target(name: "TonearmStreaming", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert", "TonearmPlayback"]),
        .target(name: "Tonearm", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert",
                                                "TonearmPlayback", "TonearmStreaming"]),
        .target(name: "TonearmCLI", dependencies: ["Tonearm"]),
        .executableTarget(name: "tonearm", dependencies: ["TonearmCLI"]),
        .executableTarget(name: "tonearm-bench", dependencies: ["TonearmCLI"]),
        .target(name: "TonearmTestSupport", dependencies: ["Tonearm"], path: "Tests/TonearmTestSupport"),
        // Test-only: counts the heap calls playback's render paths make (see its main.swift);
        // RenderAllocationTests runs it. The linker aliases and exports its malloc family so that
        // it interposes glibc's for every library in the process.
        .executableTarget(name: "RenderAllocCheck", dependencies: ["TonearmCore", "TonearmConvert", "TonearmPlayback"],
                          path: "Tests/RenderAllocCheck",
                          swiftSettings: [.enableExperimentalFeature("Extern")],
                          linkerSettings: [.unsafeFlags(renderAllocCheckLinkerFlags, .when(platforms: [.linux]))]),
        .testTarget(name: "TonearmCoreTests", dependencies: ["TonearmCore"]),
        .testTarget(name: "TonearmFormatsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCodecsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmConvertTests", dependencies: ["TonearmConvert", "TonearmTestSupport"]),
        .testTarget(name: "TonearmPlaybackTests", dependencies: ["TonearmPlayback", "Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmStreamingTests", dependencies: ["TonearmStreaming", "Tonearm", "TonearmCLI", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCLITests", dependencies: ["TonearmCLI", "Tonearm", "TonearmTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

/// `--defsym=malloc=rtcheck_malloc` and `--export-dynamic-symbol=malloc` for each function
/// RenderAllocCheck interposes.
var renderAllocCheckLinkerFlags: [String] {
    ["malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc", "memalign",
     "valloc", "pvalloc"].flatMap { name in
        ["-Xlinker", "--defsym=\(name)=rtcheck_\(name)", "-Xlinker", "--export-dynamic-symbol=\(name)"]
    }
}
