#!/usr/bin/env python3
"""Writes the golden NAME.json beside a fixture of Tests/Fixtures/matroska/ (see
make-matroska.sh). Every value comes from ffprobe/ffmpeg:

    python3 tools/matroska_golden.py FILE

Keys: codec (ffprobe's codec_name), sampleRate, channels, sampleFormat, bitsPerRawSample,
extradata (hex, the CodecPrivate as libavformat gives it), timeBase, startPts, duration
(the container's, seconds), packets ([pts, duration, size] per packet of the first audio
stream, pts and duration in timeBase ticks, null for N/A), skipSamples and discardPadding
(from the packets' side data, where present), dataSHA256 (of all packet bytes back to
back: `ffmpeg -i F -map 0:a:0 -c copy -f data -`), tags (the container's), chapters
([start seconds, title]), formatName.
"""
import hashlib
import json
import os
import re
import sys

import ffprobe_tools
from ffprobe_tools import dump_to_hex, num


def run(cmd):
    return ffprobe_tools.run(cmd, stderr_is_error=True)


def probe(path, *args):
    return ffprobe_tools.probe(path, *args, stderr_is_error=True)


def main(path):
    info = probe(path, "-show_streams", "-show_format", "-show_chapters", "-show_data", "-select_streams", "a:0")
    s = info["streams"][0]
    packets = probe(path, "-show_packets", "-show_entries",
                    "packet=pts,duration,size,side_data_list", "-select_streams", "a:0")["packets"]
    data = run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy", "-f", "data", "-"])
    g = {
        "codec": s["codec_name"],
        "sampleRate": int(s["sample_rate"]),
        "channels": s["channels"],
        "sampleFormat": s.get("sample_fmt"),
        "bitsPerRawSample": num(s.get("bits_per_raw_sample")),
        "extradata": dump_to_hex(s.get("extradata")),
        "timeBase": s["time_base"],
        "startPts": num(s.get("start_pts")),
        "duration": num(info["format"].get("duration"), float),
        "formatName": info["format"]["format_name"],
        "packets": [[num(p.get("pts")), num(p.get("duration")), int(p["size"])] for p in packets],
        "dataSHA256": hashlib.sha256(data).hexdigest(),
        "tags": info["format"].get("tags", {}),
        "chapters": [[float(c["start_time"]), c.get("tags", {}).get("title", "")] for c in info.get("chapters", [])],
    }
    assert sum(p[2] for p in g["packets"]) == len(data), "ffprobe's packet sizes do not add up to ffmpeg's data"
    for p in packets:
        for sd in p.get("side_data_list", []):
            if sd.get("side_data_type") == "Skip Samples":
                g.setdefault("skipSamples", []).append([packets.index(p), sd.get("skip_samples", 0), sd.get("discard_padding", 0)])
    out = os.path.splitext(path)[0] + ".json"
    with open(out, "w") as f:
        json.dump(g, f, indent=1, ensure_ascii=False)
        f.write("\n")


for p in sys.argv[1:]:
    main(p)
