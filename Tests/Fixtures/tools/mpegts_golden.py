#!/usr/bin/env python3
"""Writes the golden NAME.json beside a fixture of Tests/Fixtures/mpegts/ (see
make-mpegts.sh). Every value comes from ffprobe/ffmpeg:

    python3 tools/mpegts_golden.py FILE [STREAM]

STREAM is ffprobe's audio stream specifier to describe (default a:0). Keys: codec
(ffprobe's codec_name), sampleRate, channels, extradata (hex), timeBase, startPts,
duration (the stream's, seconds), pid (the stream's id), packets ([pts, duration, size]
per packet of that stream, in timeBase ticks), dataSHA256 (of all its packet bytes back
to back: `ffmpeg -i F -map 0:STREAM -c copy -f data -`), formatName, and streams (every
stream: [pid, codec_type, codec_name, language]).
"""
import hashlib
import json
import os
import sys

from ffprobe_tools import dump_to_hex, num, run, probe


def main(path, spec):
    info = probe(path, "-show_streams", "-show_format", "-show_data", "-select_streams", spec)
    s = info["streams"][0]
    everything = probe(path, "-show_streams")["streams"]
    packets = probe(path, "-show_packets", "-show_entries", "packet=pts,duration,size", "-select_streams", spec)["packets"]
    data = run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:" + spec, "-c", "copy", "-f", "data", "-"])
    g = {
        "codec": s["codec_name"],
        "sampleRate": int(s["sample_rate"]),
        "channels": s["channels"],
        "extradata": dump_to_hex(s.get("extradata")),
        "timeBase": s["time_base"],
        "startPts": num(s.get("start_pts")),
        "duration": num(s.get("duration"), float),
        "pid": int(s["id"], 16),
        "formatName": info["format"]["format_name"],
        "packets": [[num(p.get("pts")), num(p.get("duration")), int(p["size"])] for p in packets],
        "dataSHA256": hashlib.sha256(data).hexdigest(),
        "streams": [[int(t["id"], 16), t.get("codec_type", "unknown"), t.get("codec_name", ""), t.get("tags", {}).get("language", "")]
                    for t in everything],
    }
    assert sum(p[2] for p in g["packets"]) == len(data), "ffprobe's packet sizes do not add up to ffmpeg's data"
    out = os.path.splitext(path)[0] + ("" if spec == "a:0" else "." + spec.replace(":", "")) + ".json"
    with open(out, "w") as f:
        json.dump(g, f, indent=1, ensure_ascii=False)
        f.write("\n")


main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "a:0")
