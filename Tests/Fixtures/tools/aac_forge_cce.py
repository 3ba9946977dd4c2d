#!/usr/bin/env python3
"""Forges AAC streams with coupling channel elements (CCE), for make-aac.sh: ffmpeg's
encoder never writes one, ffmpeg's decoder decodes them (the oracle).

    aac_forge_cce.py IN.aac OUT.aac MODE      MODE: before-tns, after-tns or independent

IN is a mono ADTS stream whose raw data blocks are one SCE and END. Each block becomes a
CCE (ISO/IEC 14496-3 Table 4.8) whose individual_channel_stream is the SCE's own, coupled
twice into that SCE: gain list 0 (gain 1) and gain list 1, a common gain element of +4 steps
of gain_element_scale 3 (a gain of 2^-4), then the SCE and END. MODE sets ind_sw_cce_flag
and cc_domain: dependent coupling before the target's TNS, after it, or independently
switched (after the IMDCT).

ffmpeg decodes a CCE only when a program config element lists it: OUT's channel
configuration is 0, and its first frame starts with a PCE (Table 4.2: one front SCE, one
coupling element), which ffmpeg's aac_adtstoasc takes into the AudioSpecificConfig when
make-aac.sh remuxes OUT into an M4A.
"""
import re
import sys

SWIFT = "../../Sources/TonearmCodecs/AAC/AACHuffman+Codebooks.swift"


def scale_factor_code(index):
    """The scale factor codeword of `index` (difference + 60), from the decoder's Table 4.A.1."""
    text = open(__file__.rsplit("/", 2)[0] + "/" + SWIFT).read()
    body = re.search(r"scaleFactorCodes: \[UInt32\] = \[(.*?)\]", text, re.S).group(1)
    e = [int(x.replace("_", ""), 16) for x in re.findall(r"0x[0-9A-F_]+", body)][index]
    return format(e & 0xFFFFFF, "0%db" % (e >> 24))


def blocks(data):
    at = 0
    while at + 7 <= len(data):
        length = (data[at + 3] & 3) << 11 | data[at + 4] << 3 | data[at + 5] >> 5
        assert data[at + 1] & 1, "a CRC: not handled"
        yield data[at:at + 7], data[at + 7:at + length]
        at += length


def main():
    src, dst, mode = sys.argv[1:4]
    independent = mode == "independent"
    domain = mode == "after-tns"
    out = b""
    for n, (header, block) in enumerate(blocks(open(src, "rb").read())):
        bits = "".join(format(b, "08b") for b in block).rstrip("0")
        assert bits.endswith("111") and bits.startswith("000"), "not one SCE then END"
        tag, ics = bits[3:7], bits[7:-3]
        index = header[2] >> 2 & 15
        pce = ""
        if n == 0:
            # ID_PCE, tag 0, object type LC, the rate, 1 front element, 0 side, back, LFE,
            # associated data; 1 coupling element; no mixdowns; the front SCE; the CCE; then
            # byte alignment and an empty comment.
            pce = "101" + "0000" + "01" + format(index, "04b") + "0001" + "0000" + "0000" + "00" + "000" + "0001"
            pce += "000" + "0" + tag + str(int(independent)) + "0000"
            pce += "0" * (-len(pce) % 8) + "00000000"
        cce = pce + "010" + "0000" + str(int(independent)) + "001" + "0" + tag + "0" + tag
        cce += str(int(domain)) + "0" + "11" + ics
        cce += ("" if independent else "1") + scale_factor_code(64)
        raw = cce + "000" + tag + ics + "111"
        raw += "0" * (-len(raw) % 8)
        payload = bytes(int(raw[i:i + 8], 2) for i in range(0, len(raw), 8))
        length = 7 + len(payload)
        h = bytearray(header)
        h[2] &= 0xFE  # channel configuration 0
        h[3] &= 0x3F
        h[3] = h[3] & 0xFC | length >> 11
        h[4] = length >> 3 & 0xFF
        h[5] = h[5] & 0x1F | (length & 7) << 5
        out += bytes(h) + payload
    open(dst, "wb").write(out)


main()
