#!/usr/bin/env python3
"""Helpers of make-hls.sh (issue 20): packed-audio segments, the master playlist and the
goldens of the HLS fixtures. Python 3 standard library only; ffmpeg is the decode oracle.

  hls_fixtures.py packed ELEMENTARY OUTDIR KIND BASE_PTS  cut an ADTS or MP3 file into ~2 s
                                                       segments, each led by an ID3v2.4 tag
                                                       with the transport-stream timestamp
  hls_fixtures.py master HLSDIR                         write master.m3u8 and master.json
  hls_fixtures.py golden HLSDIR CASE SOURCE_FRAMES [KEY=HEX ...]
                                                       write HLSDIR/CASE.json
"""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys

SEGMENT_SECONDS = 2.0
PRIV_OWNER = b"com.apple.streaming.transportStreamTimestamp"


# --- elementary streams -------------------------------------------------------------------

def adts_frames(data):
    """(offset, length, samples, rate) of each ADTS frame (ISO/IEC 13818-7 §6.2)."""
    rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
    p = 0
    while p + 7 <= len(data):
        assert data[p] == 0xFF and data[p + 1] & 0xF6 == 0xF0, "no ADTS sync at %d" % p
        rate = rates[(data[p + 2] >> 2) & 0x0F]
        length = ((data[p + 3] & 3) << 11) | (data[p + 4] << 3) | (data[p + 5] >> 5)
        blocks = (data[p + 6] & 3) + 1
        yield p, length, 1024 * blocks, rate
        p += length
    assert p == len(data), "trailing bytes after the last ADTS frame"


def mp3_frames(data):
    """(offset, length, samples, rate) of each MPEG-1/2 Layer III frame (ISO/IEC 11172-3 §2.4.2.3)."""
    bitrates = {1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
                2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]}
    rates = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}
    p = 0
    while p + 4 <= len(data):
        h = struct.unpack(">I", data[p:p + 4])[0]
        assert h >> 21 == 0x7FF and (h >> 17) & 3 == 1, "no Layer III sync at %d" % p
        version = (h >> 19) & 3
        mpeg1 = version == 3
        kbps = bitrates[1 if mpeg1 else 2][(h >> 12) & 0xF]
        rate = rates[version][(h >> 10) & 3]
        padding = (h >> 9) & 1
        samples = 1152 if mpeg1 else 576
        length = samples // 8 * kbps * 1000 // rate + padding
        yield p, length, samples, rate
        p += length
    assert p == len(data), "trailing bytes after the last MP3 frame"


def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def timestamp_tag(pts):
    """An ID3v2.4 tag holding only the PRIV frame of RFC 8216 §3.4: the owner, a NUL, and the
    33-bit 90 kHz timestamp as an 8-byte big-endian number."""
    body = PRIV_OWNER + b"\0" + struct.pack(">Q", pts & ((1 << 33) - 1))
    frame = b"PRIV" + syncsafe(len(body)) + b"\0\0" + body
    return b"ID3\x04\x00\x00" + syncsafe(len(frame)) + frame


def packed(elementary, outdir, kind, base_pts):
    data = open(elementary, "rb").read()
    frames = list(adts_frames(data) if kind == "adts" else mp3_frames(data))
    ext = "aac" if kind == "adts" else "mp3"
    # Cut at the first frame boundary at or after each multiple of 2 s of samples.
    segments, start, samples, rate = [], 0, 0, frames[0][3]
    for i, (_, _, n, r) in enumerate(frames):
        assert r == rate, "the sample rate changes"
        if samples >= SEGMENT_SECONDS * rate * (len(segments) + 1) and i > start:
            segments.append((start, i))
            start = i
        samples += n
    segments.append((start, len(frames)))
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:%d", "#EXT-X-MEDIA-SEQUENCE:0",
             "#EXT-X-PLAYLIST-TYPE:VOD"]
    longest, before = 0.0, 0
    for k, (a, b) in enumerate(segments):
        count = sum(f[2] for f in frames[a:b])
        pts = base_pts + before * 90000 // rate
        first, last = frames[a][0], frames[b - 1][0] + frames[b - 1][1]
        name = "seg%d.%s" % (k, ext)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(timestamp_tag(pts) + data[first:last])
        duration = count / rate
        longest = max(longest, duration)
        lines += ["#EXTINF:%.6f," % duration, name]
        before += count
    lines[2] %= int(longest + 0.5)
    lines.append("#EXT-X-ENDLIST")
    open(os.path.join(outdir, "index.m3u8"), "w").write("\n".join(lines) + "\n")


# --- playlists ------------------------------------------------------------------------------

def attributes(text):
    """The attribute list of a tag (RFC 8216 §4.2), values as written (quotes removed)."""
    out = {}
    for m in re.finditer(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', text):
        out[m.group(1)] = m.group(2).strip('"')
    return out


def media_playlist(path):
    """The facts of a media playlist, read line by line as RFC 8216 §4.3 describes them."""
    info = {"targetDuration": None, "mediaSequence": 0, "discontinuitySequence": 0, "version": None,
            "playlistType": None, "endList": False, "segments": []}
    key, map_uri, pending, last_range_end = None, None, {}, {}
    for line in open(path).read().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#EXT-X-TARGETDURATION:"):
            info["targetDuration"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            info["mediaSequence"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-DISCONTINUITY-SEQUENCE:"):
            info["discontinuitySequence"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-VERSION:"):
            info["version"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-PLAYLIST-TYPE:"):
            info["playlistType"] = line.split(":", 1)[1]
        elif line == "#EXT-X-ENDLIST":
            info["endList"] = True
        elif line == "#EXT-X-DISCONTINUITY":
            pending["discontinuity"] = True
        elif line.startswith("#EXT-X-KEY:"):
            a = attributes(line.split(":", 1)[1])
            key = None if a["METHOD"] == "NONE" else {"method": a["METHOD"], "uri": a.get("URI"), "iv": a.get("IV")}
        elif line.startswith("#EXT-X-MAP:"):
            map_uri = attributes(line.split(":", 1)[1])["URI"]
        elif line.startswith("#EXTINF:"):
            pending["extinf"] = line.split(":", 1)[1].split(",", 1)[0]
        elif line.startswith("#EXT-X-BYTERANGE:"):
            pending["byterange"] = line.split(":", 1)[1]
        elif not line.startswith("#"):
            sequence = info["mediaSequence"] + len(info["segments"])
            seg = {"uri": line, "extinf": pending["extinf"], "duration": float(pending["extinf"]),
                   "mediaSequence": sequence}
            if pending.get("discontinuity"):
                seg["discontinuity"] = True
            if "byterange" in pending:
                length, _, offset = pending["byterange"].partition("@")
                start = int(offset) if offset else last_range_end[line]
                seg["byterange"] = {"length": int(length), "offset": start}
                last_range_end[line] = start + int(length)
            if key:
                # RFC 8216 §5.2: without an IV attribute, the media sequence number is the IV.
                iv = key["iv"][2:].lower().rjust(32, "0") if key["iv"] else "%032x" % sequence
                seg["key"] = dict(key, effectiveIV=iv)
            if map_uri:
                seg["map"] = map_uri
            info["segments"].append(seg)
            pending = {}
    info["totalDuration"] = round(sum(s["duration"] for s in info["segments"]), 6)
    return info


# --- oracles --------------------------------------------------------------------------------

def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


# ffmpeg's hls demuxer reads local playlists only with these (the key and the segments
# go through file: and crypto:).
HLS_INPUT = ["-protocol_whitelist", "file,crypto,data", "-allowed_extensions", "ALL"]


def decode(playlist):
    """ffmpeg's decode of a whole playlist: frames, rate, channels and the s16le SHA-256."""
    info = json.loads(run(["ffprobe", "-v", "error"] + HLS_INPUT + ["-select_streams", "a:0", "-show_entries",
                                                                     "stream=codec_name,sample_rate,channels",
                                                                     "-of", "json", playlist]))["streams"][0]
    pcm = run(["ffmpeg", "-nostdin", "-v", "error", "-bitexact"] + HLS_INPUT +
              ["-i", playlist, "-map", "0:a:0", "-f", "s16le", "-"])
    channels = int(info["channels"])
    return {"codec": info["codec_name"], "sampleRate": int(info["sample_rate"]), "channels": channels,
            "frames": len(pcm) // (2 * channels), "s16leSHA256": hashlib.sha256(pcm).hexdigest()}


def boxes(data, start=0, end=None):
    """(type, payload offset, payload end) of the ISO BMFF boxes in data[start:end]."""
    p, end = start, len(data) if end is None else end
    while p + 8 <= end:
        size, kind = struct.unpack(">I4s", data[p:p + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[p + 8:p + 16])[0], 16
        yield kind.decode("latin-1"), p + header, p + size
        p += size


def tfdt(path):
    """baseMediaDecodeTime of the first traf of each moof in an fMP4 segment."""
    data, out = open(path, "rb").read(), []
    for kind, a, b in boxes(data):
        if kind != "moof":
            continue
        for k2, a2, b2 in boxes(data, a, b):
            if k2 != "traf":
                continue
            for k3, a3, _ in boxes(data, a2, b2):
                if k3 == "tfdt":
                    version = data[a3]
                    out.append(struct.unpack(">Q" if version == 1 else ">I",
                                             data[a3 + 4:a3 + (12 if version == 1 else 8)])[0])
    return out


def id3_timestamp(path):
    """The PRIV transport-stream timestamp at the start of a packed-audio segment."""
    data = open(path, "rb").read()
    i = data.index(PRIV_OWNER + b"\0") + len(PRIV_OWNER) + 1
    return struct.unpack(">Q", data[i:i + 8])[0]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def golden(hlsdir, case, source_frames, keys):
    folder = os.path.join(hlsdir, case)
    playlist = os.path.join(folder, "index.m3u8")
    info = media_playlist(playlist)
    for seg in info["segments"]:
        data = open(os.path.join(folder, seg["uri"]), "rb").read()
        if "byterange" in seg:
            r = seg["byterange"]
            data = data[r["offset"]:r["offset"] + r["length"]]
        seg["size"], seg["sha256"] = len(data), sha256(data)
        if "key" in seg:
            # The plaintext, decrypted by OpenSSL: what a client's AES-128 must give back.
            key_hex = keys[seg["key"]["uri"]]
            seg["key"]["keyHex"] = key_hex
            plain = subprocess.run(["openssl", "enc", "-d", "-aes-128-cbc", "-K", key_hex,
                                    "-iv", seg["key"]["effectiveIV"]], input=data, check=True,
                                   stdout=subprocess.PIPE).stdout
            seg["plainSize"], seg["plainSHA256"] = len(plain), sha256(plain)
        if seg["uri"].endswith(".m4s"):
            seg["tfdt"] = tfdt(os.path.join(folder, seg["uri"]))
        if seg["uri"].endswith((".aac", ".mp3")):
            seg["id3Timestamp"] = id3_timestamp(os.path.join(folder, seg["uri"]))
    out = {"playlist": case + "/index.m3u8", "sourceFrames": source_frames, **info, "decode": decode(playlist)}
    # Each run between discontinuities decoded alone, from a playlist holding only it.
    runs = [[]]
    for seg in info["segments"]:
        if seg.get("discontinuity") and runs[-1]:
            runs.append([])
        runs[-1].append(seg)
    if len(runs) > 1:
        out["parts"] = []
        for k, part in enumerate(runs):
            tmp = os.path.join(folder, ".part%d.m3u8" % k)
            lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:%d" % info["targetDuration"]]
            for seg in part:
                lines += ["#EXTINF:%s," % seg["extinf"], seg["uri"]]
            open(tmp, "w").write("\n".join(lines + ["#EXT-X-ENDLIST"]) + "\n")
            try:
                out["parts"].append(dict(decode(tmp), segments=[s["uri"] for s in part]))
            finally:
                os.remove(tmp)
    with open(os.path.join(hlsdir, case + ".json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


# --- the master playlist ----------------------------------------------------------------------

def bandwidths(hlsdir, case):
    """RFC 8216 §4.3.4.2: BANDWIDTH is the peak segment bit rate, AVERAGE-BANDWIDTH the mean."""
    info = media_playlist(os.path.join(hlsdir, case, "index.m3u8"))
    sizes = [os.path.getsize(os.path.join(hlsdir, case, s["uri"])) for s in info["segments"]]
    # A segment shorter than half the target (ffmpeg's last, one AAC frame long) is left out
    # of the peak: its rate is mostly TS overhead, and no real encoder is judged by it.
    peak = max(8 * n / s["duration"] for n, s in zip(sizes, info["segments"])
               if s["duration"] >= info["targetDuration"] / 2)
    average = 8 * sum(sizes) / info["totalDuration"]
    return int(round(peak)), int(round(average))


def master(hlsdir):
    variants = [("ts-128k", "mp4a.40.2", None), ("ts-64k", "mp4a.40.2", "aac-64k"), ("ts-ac3", "ac-3", None)]
    lines = ["#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-INDEPENDENT-SEGMENTS",
             '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac-64k",NAME="Main",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,'
             'CHANNELS="2",URI="ts-64k/index.m3u8"']
    out = {"variants": [], "renditions": [{"type": "AUDIO", "groupID": "aac-64k", "name": "Main", "language": "en",
                                          "default": True, "autoselect": True, "channels": "2",
                                          "uri": "ts-64k/index.m3u8"}]}
    for case, codecs, audio in variants:
        peak, average = bandwidths(hlsdir, case)
        tag = '#EXT-X-STREAM-INF:BANDWIDTH=%d,AVERAGE-BANDWIDTH=%d,CODECS="%s"' % (peak, average, codecs)
        if audio:
            tag += ',AUDIO="%s"' % audio
        lines += [tag, case + "/index.m3u8"]
        out["variants"].append({"uri": case + "/index.m3u8", "bandwidth": peak, "averageBandwidth": average,
                                "codecs": codecs, "audio": audio, "decodable": codecs == "mp4a.40.2"})
    open(os.path.join(hlsdir, "master.m3u8"), "w").write("\n".join(lines) + "\n")
    with open(os.path.join(hlsdir, "master.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "packed":
        packed(args[0], args[1], args[2], int(args[3]))
    elif command == "master":
        master(args[0])
    elif command == "golden":
        golden(args[0], args[1], int(args[2]), dict(a.split("=", 1) for a in args[3:]))
    else:
        sys.exit(__doc__)
