#!/usr/bin/env python3
"""Writes HE-AAC (SBR) and HE-AAC v2 (PS) streams from an AAC-LC stream of ffmpeg's encoder.

No SBR or PS encoder can be installed here (ffmpeg cannot encode HE-AAC; libfdk_aac and faac
are not in Debian main). This tool keeps ffmpeg's LC core bit for bit and adds, to every
raw_data_block, a fill element with an SBR extension payload written by the tool itself:

    aac_sbr_forge.py forge CORE.aac SOURCE.wav PLAN OUT.aac INVENTORY.json [--without=F,...]
    aac_sbr_forge.py m4a IN.m4a FORM OUT.m4a       (FORM: aot5, aot29, compat-sbr, compat-ps)

`forge`: CORE.aac is ADTS from `ffmpeg -c:a aac` at the core rate (half the output rate).
SOURCE.wav is the full-band original at the output rate (16-bit PCM, as many channels as the
output); the envelopes are its band energies, and the PS parameters its inter-channel level
differences, coherence and phases, so the decoded audio resembles it. A source less than half
as long as the core is taken as repeating (the long benchmark file loops a short source).
PLAN names one of the plans below: which header, grids, delta directions, coupling, sinusoids
and PS modes each frame uses. INVENTORY.json lists what the written payloads exercise, counted as written.
--without switches features off (sines, coupling, ipdopd, ps) to show that they change the
decoded audio.

`m4a`: IN.m4a is `ffmpeg -c copy` of a forged ADTS stream. ffmpeg finds the SBR while probing
and writes the track as it writes any HE-AAC MP4 (the libfdk_aac files of the fuzzing corpus
have the same layout): mdhd time scale and mp4a sample rate at the output rate, 2048 frames
per packet, but with the LC AudioSpecificConfig of the ADTS headers. The tool replaces that
with an explicit HE-AAC one and fixes the sizes of the boxes and descriptors around it. FORM
aot5 and aot29: object type 5 or 29 with the extension sampling frequency, in ffmpeg's
layout. FORM compat-sbr and compat-ps: the backward-compatible LC config followed by the
0x2b7 sync extension (SBR) and the 0x548 PS flag, in the layout of iTunes, whose files use
that form: time scale, durations, edit list and sample rate at the core rate.

The fill element goes just before the block's ID_END. ffmpeg's encoder writes one
raw_data_block per ADTS frame, ends it with ID_END ('111') and pads with zero bits to the
byte, so the last set bit of a frame is the last bit of ID_END; every frame is checked for
that shape (no CRC, number_of_raw_data_blocks 0, '111' then at most 7 zero bits) and the tool
refuses an input that does not have it. The SBR element applies to the block's one channel
element: an SCE (mono core) or a CPE (stereo core).

Syntax and semantics: ISO/IEC 14496-3 subpart 4, 4.4.2.8 (sbr_extension_data and below) and
4.6.18.3 (frequency band tables, time/frequency grid); subpart 8, 8.4 (ps_data) and 8.6.4.
Everything here is the encoder side. The decoders are the oracles: ffmpeg's decode is the
golden, and faad's is compared with it (make-aache.sh; the README lists where they differ).
"""
import cmath
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aac_he_tables as T  # noqa: E402

RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
ID_FIL, ID_END = 6, 7
EXT_SBR_DATA, EXT_SBR_DATA_CRC = 13, 14
EXTENSION_ID_PS = 2
FIXFIX, FIXVAR, VARFIX, VARVAR = 0, 1, 2, 3
CLASS_NAMES = ["FIXFIX", "FIXVAR", "VARFIX", "VARVAR"]
NUM_TIME_SLOTS = 16          # SBR time slots per 1024-sample core frame (RATE 2 QMF samples each)
SLOT = 128                   # output samples per SBR time slot
QMF_GAIN = 4096.0            # QMF-domain energy of a band per unit of its real-signal power (see band_power)


class Bits:
    def __init__(self):
        self.bits = []

    def put(self, value, n):
        if n and not 0 <= value < 1 << n:
            raise ValueError("%d does not fit in %d bits" % (value, n))
        self.bits.extend((value >> (n - 1 - i)) & 1 for i in range(n))

    def extend(self, other):
        self.bits.extend(other.bits)

    def __len__(self):
        return len(self.bits)

    def tobytes(self):
        b = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(sum(b[i + j] << (7 - j) for j in range(8)) for i in range(0, len(b), 8))


class Code:
    """One Huffman table: value → code word. Values run from -lav (0 for IPD/OPD) upwards."""

    def __init__(self, name, table, lav):
        self.name, self.words, self.lav = name, T.huffman(table), lav

    def put(self, w, value):
        i = value + self.lav
        if not 0 <= i < len(self.words):
            raise ValueError("%s: %d is beyond the table" % (self.name, value))
        length, code = self.words[i]
        w.put(code, length)


C = {name: Code(name, getattr(T, name), lav) for name, lav in [
    ("T_HUFFMAN_ENV_1_5DB", 60), ("F_HUFFMAN_ENV_1_5DB", 60),
    ("T_HUFFMAN_ENV_BAL_1_5DB", 24), ("F_HUFFMAN_ENV_BAL_1_5DB", 24),
    ("T_HUFFMAN_ENV_3_0DB", 31), ("F_HUFFMAN_ENV_3_0DB", 31),
    ("T_HUFFMAN_ENV_BAL_3_0DB", 12), ("F_HUFFMAN_ENV_BAL_3_0DB", 12),
    ("T_HUFFMAN_NOISE_3_0DB", 31), ("T_HUFFMAN_NOISE_BAL_3_0DB", 12),
    ("F_HUFF_IID_DEF", 14), ("T_HUFF_IID_DEF", 14), ("F_HUFF_IID_FINE", 30), ("T_HUFF_IID_FINE", 30),
    ("F_HUFF_ICC", 7), ("T_HUFF_ICC", 7), ("F_HUFF_IPD", 0), ("T_HUFF_IPD", 0),
    ("F_HUFF_OPD", 0), ("T_HUFF_OPD", 0)]}


# ---------------------------------------------------------------- frequency band tables (4.6.18.3.2)

def nint(x):
    return int(math.floor(x + 0.5))


def band_steps(start, stop, n):
    """The spec's vDk for n bands from start to stop: NINT(start·(stop/start)^((k+1)/n)) − NINT(start·(stop/start)^(k/n))."""
    edges = [nint(start * (stop / start) ** (k / n)) for k in range(n + 1)]
    return [edges[k + 1] - edges[k] for k in range(n)]


class Tables:
    """Master and derived frequency band tables of one SBR header at one output rate."""

    def __init__(self, rate, h):
        self.rate = rate
        lo = 3000 if rate < 32000 else 4000 if rate < 64000 else 5000
        start_min = nint(lo * 128 / rate)
        stop_min = nint(2 * lo * 128 / rate)
        row = {16000: "16000", 22050: "22050", 24000: "24000", 32000: "32000", 44100: "44100-64000",
               48000: "44100-64000", 64000: "44100-64000", 88200: "above 64000", 96000: "above 64000"}[rate]
        k0 = start_min + T.START_FREQ_OFFSETS[row][h["start_freq"]]
        if h["stop_freq"] < 14:
            k2 = stop_min + sum(sorted(band_steps(stop_min, 64, 13))[:h["stop_freq"]])
        else:
            k2 = (2 if h["stop_freq"] == 14 else 3) * k0
        k2 = min(64, k2)
        limit = 48 if rate <= 32000 else 35 if rate == 44100 else 32
        if not 0 < k2 - k0 <= limit:
            raise ValueError("k2 - k0 = %d: beyond the limit %d for this rate" % (k2 - k0, limit))
        if h["freq_scale"] == 0:
            dk = 2 if h["alter_scale"] else 1
            n = 2 * ((k2 - k0) // 2) if dk == 1 else 2 * nint((k2 - k0) / 4)
            if n <= 0:
                raise ValueError("no master bands")
            steps = [dk] * n
            diff = k2 - (k0 + n * dk)
            k, inc = (0, 1) if diff < 0 else (n - 1, -1)
            while diff:
                steps[k] -= inc
                k += inc
                diff += inc
            master = [k0]
            for s in steps:
                master.append(master[-1] + s)
            self.two_regions = False
        else:
            bands = {1: 12, 2: 10, 3: 8}[h["freq_scale"]]
            warp = 1.3 if h["alter_scale"] else 1.0
            self.two_regions = k2 / k0 > 2.2449
            k1 = 2 * k0 if self.two_regions else k2
            n0 = 2 * nint(bands * math.log2(k1 / k0) / 2)
            if n0 <= 0:
                raise ValueError("no master bands")
            d0 = sorted(band_steps(k0, k1, n0))
            master = [k0]
            for s in d0:
                master.append(master[-1] + s)
            if self.two_regions:
                n1 = 2 * nint(bands * math.log2(k2 / k1) / (2 * warp))
                if n1 <= 0:
                    raise ValueError("no master bands in the second region")
                d1 = sorted(band_steps(k1, k2, n1))
                if d1[0] < max(d0):
                    # The spec then moves steps from the last band of the second region to the
                    # first; ffmpeg bounds that move, the spec does not: such headers are not used.
                    raise ValueError("vDk1 needs the min/max adjustment: choose another header")
                for s in d1:
                    master.append(master[-1] + s)
            if min(master[i + 1] - master[i] for i in range(len(master) - 1)) <= 0:
                raise ValueError("a master band of zero width")
        n_master = len(master) - 1
        if not 0 <= h["xover_band"] < n_master:
            raise ValueError("bs_xover_band %d not below N_master %d" % (h["xover_band"], n_master))
        self.k0, self.k2, self.master = k0, k2, master
        self.high = master[h["xover_band"]:]
        self.n_high = len(self.high) - 1
        self.n_low = (self.n_high + 1) // 2
        odd = self.n_high & 1
        self.low = [self.high[0]] + [self.high[2 * k - odd] for k in range(1, self.n_low + 1)]
        self.kx, self.m = self.high[0], self.high[-1] - self.high[0]
        if self.kx > 32 or self.kx + self.m > 64:
            raise ValueError("kx %d, M %d: beyond the QMF bank" % (self.kx, self.m))
        nq = max(1, nint(h["noise_bands"] * math.log2(k2 / self.kx)))
        if nq > 5:
            raise ValueError("N_Q %d > 5" % nq)
        self.n_q = nq
        idx = [0]
        for k in range(1, nq + 1):
            idx.append(idx[-1] + (self.n_low - idx[-1]) // (nq + 1 - k))
        self.noise = [self.low[i] for i in idx]
        self.patches = self._patches()
        if self.patches > 5:
            raise ValueError("%d patches" % self.patches)

    def _patches(self):
        """Number of HF patches (the patch construction of the HF generator), only to refuse
        headers a decoder must reject (more than 5 patches)."""
        goal = nint(2.048e6 / self.rate)
        if goal < self.kx + self.m:
            k = next(i for i, f in enumerate(self.master) if f >= goal)
        else:
            k = len(self.master) - 1
        msb, usb, sb, count, sizes = self.k0, self.kx, 0, 0, []
        while True:
            j = k
            while True:
                sb = self.master[j]
                odd = (sb - 2 + self.k0) % 2
                if sb <= self.k0 - 1 + msb - odd:
                    break
                j -= 1
            n = max(sb - usb, 0)
            if n > 0:
                sizes.append(n)
                usb = msb = sb
                count += 1
            else:
                msb = self.kx
            if self.master[k] - sb < 3:
                k = len(self.master) - 1
            if sb == self.kx + self.m:
                break
        if len(sizes) > 1 and sizes[-1] < 3:
            count -= 1
        return count

    def bands(self, freq_res):
        return self.high if freq_res else self.low


# ---------------------------------------------------------------- analysis of the original

def fft(x):
    n = len(x)
    j = 0
    a = list(x)
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    size = 2
    while size <= n:
        w = cmath.exp(-2j * math.pi / size)
        for start in range(0, n, size):
            t = 1
            for k in range(size // 2):
                u, v = a[start + k], a[start + k + size // 2] * t
                a[start + k], a[start + k + size // 2] = u + v, u - v
                t *= w
        size <<= 1
    return a


def read_wav(path):
    """(rate, channels, data) of a 16-bit PCM WAVE file (plain or WAVE_FORMAT_EXTENSIBLE)."""
    data = open(path, "rb").read()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise SystemExit("%s: not a WAVE file" % path)
    at, fmt = 12, None
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        if cid == b"fmt ":
            fmt = struct.unpack("<HHIIHH", data[at + 8:at + 24])
        elif cid == b"data":
            if fmt is None or fmt[0] not in (1, 0xFFFE) or fmt[5] != 16:
                raise SystemExit("%s: not 16-bit PCM" % path)
            return fmt[2], fmt[1], data[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    raise SystemExit("%s: no data chunk" % path)


class Source:
    """Short-time spectra of the original, one per SBR time slot (128 output samples)."""

    def __init__(self, path):
        self.rate, self.channels, raw = read_wav(path)
        self.repeat = False
        pcm = struct.unpack("<%dh" % (len(raw) // 2), raw)
        self.samples = [pcm[c::self.channels] for c in range(self.channels)]
        n = 256
        win = [0.5 - 0.5 * math.cos(2 * math.pi * (i + 0.5) / n) for i in range(n)]
        # Power of one positive-frequency bin per unit of the windowed signal's mean power.
        self.norm = 2.0 / (n * sum(w * w for w in win))
        self.spectra = []
        for c in range(self.channels):
            s, frames = self.samples[c], []
            for slot in range(len(s) // SLOT + 1):
                at = slot * SLOT - n // 2 + SLOT // 2
                seg = [(s[at + i] if 0 <= at + i < len(s) else 0) * win[i] for i in range(n)]
                frames.append(fft(seg)[:n // 2])
            self.spectra.append(frames)
        if self.channels == 2:
            # The mono downmix a PS core carries (ffmpeg's -ac 1: (L + R) / 2), as index 2.
            self.spectra.append([[(a + b) / 2 for a, b in zip(fa, fb)]
                                 for fa, fb in zip(self.spectra[0], self.spectra[1])])

    def slot_range(self, frame, t0, t1):
        """Slots of the original that SBR time slots t0..t1 of core frame `frame` stand for: the
        decoder's output lags the input by the encoder's 1024-sample priming (2048 at the output rate).
        A source much shorter than the core (the benchmark file's) is taken as repeating."""
        first = (frame - 1) * NUM_TIME_SLOTS
        n = len(self.spectra[0])
        if self.repeat:
            return [(first + t) % n for t in range(t0, t1) if first + t >= 0]
        return [first + t for t in range(t0, t1) if 0 <= first + t < n]

    def band_power(self, ch, slots, k_lo, k_hi):
        """QMF-domain energy per sample of QMF bands k_lo..k_hi over the slots (16-bit scale).

        A QMF band k (of 64 at the output rate) covers FFT bins 2k and 2k+1. The decoder
        compares the envelopes with the energies of its own 32-band complex analysis of the
        core (the 320-tap window c(2n)): white noise of variance σ² gives E|X_k|² =
        4·Σc(2n)²·σ² ≈ 128·σ² in every band, whose share of the signal's power is σ²/32. So a
        band's QMF energy is 4096 times its power; ffmpeg's decodes of the fixtures put the SBR
        bands within a few dB of the source's.
        """
        if not slots:
            return 0.0
        total = 0.0
        for t in slots:
            spec = self.spectra[ch][t]
            total += sum(abs(spec[b]) ** 2 for b in range(2 * k_lo, 2 * k_hi))
        return QMF_GAIN * self.norm * total / (len(slots) * (k_hi - k_lo))

    def cross(self, slots, k_lo, k_hi):
        """Σ L·R*, Σ|L|², Σ|R|² and Σ L·M* (M = the mono downmix) over the slots and bands."""
        lr = ll = rr = lm = 0j
        for t in slots:
            a, b = self.spectra[0][t], self.spectra[1][t]
            for i in range(2 * k_lo, 2 * k_hi):
                lr += a[i] * b[i].conjugate()
                ll += abs(a[i]) ** 2
                rr += abs(b[i]) ** 2
                lm += a[i] * ((a[i] + b[i]) / 2).conjugate()
        return lr, ll.real, rr.real, lm


# ---------------------------------------------------------------- plans

HEADER_DEFAULTS = dict(amp_res=1, start_freq=5, stop_freq=9, xover_band=0, extra1=True, freq_scale=2,
                       alter_scale=1, noise_bands=2, extra2=True, limiter_bands=2, limiter_gains=2,
                       interpol_freq=1, smoothing_mode=1)


def header(**kw):
    h = dict(HEADER_DEFAULTS)
    h.update(kw)
    if not h["extra1"]:
        h.update(freq_scale=2, alter_scale=1, noise_bands=2)
    if not h["extra2"]:
        h.update(limiter_bands=2, limiter_gains=2, interpol_freq=1, smoothing_mode=1)
    return h


# Grid cycle: (class, envelopes, trailing var border, bs_pointer, freq_res per envelope).
# A class that starts at the fixed border 0 is turned into its VAR-lead twin when the previous
# frame ended beyond slot 16 (the borders of consecutive frames must meet).
GRIDS_ALL = [(FIXFIX, 1, 0, 0, "1"), (FIXVAR, 2, 2, 2, "10"), (VARFIX, 2, 0, 2, "01"),
             (FIXFIX, 2, 0, 0, "0"), (FIXVAR, 3, 1, 3, "101"), (VARVAR, 3, 3, 2, "011"),
             (VARFIX, 1, 0, 1, "1"), (FIXFIX, 4, 0, 0, "1"), (VARVAR, 5, 0, 4, "10101"),
             (VARFIX, 3, 0, 0, "110"), (FIXVAR, 1, 3, 0, "0"), (VARVAR, 2, 2, 2, "00"),
             (VARFIX, 4, 0, 3, "0101")]
# The same with bs_pointer 1 in FIXVAR and VARVAR frames: l_A = L_E, a transient that starts
# the next frame (l_APrev). ffmpeg and faad do not agree there (Tests/Fixtures/README.md).
GRIDS_CARRY = [g if i not in (1, 10, 11) else g[:3] + (1,) + g[4:] for i, g in enumerate(GRIDS_ALL)]
GRIDS_SIMPLE = [(FIXFIX, 1, 0, 0, "1"), (FIXFIX, 2, 0, 0, "1"), (FIXFIX, 1, 0, 0, "0")]

PS_DEFAULT = dict(iid=True, iid_mode=1, icc=True, icc_mode=1, ext=False, ipdopd=False)


def ps(**kw):
    p = dict(PS_DEFAULT)
    p.update(kw)
    return p


PLANS = {
    # 48 kHz, stereo core: everything that varies per frame (the four frame classes per
    # channel, bs_pointer 1 included, coupling on and off, both delta directions, all four
    # inverse filtering levels, sinusoids) and header changes mid-stream that make new band
    # tables: two-region tables at freq_scale 2 and 3, one region at freq_scale 1 with a
    # crossover band, and a header with neither optional part (the defaults).
    "stereo_tour": dict(
        headers={0: header(amp_res=1, start_freq=3, stop_freq=5, freq_scale=2, alter_scale=1),
                 4: header(amp_res=0, start_freq=7, stop_freq=4, xover_band=1, freq_scale=1,
                           alter_scale=0, noise_bands=1, limiter_bands=1, limiter_gains=0,
                           interpol_freq=0, smoothing_mode=0),
                 8: header(amp_res=1, start_freq=3, stop_freq=5, freq_scale=3, alter_scale=0,
                           noise_bands=3, limiter_bands=3, limiter_gains=3),
                 11: header(amp_res=1, start_freq=3, stop_freq=6, extra1=False, extra2=False)},
        resend=3, grids=GRIDS_CARRY, coupling=lambda i: i % 4 >= 2, sines=lambda i: i % 3 == 1,
        crc=False),
    # One header, the per-frame variety of stereo_tour without bs_pointer 1: all frame
    # classes, coupling on and off, both delta directions, inverse filtering, sinusoids.
    "stereo_grids": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=5, freq_scale=3, alter_scale=0)},
        resend=4, grids=GRIDS_ALL, coupling=lambda i: i % 4 >= 2, sines=lambda i: i % 3 == 1, crc=False),
    # 44.1 kHz, stereo core, coupling in every frame: 1.5 dB resolution (the balance tables at
    # 1.5 dB), then 3.0 dB from frame 7 (same band tables); CRC-protected payloads.
    "stereo_coupled": dict(
        headers={0: header(amp_res=0, start_freq=5, stop_freq=5, freq_scale=2, alter_scale=0,
                           limiter_bands=0, limiter_gains=1),
                 7: header(amp_res=1, start_freq=5, stop_freq=5, freq_scale=2, alter_scale=0,
                           limiter_bands=0, limiter_gains=1)},
        resend=0, grids=GRIDS_ALL, coupling=lambda i: True, sines=lambda i: i % 4 == 2, crc=True),
    # 32 kHz, mono core: linear band tables (freq_scale 0) with alter_scale 0 and 1, then
    # freq_scale 1 with a crossover band; noise bands 0 to 3; CRC-protected payloads.
    "mono_linear": dict(
        headers={0: header(amp_res=1, start_freq=6, stop_freq=7, freq_scale=0, alter_scale=0,
                           noise_bands=0, limiter_bands=0, limiter_gains=0),
                 3: header(amp_res=1, start_freq=6, stop_freq=7, freq_scale=0, alter_scale=1,
                           noise_bands=1, limiter_bands=1, limiter_gains=1, interpol_freq=0),
                 6: header(amp_res=0, start_freq=4, stop_freq=9, xover_band=2, freq_scale=1,
                           alter_scale=1, noise_bands=3, limiter_bands=2, limiter_gains=2,
                           smoothing_mode=0),
                 8: header(amp_res=1, start_freq=8, stop_freq=13, freq_scale=1, alter_scale=1,
                           noise_bands=2, limiter_bands=3, limiter_gains=3)},
        resend=2, grids=GRIDS_ALL, coupling=None, sines=lambda i: i % 2 == 0, crc=True),
    # A default-like header and FIXFIX grids, for the low output rates (16, 22.05 kHz).
    "mono_plain": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=6)}, resend=3, grids=GRIDS_SIMPLE,
        coupling=None, sines=lambda i: i % 3 == 2, crc=False),
    # 96 kHz, stereo core, freq_scale 3.
    "stereo_plain": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=5, freq_scale=3, alter_scale=0)},
        resend=4, grids=GRIDS_SIMPLE, coupling=lambda i: i % 2 == 1, sines=lambda i: i % 3 == 2, crc=False),
    # HE-AAC v2 (mono core, 44.1 or 48 kHz): PS in every frame.
    # 10 and 20 bands, default and fine IID quantisation, mixing procedure R_a (icc_mode 0
    # and 1), the extension container without IPD/OPD; both frame classes.
    "ps_baseline": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=9)}, resend=0, grids=GRIDS_ALL,
        coupling=None, sines=lambda i: i % 4 == 1, crc=False,
        ps={0: ps(iid_mode=0, icc_mode=0), 4: ps(iid_mode=1, icc_mode=1, ext=True),
            8: ps(iid_mode=3, icc_mode=0), 11: ps(iid_mode=4, icc_mode=1)},
        ps_resend=3),
    # 20 bands with IPD/OPD and mixing procedure R_b (icc_mode 4), IID switched off and on,
    # ICC switched off.
    "ps_20": dict(
        headers={0: header(amp_res=0, start_freq=5, stop_freq=9)}, resend=5,
        grids=GRIDS_ALL, coupling=None, sines=lambda i: i % 4 == 3, crc=False,
        ps={0: ps(iid_mode=1, icc_mode=1, ext=True, ipdopd=True), 5: ps(iid_mode=4, icc_mode=4, ext=True, ipdopd=True),
            9: ps(iid=False, icc_mode=4, ext=True, ipdopd=False), 11: ps(iid_mode=1, icc=False)},
        ps_resend=0),
    # 34 bands (the other hybrid filter bank), R_a and R_b, IPD/OPD; CRC-protected SBR.
    "ps_34": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=9)}, resend=6, grids=GRIDS_ALL,
        coupling=None, sines=lambda i: i % 5 == 2, crc=True,
        ps={0: ps(iid_mode=2, icc_mode=2, ext=True, ipdopd=True), 6: ps(iid_mode=5, icc_mode=5, ext=True, ipdopd=True),
            10: ps(iid_mode=2, icc_mode=5, ext=True, ipdopd=True)},
        ps_resend=4),
    # Switching between 20, 34 and 10 bands mid-stream (the hybrid filter bank changes), with
    # IPD/OPD at 34 and at 10 bands.
    "ps_switch": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=9)}, resend=0, grids=GRIDS_SIMPLE,
        coupling=None, sines=lambda i: False, crc=False,
        ps={0: ps(iid_mode=1, icc_mode=1), 4: ps(iid_mode=2, icc_mode=5, ext=True, ipdopd=True),
            8: ps(iid_mode=3, icc_mode=3, ext=True, ipdopd=True), 11: ps(iid_mode=5, icc_mode=2)},
        ps_resend=0),
    # The benchmark plan (make-aache.sh --long): PS at 20 bands with IPD/OPD.
    "long": dict(
        headers={0: header(amp_res=1, start_freq=5, stop_freq=9)}, resend=32, grids=GRIDS_ALL,
        coupling=None, sines=lambda i: i % 7 == 3, crc=False,
        ps={0: ps(iid_mode=1, icc_mode=1, ext=True, ipdopd=True)}, ps_resend=16),
}

# What `forge --without` can switch off, to show that the feature changes the decoded audio.
WITHOUT = {
    "sines": lambda p: p.update(sines=lambda i: False),
    "coupling": lambda p: p.update(coupling=lambda i: False),
    "ipdopd": lambda p: p.update(ps={k: dict(v, ipdopd=False) for k, v in p["ps"].items()}),
    "ps": lambda p: p.pop("ps"),
}


# ---------------------------------------------------------------- inventory

class Inventory:
    def __init__(self):
        self.counts = {}
        self.tables = []       # every set of band tables a header made, with the frame it starts

    def add(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def result(self):
        out = {}
        for key, n in sorted(self.counts.items()):
            group, _, name = key.partition(".")
            out.setdefault(group, {})[name] = n
        return out


# ---------------------------------------------------------------- SBR payload writer

class Channel:
    def __init__(self):
        self.trail = NUM_TIME_SLOTS    # absolute trailing border of the previous frame
        self.env = None                # (freq_res, values) of the previous frame's last envelope
        self.noise = None              # the previous frame's last noise floor
        # What those values mean ((coupled, channel, amp_res, band tables)): time-direction
        # coding refers to them only when the current frame means the same.
        self.env_meaning = self.noise_meaning = None


class SbrWriter:
    def __init__(self, rate, channels, plan, source, inv):
        self.rate, self.nch, self.plan, self.src, self.inv = rate, channels, plan, source, inv
        self.ch = [Channel() for _ in range(channels)]
        self.h = None
        self.tables = None
        self.table_id = 0
        self.ps_state = {}
        self.ps_cfg = None
        self.prev_coupling = None

    # -- sbr_grid: the time borders of the envelopes (4.6.18.3)
    def grid(self, frame, ch, var1=None):
        """The grid of a channel; var1 forces the trailing border (16 + var1)."""
        cls, n_env, plan_var1, pointer, res = self.plan["grids"][(frame + 3 * ch) % len(self.plan["grids"])]
        lead = self.ch[ch].trail - NUM_TIME_SLOTS
        if lead and cls == FIXFIX:
            cls = VARFIX
        elif lead and cls == FIXVAR:
            cls = VARVAR
        if var1 is None:
            var1 = plan_var1
        elif var1 and cls in (FIXFIX, VARFIX):   # a trailing border beyond 16 needs a VAR trail
            cls = {FIXFIX: FIXVAR, VARFIX: VARVAR}[cls]
        g = dict(cls=cls, freq_res=[int(c) for c in res], pointer=pointer)
        if cls == FIXFIX:
            n_env = 1 << {1: 0, 2: 1, 4: 2}[n_env]
            g["borders"] = [0] + [nint(NUM_TIME_SLOTS * (i + 1) / n_env) for i in range(n_env - 1)] + [16]
            g["freq_res"] = [g["freq_res"][0]] * n_env
            g["pointer"] = 0
        else:
            start = lead if cls in (VARFIX, VARVAR) else 0
            end = NUM_TIME_SLOTS + (var1 if cls in (FIXVAR, VARVAR) else 0)
            inner = n_env - 1
            # Relative borders are 2, 4, 6 or 8 slots; spread the envelopes evenly.
            step = (end - start) / n_env
            rel = [max(2, min(8, 2 * nint(step / 2))) for _ in range(inner)]
            while start + sum(rel) > end - 2:
                i = rel.index(max(rel))
                rel[i] -= 2
                if rel[i] < 2:
                    raise ValueError("grid does not fit")
            if cls == FIXVAR:
                n_lead, n_trail = 0, inner
            elif cls == VARFIX:
                n_lead, n_trail = inner, 0
            else:
                n_lead = inner // 2
                n_trail = inner - n_lead
            lead_rel, trail_rel = rel[:n_lead], rel[n_lead:]
            borders = [start]
            for r in lead_rel:
                borders.append(borders[-1] + r)
            tail = [end]
            for r in trail_rel:
                tail.insert(0, tail[0] - r)
            borders += tail
            g.update(borders=borders, var0=start, var1=end - NUM_TIME_SLOTS, lead_rel=lead_rel,
                     trail_rel=trail_rel, pointer=min(pointer, n_env))
            g["freq_res"] = (g["freq_res"] * n_env)[:n_env]
        if any(b >= a for a, b in zip(g["borders"][1:], g["borders"])):
            raise ValueError("time borders not increasing: %s" % g["borders"])
        g["n_env"] = len(g["borders"]) - 1
        g["n_noise"] = 2 if g["n_env"] > 1 else 1
        # A FIXFIX frame with one envelope is coded at 1.5 dB whatever the header says.
        g["amp_res"] = 0 if cls == FIXFIX and g["n_env"] == 1 else self.h["amp_res"]
        return g

    def put_grid(self, w, g):
        w.put(g["cls"], 2)
        n = g["n_env"]
        ptr_bits = [0, 1, 2, 2, 3, 3][n]
        if g["cls"] == FIXFIX:
            w.put({1: 0, 2: 1, 4: 2}[n], 2)
            w.put(g["freq_res"][0], 1)
            return
        if g["cls"] == FIXVAR:
            w.put(g["var1"], 2)
            w.put(len(g["trail_rel"]), 2)
            for r in g["trail_rel"]:          # the first is the one next to the trailing border
                w.put(r // 2 - 1, 2)
            w.put(g["pointer"], ptr_bits)
            for r in reversed(g["freq_res"]):
                w.put(r, 1)
            return
        if g["cls"] == VARFIX:
            w.put(g["var0"], 2)
            w.put(len(g["lead_rel"]), 2)
            for r in g["lead_rel"]:
                w.put(r // 2 - 1, 2)
        else:
            w.put(g["var0"], 2)
            w.put(g["var1"], 2)
            w.put(len(g["lead_rel"]), 2)
            w.put(len(g["trail_rel"]), 2)
            for r in g["lead_rel"]:
                w.put(r // 2 - 1, 2)
            for r in g["trail_rel"]:          # the first is the one next to the trailing border
                w.put(r // 2 - 1, 2)
        w.put(g["pointer"], ptr_bits)
        for r in g["freq_res"]:
            w.put(r, 1)

    # -- target values from the original
    def energies(self, frame, ch, g, env):
        """Per band of the envelope: the QMF energy of the original (channel ch)."""
        t = self.tables
        bands = t.bands(g["freq_res"][env])
        slots = self.src.slot_range(frame, g["borders"][env], g["borders"][env + 1])
        # A mono core from a stereo source (PS): the envelope is that of the downmix.
        c = 2 if self.nch == 1 and self.src.channels == 2 else ch
        return [self.src.band_power(c, slots, bands[i], bands[i + 1]) for i in range(len(bands) - 1)]

    @staticmethod
    def level(energy, amp_res, plus=6):
        """The envelope value E whose dequantised energy 2^(plus + α·E) is `energy` (plus is 6,
        or 7 for the level of a coupled pair; α = 1 at 3.0 dB, 0.5 at 1.5 dB)."""
        alpha = 1.0 if amp_res else 0.5
        return (math.log2(max(energy, 2.0 ** (plus + 0.5))) - plus) / alpha

    # -- delta coding of one envelope or noise floor, clamped to what the tables and the
    # start value can hold; returns the values the decoder will hold.
    def code_values(self, w, target, prev, df, f_code, t_code, start_bits, lo, hi, key):
        vals = []
        if df:
            v = max(lo, min(hi, min((1 << start_bits) - 1, nint(target[0]))))
            w.put(v, start_bits)
            vals.append(v)
            for x in target[1:]:
                d = max(-f_code.lav, min(f_code.lav, nint(x) - vals[-1]))
                d = max(lo - vals[-1], min(hi - vals[-1], d))
                f_code.put(w, d)
                vals.append(vals[-1] + d)
        else:
            for x, p in zip(target, prev):
                d = max(-t_code.lav, min(t_code.lav, nint(x) - p))
                d = max(lo - p, min(hi - p, d))
                t_code.put(w, d)
                vals.append(p + d)
        self.inv.add("%s.%s" % (key, "df" if df else "dt"))
        return vals

    @staticmethod
    def map_prev(prev_res, prev_vals, res, n_high):
        """The previous envelope's values at the current envelope's bands, as a decoder maps
        them for time-direction coding when the frequency resolution changes."""
        odd = n_high & 1
        if prev_res == res:
            return prev_vals
        if res:   # high from low: the low band that holds the high band
            return [prev_vals[(j + odd) >> 1] for j in range(n_high)]
        return [prev_vals[2 * j - odd if j else 0] for j in range((n_high + 1) // 2)]

    def envelopes(self, w, frame, ch, g, coupled, targets):
        st = self.ch[ch]
        amp = g["amp_res"]
        balance = coupled and ch == 1
        if balance:
            f_code = C["F_HUFFMAN_ENV_BAL_3_0DB" if amp else "F_HUFFMAN_ENV_BAL_1_5DB"]
            t_code = C["T_HUFFMAN_ENV_BAL_3_0DB" if amp else "T_HUFFMAN_ENV_BAL_1_5DB"]
            bits, lo, hi = (5, 0, 12) if amp else (6, 0, 24)
        else:
            f_code = C["F_HUFFMAN_ENV_3_0DB" if amp else "F_HUFFMAN_ENV_1_5DB"]
            t_code = C["T_HUFFMAN_ENV_3_0DB" if amp else "T_HUFFMAN_ENV_1_5DB"]
            bits, lo, hi = (6, 0, 40) if amp else (7, 0, 80)   # 2^46: above any 16-bit signal
        self.inv.add("sbr.envelopeTable%s" % (("Balance" if balance else "") + ("3.0dB" if amp else "1.5dB")))
        prev = st.env
        for e in range(g["n_env"]):
            res = g["freq_res"][e]
            df = not g["dt_env"][e]
            mapped = None if df else self.map_prev(prev[0], prev[1], res, self.tables.n_high)
            vals = self.code_values(w, targets[e], mapped, df, f_code, t_code, bits, lo, hi, "sbr.envelope")
            prev = (res, vals)
        st.env = prev
        st.env_meaning = self.env_key(coupled, ch, g)

    def noise(self, w, frame, ch, g, coupled, targets):
        st = self.ch[ch]
        balance = coupled and ch == 1
        if balance:
            f_code, t_code, lo, hi = C["F_HUFFMAN_ENV_BAL_3_0DB"], C["T_HUFFMAN_NOISE_BAL_3_0DB"], 0, 12
        else:
            f_code, t_code, lo, hi = C["F_HUFFMAN_ENV_3_0DB"], C["T_HUFFMAN_NOISE_3_0DB"], 0, 30
        prev = st.noise
        for n in range(g["n_noise"]):
            prev = self.code_values(w, targets[n], prev, not g["dt_noise"][n], f_code, t_code, 5, lo, hi, "sbr.noise")
        st.noise = prev
        st.noise_meaning = self.noise_key(coupled, ch)

    # What a channel's envelope and noise values mean. The first envelope (noise floor) of a
    # frame is coded in the time direction only when the previous frame's last one means the
    # same: not after new band tables, a change of amplitude resolution or of coupling.
    def env_key(self, coupled, ch, g):
        return (coupled, ch, g["amp_res"], self.table_id)

    def noise_key(self, coupled, ch):
        return (coupled, ch, self.table_id)

    def frame_settings(self, frame, ch, g, coupled):
        """Delta directions (bs_df_env/bs_df_noise: 1 = time), inverse filtering and sinusoids:
        fixed patterns over frame, channel and band."""
        st = self.ch[ch]
        g["dt_env"] = [1 if (frame + e + ch) % 3 else 0 for e in range(g["n_env"])]
        g["dt_noise"] = [(frame + n + ch) % 2 for n in range(g["n_noise"])]
        if st.env_meaning != self.env_key(coupled, ch, g):
            g["dt_env"][0] = 0
        if st.noise_meaning != self.noise_key(coupled, ch):
            g["dt_noise"][0] = 0
        g["invf"] = [(frame + k + 2 * ch) % 4 for k in range(self.tables.n_q)]
        sines = self.plan["sines"](frame)
        g["harmonics"] = [1 if (k + frame + ch) % 4 == 0 else 0 for k in range(self.tables.n_high)] if sines else None

    def targets(self, frame, grids, ch_energies, coupled):
        """Envelope and noise targets per channel, in the bitstream's units."""
        g = grids[0]
        amp = g["amp_res"]
        if not coupled:
            env = [[[self.level(x, grids[c]["amp_res"]) for x in band] for band in ch_energies[c]]
                   for c in range(len(ch_energies))]
            noi = [self.noise_targets(frame, c, grids[c]) for c in range(len(ch_energies))]
            return env, noi
        alpha = 1.0 if amp else 0.5
        pan = 12 if amp else 24
        lvl, bal = [], []
        for eL, eR in zip(ch_energies[0], ch_energies[1]):
            lvl.append([self.level(a + b, amp, 7) for a, b in zip(eL, eR)])
            # ffmpeg and faad: R/L = 2^(α(pan − 2·b)): b is the balance value in the bitstream.
            bal.append([(pan - math.log2(max(b, 1.0) / max(a, 1.0)) / alpha) / 2 for a, b in zip(eL, eR)])
        n0 = self.noise_targets(frame, 0, g)
        n1 = [[6 + ((frame + k) % 3 - 1) for k in range(self.tables.n_q)] for _ in range(g["n_noise"])]
        return [lvl, bal], [n0, n1]

    def noise_targets(self, frame, ch, g):
        """Noise floors: a slow pattern of Q between 4 and 14 (noise-to-envelope ratios 2^(6 − Q),
        +6 to −24 dB)."""
        return [[4 + ((frame // 2 + k + n + ch) % 6) * 2 for k in range(self.tables.n_q)]
                for n in range(g["n_noise"])]

    def payload(self, frame):
        """The bits of sbr_extension_data after bs_sbr_crc_bits (bs_header_flag onwards), unaligned."""
        w = Bits()
        hdr = self.plan["headers"].get(frame)
        resend = self.plan["resend"] and frame % self.plan["resend"] == 0
        if hdr is not None or resend or frame == 0:
            h = hdr or self.h
            w.put(1, 1)
            self.put_header(w, h)
            if h != self.h:
                if self.h is not None:
                    self.inv.add("sbr.headerChanges")
                changed = self.h is None or any(h[k] != self.h[k] for k in (
                    "start_freq", "stop_freq", "xover_band", "freq_scale", "alter_scale", "noise_bands"))
                self.h = h
                if changed:
                    self.tables = Tables(self.rate, h)
                    self.table_id += 1
                    self.record_tables(frame)
            self.inv.add("sbr.headers")
        else:
            w.put(0, 1)
        coupled = bool(self.plan["coupling"] and self.plan["coupling"](frame)) if self.nch == 2 else False
        grids = []
        # A coupled frame has one grid for both channels, so it must start where both
        # channels' previous frames ended: before one, the second channel ends with the first.
        before_coupled = self.nch == 2 and not coupled and bool(self.plan["coupling"] and self.plan["coupling"](frame + 1))
        for c in range(self.nch if not coupled else 1):
            g = self.grid(frame, c, grids[0]["borders"][-1] - NUM_TIME_SLOTS if c and before_coupled else None)
            grids.append(g)
        if coupled and self.ch[0].trail != self.ch[1].trail:
            raise ValueError("frame %d: the channels' previous borders differ before coupling" % frame)
        if coupled:
            grids.append(dict(grids[0]))
        for c, g in enumerate(grids):
            self.frame_settings(frame, c, g, coupled)
            self.inv.add("sbr.frameClass%s" % CLASS_NAMES[g["cls"]])
            self.inv.add("sbr.envelopes%d" % g["n_env"])
            for m in (g["invf"] if not (coupled and c == 1) else []):
                self.inv.add("sbr.invfMode%d" % m)
        ch_energies = [[self.energies(frame, c, grids[c], e) for e in range(grids[c]["n_env"])]
                       for c in range(self.nch)]
        env_t, noise_t = self.targets(frame, grids, ch_energies, coupled)
        if self.nch == 1:
            w.put(0, 1)                     # bs_data_extra
            self.put_grid(w, grids[0])
            self.put_dtdf(w, grids[0])
            for m in grids[0]["invf"]:
                w.put(m, 2)
            self.envelopes(w, frame, 0, grids[0], False, env_t[0])
            self.noise(w, frame, 0, grids[0], False, noise_t[0])
            self.put_harmonics(w, grids[0])
        else:
            w.put(0, 1)                     # bs_data_extra
            w.put(1 if coupled else 0, 1)   # bs_coupling
            self.inv.add("sbr.coupling%s" % ("On" if coupled else "Off"))
            if coupled:
                self.put_grid(w, grids[0])
                self.put_dtdf(w, grids[0])
                self.put_dtdf(w, grids[1])
                for m in grids[0]["invf"]:
                    w.put(m, 2)
                self.envelopes(w, frame, 0, grids[0], True, env_t[0])
                self.noise(w, frame, 0, grids[0], True, noise_t[0])
                self.envelopes(w, frame, 1, grids[1], True, env_t[1])
                self.noise(w, frame, 1, grids[1], True, noise_t[1])
            else:
                self.put_grid(w, grids[0])
                self.put_grid(w, grids[1])
                self.put_dtdf(w, grids[0])
                self.put_dtdf(w, grids[1])
                for g in grids:
                    for m in g["invf"]:
                        w.put(m, 2)
                self.envelopes(w, frame, 0, grids[0], False, env_t[0])
                self.envelopes(w, frame, 1, grids[1], False, env_t[1])
                self.noise(w, frame, 0, grids[0], False, noise_t[0])
                self.noise(w, frame, 1, grids[1], False, noise_t[1])
            self.put_harmonics(w, grids[0])
            self.put_harmonics(w, grids[1])
        for c, g in enumerate(grids):
            self.ch[c].trail = g["borders"][-1]
        if self.prev_coupling is not None and coupled != self.prev_coupling:
            self.inv.add("sbr.couplingChanges")
        self.prev_coupling = coupled
        ext = self.ps_payload(frame) if "ps" in self.plan else None
        if ext is None:
            w.put(0, 1)                     # bs_extended_data
        else:
            w.put(1, 1)
            body = Bits()
            body.put(EXTENSION_ID_PS, 2)
            body.extend(ext)
            cnt = (len(body) + 7) // 8      # the reader stops when fewer than 8 bits are left
            if cnt >= 15:
                w.put(15, 4)
                w.put(cnt - 15, 8)
            else:
                w.put(cnt, 4)
            w.extend(body)
            w.put(0, 8 * cnt - len(body))
        return w

    def put_dtdf(self, w, g):
        for d in g["dt_env"]:
            w.put(d, 1)
        for d in g["dt_noise"]:
            w.put(d, 1)

    def put_harmonics(self, w, g):
        if g["harmonics"] is None:
            w.put(0, 1)
            return
        w.put(1, 1)
        for f in g["harmonics"]:
            w.put(f, 1)
        self.inv.add("sbr.addHarmonic")

    def put_header(self, w, h):
        w.put(h["amp_res"], 1)
        w.put(h["start_freq"], 4)
        w.put(h["stop_freq"], 4)
        w.put(h["xover_band"], 3)
        w.put(0, 2)
        w.put(1 if h["extra1"] else 0, 1)
        w.put(1 if h["extra2"] else 0, 1)
        if h["extra1"]:
            w.put(h["freq_scale"], 2)
            w.put(h["alter_scale"], 1)
            w.put(h["noise_bands"], 2)
        if h["extra2"]:
            w.put(h["limiter_bands"], 2)
            w.put(h["limiter_gains"], 2)
            w.put(h["interpol_freq"], 1)
            w.put(h["smoothing_mode"], 1)
        for k in ("amp_res", "freq_scale", "alter_scale", "noise_bands", "limiter_bands", "limiter_gains",
                  "interpol_freq", "smoothing_mode"):
            self.inv.add("header.%s=%d" % (k, h[k]))
        self.inv.add("header.extra1=%d" % h["extra1"])
        self.inv.add("header.extra2=%d" % h["extra2"])

    def record_tables(self, frame):
        """The band tables, for a decoder's tests to compare with its own."""
        t, h = self.tables, self.h
        self.inv.tables.append({
            "frame": frame, "header": {k: h[k] for k in ("start_freq", "stop_freq", "xover_band", "freq_scale",
                                                          "alter_scale", "noise_bands")},
            "k0": t.k0, "k2": t.k2, "kx": t.kx, "M": t.m, "twoRegions": t.two_regions, "patches": t.patches,
            "fMaster": t.master, "fTableHigh": t.high, "fTableLow": t.low, "fTableNoise": t.noise})

    # ------------------------------------------------------------ PS (8.4)
    IID_DEF = [-25, -18, -14, -10, -7, -4, -2, 0, 2, 4, 7, 10, 14, 18, 25]
    IID_FINE = [-50, -45, -40, -35, -30, -25, -22, -19, -16, -13, -10, -8, -6, -4, -2, 0,
                2, 4, 6, 8, 10, 13, 16, 19, 22, 25, 30, 35, 40, 45, 50]
    ICC = [1, 0.937, 0.84118, 0.60092, 0.36764, 0, -0.589, -1]

    @staticmethod
    def ps_bands(n):
        """Approximate QMF band ranges of n parameter bands (finer at the bottom), for the targets only."""
        edges = [0]
        for b in range(1, n):
            edges.append(max(edges[-1] + 1, int(64 ** (b / n)) - 1 + (b if n > 20 else 0) // 4))
        edges = [min(e, 63 - (n - i)) for i, e in enumerate(edges)]
        return [(edges[b], edges[b + 1] if b + 1 < n else 64) for b in range(n)]

    def ps_payload(self, frame):
        plan = self.plan
        cfg = plan["ps"].get(frame)
        send = frame == 0 or cfg is not None or (plan["ps_resend"] and frame % plan["ps_resend"] == 0)
        w = Bits()
        if send:
            cfg = cfg or self.ps_cfg
            w.put(1, 1)
            w.put(1 if cfg["iid"] else 0, 1)
            if cfg["iid"]:
                w.put(cfg["iid_mode"], 3)
            w.put(1 if cfg["icc"] else 0, 1)
            if cfg["icc"]:
                w.put(cfg["icc_mode"], 3)
            w.put(1 if cfg["ext"] else 0, 1)
            self.inv.add("ps.headers")
            self.ps_cfg = cfg
        else:
            w.put(0, 1)
            cfg = self.ps_cfg
        # Envelopes: frame_class 0 with 1, 2 or 4 envelopes (or 0: keep the previous values),
        # and frame_class 1 with free borders.
        kind = frame % 6
        if kind == 5 and not send:
            frame_class, idx = 0, 0
        elif kind in (1, 3):
            frame_class, idx = 1, (frame // 2) % 4
        else:
            frame_class, idx = 0, (1, 2, 3, 1, 2, 3)[kind]
        num_env = [[0, 1, 2, 4], [1, 2, 3, 4]][frame_class][idx]
        w.put(frame_class, 1)
        w.put(idx, 2)
        if frame_class:
            # Borders in QMF slots (0..31); the last one ends the frame, except in every other
            # such frame, where the decoder adds an envelope to reach it.
            borders = [nint(32 * (e + 1) / num_env) - 1 for e in range(num_env)]
            if frame % 4 == 1:
                borders[-1] -= 2
                self.inv.add("ps.lastBorderBeforeFrameEnd")
            for b in borders:
                w.put(b, 5)
        else:
            borders = [nint(32 * (e + 1) / num_env) - 1 for e in range(num_env)]
        self.inv.add("ps.frameClass%d" % frame_class)
        self.inv.add("ps.envelopes%d" % num_env)
        env_slots = []
        start = 0
        for b in borders:
            env_slots.append(self.src.slot_range(frame, start // 2, b // 2 + 1))
            start = b + 1
        nr_iid = [10, 20, 34][cfg["iid_mode"] % 3] if cfg["iid"] else 0
        nr_icc = [10, 20, 34][cfg["icc_mode"] % 3] if cfg["icc"] else 0
        nr_ipd = [5, 11, 17][cfg["iid_mode"] % 3] if cfg["iid"] else 0
        fine = cfg["iid"] and cfg["iid_mode"] >= 3
        if cfg["iid"]:
            self.inv.add("ps.iidMode%d" % cfg["iid_mode"])
            steps = self.IID_FINE if fine else self.IID_DEF
            lav = len(steps) // 2
            targets = []
            for slots in env_slots:
                row = []
                for lo, hi in self.ps_bands(nr_iid):
                    _, ll, rr, _ = self.src.cross(slots, lo, hi)
                    db = 10 * math.log10(max(ll, 1e-3) / max(rr, 1e-3))
                    row.append(min(range(len(steps)), key=lambda i: abs(steps[i] - db)) - lav)
                targets.append(row)
            codes = (C["F_HUFF_IID_FINE"], C["T_HUFF_IID_FINE"]) if fine else (C["F_HUFF_IID_DEF"], C["T_HUFF_IID_DEF"])
            self.ps_param(w, frame, "iid", (nr_iid, fine), targets, codes, -lav, lav, None)
        else:
            self.ps_state.pop("iid", None)
        if cfg["icc"]:
            self.inv.add("ps.iccMode%d" % cfg["icc_mode"])
            targets = []
            for slots in env_slots:
                row = []
                for lo, hi in self.ps_bands(nr_icc):
                    lr, ll, rr, _ = self.src.cross(slots, lo, hi)
                    rho = lr.real / math.sqrt(max(ll * rr, 1e-9))
                    row.append(min(range(8), key=lambda i: abs(self.ICC[i] - rho)))
                targets.append(row)
            self.ps_param(w, frame, "icc", (nr_icc,), targets, (C["F_HUFF_ICC"], C["T_HUFF_ICC"]), 0, 7, None)
        else:
            self.ps_state.pop("icc", None)
        if nr_iid == 34 or nr_icc == 34:
            self.inv.add("ps.frames34Bands")
        if cfg["ext"]:
            ext = Bits()
            ext.put(0, 2)                          # ps_extension_id 0: IPD/OPD
            use = cfg["ipdopd"] and cfg["iid"]
            ext.put(1 if use else 0, 1)
            if use:
                ipd_t, opd_t = [], []
                for slots in env_slots:
                    ri, ro = [], []
                    for lo, hi in self.ps_bands(nr_ipd):
                        lr, _, _, lm = self.src.cross(slots, lo, hi)
                        ri.append(nint(cmath.phase(lr) / (math.pi / 4)) % 8 if abs(lr) else 0)
                        ro.append(nint(cmath.phase(lm) / (math.pi / 4)) % 8 if abs(lm) else 0)
                    ipd_t.append(ri)
                    opd_t.append(ro)
                self.ipdopd(ext, frame, nr_ipd, ipd_t, opd_t)
                self.inv.add("ps.ipdopdFrames")
            else:
                self.ps_state.pop("ipd", None)
                self.ps_state.pop("opd", None)
            ext.put(0, 1)                          # reserved_ps
            cnt = (len(ext) + 7) // 8
            if cnt >= 15:
                w.put(15, 4)
                w.put(cnt - 15, 8)
            else:
                w.put(cnt, 4)
            w.extend(ext)
            w.put(0, 8 * cnt - len(ext))
        else:
            self.ps_state.pop("ipd", None)
            self.ps_state.pop("opd", None)
        return w

    def ps_param(self, w, frame, name, shape, targets, codes, lo, hi, modulo):
        fixed = self.plan.get("ps_constant", {}).get(name)   # aache_ps_probe.py's plans
        if fixed is not None:
            targets = [[fixed] * len(row) for row in targets]
        st = self.ps_state.get(name)
        prev = st[1] if st and st[0] == shape else None
        for e, row in enumerate(targets):
            dt = prev is not None and (frame + e + len(name)) % 3 != 0
            w.put(1 if dt else 0, 1)
            vals = []
            for b, x in enumerate(row):
                base = prev[b] if dt else (vals[-1] if vals else 0)
                if modulo:
                    d = (x - base) % modulo
                    v = (base + d) % modulo
                else:
                    d = max(-codes[0].lav, min(codes[0].lav, x - base))
                    v = max(lo, min(hi, base + d))
                    d = v - base
                (codes[1] if dt else codes[0]).put(w, d)
                vals.append(v)
            self.inv.add("ps.%s%s" % (name, "Dt" if dt else "Df"))
            prev = vals
        if targets:
            self.ps_state[name] = (shape, prev)

    def ipdopd(self, w, frame, nr, ipd_t, opd_t):
        for e in range(len(ipd_t)):
            for name, row, codes in (("ipd", ipd_t[e], (C["F_HUFF_IPD"], C["T_HUFF_IPD"])),
                                     ("opd", opd_t[e], (C["F_HUFF_OPD"], C["T_HUFF_OPD"]))):
                self.ps_param(w, frame + e, name, (nr,), [row], codes, 0, 7, 8)


# ---------------------------------------------------------------- ADTS

def adts_frames(data):
    at, out = 0, []
    while at < len(data):
        h = data[at:at + 7]
        if len(h) < 7 or h[0] != 0xFF or h[1] & 0xF0 != 0xF0:
            raise SystemExit("not ADTS at byte %d" % at)
        if not h[1] & 1:
            raise SystemExit("ADTS with CRC: ffmpeg does not write it; not supported")
        if h[6] & 3:
            raise SystemExit("more than one raw_data_block in an ADTS frame")
        length = (h[3] & 3) << 11 | h[4] << 3 | h[5] >> 5
        out.append((bytes(h), data[at + 7:at + length]))
        at += length
    return out


def end_position(payload):
    """Bit position of ID_END in a raw_data_block that ends with '111' and < 8 zero bits."""
    last = len(payload) - 1
    if payload[last] == 0:
        raise SystemExit("raw_data_block ends with a zero byte: not ffmpeg's shape")
    value = int.from_bytes(payload, "big")
    tz = (value & -value).bit_length() - 1
    end = 8 * len(payload) - 1 - tz
    if tz > 7 or end < 2 or (value >> tz) & 7 != 7:
        raise SystemExit("raw_data_block does not end with ID_END and zero padding")
    return end - 2


def sbr_crc(bits):
    """bs_sbr_crc_bits (4.4.2.8.1): CRC-10, generator x^10+x^9+x^5+x^4+x+1, register starting
    at 0, over every bit after it to the end of the fill bits (as fdk-aac's encoder computes it)."""
    crc = 0
    for b in bits:
        top = (crc >> 9) & 1
        crc = (crc << 1) & 0x3FF
        if top ^ b:
            crc ^= 0x233
    return crc


def forge(core_path, source_path, plan_name, out_path, inventory_path, without=()):
    data = open(core_path, "rb").read()
    frames = adts_frames(data)
    h0 = frames[0][0]
    profile, sfi, chan = h0[2] >> 6, h0[2] >> 2 & 15, (h0[2] & 1) << 2 | h0[3] >> 6
    if profile != 1 or chan not in (1, 2):
        raise SystemExit("need an LC mono or stereo core")
    core_rate = RATES[sfi]
    rate = 2 * core_rate
    src = Source(source_path)
    if src.rate != rate:
        raise SystemExit("source at %d Hz, output rate %d" % (src.rate, rate))
    src.repeat = len(frames) * NUM_TIME_SLOTS > 2 * len(src.spectra[0])
    plan = dict(PLANS[plan_name])
    for feature in without:
        WITHOUT[feature](plan)
    if "ps" in plan and (chan != 1 or src.channels != 2):
        raise SystemExit("PS needs a mono core and a stereo source")
    inv = Inventory()
    sbr = SbrWriter(rate, chan, plan, src, inv)
    out = bytearray()
    for i, (h, payload) in enumerate(frames):
        if h[2] != h0[2] or (h[3] & 0xC0) != (h0[3] & 0xC0):
            raise SystemExit("frame %d: the ADTS profile, rate or channels change" % i)
        end = end_position(payload)
        body = sbr.payload(i)
        crc = plan["crc"]
        w = Bits()
        head = 4 + (10 if crc else 0)
        cnt = (head + len(body) + 7) // 8
        fill = 8 * cnt - head - len(body)
        if crc:
            covered = body.bits + [0] * fill
            inv.add("sbr.crcFrames")
        w.put(ID_FIL, 3)
        if cnt >= 15:
            if cnt - 14 > 255:
                raise SystemExit("SBR payload too large")
            w.put(15, 4)
            w.put(cnt - 14, 8)
        else:
            w.put(cnt, 4)
        w.put(EXT_SBR_DATA_CRC if crc else EXT_SBR_DATA, 4)
        if crc:
            w.put(sbr_crc(covered), 10)
        w.extend(body)
        w.put(0, fill)
        w.put(ID_END, 3)
        value = int.from_bytes(payload, "big") >> (8 * len(payload) - end)
        core = Bits()
        core.bits = [(value >> (end - 1 - k)) & 1 for k in range(end)]
        core.extend(w)
        raw = core.tobytes()
        n = 7 + len(raw)
        if n >= 1 << 13:
            raise SystemExit("frame too long")
        hh = bytearray(h)
        hh[3] = (hh[3] & 0xFC) | (n >> 11)
        hh[4] = (n >> 3) & 0xFF
        hh[5] = (hh[5] & 0x1F) | ((n & 7) << 5)
        out += hh + raw
        inv.add("sbr.frames")
        inv.add("bytes.sbrPayload", cnt)
    open(out_path, "wb").write(bytes(out))
    facts = {"plan": plan_name, "without": sorted(without), "coreRate": core_rate, "outputRate": rate,
             "coreChannels": chan, "frames": len(frames), "features": inv.result(), "bandTables": inv.tables}
    with open(inventory_path, "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------- M4A: explicit signalling

def asc(form, core_rate, channels):
    """AudioSpecificConfig (1.6.2.1) for an explicit form."""
    w = Bits()
    core, ext = RATES.index(core_rate), RATES.index(2 * core_rate)
    if form in ("aot5", "aot29"):
        w.put(5 if form == "aot5" else 29, 5)
        w.put(core, 4)
        w.put(channels, 4)
        w.put(ext, 4)
        w.put(2, 5)              # the core's audioObjectType: LC
        w.put(0, 3)              # GASpecificConfig: frameLengthFlag, dependsOnCoreCoder, extensionFlag
    else:
        w.put(2, 5)
        w.put(core, 4)
        w.put(channels, 4)
        w.put(0, 3)
        w.put(0x2B7, 11)         # syncExtensionType
        w.put(5, 5)              # extensionAudioObjectType: SBR
        w.put(1, 1)              # sbrPresentFlag
        w.put(ext, 4)
        w.put(0x548, 11)
        w.put(1 if form == "compat-ps" else 0, 1)   # psPresentFlag
    return w.tobytes()


CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts"}


def lc_compatible_layout(data, found, core_rate):
    """The layout iTunes (and qaac, which copies it) give HE-AAC: everything an LC decoder
    reads is at the core rate. mdhd time scale and duration, the mp4a sample rate, 1024 per
    packet in stts, and the edit list's media time in core samples (qaac issue #84: "qaac
    (and fdkaac) uses down-sampled timescale for HE-AAC [...] I just follow what iTunes does")."""
    a = found[b"mdhd"][0][0]
    scale, dur = struct.unpack(">II", data[a + 20:a + 28])
    struct.pack_into(">II", data, a + 20, core_rate, dur // 2)
    a = found[b"stts"][0][0]
    for i in range(struct.unpack(">I", data[a + 12:a + 16])[0]):
        at = a + 16 + 8 * i + 4
        struct.pack_into(">I", data, at, struct.unpack(">I", data[at:at + 4])[0] // 2)
    for a, _, _ in found.get(b"elst", []):
        if data[a + 8] != 0:
            raise SystemExit("elst version 1")
        for i in range(struct.unpack(">I", data[a + 12:a + 16])[0]):
            at = a + 16 + 12 * i + 4
            t = struct.unpack(">i", data[at:at + 4])[0]
            if t > 0:
                struct.pack_into(">i", data, at, t // 2)
    entry = found[b"stsd"][0][0] + 16
    struct.pack_into(">I", data, entry + 32, core_rate << 16)


def m4a(in_path, form, out_path):
    data = bytearray(open(in_path, "rb").read())
    found = {}

    def walk(a, b, path):
        while a + 8 <= b:
            n, t = struct.unpack(">I4s", data[a:a + 8])
            found.setdefault(t, []).append((a, n, path))
            if t in CONTAINERS:
                walk(a + 8, a + n, path + [a])
            a += n

    walk(0, len(data), [])
    if len(found.get(b"trak", [])) != 1:
        raise SystemExit("one track expected")
    if found[b"moov"][0][0] < found[b"mdat"][0][0]:
        raise SystemExit("moov before mdat: growing it would move the chunk offsets")
    # ffmpeg probes the forged stream by decoding it, so its muxer already writes what it
    # writes for HE-AAC: mdhd time scale and mp4a sample rate at the output rate, 2048 per
    # packet (and, in MP4, always 2 channels). Only the AudioSpecificConfig is still LC.
    a = found[b"mdhd"][0][0]
    if data[a + 8] != 0:
        raise SystemExit("mdhd version 1")
    scale = struct.unpack(">I", data[a + 20:a + 24])[0]
    a = found[b"stts"][0][0]
    deltas = {struct.unpack(">I", data[a + 20 + 8 * i:a + 24 + 8 * i])[0]
              for i in range(struct.unpack(">I", data[a + 12:a + 16])[0])}
    stsd, stsd_size, path = found[b"stsd"][0]
    entry = stsd + 16
    if data[entry + 4:entry + 8] != b"mp4a":
        raise SystemExit("not an mp4a sample entry")
    # The 16.16 sample rate cannot hold 88.2 or 96 kHz: ffmpeg writes 0 there.
    entry_rate = struct.unpack(">I", data[entry + 32:entry + 36])[0] >> 16
    if entry_rate != (scale if scale < 65536 else 0) or max(deltas) != 2048:
        raise SystemExit("the muxer did not write the output rate (time scale %d, durations %s)" % (scale, deltas))
    core_rate = scale // 2
    if form.startswith("compat"):
        lc_compatible_layout(data, found, core_rate)
    # esds: ES_Descriptor → DecoderConfigDescriptor → DecoderSpecificInfo (tag 5).
    esds = entry + 36
    if data[esds + 4:esds + 8] != b"esds":
        raise SystemExit("no esds")
    esds_size = struct.unpack(">I", data[esds:esds + 4])[0]
    body = data[esds + 12:esds + esds_size]

    def descriptor(buf, at):
        tag, size, n = buf[at], 0, 1
        while True:
            b = buf[at + n]
            size = size << 7 | b & 0x7F
            n += 1
            if not b & 0x80:
                return tag, n, size

    def sized(tag, payload):
        n = len(payload)
        return bytes([tag, 0x80 | (n >> 21) & 0x7F, 0x80 | (n >> 14) & 0x7F, 0x80 | (n >> 7) & 0x7F, n & 0x7F]) + payload

    tag, hl, size = descriptor(body, 0)
    assert tag == 3
    es = body[hl:hl + size]
    flags = es[2]
    head = 3 + (2 if flags & 0x80 else 0)
    assert not flags & 0x60, "ES_Descriptor with URL or OCR stream"
    tag, dhl, dsize = descriptor(es, head)
    assert tag == 4
    dcd = es[head + dhl:head + dhl + dsize]
    rest = es[head + dhl + dsize:]
    tag, shl, ssize = descriptor(dcd, 13)
    assert tag == 5
    old = dcd[13 + shl:13 + shl + ssize]
    if old[0] >> 3 != 2 or RATES[(old[0] & 7) << 1 | old[1] >> 7] != core_rate:
        raise SystemExit("the AudioSpecificConfig is not LC at half the time scale")
    chan = (old[1] >> 3) & 15
    new_dcd = dcd[:13] + sized(5, asc(form, core_rate, chan)) + dcd[13 + shl + ssize:]
    new_es = es[:head] + sized(4, new_dcd) + rest
    new_body = sized(3, new_es)
    grow = len(new_body) - len(body)
    data[esds + 12:esds + esds_size] = new_body
    struct.pack_into(">I", data, esds, esds_size + grow)
    for a in path + [stsd, entry]:
        struct.pack_into(">I", data, a, struct.unpack(">I", data[a:a + 4])[0] + grow)
    open(out_path, "wb").write(bytes(data))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "forge" and len(sys.argv) in (7, 8):
        without = sys.argv[7].split("=", 1)[1].split(",") if len(sys.argv) == 8 else ()
        forge(*sys.argv[2:7], without=without)
    elif cmd == "m4a" and len(sys.argv) == 5:
        m4a(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
