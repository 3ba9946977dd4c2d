import TonearmCore

/// Runs a ``FormatParser`` over bytes: either pushed in order (``AudioFileStream``) or
/// pulled from a seekable source (``AudioFile``). One driver, one parser, both paths.
final class ParserDriver {
    let parser: FormatParser
    /// Most bytes the driver will hold while a parser waits for a header to complete.
    static let maximumBufferedBytes = 64 << 20

    private var buffer: [UInt8] = []
    private var head = 0
    /// Absolute offset of `buffer[head]`.
    private(set) var offset: Int64 = 0
    /// Bytes of the incoming stream still to drop for a forward seek.
    private var skipRemaining: Int64 = 0
    private(set) var isFinished = false

    var onProperty: (AudioFilePropertyID) -> Void = { _ in }
    var onPackets: (UnsafeRawBufferPointer, Int, [PacketDescription]?) -> Void = { _, _, _ in }
    /// Out-of-order reads for the parser (see ``ParserInput/fetch``).
    var fetch: ByteRangeFetcher?

    init(parser: FormatParser) { self.parser = parser }

    var bufferedCount: Int { buffer.count - head }

    /// Pushes bytes that follow the previous ones. `nil` bytes or `endOfStream` flush.
    func push(_ bytes: UnsafeRawBufferPointer, endOfStream: Bool, sourceSize: Int64? = nil) throws(AudioError) {
        guard !isFinished else { return }
        var incoming = bytes
        if skipRemaining > 0 {
            let drop = Int(min(Int64(incoming.count), skipRemaining))
            skipRemaining -= Int64(drop)
            offset += Int64(drop)
            incoming = UnsafeRawBufferPointer(rebasing: incoming[drop...])
        }
        if !incoming.isEmpty {
            compact()
            buffer.append(contentsOf: incoming)
        }
        try run(endOfStream: endOfStream, canSeek: false, wantsPackets: true, sourceSize: sourceSize) { target throws(AudioError) in
            throw AudioError(.notOptimized,
                             "the file needs data at byte \(target), before the current position \(self.offset); a stream cannot go back")
        }
        if bufferedCount > ParserDriver.maximumBufferedBytes {
            throw AudioError.limit("a header is larger than \(ParserDriver.maximumBufferedBytes) bytes")
        }
    }

    /// After a seek in a push stream: drop what is buffered; the next bytes begin at `newOffset`.
    func restart(at newOffset: Int64) {
        buffer.removeAll(keepingCapacity: true)
        head = 0
        skipRemaining = 0
        offset = newOffset
        isFinished = false
    }

    /// Pulls bytes from a seekable source until the parser has read what it needs
    /// (all properties, and packets only if `wantsPackets`).
    func pull(from source: MediaSource, wantsPackets: Bool, blockSize: Int = 1 << 16) throws(AudioError) {
        let size = source.size
        fetch = { offset, count throws(AudioError) in try source.read(at: offset, count: count) }
        var backwardSeeks = 0
        while !isFinished {
            let readAt = offset + Int64(bufferedCount)
            var block = [UInt8](repeating: 0, count: blockSize)
            let n = try block.withMutableBytes { raw throws(AudioError) in try source.read(at: readAt, into: raw) }
            compact()
            buffer.append(contentsOf: block[0..<n])
            if bufferedCount > ParserDriver.maximumBufferedBytes {
                throw AudioError.limit("a header is larger than \(ParserDriver.maximumBufferedBytes) bytes")
            }
            try run(endOfStream: n < blockSize, canSeek: true, wantsPackets: wantsPackets, sourceSize: size) { target throws(AudioError) in
                backwardSeeks += 1
                // A parser goes back only to fetch what it skipped; more than a few times is a loop.
                guard backwardSeeks <= 16 else { throw AudioError.malformed("the file's chunks point back and forth") }
                self.restart(at: target)
            }
        }
    }

    private func compact() {
        if head > 0 && head >= buffer.count / 2 {
            buffer.removeSubrange(0..<head)
            head = 0
        }
    }

    private func run(endOfStream: Bool, canSeek: Bool, wantsPackets: Bool, sourceSize: Int64?,
                     seekBack: (Int64) throws(AudioError) -> Void) throws(AudioError)
    {
        var stalls = 0
        while !isFinished {
            let step: ParseStep = try buffer.withBytes { raw throws(AudioError) -> ParseStep in
                let view = UnsafeRawBufferPointer(rebasing: raw[head...])
                let input = ParserInput(bytes: view, offset: offset, isEndOfStream: endOfStream && skipRemaining == 0,
                                        canSeek: canSeek, wantsPackets: wantsPackets, sourceSize: sourceSize,
                                        fetch: fetch)
                return try parser.step(input)
            }
            deliverNotifications()
            switch step {
            case .needMore:
                if endOfStream { isFinished = true }
                return
            case .consume(let n):
                precondition(n >= 0 && n <= bufferedCount, "parser consumed \(n) of \(bufferedCount) bytes")
                // A parser may change state without using bytes, but not forever.
                if n == 0 {
                    stalls += 1
                    if stalls > 64 { throw AudioError.malformed("the parser made no progress at byte \(offset)") }
                } else {
                    stalls = 0
                }
                head += n
                offset += Int64(n)
            case .packets(let byteCount, let packetCount, let descriptions):
                precondition(byteCount > 0 && byteCount <= bufferedCount, "parser gave \(byteCount) of \(bufferedCount) bytes")
                buffer.withUnsafeBytes { raw in
                    onPackets(UnsafeRawBufferPointer(rebasing: raw[head..<head + byteCount]), packetCount, descriptions)
                }
                head += byteCount
                offset += Int64(byteCount)
            case .ownedPackets(let data, let descriptions):
                precondition(!data.isEmpty && !descriptions.isEmpty, "parser gave empty owned packets")
                stalls = 0
                data.withUnsafeBytes { onPackets($0, descriptions.count, descriptions) }
            case .seek(let target):
                if target == offset {
                    throw AudioError.malformed("the parser made no progress at byte \(offset)")
                } else if target > offset {
                    let ahead = target - offset
                    if ahead <= Int64(bufferedCount) {
                        head += Int(ahead)
                        offset = target
                    } else if canSeek {
                        restart(at: target)
                        return
                    } else {
                        // Drop what is buffered; the skip drops the rest as it arrives.
                        skipRemaining = ahead - Int64(bufferedCount)
                        offset += Int64(bufferedCount)
                        buffer.removeAll(keepingCapacity: true)
                        head = 0
                        if endOfStream { isFinished = true }
                        return
                    }
                } else {
                    try seekBack(target)
                    return
                }
            case .finished:
                isFinished = true
                return
            }
        }
    }

    private func deliverNotifications() {
        guard !parser.pendingNotifications.isEmpty else { return }
        let ids = parser.pendingNotifications
        parser.pendingNotifications.removeAll()
        for id in ids { onProperty(id) }
    }
}
