#!/usr/bin/env python3
"""Rewrite an AIFF/AIFC file so that its COMM chunk comes after SSND.

Usage: reorder_aiff.py IN OUT

All other chunks keep their relative order; only COMM is moved to sit
directly after SSND. The FORM size does not change (the same chunks are
present), but it is recomputed anyway. Python 3 stdlib only.
"""
import struct
import sys


def read_chunks(data):
    if data[:4] != b"FORM" or data[8:12] not in (b"AIFF", b"AIFC"):
        raise SystemExit("not an AIFF/AIFC file")
    form_type = data[8:12]
    chunks = []
    pos = 12
    end = 8 + struct.unpack(">I", data[4:8])[0]
    while pos + 8 <= end:
        cid = data[pos:pos + 4]
        size = struct.unpack(">I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        chunks.append((cid, body))
        pos += 8 + size + (size & 1)
    return form_type, chunks


def write_form(form_type, chunks):
    out = bytearray()
    for cid, body in chunks:
        out += cid + struct.pack(">I", len(body)) + body
        if len(body) & 1:
            out += b"\x00"
    return b"FORM" + struct.pack(">I", 4 + len(out)) + form_type + bytes(out)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        form_type, chunks = read_chunks(f.read())
    comm = [c for c in chunks if c[0] == b"COMM"]
    if len(comm) != 1:
        raise SystemExit("expected exactly one COMM chunk")
    rest = [c for c in chunks if c[0] != b"COMM"]
    ssnd_index = next(i for i, c in enumerate(rest) if c[0] == b"SSND")
    rest.insert(ssnd_index + 1, comm[0])
    with open(dst, "wb") as f:
        f.write(write_form(form_type, rest))


if __name__ == "__main__":
    main()
