#!/usr/bin/env python3
"""Write the golden NAME.json beside a fixture.

Usage:
  golden.py FILE --file-type WAVE --format-id lpcm [--info key=value ...]

Oracle values come from ffprobe and ffmpeg (the decoded-sample hashes and the
frame count). The "header" object holds facts read straight from the file's
bytes by the small independent parser below (chunk list and order, the
format/COMM/desc fields, fact, markers, the declared sizes), so tests can check
a parser without re-deriving them. "expected" holds the Apple four-char file
type and format ID the fixture has by construction (passed in by
make-fixtures.sh). Python 3 stdlib only.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout


def decode(path, fmt):
    return run(["ffmpeg", "-nostdin", "-v", "error", "-bitexact", "-i", path,
                "-fflags", "+bitexact", "-flags", "+bitexact",
                "-f", fmt, "-"])


def ffprobe(path):
    out = run(["ffprobe", "-v", "error", "-of", "json",
               "-show_format", "-show_streams", path])
    return json.loads(out)


def fourcc(b):
    try:
        s = b.decode("ascii")
        if all(32 <= ord(c) < 127 for c in s):
            return s
    except UnicodeDecodeError:
        pass
    return "0x" + b.hex().upper()


def ext80(b):
    """IEEE 754 80-bit extended (big-endian) to float."""
    exp = struct.unpack(">H", b[:2])[0]
    mant = struct.unpack(">Q", b[2:10])[0]
    sign = -1 if exp & 0x8000 else 1
    exp &= 0x7FFF
    if exp == 0 and mant == 0:
        return 0.0
    return sign * mant * 2.0 ** (exp - 16383 - 63)


def guid_str(b):
    d1, d2, d3 = struct.unpack("<IHH", b[:8])
    return "%08X-%04X-%04X-%s-%s" % (d1, d2, d3, b[8:10].hex().upper(),
                                    b[10:16].hex().upper())


def parse_wave_fmt(body):
    tag, ch, sr, byte_rate, block_align, bits = struct.unpack("<HHIIHH", body[:16])
    fmt = {"formatTag": tag, "channels": ch, "sampleRate": sr,
           "byteRate": byte_rate, "blockAlign": block_align,
           "bitsPerSample": bits}
    if len(body) >= 18:
        cb = struct.unpack("<H", body[16:18])[0]
        fmt["cbSize"] = cb
        extra = body[18:18 + cb]
        if tag == 0xFFFE and len(extra) >= 22:
            valid, mask = struct.unpack("<HI", extra[:6])
            fmt["validBitsPerSample"] = valid
            fmt["channelMask"] = mask
            fmt["subFormat"] = guid_str(extra[6:22])
        elif tag in (0x0011, 0x0002) and len(extra) >= 2:
            fmt["samplesPerBlock"] = struct.unpack("<H", extra[:2])[0]
            if tag == 0x0002 and len(extra) >= 4:
                n = struct.unpack("<H", extra[2:4])[0]
                fmt["numCoefficients"] = n
                fmt["coefficients"] = [
                    list(struct.unpack("<hh", extra[4 + 4 * i:8 + 4 * i]))
                    for i in range(n)]
    return fmt


def parse_info_list(body):
    info = {}
    pos = 4
    while pos + 8 <= len(body):
        cid = body[pos:pos + 4]
        size = struct.unpack("<I", body[pos + 4:pos + 8])[0]
        info[fourcc(cid)] = body[pos + 8:pos + 8 + size].rstrip(b"\x00").decode("latin-1")
        pos += 8 + size + (size & 1)
    return info


def parse_riff(data):
    h = {"riffId": fourcc(data[:4]),
         "riffSize": struct.unpack("<I", data[4:8])[0],
         "formType": fourcc(data[8:12]), "chunks": []}
    pos = 12
    ds64_data_size = None
    while pos + 8 <= len(data):
        cid = data[pos:pos + 4]
        size = struct.unpack("<I", data[pos + 4:pos + 8])[0]
        body_off = pos + 8
        eff = size
        if cid == b"data":
            if size == 0xFFFFFFFF and ds64_data_size is not None:
                eff = ds64_data_size
            elif size == 0xFFFFFFFF or body_off + size > len(data):
                eff = len(data) - body_off
        h["chunks"].append({"id": fourcc(cid), "offset": pos, "size": size})
        body = data[body_off:body_off + eff]
        if cid == b"fmt ":
            h["fmt"] = parse_wave_fmt(body)
        elif cid == b"fact":
            h["factSampleLength"] = struct.unpack("<I", body[:4])[0]
        elif cid == b"ds64":
            riff64, data64, samples64 = struct.unpack("<QQQ", body[:24])
            h["ds64"] = {"riffSize": riff64, "dataSize": data64,
                         "sampleCount": samples64}
            ds64_data_size = data64
        elif cid == b"LIST" and body[:4] == b"INFO":
            h["listInfo"] = parse_info_list(body)
        elif cid == b"data":
            h["dataOffset"] = body_off
            h["dataSize"] = eff
            if eff & 1 and body_off + eff < len(data):
                h["dataPadByte"] = data[body_off + eff]
        pos = body_off + eff + (eff & 1)
    return h


W64_RIFF = bytes.fromhex("726966662E91CF11A5D628DB04C10000")
W64_WAVE = bytes.fromhex("77617665F3ACD3118CD100C04F8EDB8A")


def parse_w64(data):
    h = {"riffGUID": guid_str(data[:16]),
         "riffSize": struct.unpack("<Q", data[16:24])[0],
         "waveGUID": guid_str(data[24:40]), "chunks": []}
    pos = 40
    while pos + 24 <= len(data):
        guid = data[pos:pos + 16]
        size = struct.unpack("<Q", data[pos + 16:pos + 24])[0]  # includes the 24-byte header
        body = data[pos + 24:pos + size]
        cid = guid[:4]
        h["chunks"].append({"id": fourcc(cid), "guid": guid_str(guid),
                            "offset": pos, "size": size})
        if cid == b"fmt ":
            h["fmt"] = parse_wave_fmt(body)
        elif cid == b"fact":
            h["factSampleLength"] = struct.unpack("<Q", body[:8])[0]
        elif cid == b"data":
            h["dataOffset"] = pos + 24
            h["dataSize"] = size - 24
        pos += (size + 7) & ~7
    return h


def parse_aiff(data):
    h = {"formSize": struct.unpack(">I", data[4:8])[0],
         "formType": fourcc(data[8:12]), "chunks": []}
    pos = 12
    while pos + 8 <= len(data):
        cid = data[pos:pos + 4]
        size = struct.unpack(">I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        h["chunks"].append({"id": fourcc(cid), "offset": pos, "size": size})
        if cid == b"COMM":
            ch, frames, bits = struct.unpack(">hIh", body[:8])
            comm = {"channels": ch, "numSampleFrames": frames,
                    "sampleSize": bits, "sampleRate": ext80(body[8:18])}
            if h["formType"] == "AIFC" and len(body) >= 22:
                comm["compressionType"] = fourcc(body[18:22])
                comm["compressionName"] = body[23:23 + body[22]].decode("latin-1") if len(body) > 22 else ""
            h["comm"] = comm
        elif cid == b"SSND":
            off, block = struct.unpack(">II", body[:8])
            h["ssnd"] = {"offset": off, "blockSize": block}
            h["dataOffset"] = pos + 16 + off
            h["dataSize"] = size - 8 - off
        elif cid == b"FVER":
            h["fver"] = "0x%08X" % struct.unpack(">I", body[:4])[0]
        elif cid == b"MARK":
            n = struct.unpack(">H", body[:2])[0]
            p = 2
            marks = []
            for _ in range(n):
                mid, mpos = struct.unpack(">hI", body[p:p + 6])
                ln = body[p + 6]
                name = body[p + 7:p + 7 + ln].decode("latin-1")
                marks.append({"id": mid, "position": mpos, "name": name})
                p += 6 + 1 + ln + ((1 + ln) & 1)
            h["markers"] = marks
        elif cid == b"COMT":
            n = struct.unpack(">H", body[:2])[0]
            p = 2
            comments = []
            for _ in range(n):
                ts, marker, ln = struct.unpack(">IhH", body[p:p + 8])
                comments.append({"timeStamp": ts, "marker": marker,
                                 "text": body[p + 8:p + 8 + ln].decode("latin-1")})
                p += 8 + ln + (ln & 1)
            h["comments"] = comments
        pos += 8 + size + (size & 1)
    return h


def parse_caf(data):
    version, flags = struct.unpack(">HH", data[4:8])
    h = {"version": version, "flags": flags, "chunks": []}
    pos = 8
    while pos + 12 <= len(data):
        cid = data[pos:pos + 4]
        size = struct.unpack(">q", data[pos + 4:pos + 12])[0]
        eff = size if size >= 0 else len(data) - pos - 12
        body = data[pos + 12:pos + 12 + eff]
        h["chunks"].append({"id": fourcc(cid), "offset": pos, "size": size})
        if cid == b"desc":
            sr, fid, fflags, bpp, fpp, cpf, bpc = struct.unpack(">d4sIIIII", body[:32])
            h["desc"] = {"sampleRate": sr, "formatID": fourcc(fid),
                         "formatFlags": fflags, "bytesPerPacket": bpp,
                         "framesPerPacket": fpp, "channelsPerFrame": cpf,
                         "bitsPerChannel": bpc}
        elif cid == b"chan":
            tag, bitmap, ndesc = struct.unpack(">III", body[:12])
            h["chan"] = {"channelLayoutTag": "0x%08X" % tag,
                         "channelBitmap": bitmap, "numberChannelDescriptions": ndesc}
        elif cid == b"data":
            h["editCount"] = struct.unpack(">I", body[:4])[0]
            h["dataOffset"] = pos + 16
            h["dataSize"] = eff - 4
        pos += 12 + eff
    return h


def parse_au(data):
    off, size, enc, sr, ch = struct.unpack(">IIIII", data[4:24])
    return {"dataOffset": off, "dataSizeField": "0x%08X" % size,
            "dataSize": len(data) - off if size == 0xFFFFFFFF else size,
            "encoding": enc, "sampleRate": sr, "channels": ch,
            "annotation": data[24:off].rstrip(b"\x00").decode("latin-1")}


def parse_header(data):
    if data[:4] in (b"RIFF", b"RF64"):
        return parse_riff(data)
    if data[:16] == W64_RIFF:
        return parse_w64(data)
    if data[:4] == b"FORM":
        return parse_aiff(data)
    if data[:4] == b"caff":
        return parse_caf(data)
    if data[:4] == b".snd":
        return parse_au(data)
    raise SystemExit("unknown container")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--file-type", required=True)
    ap.add_argument("--format-id", required=True)
    ap.add_argument("--info", action="append", default=[],
                    help="key=value metadata set on the file (checked against ffprobe)")
    a = ap.parse_args()

    path = a.file
    probe = ffprobe(path)
    audio = [s for s in probe["streams"] if s.get("codec_type") == "audio"]
    if len(audio) != 1:
        raise SystemExit("%s: expected one audio stream" % path)
    st = audio[0]
    channels = int(st["channels"])

    s16 = decode(path, "s16le")
    f32 = decode(path, "f32le")
    if len(s16) % (2 * channels):
        raise SystemExit("%s: s16le length %d not a whole number of frames" % (path, len(s16)))
    frames = len(s16) // (2 * channels)
    if len(s16) != frames * channels * 2 or len(f32) != frames * channels * 4:
        raise SystemExit("%s: s16le/f32le decode lengths disagree" % path)

    brs = st.get("bits_per_raw_sample")
    bps = st.get("bits_per_sample")
    with open(path, "rb") as f:
        data = f.read()
    header = parse_header(data)

    g = {
        "file": os.path.basename(path),
        "container": probe["format"]["format_name"],
        "codec": st["codec_name"],
        "sampleRate": int(st["sample_rate"]),
        "channels": channels,
        "channelLayout": st.get("channel_layout"),
        "bitsPerRawSample": int(brs) if brs not in (None, "N/A") else None,
        "bitsPerSample": int(bps) if bps not in (None, "N/A") else None,
        "frames": frames,
        "fileSize": len(data),
        "s16leSHA256": hashlib.sha256(s16).hexdigest(),
        "f32leSHA256": hashlib.sha256(f32).hexdigest(),
        "expected": {"fileType": a.file_type, "formatID": a.format_id},
        "header": header,
    }
    fmt = header.get("fmt", {})
    if "channelMask" in fmt:
        g["channelLayoutMask"] = fmt["channelMask"]
    if a.info:
        info = dict(kv.split("=", 1) for kv in a.info)
        tags = probe["format"].get("tags", {})
        for k, v in info.items():
            if tags.get(k) != v:
                raise SystemExit("%s: ffprobe tag %s=%r, expected %r" % (path, k, tags.get(k), v))
        g["info"] = info

    out = os.path.splitext(path)[0] + ".json"
    if os.path.exists(out):
        with open(out) as f:
            other = json.load(f).get("file")
        if other != g["file"]:
            raise SystemExit("%s: golden name collides with %s" % (out, other))
    with open(out, "w") as f:
        f.write(json.dumps(g, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
