import Tonearm
import XCTest

/// Every four-char constant of the package against Apple's headers (AudioFile.h,
/// AudioFileStream.h, AudioFormat.h, CoreAudioBaseTypes.h, AudioConverter.h, AudioCodec.h,
/// AudioQueue.h, AUComponent.h, AudioHardwareBase.h). Each value is computed here from
/// Apple's four characters (or Apple's number), never from Tonearm's own FourCC type.
final class FourCharCodeAuditTests: XCTestCase {
    /// The big-endian value of four ASCII characters, as a C multi-character constant.
    func fcc(_ s: String) -> UInt32 {
        let b = Array(s.utf8)
        precondition(b.count == 4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }

    func testAudioFilePropertyIDs() {
        let expected: [(AudioFilePropertyID, String)] = [
            // AudioFileStream.h
            (.readyToProducePackets, "redy"),  // kAudioFileStreamProperty_ReadyToProducePackets
            (.fileFormat, "ffmt"),  // kAudioFileStreamProperty_FileFormat, kAudioFilePropertyFileFormat
            (.dataFormat, "dfmt"),  // kAudioFileStreamProperty_DataFormat, kAudioFilePropertyDataFormat
            (.formatList, "flst"),  // kAudioFileStreamProperty_FormatList, kAudioFilePropertyFormatList
            (.magicCookieData, "mgic"),  // kAudioFileStreamProperty_MagicCookieData, kAudioFilePropertyMagicCookieData
            (.audioDataByteCount, "bcnt"),  // kAudioFileStreamProperty_AudioDataByteCount
            (.audioDataPacketCount, "pcnt"),  // kAudioFileStreamProperty_AudioDataPacketCount
            (.maximumPacketSize, "psze"),  // kAudioFileStreamProperty_MaximumPacketSize
            (.dataOffset, "doff"),  // kAudioFileStreamProperty_DataOffset
            (.channelLayout, "cmap"),  // kAudioFileStreamProperty_ChannelLayout
            (.packetToFrame, "pkfr"),  // kAudioFileStreamProperty_PacketToFrame
            (.frameToPacket, "frpk"),  // kAudioFileStreamProperty_FrameToPacket
            (.restrictsRandomAccess, "rrap"),  // kAudioFileStreamProperty_RestrictsRandomAccess
            (.packetToRollDistance, "pkrl"),  // kAudioFileStreamProperty_PacketToRollDistance
            (.previousIndependentPacket, "pind"),  // kAudioFileStreamProperty_PreviousIndependentPacket
            (.nextIndependentPacket, "nind"),  // kAudioFileStreamProperty_NextIndependentPacket
            (.packetToDependencyInfo, "pkdp"),  // kAudioFileStreamProperty_PacketToDependencyInfo
            (.packetToByte, "pkby"),  // kAudioFileStreamProperty_PacketToByte
            (.byteToPacket, "bypk"),  // kAudioFileStreamProperty_ByteToPacket
            (.packetTableInfo, "pnfo"),  // kAudioFileStreamProperty_PacketTableInfo
            (.packetSizeUpperBound, "pkub"),  // kAudioFileStreamProperty_PacketSizeUpperBound
            (.averageBytesPerPacket, "abpp"),  // kAudioFileStreamProperty_AverageBytesPerPacket
            (.bitRate, "brat"),  // kAudioFileStreamProperty_BitRate
            (.infoDictionary, "info"),  // kAudioFileStreamProperty_InfoDictionary
            // AudioFile.h
            (.isOptimized, "optm"),  // kAudioFilePropertyIsOptimized
            (.deferSizeUpdates, "dszu"),  // kAudioFilePropertyDeferSizeUpdates
            (.dataFormatName, "fnme"),  // kAudioFilePropertyDataFormatName (was 'dszu' before issue 16)
            (.markerList, "mkls"),  // kAudioFilePropertyMarkerList
            (.regionList, "rgls"),  // kAudioFilePropertyRegionList
            (.chunkIDs, "chid"),  // kAudioFilePropertyChunkIDs
            (.estimatedDuration, "edur"),  // kAudioFilePropertyEstimatedDuration
            (.id3Tag, "id3t"),  // kAudioFilePropertyID3Tag
            (.sourceBitDepth, "sbtd"),  // kAudioFilePropertySourceBitDepth
            (.albumArtwork, "aart"),  // kAudioFilePropertyAlbumArtwork
        ]
        for (id, chars) in expected { XCTAssertEqual(id.rawValue, fcc(chars), chars) }
        XCTAssertEqual(AudioFilePropertyID.streamProperties.count, 24)
        XCTAssertEqual(Set(expected.map(\.0.rawValue)).count, expected.count, "two names share a value")
    }

    func testGlobalInfoIDs() {
        let expected: [(AudioFile.GlobalInfo, String)] = [
            (.readableTypes, "afrf"),  // kAudioFileGlobalInfo_ReadableTypes
            (.writableTypes, "afwf"),  // kAudioFileGlobalInfo_WritableTypes
            (.fileTypeName, "ftnm"),  // kAudioFileGlobalInfo_FileTypeName
            (.availableFormatIDs, "fmid"),  // kAudioFileGlobalInfo_AvailableFormatIDs
            (.availableStreamDescriptionsForFormat, "sdid"),  // kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat
            (.allExtensions, "alxt"),  // kAudioFileGlobalInfo_AllExtensions
            (.allMIMETypes, "amim"),  // kAudioFileGlobalInfo_AllMIMETypes
            (.allUTIs, "auti"),  // kAudioFileGlobalInfo_AllUTIs
            (.allHFSTypeCodes, "ahfs"),  // kAudioFileGlobalInfo_AllHFSTypeCodes
            (.extensionsForType, "fext"),  // kAudioFileGlobalInfo_ExtensionsForType
            (.mimeTypesForType, "fmim"),  // kAudioFileGlobalInfo_MIMETypesForType
            (.utisForType, "futi"),  // kAudioFileGlobalInfo_UTIsForType
            (.hfsTypeCodesForType, "fhfs"),  // kAudioFileGlobalInfo_HFSTypeCodesForType
            (.typesForMIMEType, "tmim"),  // kAudioFileGlobalInfo_TypesForMIMEType
            (.typesForUTI, "tuti"),  // kAudioFileGlobalInfo_TypesForUTI
            (.typesForHFSTypeCode, "thfs"),  // kAudioFileGlobalInfo_TypesForHFSTypeCode
            (.typesForExtension, "text"),  // kAudioFileGlobalInfo_TypesForExtension
        ]
        for (id, chars) in expected { XCTAssertEqual(id.fourCC.rawValue, fcc(chars), chars) }
        XCTAssertEqual(AudioFile.GlobalInfo.allCases.count, expected.count)
    }

    func testFileTypeIDs() {
        let expected: [(AudioFileTypeID, String)] = [
            (.aiff, "AIFF"),  // kAudioFileAIFFType
            (.aifc, "AIFC"),  // kAudioFileAIFCType
            (.wave, "WAVE"),  // kAudioFileWAVEType
            (.rf64, "RF64"),  // kAudioFileRF64Type
            (.bw64, "BW64"),  // kAudioFileBW64Type
            (.wave64, "W64f"),  // kAudioFileWave64Type
            (.next, "NeXT"),  // kAudioFileNextType
            (.caf, "caff"),  // kAudioFileCAFType
            (.mp1, "MPG1"),  // kAudioFileMP1Type
            (.mp2, "MPG2"),  // kAudioFileMP2Type
            (.mp3, "MPG3"),  // kAudioFileMP3Type
            (.adts, "adts"),  // kAudioFileAAC_ADTSType
            (.loas, "loas"),  // kAudioFileLATMInLOASType
            (.mpeg4, "mp4f"),  // kAudioFileMPEG4Type
            (.m4a, "m4af"),  // kAudioFileM4AType
            (.m4b, "m4bf"),  // kAudioFileM4BType
            (.threeGP, "3gpp"),  // kAudioFile3GPType
            (.threeGP2, "3gp2"),  // kAudioFile3GP2Type
            (.amr, "amrf"),  // kAudioFileAMRType
            (.ac3, "ac-3"),  // kAudioFileAC3Type
            (.eac3, "ec-3"),  // kAudioFileEAC3Type
            (.flac, "flac"),  // kAudioFileFLACType
            (.soundDesigner2, "Sd2f"),  // kAudioFileSoundDesigner2Type
            (.ogg, "Oggs"),  // Tonearm's own: Apple has no Ogg type
        ]
        for (id, chars) in expected { XCTAssertEqual(id.rawValue, fcc(chars), chars) }
    }

    func testFormatIDsAndFlags() {
        let expected: [(AudioFormatID, UInt32, String)] = [
            (.linearPCM, fcc("lpcm"), "kAudioFormatLinearPCM"),
            (.uLaw, fcc("ulaw"), "kAudioFormatULaw"),
            (.aLaw, fcc("alaw"), "kAudioFormatALaw"),
            (.appleIMA4, fcc("ima4"), "kAudioFormatAppleIMA4"),
            (.dviIntelIMA, 0x6D73_0011, "kAudioFormatDVIIntelIMA ('ms' 0 17)"),
            (.microsoftADPCM, 0x6D73_0002, "Tonearm's, after Apple's 'ms'+WAVE tag pattern; not in Apple's headers"),
            (.mpegLayer1, fcc(".mp1"), "kAudioFormatMPEGLayer1"),
            (.mpegLayer2, fcc(".mp2"), "kAudioFormatMPEGLayer2"),
            (.mpegLayer3, fcc(".mp3"), "kAudioFormatMPEGLayer3"),
            (.mpeg4AAC, fcc("aac "), "kAudioFormatMPEG4AAC"),
            (.mpeg4AAC_HE, fcc("aach"), "kAudioFormatMPEG4AAC_HE"),
            (.mpeg4AAC_HE_V2, fcc("aacp"), "kAudioFormatMPEG4AAC_HE_V2"),
            (.mpeg4AAC_LD, fcc("aacl"), "kAudioFormatMPEG4AAC_LD"),
            (.mpeg4AAC_ELD, fcc("aace"), "kAudioFormatMPEG4AAC_ELD"),
            (.appleLossless, fcc("alac"), "kAudioFormatAppleLossless"),
            (.flac, fcc("flac"), "kAudioFormatFLAC"),
            (.opus, fcc("opus"), "kAudioFormatOpus"),
            (.ac3, fcc("ac-3"), "kAudioFormatAC3"),
            (.enhancedAC3, fcc("ec-3"), "kAudioFormatEnhancedAC3"),
            (.amr, fcc("samr"), "kAudioFormatAMR"),
            (.amrWB, fcc("sawb"), "kAudioFormatAMR_WB"),
            (.vorbis, fcc("vorb"), "Tonearm's: Apple has no Vorbis ID"),
            (.speex, fcc("spx "), "Tonearm's: Apple has no Speex ID"),
        ]
        for (id, value, name) in expected { XCTAssertEqual(id.rawValue, value, name) }

        // CoreAudioBaseTypes.h, kAudioFormatFlag…
        let flags: [(AudioFormatFlags, UInt32, String)] = [
            (.isFloat, 1 << 0, "kAudioFormatFlagIsFloat"),
            (.isBigEndian, 1 << 1, "kAudioFormatFlagIsBigEndian"),
            (.isSignedInteger, 1 << 2, "kAudioFormatFlagIsSignedInteger"),
            (.isPacked, 1 << 3, "kAudioFormatFlagIsPacked"),
            (.isAlignedHigh, 1 << 4, "kAudioFormatFlagIsAlignedHigh"),
            (.isNonInterleaved, 1 << 5, "kAudioFormatFlagIsNonInterleaved"),
            (.isNonMixable, 1 << 6, "kAudioFormatFlagIsNonMixable"),
        ]
        for (flag, value, name) in flags { XCTAssertEqual(flag.rawValue, value, name) }
        // AudioFile.h and AudioFileStream.h flags.
        XCTAssertEqual(AudioFile.Permissions.read.rawValue, 1)  // kAudioFileReadPermission
        XCTAssertEqual(AudioFile.Permissions.write.rawValue, 2)  // kAudioFileWritePermission
        XCTAssertEqual(AudioFile.Permissions.readWrite.rawValue, 3)  // kAudioFileReadWritePermission
        XCTAssertEqual(AudioFile.CreateFlags.eraseFile.rawValue, 1)  // kAudioFileFlags_EraseFile
        XCTAssertEqual(AudioFile.CreateFlags.dontPageAlignAudioData.rawValue, 2)  // kAudioFileFlags_DontPageAlignAudioData
        XCTAssertEqual(AudioFileStream.PropertyFlags.propertyIsCached.rawValue, 1)  // kAudioFileStreamPropertyFlag_PropertyIsCached
        XCTAssertEqual(AudioFileStream.PropertyFlags.cacheProperty.rawValue, 2)  // kAudioFileStreamPropertyFlag_CacheProperty
        XCTAssertEqual(AudioFileStream.ParseFlags.discontinuity.rawValue, 1)  // kAudioFileStreamParseFlag_Discontinuity
        XCTAssertEqual(AudioFileStream.SeekFlags.offsetIsEstimated.rawValue, 1)  // kAudioFileStreamSeekFlag_OffsetIsEstimated
        // AudioConverter.h, kAudioConverterSampleRateConverterComplexity_…
        XCTAssertEqual(SampleRateConverterComplexity.linear.fourCC.rawValue, fcc("line"))
        XCTAssertEqual(SampleRateConverterComplexity.normal.fourCC.rawValue, fcc("norm"))
        XCTAssertEqual(SampleRateConverterComplexity.mastering.fourCC.rawValue, fcc("bats"))
    }

    func testErrorCodes() {
        func code(_ s: String) -> Int32 { Int32(bitPattern: fcc(s)) }
        let expected: [(AudioError.Code, Int32, String)] = [
            // AudioFileStream.h and AudioFile.h
            (.unsupportedFileType, code("typ?"), "kAudioFileStreamError_UnsupportedFileType, kAudioFileUnsupportedFileTypeError"),
            (.unsupportedDataFormat, code("fmt?"), "kAudioFileStreamError_UnsupportedDataFormat, kAudioFileUnsupportedDataFormatError"),
            (.unsupportedProperty, code("pty?"), "kAudioFileStreamError_UnsupportedProperty, kAudioFileUnsupportedPropertyError"),
            (.badPropertySize, code("!siz"), "kAudioFileStreamError_BadPropertySize, kAudioFileBadPropertySizeError"),
            (.notOptimized, code("optm"), "kAudioFileStreamError_NotOptimized, kAudioFileNotOptimizedError"),
            (.invalidPacketOffset, code("pck?"), "kAudioFileStreamError_InvalidPacketOffset, kAudioFileInvalidPacketOffsetError"),
            (.invalidFile, code("dta?"), "kAudioFileStreamError_InvalidFile, kAudioFileInvalidFileError"),
            (.valueUnknown, code("unk?"), "kAudioFileStreamError_ValueUnknown"),
            (.dataUnavailable, code("more"), "kAudioFileStreamError_DataUnavailable"),
            (.illegalOperation, code("nope"), "kAudioFileStreamError_IllegalOperation"),
            (.unspecified, code("wht?"), "kAudioFileStreamError_UnspecifiedError, kAudioFileUnspecifiedError"),
            (.discontinuityCantRecover, code("dsc!"), "kAudioFileStreamError_DiscontinuityCantRecover"),
            (.permissions, code("prm?"), "kAudioFilePermissionsError"),
            (.invalidChunk, code("chk?"), "kAudioFileInvalidChunkError"),
            (.doesNotAllow64BitDataSize, code("off?"), "kAudioFileDoesNotAllow64BitDataSizeError"),
            (.invalidPacketDependency, code("dep?"), "kAudioFileInvalidPacketDependencyError"),
            (.operationNotSupported, code("op??"), "kAudioFileOperationNotSupportedError (0x6F703F3F)"),
            (.notOpen, -38, "kAudioFileNotOpenError"),
            (.endOfFile, -39, "kAudioFileEndOfFileError"),
            (.position, -40, "kAudioFilePositionError"),
            (.fileNotFound, -43, "kAudioFileFileNotFoundError"),
            (.parameter, -50, "kAudio_ParamError"),
            // AudioConverter.h and AudioCodec.h
            (.invalidInputSize, code("insz"), "kAudioConverterErr_InvalidInputSize"),
            (.invalidOutputSize, code("otsz"), "kAudioConverterErr_InvalidOutputSize"),
            (.propertyNotSupported, code("prop"), "kAudioConverterErr_PropertyNotSupported"),
            (.requiresPacketDescriptions, code("!pkd"), "kAudioConverterErr_RequiresPacketDescriptionsError"),
            (.inputSampleRateOutOfRange, code("!isr"), "kAudioConverterErr_InputSampleRateOutOfRange"),
            (.outputSampleRateOutOfRange, code("!osr"), "kAudioConverterErr_OutputSampleRateOutOfRange"),
            (.codecUnsupportedFormat, code("!dat"), "kAudioCodecUnsupportedFormatError"),
            (.codecState, code("!stt"), "kAudioCodecStateError"),
            (.codecBadData, code("bada"), "kAudioCodecBadDataError"),
            // AudioHardwareBase.h, AUComponent.h, AudioQueue.h
            (.badDevice, code("!dev"), "kAudioHardwareBadDeviceError"),
            (.hardwareNotRunning, code("stop"), "kAudioHardwareNotRunningError"),
            (.uninitialized, -10867, "kAudioUnitErr_Uninitialized"),
            (.formatNotSupported, -10868, "kAudioUnitErr_FormatNotSupported"),
            (.invalidBuffer, -66687, "kAudioQueueErr_InvalidBuffer"),
            (.bufferEmpty, -66686, "kAudioQueueErr_BufferEmpty"),
            (.cannotStart, -66681, "kAudioQueueErr_CannotStart"),
            (.invalidRunState, -66678, "kAudioQueueErr_InvalidRunState (was -66679, kAudioQueueErr_BufferInQueue)"),
        ]
        for (c, value, name) in expected { XCTAssertEqual(c.rawValue, value, name) }
    }
}
