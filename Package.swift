// swift-tools-version: 6.1
import PackageDescription

/// TonearmFFmpeg, for the targets that use it when the FFmpeg trait is on.
// (Defined before `package`: top-level code runs in order.)
let ffmpeg: Target.Dependency = .target(name: "TonearmFFmpeg", condition: .when(traits: ["FFmpeg"]))

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
        .executable(name: "queue-player", targets: ["queue-player"]),
    ],
    // Off by default: the default build is pure Swift and links no FFmpeg library.
    traits: [
        .trait(name: "FFmpeg", description: """
            Decode, demux and stream what Tonearm has no native code for (WMA, DTS, WavPack, APE, \
            ASF, Matroska, MPEG-TS, mms, rtsp...) through the system's libavformat, libavcodec, \
            libavutil and libswresample, found by pkg-config.
            """),
    ],
    targets: [
        .target(name: "TonearmCore"),
        .target(name: "TonearmFormats", dependencies: ["TonearmCore", ffmpeg]),
        .target(name: "TonearmCodecs", dependencies: ["TonearmCore", ffmpeg]),
        // With the FFmpeg trait: the C libraries, and Tonearm's layer over them, which the
        // codec and format registries use at fallback rank. Without it, an empty module.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat libavcodec libavutil libswresample",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "pkg-config"]),
                                   .brew(["ffmpeg", "pkg-config"])]),
        .target(name: "TonearmFFmpeg", dependencies: ["TonearmCore", .target(name: "CFFmpeg", condition: .when(traits: ["FFmpeg"]))]),
        .target(name: "TonearmConvert", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", ffmpeg]),
        .target(name: "TonearmPlayback", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert"]),
        .target(name: "TonearmStreaming", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert", "TonearmPlayback",
                                                         ffmpeg]),
        .target(name: "Tonearm", dependencies: ["TonearmCore", "TonearmFormats", "TonearmCodecs", "TonearmConvert",
                                                "TonearmPlayback", "TonearmStreaming", ffmpeg]),
        .target(name: "TonearmCLI", dependencies: ["Tonearm"]),
        .executableTarget(name: "tonearm", dependencies: ["TonearmCLI"]),
        .executableTarget(name: "tonearm-bench", dependencies: ["TonearmCLI"]),
        // Seed 002's player: FFmpeg decodes, an AudioQueue with three buffers plays.
        .executableTarget(name: "queue-player", dependencies: ["Tonearm"], path: "Examples/QueuePlayer"),
        .target(name: "TonearmTestSupport", dependencies: ["Tonearm"], path: "Tests/TonearmTestSupport"),
        // Test-only: counts the heap calls playback's render paths make (see its main.swift);
        // RenderAllocationTests runs it. The linker aliases and exports its malloc family so that
        // it interposes glibc's for every library in the process.
        .executableTarget(name: "RenderAllocCheck", dependencies: ["TonearmCore", "TonearmFormats", "TonearmConvert", "TonearmPlayback"],
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
