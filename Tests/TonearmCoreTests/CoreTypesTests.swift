import XCTest
@testable import TonearmCore

final class FourCCTests: XCTestCase {
    func testValueIsBigEndianReadingOfCharacters() {
        XCTAssertEqual(FourCC("WAVE").rawValue, UInt32(0x57) << 24 | UInt32(0x41) << 16 | UInt32(0x56) << 8 | 0x45)
        XCTAssertEqual(FourCC("aac").string, "aac ")
        XCTAssertEqual(FourCC(0x6D, 0x73, 0x00, 0x11).description, "0x6D730011")
        XCTAssertEqual(FourCC("typ?").description, "'typ?'")
        XCTAssertEqual(FourCC(rawValue: FourCC("lpcm").rawValue).string, "lpcm")
    }

    func testErrorCodesAreTheirCharacters() {
        XCTAssertEqual(AudioError.Code.unsupportedFileType.fourCC, FourCC("typ?"))
        XCTAssertEqual(AudioError.Code.dataUnavailable.rawValue, Int32(bitPattern: FourCC("more").rawValue))
        XCTAssertEqual(AudioError.Code.notOptimized.codeString, "'optm'")
        XCTAssertEqual(AudioError.Code.endOfFile.rawValue, -39)
        XCTAssertEqual(AudioError.Code.fileNotFound.codeString, "kAudioFileFileNotFoundError (-43)")
        XCTAssertEqual(AudioError.Code(rawValue: -12345).codeString, "-12345")
        XCTAssertNil(AudioError.Code.endOfFile.fourCC)
        let e = AudioError(.unsupportedFileType, "not audio")
        XCTAssertEqual(e.description, "not audio ('typ?')")
        XCTAssertEqual(e.category, .unsupported)
        XCTAssertEqual(AudioError.Code.valueUnknown.description, "value unknown ('unk?')")
        // Every AudioFileStream code of seed 000 has a name.
        let streamCodes = ["typ?", "fmt?", "pty?", "!siz", "optm", "pck?", "dta?", "unk?", "more", "nope", "wht?", "dsc!"]
        for c in streamCodes {
            let code = AudioError.Code(FourCC(c))
            XCTAssertTrue(code.description.hasSuffix("('\(c)')"), code.description)
            XCTAssertNotEqual(code.description, "'\(c)'", "code \(c) has no name")
        }
    }

    func testFileTypeAndFormatIDs() {
        XCTAssertEqual(AudioFileTypeID.ogg.fourCC.string, "Oggs")
        XCTAssertEqual(AudioFileTypeID.caf.fourCC.string, "caff")
        XCTAssertEqual(AudioFormatID.mpeg4AAC.fourCC.string, "aac ")
        XCTAssertEqual(AudioFormatID.dviIntelIMA.rawValue, 0x6D73_0011)
        XCTAssertEqual(AudioFormatID.microsoftADPCM.rawValue, 0x6D73_0002)
        XCTAssertEqual(AudioFormatFlags([.isSignedInteger, .isPacked]).rawValue, 12)
    }
}

final class StreamDescriptionTests: XCTestCase {
    func testAfinfoText() {
        let s16 = StreamDescription.pcm(sampleRate: 44100, channels: 2, bits: 16)
        XCTAssertEqual(s16.description, "2 ch, 44100 Hz, 'lpcm' (0x0000000C) 16-bit little-endian signed integer")
        let f32be = StreamDescription.pcm(sampleRate: 48000, channels: 1, bits: 32, isFloat: true, isBigEndian: true)
        XCTAssertEqual(f32be.description, "1 ch, 48000 Hz, 'lpcm' (0x0000000B) 32-bit big-endian float")
        let u8 = StreamDescription.pcm(sampleRate: 8000, channels: 1, bits: 8, isSigned: false)
        XCTAssertEqual(u8.description, "1 ch, 8000 Hz, 'lpcm' (0x00000008) 8-bit unsigned integer")
        let aac = StreamDescription(sampleRate: 44100, formatID: .mpeg4AAC, bytesPerPacket: 0, framesPerPacket: 1024,
                                    bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
        XCTAssertEqual(aac.description, "2 ch, 44100 Hz, 'aac ' (0x00000000) 0 bits/channel, 0 bytes/packet, 1024 frames/packet, 0 bytes/frame")
    }

    func testFieldsAndValidation() throws {
        let s24in32 = StreamDescription.pcm(sampleRate: 96000, channels: 2, bits: 24, bytesPerSample: 4)
        XCTAssertEqual(s24in32.bytesPerFrame, 8)
        XCTAssertTrue(s24in32.formatFlags.contains(.isAlignedHigh))
        XCTAssertFalse(s24in32.formatFlags.contains(.isPacked))
        try s24in32.validate()
        let planar = StreamDescription.float32(sampleRate: 44100, channels: 2)
        XCTAssertEqual(planar.bytesPerFrame, 4)
        XCTAssertFalse(planar.isInterleaved)
        try planar.validate()
        var bad = StreamDescription.int16(sampleRate: 44100, channels: 2)
        bad.bytesPerFrame = 3
        XCTAssertThrowsError(try bad.validate()) { XCTAssertEqual(($0 as? AudioError)?.code, .unsupportedDataFormat) }
        var nan = StreamDescription.int16(sampleRate: .nan, channels: 1)
        XCTAssertThrowsError(try nan.validate())
        nan.sampleRate = 8000
        nan.channelsPerFrame = 0
        XCTAssertThrowsError(try nan.validate())
    }
}

final class ChannelLayoutTests: XCTestCase {
    func testWaveMaskRoundTrip() {
        let l51 = ChannelLayout(waveChannelMask: 0x3F)!
        XCTAssertEqual(l51.tag, .mpeg5_1_A)
        XCTAssertEqual(l51.channelLabels, [.left, .right, .center, .lfeScreen, .leftSurround, .rightSurround])
        XCTAssertEqual(l51.waveChannelMask, 0x3F)
        XCTAssertEqual(ChannelLayout(waveChannelMask: 0x3)!.tag, .stereo)
        // 5.1 (side): FL FR FC LFE SL SR has no named tag here: a bitmap.
        let side = ChannelLayout(waveChannelMask: 0x60F)!
        XCTAssertEqual(side.tag, .useChannelBitmap)
        XCTAssertEqual(side.channelLabels, [.left, .right, .center, .lfeScreen, .leftSurroundDirect, .rightSurroundDirect])
        XCTAssertEqual(side.waveChannelMask, 0x60F)
        XCTAssertNil(ChannelLayout(waveChannelMask: 0))
        XCTAssertNil(ChannelLayout(waveChannelMask: 0x8000_0000))
        // AIFF order (L C R Ls Rs LFE) is not WAV order, so it has no mask.
        XCTAssertNil(ChannelLayout(tag: .mpeg5_1_C).waveChannelMask)
        XCTAssertEqual(ChannelLayout(tag: .stereo).description, "Stereo (L R)")
        XCTAssertEqual(ChannelLayout.Tag.mpeg5_1_A.rawValue, 121 << 16 | 6)
    }
}

final class ReaderTests: XCTestCase {
    func testByteReaderVerbs() {
        var r = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07])
        XCTAssertEqual(r.peekInteger(as: UInt16.self), 0x0102)
        XCTAssertEqual(r.readUInt16(.little), 0x0201)
        XCTAssertEqual(r.getInteger(at: 0, as: UInt32.self), 0x0102_0304)
        XCTAssertEqual(r.readUInt24(), 0x030405)
        XCTAssertNil(r.readUInt32())  // only 2 left: nil, and the index does not move
        XCTAssertEqual(r.readableBytes, 2)
        XCTAssertFalse(r.skip(3))
        XCTAssertEqual(r.readBytes(2), [6, 7])
        XCTAssertTrue(r.isAtEnd)
    }

    func testExtendedFloat() {
        // 44100 Hz as AIFF stores it: 0x400E AC44 0000 0000 0000.
        var r = ByteReader([0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(r.readFloat80(), 44100)
        for rate in [8000.0, 11025, 22050, 44100, 48000, 96000, 192000, 35467, 0.5] {
            var back = ByteReader(ByteReader.encodeExtended(rate))
            XCTAssertEqual(back.readFloat80(), rate)
        }
        XCTAssertEqual(ByteReader.encodeExtended(44100), [0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0])
        var inf = ByteReader([0x7F, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(inf.readFloat80(), .infinity)
    }

    func testBitReader() {
        var b = BitReader([0b1011_0010, 0b0111_1111, 0xFF])
        XCTAssertEqual(b.read(3), 0b101)
        XCTAssertEqual(b.readSigned(4), -7)  // 1001
        XCTAssertEqual(b.readUnary(), 2)  // 0, 0, then 1
        XCTAssertEqual(b.bitPosition, 10)
        b.alignToByte()
        XCTAssertEqual(b.bitPosition, 16)
        XCTAssertEqual(b.read(8), 0xFF)
        XCTAssertNil(b.read(1))
        XCTAssertFalse(b.skip(1))
    }

    func testMemorySource() throws {
        let m = MemorySource([1, 2, 3, 4, 5])
        XCTAssertEqual(try m.read(at: 3, count: 10), [4, 5])
        XCTAssertEqual(try m.read(at: 9, count: 2), [])
        XCTAssertThrowsError(try m.read(at: -1, count: 1))
    }
}

final class PCMBufferTests: XCTestCase {
    func testPlanarAndInterleavedAccess() {
        let planar = PCMBuffer(commonFormat: .float32, sampleRate: 48000, channels: 2, interleaved: false, frameCapacity: 4)
        planar.withUnsafeMutableSamples(Float.self) { p in for i in 0..<8 { p[i] = Float(i) } }
        planar.frameLength = 3
        XCTAssertEqual(planar.floatSamples(channel: 1), [4, 5, 6])
        let inter = PCMBuffer(commonFormat: .int16, sampleRate: 8000, channels: 2, interleaved: true, frameCapacity: 3)
        inter.withUnsafeMutableSamples(Int16.self) { p in for i in 0..<6 { p[i] = Int16(i) - 3 } }
        inter.frameLength = 3
        XCTAssertEqual(inter.int16Samples(channel: 0), [-3, -1, 1])
        XCTAssertEqual(inter.interleavedBytes(), [0xFD, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 1, 0, 2, 0])
        // Planar storage comes out interleaved, only the valid frames (channel 1 starts at the
        // capacity, 4).
        XCTAssertEqual(planar.interleavedBytes(), [0, 4, 1, 5, 2, 6].flatMap { (v: Float) in
            withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init)
        })
        planar.frameLength = 0
        XCTAssertEqual(planar.interleavedBytes(), [])
        XCTAssertEqual(PCMBuffer.commonFormat(of: .int16(sampleRate: 1, channels: 1)), .int16)
        XCTAssertNil(PCMBuffer.commonFormat(of: .pcm(sampleRate: 1, channels: 1, bits: 24)))
    }
}
