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
        .executable(name: "tonearm", targets: ["tonearm"]),
        .executable(name: "tonearm-bench", targets: ["tonearm-bench"]),
    ],
    targets: [
        .target(name: "TonearmCore"),
        .target(name: "TonearmFormats", dependencies: ["TonearmCore"]),
        .target(name: "TonearmCodecs", dependencies: ["TonearmCore"]),
        .target(name: "TonearmConvert", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs"]),
        .target(name: "TonearmPlayback", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert"]),
        .target(name: "Tonearm", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert",
                                                "TonearmPlayback"]),
        .target(name: "TonearmCLI", dependencies: ["Tonearm"]),
        .executableTarget(name: "tonearm", dependencies: ["TonearmCLI"]),
        .executableTarget(name: "tonearm-bench", dependencies: ["TonearmCLI"]),
        .target(name: "TonearmTestSupport", dependencies: ["Tonearm"], path: "Tests/TonearmTestSupport"),
        .testTarget(name: "TonearmCoreTests", dependencies: ["TonearmCore"]),
        .testTarget(name: "TonearmFormatsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCodecsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmConvertTests", dependencies: ["TonearmConvert", "TonearmTestSupport"]),
        .testTarget(name: "TonearmPlaybackTests", dependencies: ["TonearmPlayback", "Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCLITests", dependencies: ["TonearmCLI", "Tonearm", "TonearmTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
