import TonearmCore

/// AC-3 (ATSC A/52) and E-AC-3 (A/52 Annex E) sync frames for ``FramedParser``.
///
/// Both begin with the sync word 0x0B77, and both keep the 5-bit bsid at the top of byte 5:
/// up to 10 for AC-3, 11–16 for E-AC-3.
///
/// - AC-3: CRC (16 bits), fscod (2: 48, 44.1, 32 kHz), frmsizecod (6), then bsid, bsmod,
///   acmod (3) and, depending on acmod, mix levels before lfeon. 1536 frames per packet.
/// - E-AC-3: strmtyp (2), substreamid (3), frmsiz (11: words − 1), fscod (2; 3 means a
///   half rate in fscod2), numblkscod (2: 1, 2, 3 or 6 blocks of 256 frames), acmod (3),
///   lfeon (1), bsid (5).
///
/// A packet is one sync frame, except in E-AC-3 with dependent substreams (strmtyp 1,
/// §E.1.3.1.1): an access unit is an independent frame and the dependent frames after it
/// (7.1 as 5.1 plus a pair), handed out as one packet, as ffmpeg's parser does. Its
/// channels are the independent frame's and those the dependent frames add: a frame with
/// a custom channel map (chanmape) adds the channels of its map that are new, one without
/// replaces channels of the same names.
public struct AC3Format: FramedFormat {
    public struct Header: Sendable, Equatable {
        public var isEnhanced: Bool
        public var length: Int
        public var sampleRate: Int
        public var framesPerFrame: Int
        public var acmod: Int
        public var lfe: Bool
        public var bitRate: Int
        /// E-AC-3 stream type (0 independent, 1 dependent, 2 AC-3 converted).
        public var streamType: Int
        /// E-AC-3 substream id (0–7).
        public var substreamID: Int
        public var isDependent: Bool { isEnhanced && streamType == 1 }

        /// Full-bandwidth channels by acmod (1+1 dual mono counts as two).
        static let channelsByMode = [2, 1, 2, 3, 3, 4, 4, 5]
        public var channels: Int { Header.channelsByMode[acmod] + (lfe ? 1 : 0) }

        /// AC-3 bit rates in kbit/s by frmsizecod / 2.
        static let bitRates = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]

        public init?(_ p: UnsafeRawPointer) {
            guard byteAt(p, 0) == 0x0B, byteAt(p, 1) == 0x77 else { return nil }
            let bsid = Int(byteAt(p, 5) >> 3)
            if bsid <= 10 {
                let fscod = Int(byteAt(p, 4) >> 6), frmsizecod = Int(byteAt(p, 4) & 0x3F)
                guard fscod != 3, frmsizecod < 38 else { return nil }
                let kbps = Header.bitRates[frmsizecod >> 1]
                let rate = [48000, 44100, 32000][fscod]
                // 16-bit words per frame: bit rate × 1536 / (rate × 16); at 44.1 kHz the
                // odd codes add one word to make the average right.
                let words = fscod == 0 ? kbps * 2 : fscod == 2 ? kbps * 3 : kbps * 96000 / 44100 + (frmsizecod & 1)
                isEnhanced = false
                length = words * 2
                sampleRate = rate
                framesPerFrame = 1536
                bitRate = kbps * 1000
                streamType = 0
                substreamID = 0
                // bsi: bsid (5) bsmod (3) | acmod (3), optional 2-bit fields, lfeon.
                let b6 = Int(byteAt(p, 6)), b7 = Int(byteAt(p, 7))
                acmod = b6 >> 5
                var bit = 3  // bits of byte 6 used so far
                if acmod & 1 != 0 && acmod != 1 { bit += 2 }  // cmixlev
                if acmod & 4 != 0 { bit += 2 }  // surmixlev
                if acmod == 2 { bit += 2 }  // dsurmod
                let word = b6 << 8 | b7
                lfe = word >> (15 - bit) & 1 == 1
            } else if bsid <= 16 {
                let b2 = Int(byteAt(p, 2)), b4 = Int(byteAt(p, 4))
                streamType = b2 >> 6
                guard streamType != 3 else { return nil }
                substreamID = b2 >> 3 & 7
                let frmsiz = (b2 & 7) << 8 | Int(byteAt(p, 3))
                length = (frmsiz + 1) * 2
                let fscod = b4 >> 6
                var blocks = 6
                if fscod == 3 {
                    let fscod2 = b4 >> 4 & 3
                    guard fscod2 != 3 else { return nil }
                    sampleRate = [24000, 22050, 16000][fscod2]
                } else {
                    sampleRate = [48000, 44100, 32000][fscod]
                    blocks = [1, 2, 3, 6][b4 >> 4 & 3]
                }
                framesPerFrame = 256 * blocks
                acmod = b4 >> 1 & 7
                lfe = b4 & 1 == 1
                isEnhanced = true
                bitRate = length * 8 * sampleRate / framesPerFrame
            } else {
                return nil
            }
            guard length >= 8 else { return nil }
        }

        /// Consecutive frames agree on the kind (AC-3 or E-AC-3), rate and frames per frame.
        var streamKey: UInt32 { (isEnhanced ? 1 << 24 : 0) | UInt32(sampleRate) << 4 | UInt32(framesPerFrame >> 8) }

        /// The channels of the frame as positions of E-AC-3's custom channel map (Table
        /// E.1.4, bit 0 the most significant): L 0, C 1, R 2, Ls 3, Rs 4, Cs 7, LFE 15.
        var channelPositions: UInt16 {
            let l: UInt16 = 1 << 15, c: UInt16 = 1 << 14, r: UInt16 = 1 << 13, ls: UInt16 = 1 << 12, rs: UInt16 = 1 << 11
            let cs: UInt16 = 1 << 8
            let byMode: [UInt16] = [l | r, c, l | r, l | c | r, l | r | cs, l | c | r | cs, l | r | ls | rs, l | c | r | ls | rs]
            return byMode[acmod] | (lfe ? 1 : 0)
        }

        /// The custom channel map of a dependent E-AC-3 frame (§E.1.2.2: after dialnorm,
        /// compre and, for 1+1, their second set, come chanmape and chanmap), or nil when
        /// it has none. `p` holds the frame's first 16 bytes.
        static func customChannelMap(_ p: UnsafeRawBufferPointer) -> UInt16? {
            var r = BitReader(Array(p.prefix(16)))
            guard let b = r.read(40), b >> 30 & 3 == 1 else { return nil }  // strmtyp 1
            let acmod = Int(b >> 1 & 7)
            _ = r.read(5)  // bsid
            for _ in 0..<(acmod == 0 ? 2 : 1) {
                _ = r.read(5)  // dialnorm
                if r.read(1) == 1 { _ = r.read(8) }  // compre, compr
            }
            guard r.read(1) == 1, let map = r.read(16) else { return nil }
            return UInt16(map)
        }

        /// Channels of a custom channel map: the pairs (Lc/Rc, Lrs/Rrs, Lsd/Rsd, Lw/Rw,
        /// Lvh/Rvh, Lts/Rts) count two.
        static func channelCount(_ positions: UInt16) -> Int {
            let pairs: UInt16 = 1 << 10 | 1 << 9 | 1 << 6 | 1 << 5 | 1 << 4 | 1 << 2
            return positions.nonzeroBitCount + (positions & pairs).nonzeroBitCount
        }
    }

    public private(set) var first: Header?
    /// Frames in the first packet (more than one with dependent substreams).
    public private(set) var framesInFirstPacket = 1

    public init() {}

    public var headerSize: Int { 8 }
    /// ID3v2 tags may lead the stream (ffmpeg reads them in front of any raw stream), and
    /// ID3v1 or APEv2 tags may end it.
    public var hasTags: Bool { true }
    public var joinsFrames: Bool { true }
    public var announcementOrder: [AudioFilePropertyID] {
        [.fileFormat, .dataFormat, .bitRate, .audioDataByteCount, .audioDataPacketCount, .dataOffset, .maximumPacketSize]
    }
    /// The largest AC-3 frame is 3840 bytes (640 kbit/s at 32 kHz); E-AC-3's 11-bit size
    /// allows 4096, for each frame of the first packet.
    public var packetSizeUpperBound: UInt32 { first?.isEnhanced == true ? 4096 * UInt32(framesInFirstPacket) : 3840 }

    @inline(__always)
    public func header(at p: UnsafeRawPointer) -> FrameHeader? {
        guard byteAt(p, 0) == 0x0B, let h = Header(p) else { return nil }
        return FrameHeader(length: h.length, streamKey: h.streamKey, bitRate: h.bitRate, joinsPrevious: h.isDependent)
    }

    public mutating func firstFrame(_ header: FrameHeader, bytes: UnsafeRawBufferPointer, offset: Int64,
                                    properties p: inout FileProperties) throws(AudioError) -> FirstFrameRole
    {
        guard let h = Header(bytes.baseAddress!) else { throw AudioError.malformed("not an AC-3 header") }
        first = h
        // The dependent frames of the packet add channels (§E.3.8.2).
        var positions = h.channelPositions
        var at = h.length
        framesInFirstPacket = 1
        while at + 8 <= bytes.count, let d = Header(bytes.baseAddress! + at), d.isDependent, at + d.length <= bytes.count {
            let frame = UnsafeRawBufferPointer(rebasing: bytes[at..<at + d.length])
            positions |= Header.customChannelMap(frame) ?? d.channelPositions
            framesInFirstPacket += 1
            at += d.length
        }
        let channels = framesInFirstPacket > 1 ? Header.channelCount(positions) : h.channels
        p.fileType = h.isEnhanced ? .eac3 : .ac3
        p.dataFormat = StreamDescription(sampleRate: Double(h.sampleRate), formatID: h.isEnhanced ? .enhancedAC3 : .ac3,
                                         bytesPerPacket: 0, framesPerPacket: UInt32(h.framesPerFrame), bytesPerFrame: 0,
                                         channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        p.dataFormatName = h.isEnhanced ? "Enhanced AC-3" : "AC-3"
        return .audio
    }
}
