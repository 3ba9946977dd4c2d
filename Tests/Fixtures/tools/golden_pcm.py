"""Shared parts of the decoder goldens (mp3dec_golden.py, aacdec_golden.py, aache_golden.py).

The golden PCM of a decoder fixture is the oracle's first GOLDEN_SAMPLES float samples
(interleaved; all, if fewer) rounded to 24 bits and stored as FLAC (flac 1.4, raw input).
The rounding error (≤ 2^-24) is far below the full-accuracy tolerance of ISO/IEC 11172-4 and
14496-26 (RMS < 2^-15/√12, every sample within 2^-14) that the tests apply.
"""
import math
import struct
import subprocess
import sys


class Bits:
    """Reads a bitstream MSB first, for the scripts' own frame and side-info readers."""

    def __init__(self, b):
        self.b, self.at = b, 0

    def read(self, n):
        v = 0
        for _ in range(n):
            v = v << 1 | (self.b[self.at >> 3] >> (7 - (self.at & 7))) & 1
            self.at += 1
        return v


GOLDEN_SAMPLES = 16384  # 16384 mono frames, 8192 stereo frames: keeps the goldens ≤ ~40 KB
RMS_LIMIT = 2 ** -15 / math.sqrt(12)
MAX_LIMIT = 2 ** -14


def floats(pcm):
    return struct.unpack("<%df" % (len(pcm) // 4), pcm[:len(pcm) // 4 * 4])


def write_golden_flac(path, pcm, channels, rate, what):
    """Writes the first GOLDEN_SAMPLES samples of f32le `pcm` to `path` as 24-bit FLAC.
    Returns (frames written, peak). Refuses a sample outside [-1, 1): it would clip."""
    frames = len(pcm) // (4 * channels)
    n = min(frames, GOLDEN_SAMPLES // channels)
    samples = struct.unpack("<%df" % (n * channels), pcm[:n * channels * 4])
    ints = [round(s * (1 << 23)) for s in samples]
    if any(v < -(1 << 23) or v >= 1 << 23 for v in ints):
        sys.exit("%s: a sample of the oracle's decode is outside [-1, 1); lower the source level" % what)
    raw = b"".join(struct.pack("<i", v)[:3] for v in ints)
    subprocess.run(["flac", "-s", "-f", "-8", "--force-raw-format", "--endian=little", "--sign=signed",
                    "--channels=%d" % channels, "--bps=24", "--sample-rate=%d" % rate, "--no-padding",
                    "--no-seektable", "-o", path, "-"], input=raw, check=True)
    return n, max((abs(s) for s in samples), default=0.0)


def difference(x, y, channels, start=0, lag=0):
    """Per channel RMS and largest |x − y| of interleaved x[n] and y[n + lag], from frame start on."""
    n0 = max(start, -lag)
    n1 = min(len(x) // channels, len(y) // channels - lag)
    rms, peak = [], []
    for c in range(channels):
        d = [x[n * channels + c] - y[(n + lag) * channels + c] for n in range(n0, n1)]
        rms.append(math.sqrt(sum(v * v for v in d) / max(1, len(d))))
        peak.append(max((abs(v) for v in d), default=0.0))
    return rms, peak


def within_full_accuracy(rms, peak):
    return max(rms) < RMS_LIMIT and max(peak) <= MAX_LIMIT
