#!/usr/bin/env python3
"""Writes the golden NAME.json beside a fixture of Tests/Fixtures/ffmpeg/ (see make-ffmpeg.sh
and README.md, "FFmpeg backend"). Every value comes from ffprobe/ffmpeg, except `asf`, which
this file's own small ASF header reader finds.

    python3 tools/ffmpeg_golden.py FILE [--source WAV]

--source: the file is lossless; fail unless it decodes to the WAV's s16 samples exactly.
Fails too if ffmpeg reports any error decoding the file, or if ffprobe cannot read it.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import uuid

PACKET_LIMIT = 400   # keep every packet below this count, else the first PACKETS_KEPT
PACKETS_KEPT = 50


def run(cmd, check_stderr=False):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or (check_stderr and p.stderr.strip()):
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
    return p.stdout


def probe(path, *args):
    return json.loads(run(["ffprobe", "-v", "error", "-of", "json"] + list(args) + [path], check_stderr=True))


def num(v, conv=int):
    return None if v in (None, "N/A") else conv(v)


def hexdump_to_hex(dump):
    """ffprobe -show_data prints 'OFFSET: xxxx xxxx ... ASCII' lines; returns the bytes as hex."""
    out = ""
    for line in dump.strip().splitlines():
        _, rest = line.split(": ", 1)
        out += rest[:39].replace(" ", "")
    return out


def guid(s):
    return uuid.UUID(s).bytes_le


ASF_HEADER = guid("75B22630-668E-11CF-A6D9-00AA0062CE6C")
ASF_FILE_PROPS = guid("8CABDCA1-A947-11CF-8EE4-00C00C205365")
ASF_STREAM_PROPS = guid("B7DC0791-A9B7-11CF-8EE6-00C00C205365")
ASF_AUDIO_MEDIA = guid("F8699E40-5B4D-11CF-A8FD-00805F5C442B")


def asf_header(data):
    """File Properties and the audio stream's WAVEFORMATEX, from the ASF Header Object."""
    assert data[:16] == ASF_HEADER, "not ASF"
    size, count = struct.unpack_from("<QI", data, 16)
    pos, end, out = 30, size, {"headerObjects": []}
    for _ in range(count):
        g, osize = data[pos:pos + 16], struct.unpack_from("<Q", data, pos + 16)[0]
        out["headerObjects"].append(str(uuid.UUID(bytes_le=g)).upper())
        body = pos + 24
        if g == ASF_FILE_PROPS:
            (fsize, created, npackets, play, send, preroll, flags, minp, maxp,
             maxbr) = struct.unpack_from("<QQQQQQIIII", data, body + 16)
            out.update(fileID=data[body:body + 16].hex(), fileSize=fsize, creationDate=created,
                       dataPackets=npackets, playDuration=play, sendDuration=send, preroll=preroll,
                       flags=flags, minPacketSize=minp, maxPacketSize=maxp, maxBitrate=maxbr)
        elif g == ASF_STREAM_PROPS and data[body:body + 16] == ASF_AUDIO_MEDIA:
            tlen = struct.unpack_from("<I", data, body + 40)[0]
            wfx = data[body + 54:body + 54 + tlen]
            tag, ch, rate, avg, align, bits, cb = struct.unpack_from("<HHIIHHH", wfx, 0)
            out["waveFormatEx"] = {"formatTag": tag, "channels": ch, "samplesPerSec": rate,
                                   "avgBytesPerSec": avg, "blockAlign": align,
                                   "bitsPerSample": bits, "extraHex": wfx[18:18 + cb].hex()}
        pos += osize
    assert pos == end, "ASF header objects do not add up"
    return out


def sha(b):
    return hashlib.sha256(b).hexdigest()


def decode(path, fmt, bitexact=True):
    cmd = ["ffmpeg", "-nostdin", "-v", "error"] + (["-bitexact"] if bitexact else [])
    return run(cmd + ["-i", path, "-map", "0:a:0", "-f", fmt, "-"], check_stderr=True)


def golden(path, source=None):
    data = open(path, "rb").read()
    p = probe(path, "-show_format", "-show_streams", "-show_chapters", "-show_data", "-select_streams", "a:0")
    st, fmt = p["streams"][0], p["format"]
    channels = int(st["channels"])
    count = probe(path, "-count_packets", "-select_streams", "a:0", "-show_entries", "stream=nb_read_packets")
    pk = probe(path, "-show_packets", "-select_streams", "a:0", "-show_entries", "packet=pts,duration,size,pos")
    packets = [[num(x.get("pts")), num(x.get("duration")), num(x.get("size")), num(x.get("pos"))]
               for x in pk["packets"]]
    bx = probe(path, "-flags", "+bitexact", "-select_streams", "a:0", "-show_entries", "stream=sample_fmt")

    # The decode the tests compare with: the decoder opened with AV_CODEC_FLAG_BITEXACT.
    f32 = decode(path, "f32le")
    s16 = decode(path, "s16le")
    assert len(f32) % (4 * channels) == 0 and len(s16) * 2 == len(f32)
    f32_default = decode(path, "f32le", bitexact=False)
    run(["ffmpeg", "-nostdin", "-v", "error", "-xerror", "-i", path, "-map", "0:a:0", "-f", "null", "-"],
        check_stderr=True)
    if source:
        src = run(["ffmpeg", "-nostdin", "-v", "error", "-i", source, "-f", "s16le", "-"], check_stderr=True)
        assert src == s16, "%s does not decode to its source" % path

    g = {
        "file": os.path.basename(path),
        "fileSize": len(data),
        "fileSHA256": sha(data),
        "container": fmt["format_name"],
        "codec": st["codec_name"],
        "codecLongName": st.get("codec_long_name"),
        "codecTag": st.get("codec_tag"),
        "sampleRate": int(st["sample_rate"]),
        "channels": channels,
        "channelLayout": st.get("channel_layout"),
        "bitRate": num(st.get("bit_rate")),
        "formatBitRate": num(fmt.get("bit_rate")),
        "bitsPerRawSample": num(st.get("bits_per_raw_sample")),
        "sampleFormat": st.get("sample_fmt"),
        "sampleFormatBitexact": bx["streams"][0].get("sample_fmt"),
        "duration": None if st.get("duration") in (None, "N/A") else st["duration"],
        "formatDuration": None if fmt.get("duration") in (None, "N/A") else fmt["duration"],
        "durationTs": num(st.get("duration_ts")),
        "timeBase": st.get("time_base"),
        "startPts": num(st.get("start_pts")),
        "startTime": None if st.get("start_time") in (None, "N/A") else st["start_time"],
        "packetCount": int(count["streams"][0]["nb_read_packets"]),
        "packetsTruncated": len(packets) >= PACKET_LIMIT,
        "packets": packets if len(packets) < PACKET_LIMIT else packets[:PACKETS_KEPT],
        "decodedFrames": len(f32) // (4 * channels),
        "f32leSHA256": sha(f32),
        "s16leSHA256": sha(s16),
        "f32leSHA256NoBitexact": sha(f32_default),
        "extradataSize": num(st.get("extradata_size")) or 0,
        "extradataHex": hexdump_to_hex(st["extradata"]) if num(st.get("extradata_size")) else None,
        "tags": fmt.get("tags", {}),
        "streamTags": st.get("tags", {}),
        "chapters": [{"id": c["id"], "timeBase": c["time_base"], "start": c["start"], "end": c["end"],
                      "startTime": c["start_time"], "endTime": c["end_time"],
                      "title": c.get("tags", {}).get("title")} for c in p.get("chapters", [])],
        "losslessOfSource": bool(source),
    }
    assert g["packetCount"] == len(packets), "count_packets and show_packets disagree"
    if g["extradataHex"] is not None:
        assert len(g["extradataHex"]) == 2 * g["extradataSize"]
    if data[:16] == ASF_HEADER:
        g["asf"] = asf_header(data)
        g["blockAlign"] = g["asf"]["waveFormatEx"]["blockAlign"]
        assert g["asf"]["waveFormatEx"]["extraHex"] == (g["extradataHex"] or ""), "ASF cbSize bytes != extradata"
    out = os.path.splitext(path)[0] + ".json"
    with open(out, "w") as fp:
        fp.write(json.dumps(g, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--source")
    a = ap.parse_args()
    golden(a.file, a.source)
