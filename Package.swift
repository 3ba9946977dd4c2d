// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tonearm",
    products: [
        .library(name: "Tonearm", targets: ["Tonearm"]),
        .library(name: "TonearmCore", targets: ["TonearmCore"]),
        .library(name: "TonearmFormats", targets: ["TonearmFormats"]),
        .library(name: "TonearmCodecs", targets: ["TonearmCodecs"]),
        .library(name: "TonearmConvert", targets: ["TonearmConvert"]),
        .executable(name: "tonearm", targets: ["tonearm"]),
        .executable(name: "tonearm-bench", targets: ["tonearm-bench"]),
    ],
    targets: [
        .target(name: "TonearmCore"),
        .target(name: "TonearmFormats", dependencies: ["TonearmCore"]),
        .target(name: "TonearmCodecs", dependencies: ["TonearmCore"]),
        .target(name: "TonearmConvert", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs"]),
        .target(name: "Tonearm", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert"]),
        .target(name: "TonearmCLI", dependencies: ["Tonearm"]),
        .executableTarget(name: "tonearm", dependencies: ["TonearmCLI"]),
        .executableTarget(name: "tonearm-bench", dependencies: ["TonearmCLI"]),
        .target(name: "TonearmTestSupport", dependencies: ["Tonearm"], path: "Tests/TonearmTestSupport"),
        .testTarget(name: "TonearmCoreTests", dependencies: ["TonearmCore"]),
        .testTarget(name: "TonearmFormatsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCodecsTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmConvertTests", dependencies: ["TonearmConvert", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCLITests", dependencies: ["TonearmCLI", "Tonearm", "TonearmTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
