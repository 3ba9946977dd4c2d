#!/usr/bin/env python3
"""Builds the 20- and 32-bit ALAC fixtures, which ffmpeg's encoder cannot write.

    alac_forge.py OUTDIR

writes alac_20_stereo.caf, alac_20_mono.caf, alac_32_stereo.caf and alac_32_mono.caf:
CAF files ('desc', 'kuki' with the 24-byte ALACSpecificConfig, 'pakt', 'data') whose
packets are ALAC frames of 1024 samples coded by the small encoder below, written from
the bitstream as a decoder reads it (Apple's published ALAC format; no encoder's code).
Each file's frames cover, in turn: compressed frames with the adaptive predictor at
orders 2, 4, 8 and 30, with and without mid/side mixing; shifted-out low bytes
(bytesShifted 1 and 2); a stretch of digital silence (the Golomb coder's zero runs); the
order-31 "first order" mode and prediction mode 15 (first order, then the coded
predictor); an uncompressed escape frame; and a last, partial frame that carries its
own sample count. ffmpeg decodes the files for the goldens (make-alac.sh).

Deterministic: a fixed seed, integer arithmetic only.
"""
import math
import os
import random
import struct
import sys

FRAME = 1024
PB, MB, KB = 40, 10, 14


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def ext(v, bits):
    """The low `bits` of v as a signed value."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def log2(x):
    return (x | 1).bit_length() - 1


def sign(v):
    return (v > 0) - (v < 0)


class BitWriter:
    def __init__(self):
        self.value = 0
        self.count = 0

    def put(self, v, n):
        if n:
            self.value = (self.value << n) | (v & ((1 << n) - 1))
            self.count += n

    def bytes(self):
        pad = -self.count % 8
        return (self.value << pad).to_bytes((self.count + pad) // 8, "big")


def put_code(w, x, k, escape_bits):
    """One adaptive Golomb code: q ones, a zero, then k bits of r + 1 (or k - 1 zero
    bits when r is 0), where x = q(2^k - 1) + r; nine ones and the raw value when q > 8."""
    assert 0 <= x < (1 << escape_bits)
    m = 1 if k == 1 else (1 << k) - 1
    q, r = divmod(x, m)
    if q > 8:
        w.put(0x1FF, 9)
        w.put(x, escape_bits)
        return
    w.put((1 << q) - 1, q)
    w.put(0, 1)
    if k != 1:
        if r:
            w.put(r + 1, k)
        else:
            w.put(0, k - 1)


def put_residuals(w, res, bits, mult):
    history, modifier, i, n = MB, 0, 0, len(res)
    while i < n:
        k = min(log2((history >> 9) + 3), KB)
        v = res[i]
        x = (-2 * v - 1) if v < 0 else 2 * v
        put_code(w, x - modifier, k, bits)
        modifier = 0
        history = 0xFFFF if x > 0xFFFF else (history + x * mult - ((history * mult) >> 9)) & 0xFFFFFFFF
        if history < 128 and i + 1 < n:
            run = 0
            while i + 1 + run < n and res[i + 1 + run] == 0 and run < 0xFFFF:
                run += 1
            kz = min(7 - log2(history) + ((history + 16) >> 6), KB)
            put_code(w, run, kz, 16)
            i += run
            modifier = 1
            history = 0
        i += 1


def residuals(s, order, coefs, q, bits):
    """The residuals that the adaptive predictor (coefficients oldest tap first) turns back
    into `s`, adapting the coefficients exactly as the decoder does."""
    n = len(s)
    if order == 0:
        return list(s)
    res = [0] * n
    res[0] = s[0]
    if order == 31:
        for i in range(1, n):
            res[i] = ext(s[i] - s[i - 1], bits)
        return res
    c = list(coefs)
    i = 1
    while i <= order and i < n:
        res[i] = ext(s[i] - s[i - 1], bits)
        i += 1
    while i < n:
        base = s[i - order - 1]
        acc = 0
        for j in range(order):
            acc = wrap32(acc + wrap32(wrap32(s[i - order + j] - base) * c[j]))
        prediction = wrap32((acc + (1 << (q - 1))) >> q)
        err = ext(s[i] - prediction - base, bits)
        res[i] = err
        e = err
        if e:
            es = sign(e)
            j = 0
            while j < order and wrap32(e * es) > 0:
                d = wrap32(base - s[i - order + j])
                sg = sign(d) * es
                c[j] = ext(c[j] - sg, 16)
                e = wrap32(e - wrap32((wrap32(d * sg) >> q) * (j + 1)))
                j += 1
        i += 1
    return res


def element(w, tag, chans, depth, plan):
    """One SCE (tag 0) or CPE (tag 1) element for the samples in `chans` (one or two lists)."""
    n = len(chans[0])
    shift = plan.get("shift", 0)
    compressed = not plan.get("escape", False)
    w.put(tag, 3)
    w.put(0, 4)
    w.put(0, 12)
    w.put(1 if n != FRAME else 0, 1)
    w.put(shift, 2)
    w.put(0 if compressed else 1, 1)
    if n != FRAME:
        w.put(n, 32)
    if not compressed:
        for i in range(n):
            for ch in chans:
                w.put(ch[i], depth)
        return
    sb = 8 * shift
    bits = depth - sb + len(chans) - 1
    upper = [[v >> sb for v in ch] for ch in chans]
    mix_bits, mix_res = plan.get("mix", (0, 0)) if len(chans) == 2 else (0, 0)
    if len(chans) == 2 and mix_res:
        left, right = upper
        side = [a - b for a, b in zip(left, right)]
        mid = [b + ((v * mix_res) >> mix_bits) for b, v in zip(right, side)]
        upper = [mid, side]
    w.put(mix_bits, 8)
    w.put(mix_res, 8)
    preds = plan["predictors"]
    for c in range(len(chans)):
        mode, order, q, factor, coefs = preds[c]
        w.put(mode, 4)
        w.put(q, 4)
        w.put(factor, 3)
        w.put(order, 5)
        for v in reversed(coefs if order != 31 else [0] * 31):  # newest tap first
            w.put(v, 16)
    if sb:
        for i in range(n):
            for ch in chans:
                w.put(ch[i], sb)
    for c in range(len(chans)):
        mode, order, q, factor, coefs = preds[c]
        for v in upper[c]:
            assert -(1 << (bits - 1)) <= v < (1 << (bits - 1)), (v, bits)
        res = residuals(upper[c], order, coefs, q, bits)
        if mode == 15:
            # The decoder runs the first-order predictor before the coded one.
            res = [res[0]] + [ext(res[i] - res[i - 1], bits) for i in range(1, n)]
        put_residuals(w, res, bits, factor * PB // 4)


def signal(rng, depth, channels, frames):
    full = 1 << (depth - 1)
    out = []
    for c in range(channels):
        f1, f2 = 440 + 110 * c, 1300 + 170 * c
        ch = []
        for i in range(frames):
            if 2 * FRAME + 100 <= i < 2 * FRAME + 700:
                ch.append(0)  # digital silence: zero runs
                continue
            if 3 * FRAME <= i < 4 * FRAME:
                ch.append(rng.randrange(-full * 7 // 8, full * 7 // 8))  # noise: the escape frame
                continue
            t = i / 22050
            v = 0.45 * math.sin(2 * math.pi * f1 * t) + 0.25 * math.sin(2 * math.pi * f2 * t)
            noise = full >> (11 if depth == 20 else 15)
            ch.append(int(v * full) + rng.randrange(-noise, noise + 1))
        out.append(ch)
    return out


# Per frame: how it is coded. predictors: (mode, order, quantisation, history factor,
# coefficients oldest tap first), one per channel of the element.
P2 = (0, 2, 9, 4, [-512, 1024])
P4 = (0, 4, 9, 4, [60, -300, -200, 1200])
P8 = (0, 8, 10, 5, [10, -20, 30, -40, 80, -300, -200, 2400])
P30 = (0, 30, 12, 3, [(-1) ** j * (j * 7) for j in range(29)] + [4000])
FIRST = (0, 31, 9, 4, [])
MODE15 = (15, 2, 9, 4, [-300, 600])
ZERO = (0, 0, 9, 1, [])


def plans(depth):
    big = 2 if depth == 32 else 1
    return [
        {"predictors": [P4, P4], "mix": (2, 2), "shift": big if depth == 32 else 0},
        {"predictors": [P8, P2], "mix": (2, 0), "shift": big},
        {"predictors": [P2, P4], "mix": (2, 1), "shift": big if depth == 32 else 0},
        {"escape": True, "shift": big if depth == 32 else 0},
        {"predictors": [MODE15, FIRST], "mix": (3, 3), "shift": 1 if depth == 32 else 0},
        {"predictors": [ZERO if depth == 20 else P4, P30], "mix": (0, 0), "shift": big},
        {"predictors": [P4, MODE15], "mix": (2, 2), "shift": big},
    ]


def build(depth, channels, seed):
    rng = random.Random(seed)
    frames = 6 * FRAME + 301
    sig = signal(rng, depth, channels, frames)
    packets = []
    for f, plan in enumerate(plans(depth)):
        part = [ch[f * FRAME:(f + 1) * FRAME] for ch in sig]
        if not part[0]:
            break
        w = BitWriter()
        if channels == 1:
            one = dict(plan)
            if depth == 32 and one.get("escape"):
                one["shift"] = 0
            if "predictors" in one:
                one["predictors"] = one["predictors"][:1]
            # A 32-bit single channel may keep every bit (32 bits a residual).
            if depth == 32 and f == 0:
                one["shift"] = 0
            element(w, 0, part, depth, one)
        else:
            element(w, 1, part, depth, plan)
        w.put(7, 3)
        packets.append(w.bytes())
    return packets, frames


def ber(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def caf(path, depth, channels, packets, frames, rate=22050):
    def chunk(kind, body):
        return kind + struct.pack(">q", len(body)) + body
    flags = {16: 1, 20: 2, 24: 3, 32: 4}[depth]
    desc = struct.pack(">d4sIIIII", rate, b"alac", flags, 0, FRAME, channels, 0)
    cookie = struct.pack(">IBBBBBBHIII", FRAME, 0, depth, PB, MB, KB, channels, 255, max(map(len, packets)), 0, rate)
    remainder = len(packets) * FRAME - frames
    pakt = struct.pack(">qqii", len(packets), frames, 0, remainder) + b"".join(ber(len(p)) for p in packets)
    data = struct.pack(">I", 0) + b"".join(packets)
    body = b"caff" + struct.pack(">HH", 1, 0) + chunk(b"desc", desc) + chunk(b"kuki", cookie) + chunk(b"pakt", pakt) + chunk(b"data", data)
    with open(path, "wb") as fh:
        fh.write(body)


def main():
    out = sys.argv[1]
    for depth, channels, seed in ((20, 2, 2020), (20, 1, 2021), (32, 2, 3232), (32, 1, 3233)):
        packets, frames = build(depth, channels, seed)
        name = "alac_%d_%s.caf" % (depth, "stereo" if channels == 2 else "mono")
        caf(os.path.join(out, name), depth, channels, packets, frames)


if __name__ == "__main__":
    main()
