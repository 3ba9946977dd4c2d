#!/usr/bin/env python3
"""Join FLAC files (encodes of consecutive pieces of one signal at different block sizes)
into one variable block size stream, as RFC 9639 describes it: every frame header gets
the variable blocking strategy bit and its first sample's number instead of a frame
number (so its CRC-8 and the frame's CRC-16 are computed again), and STREAMINFO gets the
block and frame size ranges, the total and the MD5 of the whole signal.

Usage: flac_splice.py OUT.flac RAW.s16le CHANNELS PIECE.flac...
The pieces must share rate, channels and bit depth (16-bit: the MD5 is over RAW).
"""
import hashlib
import struct
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
import flaclib  # noqa: E402

out_path, raw_path, pieces = sys.argv[1], sys.argv[2], sys.argv[4:]
frames_out = []
info = None
sample = 0
for path in pieces:
    d = open(path, "rb").read()
    blocks, audio = flaclib.parse_metadata(d)
    si = flaclib.streaminfo(blocks[0]["body"])
    info = info or si
    for off, size, h in flaclib.frames(d, audio):
        f = bytearray(d[off:off + size - 2])  # without its CRC-16
        num = flaclib.utf8_number(sample)
        f[1] |= 1  # variable blocking strategy
        hdr = f[:4] + num + f[h["numberEnd"] - off:h["length"] - 1]
        hdr += bytes([flaclib.crc8(hdr)])
        body = bytes(hdr) + bytes(f[h["length"]:])
        body += struct.pack(">H", flaclib.crc16(body))
        frames_out.append((body, h["blockSize"]))
        sample += h["blockSize"]

raw = open(raw_path, "rb").read()
assert len(raw) == sample * info["channels"] * 2, "the pieces do not cover RAW"
sizes = [len(b) for b, _ in frames_out]
blocks_ = [n for _, n in frames_out[:-1]] or [frames_out[0][1]]
si = struct.pack(">HH", min(blocks_), max(n for _, n in frames_out))
si += min(sizes).to_bytes(3, "big") + max(sizes).to_bytes(3, "big")
si += (info["sampleRate"] << 44 | (info["channels"] - 1) << 41 | (info["bitsPerSample"] - 1) << 36 | sample).to_bytes(8, "big")
si += hashlib.md5(raw).digest()
vendor = b"Tonearm fixture splice"
tag = b"TITLE=variable block size"
vc = struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 1) + struct.pack("<I", len(tag)) + tag
out = b"fLaC" + bytes([0]) + len(si).to_bytes(3, "big") + si
out += bytes([0x84]) + len(vc).to_bytes(3, "big") + vc
out += b"".join(b for b, _ in frames_out)
open(out_path, "wb").write(out)
