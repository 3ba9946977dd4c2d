#!/usr/bin/env python3
"""Insert a MARK chunk into an AIFF/AIFC file (directly after COMM).

Usage: add_aiff_markers.py IN OUT

The MARK chunk holds two markers: id 1 at frame 100 named "one" and id 2
at frame 2000 named "two". The FORM size is fixed up. Python 3 stdlib only.
"""
import struct
import sys

from reorder_aiff import read_chunks, write_form

MARKERS = [(1, 100, b"one"), (2, 2000, b"two")]


def pstring(s):
    # Pascal string: count byte + text, padded so the total length is even.
    b = bytes([len(s)]) + s
    if len(b) & 1:
        b += b"\x00"
    return b


def mark_chunk():
    body = struct.pack(">H", len(MARKERS))
    for marker_id, position, name in MARKERS:
        body += struct.pack(">hI", marker_id, position) + pstring(name)
    return (b"MARK", body)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        form_type, chunks = read_chunks(f.read())
    if any(c[0] == b"MARK" for c in chunks):
        raise SystemExit("input already has a MARK chunk")
    comm_index = next(i for i, c in enumerate(chunks) if c[0] == b"COMM")
    chunks.insert(comm_index + 1, mark_chunk())
    with open(dst, "wb") as f:
        f.write(write_form(form_type, chunks))


if __name__ == "__main__":
    main()
