#!/usr/bin/env python3
"""Encodes a 16 kHz mono s16 WAV to an AMR-WB storage-format file (RFC 4867 section 5:
"#!AMR-WB\\n" then the frames, each a TOC byte and its speech bits) with the VisualOn
encoder in libvo-amrwbenc (Debian package libvo-amrwbenc0), called through ctypes, since
neither Debian's ffmpeg nor its SoX can encode AMR-WB.

    python3 tools/amrwb_encode.py IN.wav OUT.awb MODE     # MODE 0..8 (2 = 12.65 kbit/s)

Deterministic; no DTX. A last partial frame is padded with zeros to 320 samples.
"""
import ctypes
import ctypes.util
import struct
import sys
import wave


def main(src, dst, mode):
    w = wave.open(src, "rb")
    assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 16000), "need 16 kHz mono s16"
    pcm = w.readframes(w.getnframes())
    name = ctypes.util.find_library("vo-amrwbenc") or "libvo-amrwbenc.so.0"
    lib = ctypes.CDLL(name)
    lib.E_IF_init.restype = ctypes.c_void_p
    lib.E_IF_encode.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_short),
                                ctypes.POINTER(ctypes.c_ubyte), ctypes.c_int]
    lib.E_IF_encode.restype = ctypes.c_int
    lib.E_IF_exit.argtypes = [ctypes.c_void_p]
    state = lib.E_IF_init()
    out = bytearray(b"#!AMR-WB\n")
    for i in range(0, len(pcm), 640):
        chunk = pcm[i:i + 640].ljust(640, b"\x00")
        speech = (ctypes.c_short * 320)(*struct.unpack("<320h", chunk))
        buf = (ctypes.c_ubyte * 64)()
        n = lib.E_IF_encode(state, mode, speech, buf, 0)
        assert n > 0, "E_IF_encode failed"
        out += bytes(buf[:n])
    lib.E_IF_exit(state)
    with open(dst, "wb") as fp:
        fp.write(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
