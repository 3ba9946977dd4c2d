// swift-tools-version: 6.1
// libFuzzer targets for Tonearm's parsers and decoders. Build with
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// and run e.g. `.build/release/FuzzParsers -max_total_time=60 -max_len=8193 corpus-FuzzParsers/`.
// Each family has a parse target (FuzzChunked, FuzzSync, FuzzMP4, FuzzFLAC, FuzzOgg, FuzzMatroska, FuzzMPEGTS) and a
// decode target (the same name + Decode). `./seed-corpora` seeds them from the fixtures.
// .ci/run builds the decode targets and FuzzDecoders a second time, into .build-decode,
// without comparison tracing (add -Xswiftc -sanitize-coverage=edge,indirect-calls,
// inline-8bit-counters,pc-table): in decoding loops it costs half the time.
// With `--traits FFmpeg` (a third build, into .build-ffmpeg), Tonearm is built with its FFmpeg
// trait, and FuzzParsers' inputs reach libavformat through the FFmpeg types' parsers.
import Foundation
import PackageDescription

// The root package's identity is its folder's name, which differs between clones.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "TonearmFuzz",
    traits: [.trait(name: "FFmpeg", description: "Build Tonearm with its FFmpeg trait")],
    dependencies: [.package(path: "..", traits: [.trait(name: "FFmpeg", condition: .when(traits: ["FFmpeg"]))])],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "Tonearm", package: root)], swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzParsers", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzDecoders", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzChunked", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzSync", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzMP4", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzFLAC", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzOgg", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzMatroska", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzMPEGTS", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzStreaming", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
        .executableTarget(name: "FuzzHLS", dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings),
    ] + ["FuzzChunkedDecode", "FuzzSyncDecode", "FuzzMP4Decode", "FuzzFLACDecode", "FuzzOggDecode",
        "FuzzMatroskaDecode", "FuzzMPEGTSDecode"].map { name in
        .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: "Tonearm", package: root)],
                          swiftSettings: fuzzSettings)
    }
)
