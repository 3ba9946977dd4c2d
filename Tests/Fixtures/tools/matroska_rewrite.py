#!/usr/bin/env python3
"""Rewrites a Matroska file made by ffmpeg into forms ffmpeg does not write, keeping the
same audio packets (see make-matroska.sh):

    python3 tools/matroska_rewrite.py IN OUT --lace xiph|ebml|fixed [--frames N]
    python3 tools/matroska_rewrite.py IN OUT --unknown-sizes
    python3 tools/matroska_rewrite.py IN OUT --strip HEX

--lace: the SimpleBlocks of each Cluster are grouped, N at a time (4 by default), into
laced SimpleBlocks (RFC 9559 §10.3): Xiph lacing, EBML lacing, or fixed-size lacing (a
group of fixed-size lacing holds only frames of one size; a frame left alone is written
unlaced). The first frame's timestamp is the block's; the track gets a DefaultDuration
(the first two blocks' difference) so that readers can time the later frames. A
BlockGroup (ffmpeg writes the last Opus packet in one, for its DiscardPadding) stays as
it is.
--unknown-sizes: the Segment and every Cluster get the unknown size (8 bytes, all ones
after the marker), as a live encoder writes them.
--strip: header stripping (RFC 9559 ContentCompAlgo 3, as mkvmerge's header removal
compression writes it): the bytes HEX, which every frame must begin with, are cut from each
SimpleBlock's frame and given once in the track's ContentEncodings.

Either way SeekHead, Cues and Void elements are dropped (their offsets no longer hold):
the output has no index, so readers must scan.
"""
import argparse

SEGMENT, CLUSTER, SEEKHEAD, CUES, VOID, CRC32 = 0x18538067, 0x1F43B675, 0x114D9B74, 0x1C53BB6B, 0xEC, 0xBF
TRACKS, TRACKENTRY, DEFAULTDURATION = 0x1654AE6B, 0xAE, 0x23E383
TIMESTAMP, SIMPLEBLOCK = 0xE7, 0xA3
CONTENTENCODINGS, CONTENTENCODING, CONTENTCOMPRESSION, COMPALGO, COMPSETTINGS = 0x6D80, 0x6240, 0x5034, 0x4254, 0x4255
UNKNOWN8 = bytes([0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])


def read_vint(b, i, keep_marker=False):
    first = b[i]
    n = 1
    while n <= 8 and not first & (0x80 >> (n - 1)):
        n += 1
    assert n <= 8, "bad vint at %d" % i
    v = first if keep_marker else first & ((0x80 >> (n - 1)) - 1)
    for k in range(1, n):
        v = (v << 8) | b[i + k]
    return v, n


def elements(b, start, end):
    """(id, body_start, body_end, header_bytes) of the children in [start, end)."""
    i = start
    while i < end:
        eid, n = read_vint(b, i, keep_marker=True)
        size, m = read_vint(b, i + n)
        body = i + n + m
        if size == (1 << (7 * m)) - 1:
            # ffmpeg leaves only a piped Segment's size unknown: it runs to the end.
            if eid != SEGMENT:
                raise SystemExit("the input has unknown sizes; give a file with known sizes")
            size = end - body
        yield eid, body, body + size, b[i:i + n]
        i = body + size


def size_vint(n, width=None):
    for w in range(1, 9):
        if width and w != width:
            continue
        if n < (1 << (7 * w)) - 1:
            return ((1 << (7 * w)) | n).to_bytes(w, "big")
    raise SystemExit("size too large")


def element(id_bytes, body):
    return id_bytes + size_vint(len(body)) + body


def uint_body(v):
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def id_bytes(eid):
    return eid.to_bytes((eid.bit_length() + 7) // 8, "big")


def xiph_size(n):
    return b"\xff" * (n // 255) + bytes([n % 255])


def signed_vint(v, width):
    bias = (1 << (7 * width - 1)) - 1
    return size_vint(v + bias, width)


def ebml_signed(v):
    for w in range(1, 9):
        if -((1 << (7 * w - 1)) - 1) <= v <= (1 << (7 * w - 1)) - 1 and v + (1 << (7 * w - 1)) - 1 != (1 << (7 * w)) - 1:
            return signed_vint(v, w)
    raise SystemExit("lace size difference too large")


def laced_block(header, frames, mode):
    """A SimpleBlock body: the first block's track number and timestamp, flags with lacing."""
    track_len = read_vint(header, 0)[1]
    head = bytearray(header[:track_len + 3])
    flags = header[track_len + 2] & ~0x06
    if len(frames) == 1:
        head[track_len + 2] = flags
        return bytes(head) + frames[0]
    lace = {"xiph": 0x02, "fixed": 0x04, "ebml": 0x06}[mode]
    head[track_len + 2] = flags | lace
    out = bytes(head) + bytes([len(frames) - 1])
    if mode == "xiph":
        out += b"".join(xiph_size(len(f)) for f in frames[:-1])
    elif mode == "ebml":
        out += size_vint(len(frames[0]))
        for a, b in zip(frames[:-2], frames[1:-1]):
            out += ebml_signed(len(b) - len(a))
    else:
        assert len({len(f) for f in frames}) == 1
    return out + b"".join(frames)


def block_parts(body):
    """Track-number + timestamp + flags header, and the one frame of an unlaced SimpleBlock."""
    track_len = read_vint(body, 0)[1]
    flags = body[track_len + 2]
    assert flags & 0x06 == 0, "the input is laced already"
    return body[:track_len + 3], body[track_len + 3:]


def rewrite_cluster(b, start, end, mode, per_block, strip=None):
    out = b""
    pending = []  # (header, frame)

    def flush():
        nonlocal out, pending
        i = 0
        while i < len(pending):
            group = [pending[i]]
            while len(group) < per_block and i + len(group) < len(pending):
                nxt = pending[i + len(group)]
                if mode == "fixed" and len(nxt[1]) != len(group[0][1]):
                    break
                group.append(nxt)
            out += element(id_bytes(SIMPLEBLOCK), laced_block(group[0][0], [f for _, f in group], mode))
            i += len(group)
        pending = []

    for eid, bs, be, idb in elements(b, start, end):
        if eid == CRC32 or eid == VOID:
            continue
        if eid == SIMPLEBLOCK and mode:
            pending.append(block_parts(b[bs:be]))
            continue
        if eid == SIMPLEBLOCK and strip:
            head, frame = block_parts(b[bs:be])
            assert frame.startswith(strip), "a frame does not begin with the bytes to strip"
            out += element(idb, head + frame[len(strip):])
            continue
        flush()
        out += idb + size_vint(be - bs) + b[bs:be]
    flush()
    return out


def block_times(b, seg_start, seg_end):
    times = []
    for eid, bs, be, _ in elements(b, seg_start, seg_end):
        if eid != CLUSTER:
            continue
        base = 0
        for cid, cs, ce, _ in elements(b, bs, be):
            if cid == TIMESTAMP:
                base = int.from_bytes(b[cs:ce], "big")
            elif cid == SIMPLEBLOCK:
                t = read_vint(b, cs)[1]
                times.append(base + int.from_bytes(b[cs + t:cs + t + 2], "big", signed=True))
            if len(times) >= 3:
                return times
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--lace", choices=["xiph", "ebml", "fixed"])
    ap.add_argument("--frames", type=int, default=4)
    ap.add_argument("--unknown-sizes", action="store_true")
    ap.add_argument("--strip")
    a = ap.parse_args()
    strip = bytes.fromhex(a.strip) if a.strip else None
    b = open(a.input, "rb").read()
    out = b""
    for eid, bs, be, idb in elements(b, 0, len(b)):
        if eid != SEGMENT:
            out += idb + size_vint(be - bs) + b[bs:be]
            continue
        times = block_times(b, bs, be)
        seg = b""
        for cid, cs, ce, cidb in elements(b, bs, be):
            if cid in (SEEKHEAD, CUES, VOID, CRC32):
                continue
            if cid == CLUSTER:
                body = rewrite_cluster(b, cs, ce, a.lace, a.frames, strip)
                seg += cidb + (UNKNOWN8 if a.unknown_sizes else size_vint(len(body))) + body
            elif cid == TRACKS and strip:
                encodings = element(id_bytes(CONTENTENCODINGS), element(id_bytes(CONTENTENCODING), element(
                    id_bytes(CONTENTCOMPRESSION), element(id_bytes(COMPALGO), uint_body(3)) + element(id_bytes(COMPSETTINGS), strip))))
                tracks = b""
                for tid, ts, te, tidb in elements(b, cs, ce):
                    entry = b[ts:te]
                    if tid == TRACKENTRY:
                        entry += encodings
                    tracks += element(tidb, entry)
                seg += element(cidb, tracks)
            elif cid == TRACKS and a.lace:
                # TimestampScale is ffmpeg's 1 ms: the difference of the first two blocks, in ns.
                duration = (times[1] - times[0]) * 1000000
                tracks = b""
                for tid, ts, te, tidb in elements(b, cs, ce):
                    entry = b[ts:te]
                    if tid == TRACKENTRY:
                        entry += element(id_bytes(DEFAULTDURATION), uint_body(duration))
                    tracks += element(tidb, entry)
                seg += element(cidb, tracks)
            else:
                seg += cidb + size_vint(ce - cs) + b[cs:ce]
        out += idb + (UNKNOWN8 if a.unknown_sizes else size_vint(len(seg))) + seg
    open(a.output, "wb").write(out)


main()
