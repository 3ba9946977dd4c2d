"""A small, independent FLAC reader for the fixture tools (Python 3 stdlib only).

It parses metadata blocks and finds frames the way RFC 9639 describes them: a frame
header whose CRC-8 is right, ending where the next such header begins and the CRC-16
of the frame is right. The goldens use it beside ffprobe, so that the two agree.
"""
import struct


def _crc8_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        t.append(c)
    return t


def _crc16_table():
    t = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x8005) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
        t.append(c)
    return t


CRC8 = _crc8_table()
CRC16 = _crc16_table()


def crc8(data):
    c = 0
    for b in data:
        c = CRC8[c ^ b]
    return c


def crc16(data, c=0):
    for b in data:
        c = ((c << 8) & 0xFFFF) ^ CRC16[(c >> 8) ^ b]
    return c


RATES = [0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000]
SIZES = [0, 8, 12, None, 16, 20, 24, 32]


def parse_header(d, p):
    """The frame header at d[p:], or None."""
    if p + 4 > len(d) or d[p] != 0xFF or d[p + 1] & 0xFE != 0xF8:
        return None
    variable = d[p + 1] & 1
    bcode, rcode = d[p + 2] >> 4, d[p + 2] & 15
    ccode, scode = d[p + 3] >> 4, (d[p + 3] >> 1) & 7
    if d[p + 3] & 1 or bcode == 0 or rcode == 15 or ccode > 10 or scode == 3:
        return None
    q = p + 4
    if q >= len(d):
        return None
    lead = d[q]
    for n, mask, bits in ((0, 0x80, 0x00), (1, 0xE0, 0xC0), (2, 0xF0, 0xE0), (3, 0xF8, 0xF0),
                          (4, 0xFC, 0xF8), (5, 0xFE, 0xFC), (6, 0xFF, 0xFE)):
        if lead & mask == bits:
            break
    else:
        return None
    if n == 6 and not variable:
        return None
    value = lead & (0x7F >> n) if n else lead
    if n == 6:
        value = 0
    q += 1
    for _ in range(n):
        if q >= len(d) or d[q] & 0xC0 != 0x80:
            return None
        value = value << 6 | (d[q] & 0x3F)
        q += 1
    number_end = q
    if bcode == 6:
        if q >= len(d):
            return None
        bs = d[q] + 1
        q += 1
    elif bcode == 7:
        if q + 1 >= len(d):
            return None
        bs = (d[q] << 8 | d[q + 1]) + 1
        q += 2
    elif bcode == 1:
        bs = 192
    elif bcode <= 5:
        bs = 144 << bcode
    else:
        bs = 1 << bcode
    if rcode == 12:
        rate = d[q] * 1000 if q < len(d) else 0
        q += 1
    elif rcode in (13, 14):
        rate = (d[q] << 8 | d[q + 1]) * (10 if rcode == 14 else 1) if q + 1 < len(d) else 0
        q += 2
    else:
        rate = RATES[rcode]
    if q >= len(d) or crc8(d[p:q]) != d[q]:
        return None
    return {"variable": variable, "blockSize": bs, "sampleRate": rate,
            "channelAssignment": ccode, "bitsPerSample": SIZES[scode], "number": value,
            "numberStart": p + 4, "numberEnd": number_end, "length": q + 1 - p}


def parse_metadata(d):
    """(blocks, audio offset). Each block: type, isLast, offset, length, body."""
    p = 0
    if d[:3] == b"ID3":
        size = 0
        for b in d[6:10]:
            size = size << 7 | (b & 0x7F)
        p = 10 + size + (10 if d[5] & 0x10 else 0)
    if d[p:p + 4] != b"fLaC":
        raise ValueError("no fLaC marker")
    p += 4
    blocks = []
    while True:
        t = d[p]
        length = int.from_bytes(d[p + 1:p + 4], "big")
        blocks.append({"type": t & 0x7F, "isLast": bool(t & 0x80), "offset": p, "length": length,
                       "body": d[p + 4:p + 4 + length]})
        p += 4 + length
        if t & 0x80:
            return blocks, p


def streaminfo(body):
    minb, maxb = struct.unpack(">HH", body[:4])
    x = int.from_bytes(body[10:18], "big")
    return {"minimumBlockSize": minb, "maximumBlockSize": maxb,
            "minimumFrameSize": int.from_bytes(body[4:7], "big"),
            "maximumFrameSize": int.from_bytes(body[7:10], "big"),
            "sampleRate": x >> 44, "channels": ((x >> 41) & 7) + 1,
            "bitsPerSample": ((x >> 36) & 31) + 1, "totalSamples": x & ((1 << 36) - 1),
            "md5": body[18:34].hex()}


def frames(d, start):
    """[(offset, size, header)] of the frames from `start` to the end."""
    out = []
    cur = None
    i = d.find(b"\xff", start)
    while i != -1:
        h = parse_header(d, i)
        if h:
            if cur is None:
                cur = (i, h)
            elif crc16(d[cur[0]:i]) == 0:
                out.append((cur[0], i - cur[0], cur[1]))
                cur = (i, h)
        i = d.find(b"\xff", i + 1)
    if cur is not None:
        if crc16(d[cur[0]:]) != 0:
            raise ValueError("the last frame's CRC-16 is wrong")
        out.append((cur[0], len(d) - cur[0], cur[1]))
    return out


def vorbis_comment(body):
    n = struct.unpack("<I", body[:4])[0]
    vendor = body[4:4 + n].decode("utf-8")
    p = 4 + n
    count = struct.unpack("<I", body[p:p + 4])[0]
    p += 4
    fields = []
    for _ in range(count):
        n = struct.unpack("<I", body[p:p + 4])[0]
        text = body[p + 4:p + 4 + n].decode("utf-8")
        p += 4 + n
        name, _, value = text.partition("=")
        fields.append([name, value])
    return vendor, fields


def picture(body):
    t, n = struct.unpack(">II", body[:8])
    mime = body[8:8 + n].decode("ascii")
    p = 8 + n
    n = struct.unpack(">I", body[p:p + 4])[0]
    desc = body[p + 4:p + 4 + n].decode("utf-8")
    p += 4 + n
    w, h, depth, colors, n = struct.unpack(">IIIII", body[p:p + 20])
    return {"type": t, "mimeType": mime, "description": desc, "width": w, "height": h,
            "depth": depth, "colors": colors, "data": body[p + 20:p + 20 + n]}


def seektable(body):
    pts = []
    for i in range(0, len(body) - 17, 18):
        s, o, n = struct.unpack(">QQH", body[i:i + 18])
        if s != 0xFFFFFFFFFFFFFFFF:
            pts.append([s, o, n])
    return pts


def cuesheet(body):
    lead_in = struct.unpack(">Q", body[128:136])[0]
    is_cd = bool(body[136] & 0x80)
    n = body[395]
    p = 396
    tracks = []
    for _ in range(n):
        off, num = struct.unpack(">QB", body[p:p + 9])
        ni = body[p + 35]
        p += 36
        idx = []
        for _ in range(ni):
            o, k = struct.unpack(">QB", body[p:p + 9])
            idx.append([k, o])
            p += 12
        tracks.append({"number": num, "offset": off, "indices": idx})
    return {"leadIn": lead_in, "isCD": is_cd, "tracks": tracks}


def utf8_number(v):
    """The UTF-8-like coding of a frame or sample number."""
    if v < 0x80:
        return bytes([v])
    for n in range(1, 7):
        if v < 1 << (5 * n + 6 if n < 6 else 36):
            break
    lead = (0xFF00 >> (n + 1)) & 0xFF if n < 6 else 0xFE
    out = [lead | (v >> (6 * n) if n < 6 else 0)]
    for k in range(n - 1, -1, -1):
        out.append(0x80 | ((v >> (6 * k)) & 0x3F))
    return bytes(out)
