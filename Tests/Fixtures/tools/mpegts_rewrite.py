#!/usr/bin/env python3
"""Rewrites an ffmpeg MPEG-TS fixture (make-mpegts.sh) in ways ffmpeg 5.1 cannot write.
Python 3 stdlib only; written for these fixtures, not a general TS writer.

    mpegts_rewrite.py IN OUT --parity204
        Appends 16 bytes to every 188-byte packet, as a 204-byte stream carries its
        Reed-Solomon parity. The bytes are NOT real RS(204,188) parity (no encoder here):
        a demuxer ignores them, and they are a fixed pattern so the file is deterministic.

    mpegts_rewrite.py IN OUT --timed-id3
        Adds a timed ID3 stream (ISO/IEC 13818-1 stream type 0x15, PID 0x102, with the
        metadata descriptor 0x26 naming 'ID3 ', as Apple's HLS timed metadata spec lays it
        out) to the first program's PMT, and three PES packets (private_stream_1) of ID3v2.4
        tags: at the start "Tonearm TS One" by "Tonearm Fixtures" (TIT2, TPE1, and a PRIV
        com.apple.streaming.transportStreamTimestamp), after a third of the audio packets
        "Tonearm TS Two" (TIT2 only), after two thirds a PRIV frame alone (not a title).
"""
import struct
import sys


def crc32_mpeg(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def packets(data):
    assert len(data) % 188 == 0 and all(data[i] == 0x47 for i in range(0, len(data), 188))
    return [bytearray(data[i:i + 188]) for i in range(0, len(data), 188)]


def pid_of(p):
    return (p[1] & 0x1F) << 8 | p[2]


def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def frame(fid, body):
    return fid.encode() + syncsafe(len(body)) + b"\0\0" + body


def text(fid, s):
    return frame(fid, b"\x03" + s.encode("utf-8"))


def tag(frames):
    body = b"".join(frames)
    return b"ID3\x04\x00\x00" + syncsafe(len(body)) + body


def priv(pts):
    return frame("PRIV", b"com.apple.streaming.transportStreamTimestamp\0" + struct.pack(">Q", pts))


def pes_packets(pid, payload, pts, cc):
    """A PES (stream id 0xBD, PTS only) cut into TS packets with stuffing in the last."""
    pts_bytes = bytes([0x21 | (pts >> 29) & 0x0E, (pts >> 22) & 0xFF, 0x01 | (pts >> 14) & 0xFE,
                       (pts >> 7) & 0xFF, 0x01 | (pts << 1) & 0xFE])
    header = b"\x84\x80\x05" + pts_bytes
    pes = b"\x00\x00\x01\xBD" + struct.pack(">H", len(header) + len(payload)) + header + payload
    out = []
    first = True
    while pes:
        chunk, pes = pes[:184], pes[184:]
        h = bytes([0x47, (0x40 if first else 0) | pid >> 8, pid & 0xFF])
        if len(chunk) < 184:
            stuff = 184 - len(chunk)
            af = bytes([stuff - 1]) + (bytes([0x00]) + b"\xFF" * (stuff - 2) if stuff > 1 else b"")
            out.append(bytearray(h + bytes([0x30 | cc]) + af + chunk))
        else:
            out.append(bytearray(h + bytes([0x10 | cc]) + chunk))
        cc = (cc + 1) & 0xF
        first = False
    return out, cc


def pes_pts(p):
    """The PTS of a PES that begins in TS packet p, or None."""
    if not p[1] & 0x40:
        return None
    o = 4 + (1 + p[4] if p[3] & 0x20 else 0)
    if p[o:o + 3] != b"\0\0\1" or not p[o + 7] & 0x80:
        return None
    b = p[o + 9:o + 14]
    return (b[0] >> 1 & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1


def add_timed_id3(data):
    ps = packets(data)
    pmt_pid = None
    for p in ps:
        if pid_of(p) == 0 and p[1] & 0x40:
            o = 5 + p[4]
            pmt_pid = (p[o + 10] & 0x1F) << 8 | p[o + 11]
            break
    audio_pid = None
    out = []
    id3_pid = 0x102
    cc = 0
    audio_starts = sum(1 for p in ps if p[1] & 0x40 and pid_of(p) not in (0, pmt_pid, 0x11))
    seen = 0
    inserted = 0
    for p in ps:
        pid = pid_of(p)
        if pid == pmt_pid and p[1] & 0x40:
            o = 5 + p[4]
            length = (p[o + 1] & 0x0F) << 8 | p[o + 2]
            section = bytes(p[o:o + 3 + length - 4])
            if audio_pid is None:
                audio_pid = (section[13] & 0x1F) << 8 | section[14]
            descriptor = b"\x26\x0D\xFF\xFFID3 \xFFID3 \x00\x0F"
            entry = bytes([0x15, 0xE0 | id3_pid >> 8, id3_pid & 0xFF, 0xF0, len(descriptor)]) + descriptor
            section = bytearray(section + entry)
            length = len(section) + 4 - 3
            section[1] = (section[1] & 0xF0) | length >> 8
            section[2] = length & 0xFF
            section += struct.pack(">I", crc32_mpeg(section))
            q = bytearray(p[:o]) + section
            q += b"\xFF" * (188 - len(q))
            out.append(q)
            continue
        if pid == audio_pid and p[1] & 0x40:
            pts = pes_pts(p)
            marks = [0, audio_starts // 3, 2 * audio_starts // 3]
            if inserted < 3 and seen == marks[inserted] and pts is not None:
                if inserted == 0:
                    payload = tag([text("TIT2", "Tonearm TS One"), text("TPE1", "Tonearm Fixtures"), priv(pts)])
                elif inserted == 1:
                    payload = tag([text("TIT2", "Tonearm TS Two")])
                else:
                    payload = tag([priv(pts)])
                new, cc = pes_packets(id3_pid, payload, pts, cc)
                out += new
                inserted += 1
            seen += 1
        out.append(p)
    assert inserted == 3, inserted
    return b"".join(out)


def main():
    src, dst, mode = sys.argv[1:4]
    data = open(src, "rb").read()
    if mode == "--parity204":
        out = b"".join(bytes(p) + bytes((i * 7 + k) & 0xFF for k in range(16)) for i, p in enumerate(packets(data)))
    elif mode == "--timed-id3":
        out = add_timed_id3(data)
    else:
        raise SystemExit("unknown mode " + mode)
    open(dst, "wb").write(out)


main()
