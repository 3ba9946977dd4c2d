#!/usr/bin/env python3
"""Write the golden NAME.json beside a FLAC fixture.

Usage: flac_golden.py FILE [--no-flac-test]

Packets, their sizes and offsets, the sample rate, channels and bit depth come from
ffprobe; the metadata (STREAMINFO, tags, picture, SEEKTABLE, CUESHEET) and each frame's
block size from flaclib, a small independent reader, whose frames must agree with
ffprobe's packets. `flac -t` must accept the file (its MD5 check), unless told otherwise.
Python 3 stdlib only.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import flaclib  # noqa: E402


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--no-flac-test", action="store_true")
a = ap.parse_args()
path = a.file
d = open(path, "rb").read()

probe = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-select_streams", "a:0", "-show_streams",
                        "-show_format", "-show_packets", path]))
st = probe["streams"][0]
packets = probe["packets"]
sizes = [int(p["size"]) for p in packets]
offsets = [int(p["pos"]) for p in packets]

blocks, audio = flaclib.parse_metadata(d)
frames = flaclib.frames(d, audio)
if [(o, s) for o, s, _ in frames] != list(zip(offsets, sizes)):
    raise SystemExit("%s: flaclib's frames and ffprobe's packets disagree" % path)
si = flaclib.streaminfo(blocks[0]["body"])

g = {
    "file": os.path.basename(path),
    "fileSize": len(d),
    "expected": {"fileType": "flac", "formatID": "flac"},
    "codec": st["codec_name"],
    "sampleRate": int(st["sample_rate"]),
    "channels": int(st["channels"]),
    "channelLayout": st.get("channel_layout"),
    "bitsPerSample": int(st["bits_per_raw_sample"]),
    "packets": len(packets),
    "packetSizes": sizes,
    "packetOffsets": offsets,
    "frameSamples": [h["blockSize"] for _, _, h in frames],
    "variableBlocking": bool(frames and frames[0][2]["variable"]),
    "dataOffset": audio,
    "totalSamples": si["totalSamples"],
    "streamInfo": si,
    "streamInfoHex": blocks[0]["body"].hex(),
    "blocks": [{"type": b["type"], "offset": b["offset"], "length": b["length"]} for b in blocks],
}
if d[:3] == b"ID3":
    g["id3Size"] = d.index(b"fLaC")
for b in blocks:
    if b["type"] == 4:
        vendor, fields = flaclib.vorbis_comment(b["body"])
        g["vendor"] = vendor
        g["tags"] = fields
        ff = {k.lower(): v for k, v in probe["format"].get("tags", {}).items()}
        for name, value in fields:
            key = {"tracknumber": "track"}.get(name.lower(), name.lower())  # ffmpeg's name for it
            if name.upper() != "WAVEFORMATEXTENSIBLE_CHANNEL_MASK" and ff.get(key) != value:
                raise SystemExit("%s: ffprobe tag %s=%r, the block says %r" % (path, name, ff.get(name.lower()), value))
    elif b["type"] == 6:
        pic = flaclib.picture(b["body"])
        data = pic.pop("data")
        pic["size"] = len(data)
        pic["sha256"] = hashlib.sha256(data).hexdigest()
        pic["hex"] = data.hex()
        g.setdefault("pictures", []).append(pic)
    elif b["type"] == 3:
        g["seekTable"] = flaclib.seektable(b["body"])
    elif b["type"] == 5:
        g["cueSheet"] = flaclib.cuesheet(b["body"])
if not a.no_flac_test:
    subprocess.run(["flac", "-s", "-t", path], check=True)
    g["flacTest"] = True

out = os.path.splitext(path)[0] + ".json"
with open(out, "w") as f:
    f.write(json.dumps(g, indent=1, sort_keys=True) + "\n")
