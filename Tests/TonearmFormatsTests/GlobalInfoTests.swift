import XCTest
import Tonearm

/// Seed 003's global info: the types Tonearm reads and writes, and their names.
final class GlobalInfoTests: XCTestCase {
    func testReadableAndWritableTypes() throws {
        let readable = Set(AudioFile.readableTypes)
        for t: AudioFileTypeID in [.wave, .rf64, .bw64, .wave64, .aiff, .aifc, .caf, .next] {
            XCTAssertTrue(readable.contains(t), "\(t) is not readable")
            XCTAssertTrue(AudioFile.writableTypes.contains(t), "\(t) is not writable")
        }
        XCTAssertEqual(try AudioFile.fileTypeName(.aiff), "AIFF")
        XCTAssertEqual(try AudioFile.fileTypeName(.caf), "CAF")
        XCTAssertThrowsError(try AudioFile.fileTypeName("zzzz")) { XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedFileType) }
    }

    func testExtensionsAndMIMETypes() throws {
        XCTAssertEqual(try AudioFile.extensions(for: .caf), ["caf"])
        XCTAssertEqual(AudioFile.types(forExtension: "wav").first, .wave)
        XCTAssertEqual(AudioFile.types(forExtension: ".AIFC").first, .aifc)
        XCTAssertEqual(AudioFile.types(forMIMEType: "audio/x-caf"), [.caf])
        XCTAssertEqual(AudioFile.types(forMIMEType: "audio/wav; codecs=1").first, .wave)
        XCTAssertEqual(AudioFile.types(forHFSTypeCode: "caff"), [.caf])
        XCTAssertTrue(AudioFile.allMIMETypes.contains("audio/basic"))
        XCTAssertTrue(AudioFile.allExtensions.contains("w64"))
        XCTAssertEqual(Set(AudioFile.allExtensions).count, AudioFile.allExtensions.count, "duplicates in AllExtensions")
        XCTAssertEqual(AudioFile.GlobalInfo.readableTypes.fourCC, FourCC("afrf"))
    }

    func testAvailableFormats() throws {
        XCTAssertEqual(try AudioFile.availableFormatIDs(for: .wave), [.linearPCM, .uLaw, .aLaw])
        let wavePCM = try AudioFile.availableStreamDescriptions(for: .wave, formatID: .linearPCM)
        // WAVE holds little-endian integers (8-bit unsigned) and floats: no big-endian entries.
        XCTAssertFalse(wavePCM.isEmpty)
        XCTAssertTrue(wavePCM.allSatisfy { !$0.isBigEndian || $0.bitsPerChannel == 8 })
        let aiffPCM = try AudioFile.availableStreamDescriptions(for: .aiff, formatID: .linearPCM)
        XCTAssertTrue(aiffPCM.allSatisfy { $0.isBigEndian || $0.bitsPerChannel == 8 })
        XCTAssertEqual(try AudioFile.availableStreamDescriptions(for: .aiff, formatID: .mpeg4AAC), [])
        // CAF holds the compressed formats whose packets and cookies its writer stores.
        XCTAssertEqual(try AudioFile.availableStreamDescriptions(for: .caf, formatID: .appleLossless).map(\.formatID), [.appleLossless])
    }
}
