extension SILKChannelState {
    /// Decodes (or, when `lost`, conceals) one 10 or 20 ms frame of this channel into
    /// `out` (`frameLength` samples at the internal rate), as RFC 6716 §4.2.7 describes,
    /// keeping the state that later frames and concealment need.
    /// `redundant`: the frame is an LBRR copy (§4.2.4), coded as an active one.
    func decodeFrame(_ rd: inout OpusRangeDecoder, lost: Bool, redundant: Bool = false, coding: SILKConditionalCoding,
                     out: UnsafeMutablePointer<Int16>)
    {
        // The parameters move out while they change, so that their arrays are written in
        // place, not copied on write (the empty placeholder holds no storage).
        var p = parameters
        parameters = SILKFrameParameters.placeholder
        p.ltpScaleQ14 = 0
        if !lost {
            decodeIndices(&rd, frameIndex: framesDecoded, lbrr: redundant, coding: coding)
            SILKExcitation.decodePulses(&rd, into: scratchPulses, signalType: indices.signalType,
                                        quantOffsetType: indices.quantOffsetType, frameLength: frameLength)
            decodeParameters(&p, coding: coding)
            synthesize(&p, pulses: scratchPulses, out: out)
            appendToHistory(out)
            updateConcealment(p)
            lossCount = 0
            prevSignalType = indices.signalType
            firstFrameAfterReset = false
        } else {
            conceal(&p, frame: out)
            lossCount += 1
            appendToHistory(out)
        }
        comfortNoise(p, frame: out)
        glueFrames(out, length: frameLength)
        lagPrev = p.pitchLags[subframes - 1]
        parameters = p
    }

    /// Reads past an LBRR (redundant) frame: its side information and pulses, which
    /// normal decoding skips (they matter only to forward error correction).
    func skipLBRRFrame(_ rd: inout OpusRangeDecoder, frameIndex: Int, coding: SILKConditionalCoding) {
        decodeIndices(&rd, frameIndex: frameIndex, lbrr: true, coding: coding)
        SILKExcitation.decodePulses(&rd, into: scratchPulses, signalType: indices.signalType,
                                    quantOffsetType: indices.quantOffsetType, frameLength: frameLength)
    }

    /// Shifts the output history by a frame and appends `frame`.
    private func appendToHistory(_ frame: UnsafePointer<Int16>) {
        let keep = ltpMemoryLength - frameLength
        outBuffer.withUnsafeMutableBufferPointer { buf in
            guard keep >= 0 else { return }
            for i in 0..<keep { buf[i] = buf[i + frameLength] }
            for i in 0..<frameLength { buf[keep + i] = frame[i] }
        }
    }
}
