#!/usr/bin/env python3
"""Builds an E-AC-3 stream with dependent substreams (7.1 as 5.1 + a back pair) from two
real ffmpeg E-AC-3 streams, because ffmpeg's eac3 encoder cannot write dependent
substreams itself (ATSC A/52:2018 Annex E).

    eac3_dependent.py INDEPENDENT.eac3 PAIR.eac3 OUT.eac3

Frame n of OUT is frame n of INDEPENDENT (an independent substream, strmtyp 0, 5.1)
followed by frame n of PAIR (stereo) rewritten as a dependent substream:
  * strmtyp 1, substreamid 0;
  * chanmape 1 and a chanmap with only the Lrs/Rrs pair (bit 6, counted from the most
    significant bit, Table E.1.4) inserted after compre/compr, where A/52 §E.1.2.2 puts
    them for a dependent substream; the rest of the frame moves 17 bits later;
  * frmsiz grown to hold the 17 bits (whole 16-bit words);
  * crc2 recomputed: CRC-16 (x^16 + x^15 + x^2 + 1, initial 0) over the frame after the
    sync word, as ffmpeg's encoder writes it.
Every third access unit also carries a second dependent frame (substreamid 1) so that
units of three frames are covered. Deterministic; stdlib only.
"""
import struct, sys

def frames(data):
    out, i = [], 0
    while i + 6 <= len(data):
        assert data[i] == 0x0B and data[i + 1] == 0x77, "lost sync at %d" % i
        size = (((data[i + 2] & 7) << 8) | data[i + 3]) * 2 + 2
        out.append(data[i:i + size])
        i += size
    return out

def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc

def bits_of(b):
    return "".join(format(x, "08b") for x in b)

def dependent(frame, substream):
    bits = bits_of(frame[:-2])  # without crc2
    assert int(bits[16:18], 2) == 0, "not an independent frame"
    assert int(bits[40:45], 2) == 16, "not E-AC-3 (bsid 16)"
    acmod = int(bits[36:39], 2)
    pos = 16 + 2 + 3 + 11 + 2 + 2 + 3 + 1 + 5 + 5  # through dialnorm
    compre = bits[pos] == "1"
    pos += 1 + (8 if compre else 0)
    if acmod == 0:
        pos += 5
        pos += 1 + (8 if bits[pos] == "1" else 0)
    chanmap = 1 << (15 - 6)  # Lrs/Rrs
    bits = bits[:pos] + "1" + format(chanmap, "016b") + bits[pos:]
    bits += "0" * (-len(bits) % 16)
    size = len(bits) // 8 + 2
    body = bytearray(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    words = size // 2 - 1
    assert words < 2048
    body[2] = (1 << 6) | (substream << 3) | (words >> 8)
    body[3] = words & 0xFF
    return bytes(body) + struct.pack(">H", crc16(body[2:]))

def main(ind_path, pair_path, out_path):
    ind = frames(open(ind_path, "rb").read())
    pair = frames(open(pair_path, "rb").read())
    out = bytearray()
    for n in range(min(len(ind), len(pair))):
        out += ind[n] + dependent(pair[n], 0)
        if n % 3 == 2:
            out += dependent(pair[(n + 7) % len(pair)], 1)
    open(out_path, "wb").write(bytes(out))

if __name__ == "__main__":
    main(*sys.argv[1:4])
