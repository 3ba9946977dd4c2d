#!/usr/bin/env python3
"""Goldens of the MPEG audio decoder fixtures (Tests/Fixtures/mp3dec/), for make-mp3dec.sh.

    mp3dec_golden.py FILE.mp3 ENCODER-COMMAND   → FILE.json and FILE.golden.flac beside FILE

The oracle is ffmpeg's float decoder, `ffmpeg -v error -c:a mp3float -i FILE -f f32le -`
(mp2float and mp1float for Layers II and I: ffmpeg's default mp1 and mp2 decoders are
fixed-point and give 16-bit samples, 1.2e-5 RMS away from a float decode, beyond the
tolerance). It trims a LAME tag's encoder delay + 529 and padding − 529. The JSON holds its
frame count after that trimming; mpg123's count (`mpg123 -q --float -e f32 -s`, gapless by
default) and how far mpg123's samples are from ffmpeg's (whether within ISO/IEC 11172-4 full
accuracy); the stream facts; and what this script's own small frame and side-info reader
finds in the bitstream (modes, block types, frames that use the bit reservoir), so the
README's claims about what each file exercises are checked.

The golden PCM is ffmpeg's first 16384 samples (16384 mono or 8192 stereo frames; all, if
fewer) rounded to 24 bits and stored as FLAC, by golden_pcm.py (shared with the HE-AAC
goldens); the rounding error (≤ 2^-24) is far below the ISO/IEC 11172-4 tolerance the tests
apply. A sample outside [-1, 1) would clip: the script refuses.
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_pcm import Bits, difference, floats, within_full_accuracy, write_golden_flac  # noqa: E402

BITRATES = {  # (version is MPEG-1, layer) → kbit/s by index
    (True, 1): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    (True, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    (True, 3): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    (False, 1): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    (False, 2): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    (False, 3): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}
RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}
MODES = ["stereo", "joint", "dual", "mono"]


def frames_of(data):
    """(header fields, frame bytes) of every frame, after an ID3v2 tag; stops at the first non-frame."""
    at = 0
    if data[:3] == b"ID3":
        at = 10 + ((data[6] & 0x7F) << 21 | (data[7] & 0x7F) << 14 | (data[8] & 0x7F) << 7 | data[9] & 0x7F)
    out = []
    while at + 4 <= len(data):
        h = struct.unpack(">I", data[at:at + 4])[0]
        if h >> 21 != 0x7FF:
            break
        version, layer = h >> 19 & 3, 4 - (h >> 17 & 3)
        rate_index, br_index = h >> 10 & 3, h >> 12 & 15
        if version == 1 or layer == 4 or rate_index == 3 or br_index in (0, 15):
            break
        mpeg1 = version == 3
        rate = RATES[version][rate_index]
        br = BITRATES[(mpeg1, layer)][br_index] * 1000
        pad = h >> 9 & 1
        if layer == 1:
            size = (12 * br // rate + pad) * 4
        elif layer == 3 and not mpeg1:
            size = 72 * br // rate + pad
        else:
            size = 144 * br // rate + pad
        f = dict(version={3: "1", 2: "2", 0: "2.5"}[version], layer=layer, rate=rate, bitrate=br // 1000,
                 crc=not (h >> 16 & 1), mode=MODES[h >> 6 & 3], modeExtension=h >> 4 & 3)
        out.append((f, data[at:at + size]))
        at += size
    return out


def layer3_side_info(f, frame):
    """Block types, stereo tools and reservoir use of one Layer III frame."""
    mpeg1 = f["version"] == "1"
    nch = 1 if f["mode"] == "mono" else 2
    r = Bits(frame[6 if f["crc"] else 4:])
    info = {"mainDataBegin": r.read(9 if mpeg1 else 8), "blocks": []}
    r.read((5 if nch == 1 else 3) if mpeg1 else (1 if nch == 1 else 2))
    if mpeg1:
        r.read(4 * nch)  # scfsi
    scfsi = 0
    for gr in range(2 if mpeg1 else 1):
        for ch in range(nch):
            r.read(12 + 9 + 8)
            r.read(4 if mpeg1 else 9)
            if r.read(1):
                block_type, mixed = r.read(2), r.read(1)
                r.read(10 + 9)
                info["blocks"].append("short" if block_type == 2 and not mixed else
                                      "mixed" if block_type == 2 else ["", "start", "", "stop"][block_type])
            else:
                r.read(15 + 4 + 3)
                info["blocks"].append("long")
            r.read(3 if mpeg1 else 2)
    return info


def analyse(path):
    data = open(path, "rb").read()
    frames = frames_of(data)
    first = frames[0][0]
    tag = None
    body = frames
    # A Xing/Info frame (LAME's first frame) carries no audio: its side info is all zeros.
    head = frames[0][1]
    for marker in (b"Xing", b"Info"):
        i = head.find(marker, 4, 64)
        if i >= 0:
            tag = marker.decode()
            lame = head.find(b"LAME", i)
            if lame >= 0:
                d = head[lame + 21:lame + 24]
                tag += ", LAME delay %d padding %d" % (d[0] << 4 | d[1] >> 4, (d[1] & 15) << 8 | d[2])
            body = frames[1:]
            break
    facts = {"frames": len(body), "layer": first["layer"], "version": first["version"],
             "sampleRate": first["rate"], "crc": first["crc"], "tag": tag,
             "modes": sorted({f["mode"] + ("" if f["mode"] != "joint" else
                                           "+" + ["none", "intensity", "ms", "ms+intensity"][f["modeExtension"]]
                                           if f["layer"] == 3 else "(bound %d)" % (4 + 4 * f["modeExtension"]))
                              for f, _ in body}),
             "bitrates": sorted({f["bitrate"] for f, _ in body})}
    if first["layer"] == 3:
        blocks, reservoir = {}, 0
        for f, b in body:
            s = layer3_side_info(f, b)
            reservoir += s["mainDataBegin"] > 0
            for k in s["blocks"]:
                blocks[k] = blocks.get(k, 0) + 1
        facts["granuleChannelBlocks"] = dict(sorted(blocks.items()))
        facts["framesUsingReservoir"] = reservoir
    return facts


def run(argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout


def main():
    path, command = sys.argv[1], sys.argv[2]
    base = os.path.splitext(path)[0]
    probe = json.loads(run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path]))["streams"][0]
    channels, rate = int(probe["channels"]), int(probe["sample_rate"])
    # ffmpeg's first mp1/mp2 decoders are fixed-point (16-bit output): name the float ones.
    decoder = {"mp1": "mp1float", "mp2": "mp2float", "mp3": "mp3float"}[probe["codec_name"]]
    pcm = run(["ffmpeg", "-v", "error", "-nostdin", "-c:a", decoder, "-i", path, "-f", "f32le", "-"])
    frames = len(pcm) // (4 * channels)
    mpg = run(["mpg123", "-q", "--float", "-e", "f32", "-s", path])
    # How far mpg123 is from ffmpeg, per channel (the tests' second oracle).
    x, y = floats(pcm), floats(mpg)
    rms, peak_difference = difference(x, y, channels)
    agrees = len(x) == len(y) and within_full_accuracy(rms, peak_difference)
    n, peak = write_golden_flac(base + ".golden.flac", pcm, channels, rate, path)
    golden = {
        "encoder": command,
        "codec": probe["codec_name"],
        "sampleRate": rate,
        "channels": channels,
        "frames": frames,
        "ffmpegDecoder": decoder,
        "mpg123": {"frames": len(mpg) // (4 * channels), "agreesWithFFmpeg": agrees,
                   "rms": ["%.3g" % v for v in rms], "max": ["%.3g" % v for v in peak_difference]},
        "goldenFrames": n,
        "peak": round(peak, 6),
        "stream": analyse(path),
    }
    with open(base + ".json", "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")


main()
