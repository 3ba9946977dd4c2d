#!/usr/bin/env python3
"""Which decoder follows the coded PS parameters, where ffmpeg and faad differ (make-aache.sh --ps-probes).

    aache_ps_probe.py CORE.aac SOURCE.wav

CORE.aac is a mono LC core at 24 kHz, SOURCE.wav its 48-kHz stereo source. For each probe the
forge writes a stream whose PS parameters are the same constant in every band and envelope
(plan key ps_constant); both decoders decode it, and the script prints, per frequency region,
the level difference of L over R, the phase of L·R* and the coherence |ΣL·R*|/√(Σ|L|²Σ|R|²)
that each decoder's output has. The README's "faad against ffmpeg" section reads them.
"""
import cmath
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aac_sbr_forge as forge  # noqa: E402
from golden_pcm import floats  # noqa: E402

REGIONS = ((150, 300), (600, 750), (1500, 1800), (3300, 3700), (6000, 6400), (9500, 9900))
PROBES = [  # what, PS configuration, constant parameter indices
    ("IID +10 dB, ICC 1, R_a, 20 bands", dict(iid_mode=1, icc_mode=1), dict(iid=4, icc=0)),
    ("IID +10 dB, ICC 1, R_b, 20 bands", dict(iid_mode=1, icc_mode=4), dict(iid=4, icc=0)),
    ("IID +10 dB, ICC 1, R_a, 34 bands", dict(iid_mode=2, icc_mode=2), dict(iid=4, icc=0)),
    ("IPD 90°, 20 bands", dict(iid_mode=1, icc_mode=1, ext=True, ipdopd=True), dict(iid=0, icc=0, ipd=2, opd=0)),
    ("IPD 90°, 34 bands", dict(iid_mode=2, icc_mode=2, ext=True, ipdopd=True), dict(iid=0, icc=0, ipd=2, opd=0)),
    ("IPD 90°, 10 bands", dict(iid_mode=0, icc_mode=0, ext=True, ipdopd=True), dict(iid=0, icc=0, ipd=2, opd=0)),
    ("IID +10 dB, ICC -1, R_a, 20 bands", dict(iid_mode=1, icc_mode=1), dict(iid=4, icc=7)),
    ("IID +10 dB, ICC -1, R_b, 20 bands", dict(iid_mode=1, icc_mode=4), dict(iid=4, icc=7)),
    ("IID 0 dB, ICC 0, R_a, 34 bands", dict(iid_mode=2, icc_mode=2), dict(iid=0, icc=5)),
]
N = 4096


def measure(x, start):
    """Per region: (L/R level in dB, phase of L·R* in degrees, coherence) over 3 × N frames."""
    left = [x[2 * (start + n)] for n in range(3 * N)]
    right = [x[2 * (start + n) + 1] for n in range(3 * N)]
    acc = [[0j, 0.0, 0.0] for _ in REGIONS]
    for s in range(0, 2 * N + 1, N // 2):
        a, b = forge.fft(left[s:s + N]), forge.fft(right[s:s + N])
        for r, (f0, f1) in enumerate(REGIONS):
            for k in range(f0 * N // 48000, f1 * N // 48000):
                acc[r][0] += a[k] * b[k].conjugate()
                acc[r][1] += abs(a[k]) ** 2
                acc[r][2] += abs(b[k]) ** 2
    return [(10 * math.log10(ll / rr), math.degrees(cmath.phase(lr)), abs(lr) / math.sqrt(ll * rr))
            for lr, ll, rr in acc]


def main():
    core, source = sys.argv[1], sys.argv[2]
    print("%-36s %-6s %s" % ("probe", "", "   ".join("%5d Hz          " % f0 for f0, _ in REGIONS)))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "probe.aac")
        for what, config, values in PROBES:
            forge.PLANS["probe"] = dict(forge.PLANS["ps_switch"], ps={0: forge.ps(**config)}, ps_constant=values)
            forge.forge(core, source, "probe", out, os.path.join(tmp, "probe.json"))
            ff = subprocess.run(["ffmpeg", "-v", "error", "-c:a", "aac", "-i", out, "-f", "f32le", "-"],
                                check=True, stdout=subprocess.PIPE).stdout
            fa = os.path.join(tmp, "faad.raw")
            subprocess.run(["faad", "-q", "-b", "4", "-f", "2", "-o", fa, out], check=True)
            # The same audio in both: faad's output starts one frame (2048 samples) later.
            for name, x, start in (("ffmpeg", floats(ff), 2 * 2048), ("faad", floats(open(fa, "rb").read()), 2048)):
                cells = ["%+5.1f dB %+4.0f° %.2f" % m for m in measure(x, start)]
                print("%-36s %-6s %s" % (what if name == "ffmpeg" else "", name, " | ".join(cells)))


main()
