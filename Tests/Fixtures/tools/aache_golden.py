#!/usr/bin/env python3
"""Goldens of the HE-AAC fixtures (Tests/Fixtures/aache/), for make-aache.sh.

    aache_golden.py FILE INVENTORY.json [FAAD-INPUT]  → FILE's NAME.json and NAME.golden.flac

The oracle is ffmpeg's float decoder, `ffmpeg -v error -c:a aac -i FILE -f f32le -` (it
implements SBR and PS; `-c:a aac_latm` for LATM/LOAS, the same decoder behind a LATM parser). The script refuses a file for which `ffmpeg -v warning` prints
anything but the ADTS demuxer's "Estimating duration from bitrate" (which it prints for every
ADTS file, LC ones included). The JSON holds ffprobe's facts (profile, output rate and
channels), the frame count of ffmpeg's decode, the generator's inventory of what the SBR and
PS payloads exercise (INVENTORY.json, from aac_sbr_forge.py), and how far faad's decode is
from ffmpeg's.

faad (the second oracle) decodes FILE, or FAAD-INPUT when faad cannot read FILE's container
(LATM/LOAS: then the ADTS stream it was muxed from, which carries the same raw data blocks).
Its output is aligned to ffmpeg's by the lag with the smallest difference (faad drops its
first output frame of an ADTS stream). The distance is taken from the third frame on: faad
outputs nothing for the first, and with PS its second frame differs (PS start-up). `faad.framesBeyondFullAccuracy`
lists the 2048-frame blocks (in ffmpeg's timeline) where the two differ by more than the
ISO/IEC 14496-26 full-accuracy limits; make-aache.sh and the README say which stream
features those are.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_pcm import difference, floats, within_full_accuracy, write_golden_flac  # noqa: E402

BLOCK = 2048          # output frames per HE-AAC frame
SKIP_BLOCKS = 2       # start-up frames left out of the distance
KNOWN = "Estimating duration from bitrate, this may be inaccurate"


def run(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def faad_decode(path):
    """faad's float decode: (channels, rate, interleaved samples)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "faad.wav")
        run(["faad", "-q", "-b", "4", "-f", "1", "-o", out, path])
        data = open(out, "rb").read()
    at, fmt, pcm = 12, None, b""
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        if cid == b"fmt ":
            fmt = struct.unpack("<HHI", data[at + 8:at + 16])
        elif cid == b"data":
            pcm = data[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    return fmt[1], fmt[2], floats(pcm)


def best_lag(x, y, channels):
    """The lag of y against x (y[n + lag] ~ x[n]) with the smallest difference, by whole
    blocks first (faad drops a frame) and then sample by sample around the best."""
    def err(lag, step):
        n0, n1 = max(SKIP_BLOCKS * BLOCK, -lag), min(len(x) // channels, len(y) // channels - lag)
        if n1 - n0 < BLOCK:
            return float("inf")
        return sum((x[n * channels] - y[(n + lag) * channels]) ** 2 for n in range(n0, n1, step)) / len(range(n0, n1, step))
    coarse = min(range(-2 * BLOCK, 2 * BLOCK + 1, BLOCK // 2), key=lambda lag: err(lag, 7))
    return min(range(coarse - 64, coarse + 65), key=lambda lag: err(lag, 13))


def main():
    path, inventory = sys.argv[1], sys.argv[2]
    faad_input = sys.argv[3] if len(sys.argv) > 3 else path
    base = os.path.splitext(path)[0]
    probe = json.loads(run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path]).stdout)["streams"][0]
    channels, rate = int(probe["channels"]), int(probe["sample_rate"])
    # LATM/LOAS needs ffmpeg's aac_latm, the same decoder behind a LATM parser.
    decoder = "aac_latm" if probe["codec_name"] == "aac_latm" else "aac"
    check = run(["ffmpeg", "-nostdin", "-v", "warning", "-c:a", decoder, "-i", path, "-f", "null", "-"])
    messages = [line for line in check.stderr.decode().splitlines() if KNOWN not in line]
    if messages:
        sys.exit("%s: ffmpeg says %s" % (path, messages))
    pcm = run(["ffmpeg", "-nostdin", "-v", "error", "-c:a", decoder, "-i", path, "-f", "f32le", "-"]).stdout
    frames = len(pcm) // (4 * channels)
    n, peak = write_golden_flac(base + ".golden.flac", pcm, channels, rate, path)
    x = floats(pcm)
    f_channels, f_rate, y = faad_decode(faad_input)
    f_frames = len(y) // f_channels
    common = min(channels, f_channels)
    if f_channels != channels:   # compare the channels both have
        x = [x[i] for i in range(len(x)) if i % channels < common]
        y = [y[i] for i in range(len(y)) if i % f_channels < common]
    lag = best_lag(x, y, common)
    rms, largest = difference(x, y, common, SKIP_BLOCKS * BLOCK, lag)
    beyond = []
    for b in range(SKIP_BLOCKS, frames // BLOCK + 1):
        r, m = difference(x[:(b + 1) * BLOCK * common], y, common, b * BLOCK, lag)
        if not within_full_accuracy(r, m) and any(m):
            beyond.append(b)
    golden = {
        "file": os.path.basename(path),
        "codec": probe["codec_name"],
        "profile": probe.get("profile"),
        "sampleRate": rate,
        "channels": channels,
        "frames": frames,
        "ffmpegDecoder": decoder,
        "goldenFrames": n,
        "peak": round(peak, 6),
        "faad": {"input": os.path.basename(faad_input), "sampleRate": f_rate, "channels": f_channels,
                 "frames": f_frames, "lag": lag, "fromFrame": SKIP_BLOCKS * BLOCK,
                 "rms": ["%.3g" % v for v in rms], "max": ["%.3g" % v for v in largest],
                 "agreesWithFFmpeg": within_full_accuracy(rms, largest),
                 "framesBeyondFullAccuracy": beyond},
        "stream": json.load(open(inventory)),
    }
    with open(base + ".json", "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")


main()
