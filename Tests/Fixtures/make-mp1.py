#!/usr/bin/env python3
"""A small MPEG audio layer I encoder (ISO/IEC 11172-3 §2.4, and 13818-3's lower sample
rates and the MPEG-2.5 extension below them), written for the decoder's fixtures: no encoder on this machine writes layer I
(twolame and ffmpeg write layer II only). See README.md, section "mp3dec: Layer I".

It is real but plain: a 32-band cosine-modulated analysis filter bank with the phase of
the standard's matrixing (§C.1.3) and a 512-tap windowed-sinc prototype, one scale factor
per subband per frame (Table B.1), a greedy bit allocation that lowers the largest
remaining quantisation noise first, uniform quantisation with the standard's code layout
(§2.4.3.2.3 read backwards), intensity stereo above the bound for joint stereo, padding,
and the CRC-16 over header and allocation (§2.4.3.1).

Usage: make-mp1.py [OUTDIR]   (default: mp3dec/ beside this script)
Writes layer1_*.mp1 (deterministic: fixed seeds, numpy's PCG64) and, with ffmpeg,
layer1_goldens.json: for each of them and for ../mpeg/*_layer2.mp2, ffmpeg's frame count
and the SHA-256 of its f32le output, and 300 of its samples (every `stride`-th interleaved
one), so the decoder tests can check the decode without ffmpeg. The name starts with
layer1_ so that make-mp3dec.sh, which empties mp3dec/ of everything else, keeps it.
When tools/mp3dec_golden.py is there, it also writes each file's NAME.json and
NAME.golden.flac in make-mp3dec.sh's form (for MPEGDecoderTests).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# Layer I bit rates (kbit/s) by index 1-14: MPEG-1, and MPEG-2 LSF.
RATES_MPEG1 = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
RATES_LSF = [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
SAMPLE_RATES = {1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 25: [11025, 12000, 8000]}

# Table B.1: scale factor i = 2^(1 - i/3), i = 0..62.
SCALE = np.array([2.0 ** (1.0 - i / 3.0) for i in range(63)])


class BitWriter:
    def __init__(self):
        self.bits = []

    def put(self, value, count):
        for i in range(count - 1, -1, -1):
            self.bits.append((value >> i) & 1)

    def tobytes(self):
        b = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(int("".join(map(str, b[i:i + 8])), 2) for i in range(0, len(b), 8))


def crc16(bits):
    """CRC-16 of §2.4.3.1: polynomial 0x8005, initial 0xFFFF, over a list of bits."""
    crc = 0xFFFF
    for bit in bits:
        feedback = ((crc >> 15) ^ bit) & 1
        crc = (crc << 1) & 0xFFFF
        if feedback:
            crc ^= 0x8005
    return crc


def analysis(x):
    """Subband samples of a mono signal: shape (blocks, 32), one row per 32 input samples.
    S[k] = sum_n h[n] cos((2k+1)(n-16)pi/64) x[t-n], the standard's matrixing phase with a
    windowed-sinc prototype (cut-off pi/64) in place of Table C.1's window."""
    n = np.arange(512)
    t = n - 256.0
    h = np.sinc(t / 64.0) / 64.0 * np.kaiser(512, 9.0)
    k = np.arange(32)[:, None]
    m = np.cos((2 * k + 1) * (n[None, :] - 16) * np.pi / 64) * h[None, :] * 2.0
    padded = np.concatenate([np.zeros(511), x])
    blocks = len(x) // 32
    # Row b: the 512 newest samples up to input sample 32b+31, newest first.
    idx = (32 * np.arange(blocks) + 31 + 511)[:, None] - n[None, :]
    return padded[idx] @ m.T


def scale_index(peak):
    """The smallest scale factor not below `peak` (the largest index i with SCALE[i] >= peak)."""
    i = int(np.searchsorted(-SCALE, -peak, side="right")) - 1
    return min(max(i, 0), 62)


def quantise(x, nb):
    """Codes of nb bits (2^nb - 1 levels) for fractions x in [-1, 1]: the decoder's
    (2v - (n-1)) / n inverted."""
    n = (1 << nb) - 1
    v = np.floor((x * n + (n - 1)) / 2.0 + 0.5).astype(np.int64)
    return np.clip(v, 0, n - 1)


def allocate(peaks, channels, bound, budget):
    """Greedy allocation: nb[ch][sb] in 0 or 2..15 bits a sample. Noise in a subband is
    taken as scale factor / 2^nb; each step gives one more bit to the loudest noise."""
    nb = np.zeros((channels, 32), dtype=int)
    level = 20 * np.log10(np.maximum(peaks, 1e-9))
    while True:
        best, choice = -1e9, None
        for sb in range(32):
            chs = range(channels) if sb < bound else [0]
            for ch in chs:
                b = nb[ch][sb]
                if b == 15:
                    continue
                if sb >= bound and channels == 2:
                    # Shared samples; scale factors are per channel.
                    lv = max(level[0][sb], level[1][sb])
                    cost = 12 if b else 12 * 2 + 6 * 2
                else:
                    lv = level[ch][sb]
                    cost = 12 if b else 12 * 2 + 6
                if lv < -100:
                    continue
                noise = lv - 6.02 * b
                if cost <= budget and noise > best:
                    best, choice = noise, (ch, sb, cost)
        if choice is None:
            return nb
        ch, sb, cost = choice
        budget -= cost
        nb[ch][sb] = 2 if nb[ch][sb] == 0 else nb[ch][sb] + 1
        if sb >= bound and channels == 2:
            nb[1][sb] = nb[0][sb]


def encode(pcm, rate, kbps, mode, mode_ext=0, crc=False):
    """pcm: float array (samples, channels) in [-1, 1]. mode: 0 stereo, 1 joint, 3 mono."""
    lsf = rate < 32000
    version = 25 if rate < 16000 else 2 if lsf else 1
    rate_index = SAMPLE_RATES[version].index(rate)
    bit_index = (RATES_LSF if lsf else RATES_MPEG1).index(kbps) + 1
    channels = 1 if mode == 3 else 2
    bound = 4 * (mode_ext + 1) if mode == 1 else 32
    frames = (len(pcm) + 383) // 384
    pad = frames * 384 - len(pcm)
    x = np.concatenate([pcm, np.zeros((pad, channels))])
    subbands = [analysis(x[:, ch]).reshape(frames, 12, 32) for ch in range(channels)]
    out = bytearray()
    slots_num = 12 * kbps * 1000
    for f in range(frames):
        # Padding (§2.4.2.3): a slot more whenever the running length falls behind.
        slots = (f + 1) * slots_num // rate - f * slots_num // rate
        padding = 1 if slots > slots_num // rate else 0
        frame_bits = slots * 32
        w = BitWriter()
        w.put(0x7FF, 11); w.put({1: 3, 2: 2, 25: 0}[version], 2); w.put(3, 2)  # layer I
        w.put(0 if crc else 1, 1); w.put(bit_index, 4); w.put(rate_index, 2)
        w.put(padding, 1); w.put(0, 1); w.put(mode, 2); w.put(mode_ext, 2)
        w.put(0, 1); w.put(1, 1); w.put(0, 2)
        s = [subbands[ch][f] for ch in range(channels)]  # (12, 32) each
        peaks = np.array([np.max(np.abs(s[ch]), axis=0) for ch in range(channels)])
        fields = sum(channels if sb < bound else 1 for sb in range(32)) * 4
        budget = frame_bits - 32 - (16 if crc else 0) - fields
        nb = allocate(peaks, channels, bound, budget)
        scf = np.array([[scale_index(peaks[ch][sb]) for sb in range(32)] for ch in range(channels)])
        if mode == 1:
            # Intensity stereo: one set of samples, the mean of both channels, coded against
            # its own peak; each channel's scale factor restores its level.
            mono = (s[0] + s[1]) / 2
            mono_peak = np.max(np.abs(mono), axis=0)
        alloc_start = len(w.bits)
        for sb in range(32):
            for ch in (range(channels) if sb < bound else [0]):
                w.put(nb[ch][sb] - 1 if nb[ch][sb] else 0, 4)
        if crc:
            protected = w.bits[16:32] + w.bits[alloc_start:]
            c = crc16(protected)
            w.bits[32:32] = [(c >> i) & 1 for i in range(15, -1, -1)]
        for sb in range(32):
            for ch in range(channels):
                if nb[ch][sb]:
                    w.put(int(scf[ch][sb]), 6)
        codes = {}
        for sb in range(32):
            for ch in (range(channels) if sb < bound else [0]):
                b = nb[ch][sb]
                if not b:
                    continue
                if sb >= bound and channels == 2:
                    frac = mono[:, sb] / max(SCALE[scale_index(mono_peak[sb])], 1e-12)
                else:
                    frac = s[ch][:, sb] / SCALE[scf[ch][sb]]
                codes[(ch, sb)] = quantise(frac, b)
        for i in range(12):
            for sb in range(32):
                for ch in (range(channels) if sb < bound else [0]):
                    if nb[ch][sb]:
                        w.put(int(codes[(ch, sb)][i]), nb[ch][sb])
        assert len(w.bits) <= frame_bits, (len(w.bits), frame_bits)
        w.put(0, frame_bits - len(w.bits))  # ancillary: none
        data = w.tobytes()
        assert len(data) == slots * 4
        out += data
    return bytes(out)


def signal(rate, channels, seed):
    """About a second: two sines per channel, soft noise, and a click-like burst at 0.6 s."""
    rng = np.random.default_rng(seed)
    n = rate
    t = np.arange(n) / rate
    cols = []
    for ch in range(channels):
        f1, f2 = (440.0, 3000.0) if ch == 0 else (660.0, 5500.0 * rate / 44100)
        y = 0.35 * np.sin(2 * np.pi * f1 * t) + 0.15 * np.sin(2 * np.pi * f2 * t + ch)
        y += 0.03 * rng.standard_normal(n)
        start = int(0.6 * rate)
        burst = np.zeros(n)
        length = rate // 50
        burst[start:start + length] = 0.4 * rng.standard_normal(length) * np.exp(-np.arange(length) / (length / 5))
        cols.append(np.clip(y + burst, -0.99, 0.99))
    return np.stack(cols, axis=1)


FIXTURES = [
    # name, rate, kbit/s, mode, mode extension, CRC
    ("layer1_44k_stereo_384_crc", 44100, 384, 0, 0, True),
    ("layer1_48k_joint_192", 48000, 192, 1, 1, False),
    ("layer1_32k_mono_128", 32000, 128, 3, 0, False),
    ("layer1_lsf_22k_stereo_128", 22050, 128, 0, 0, False),
    ("layer1_mpeg25_11k_joint_64", 11025, 64, 1, 2, True),
]


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "mp3dec")
    os.makedirs(outdir, exist_ok=True)
    for i, (name, rate, kbps, mode, ext, crc) in enumerate(FIXTURES):
        channels = 1 if mode == 3 else 2
        data = encode(signal(rate, channels, 1000 + i), rate, kbps, mode, ext, crc)
        with open(os.path.join(outdir, name + ".mp1"), "wb") as f:
            f.write(data)
        print(name, len(data), "bytes")
    ffmpeg = shutil.which("ffmpeg")
    if not ffmpeg:
        print("ffmpeg not found: goldens not written")
        return
    goldens = {}
    files = [(n + ".mp1", os.path.join(outdir, n + ".mp1"), 1 if m == 3 else 2) for n, _, _, m, _, _ in FIXTURES]
    for n in ("ffmpeg_layer2.mp2", "twolame_layer2.mp2"):
        files.append(("../mpeg/" + n, os.path.join(HERE, "mpeg", n), 2))
    for rel, path, channels in files:
        # The float decoders: ffmpeg's default mp1/mp2 decoders round to 16 bits.
        decoder = "mp1float" if rel.endswith(".mp1") else "mp2float"
        pcm = subprocess.run([ffmpeg, "-v", "error", "-nostdin", "-c:a", decoder, "-i", path, "-f", "f32le", "-"],
                             check=True, capture_output=True).stdout
        samples = np.frombuffer(pcm, dtype="<f4")
        stride = max(1, len(samples) // 300)
        goldens[rel] = {
            "channels": channels,
            "frames": len(samples) // channels,
            "f32leSHA256": hashlib.sha256(pcm).hexdigest(),
            "stride": stride,
            "probe": [float("%.9g" % v) for v in samples[::stride][:300]],
        }
    tool = os.path.join(HERE, "tools", "mp3dec_golden.py")
    if os.path.exists(tool):
        for n, rate, kbps, mode, ext, crc in FIXTURES:
            command = "make-mp1.py: %d Hz, %d kbit/s, %s%s" % (
                rate, kbps, ["stereo", "joint stereo (bound %d)" % (4 * (ext + 1)), "", "mono"][mode], ", CRC" if crc else "")
            subprocess.run([sys.executable, tool, os.path.join(outdir, n + ".mp1"), command], check=True)
    with open(os.path.join(outdir, "layer1_goldens.json"), "w") as f:
        f.write("{\n" + ",\n".join(json.dumps(k) + ": " + json.dumps(v) for k, v in sorted(goldens.items())) + "\n}\n")


if __name__ == "__main__":
    main()
