import TonearmCore

extension VorbisDecoder {
    /// Decodes one audio packet (Vorbis I §4.3) and writes the frames it completes; returns
    /// their number.
    func decodePacket<S: DecodedSample>(_ p: UnsafeRawBufferPointer, mode: VorbisSetupHeader.Mode, into out: SampleWriter<S>) -> Int {
        var r = packetBuffer.load(p)
        // §4.3.1: packet type and mode (checked by `mode(of:)`), then the window flags.
        r.consume(1 + modeBits)
        let n = mode.isLong ? setup.blockSizes.1 : setup.blockSizes.0
        var previousLong = false, nextLong = false
        if mode.isLong {
            previousLong = r.readFlag()
            nextLong = r.readFlag()
        }
        let half = n / 2
        let mapping = setup.mappings[mode.mapping]
        let codebooks = setup.codebooks

        // §4.3.2: floors, in channel order.
        for c in 0..<channels {
            let submap = mapping.mux[c]
            var used = false
            if !r.isExhausted {
                switch setup.floors[mapping.submapFloors[submap]] {
                case .one(let f):
                    used = f.decode(&r, codebooks: codebooks, y: floorY + c * VorbisFloor1.maximumValues,
                                    used: floorUsed + c * VorbisFloor1.maximumValues)
                case .zero(let f):
                    used = f.decode(&r, codebooks: codebooks, amplitude: &floor0Amplitudes[c], coefficients: floor0Coefficients + c * 256)
                }
            }
            channelUsed[c] = used
            noResidue[c] = !used
        }
        // §4.3.3: a coupled pair is decoded when either channel is.
        // Index loops here and below: a debug build's iterators allocate, and decoding allocates nothing.
        for k in mapping.coupling.indices {
            let step = mapping.coupling[k]
            guard !noResidue[step.magnitude] || !noResidue[step.angle] else { continue }
            noResidue[step.magnitude] = false
            noResidue[step.angle] = false
        }

        // §4.3.4: residues, in submap order.
        for c in 0..<channels { spectrumPointers[c].update(repeating: 0, count: half) }
        for submap in 0..<mapping.submapResidues.count {
            var count = 0
            for c in 0..<channels where mapping.mux[c] == submap {
                bundleFlags[count] = noResidue[c]
                bundleVectors[count] = spectrumPointers[c]
                count += 1
            }
            guard count > 0, !r.isExhausted else { continue }
            setup.residues[mapping.submapResidues[submap]].decode(&r, codebooks: codebooks, vectors: bundleVectors,
                                                                  doNotDecode: bundleFlags, count: count, n: half,
                                                                  scratch: residueScratch)
        }

        // §4.3.5: inverse coupling, last step first.
        var k = mapping.coupling.count
        while k > 0 {
            k -= 1
            let step = mapping.coupling[k]
            let m = spectrumPointers[step.magnitude], a = spectrumPointers[step.angle]
            // Branch-free: with t = −A where M > 0 and A elsewhere, A > 0 gives (M, M + t)
            // and A ≤ 0 gives (M − t, M).
            for i in 0..<half {
                let mv = m[i], av = a[i]
                let t = mv > 0 ? -av : av
                let positive = av > 0
                m[i] = positive ? mv : mv - t
                a[i] = positive ? mv + t : mv
            }
        }

        // §4.3.6: the floor curve times the residue; then the transform and overlap.
        let frames = previousBlockSize.map { $0 / 4 + n / 4 } ?? 0
        for c in 0..<channels {
            let v = spectrumPointers[c]
            if channelUsed[c] {
                switch setup.floors[mapping.submapFloors[mapping.mux[c]]] {
                case .one(let f):
                    f.apply(y: floorY + c * VorbisFloor1.maximumValues, used: floorUsed + c * VorbisFloor1.maximumValues, to: v, n: half)
                case .zero(let f):
                    f.apply(amplitude: floor0Amplitudes[c], coefficients: floor0Coefficients + c * 256, to: v, n: half,
                            isLong: mode.isLong)
                }
            }
            synthesis.synthesize(channel: c, spectrum: channelUsed[c] ? v : nil, isLong: mode.isLong, previousLong: previousLong,
                                 nextLong: nextLong, previousSize: previousBlockSize, frames: frames,
                                 into: out.at(channel: c, frame: 0), stride: out.stride)
        }
        previousBlockSize = n
        return frames
    }
}
