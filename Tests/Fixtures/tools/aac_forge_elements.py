#!/usr/bin/env python3
"""Forges the AAC syntax that ffmpeg's encoder never writes into a mono stream, for
make-aac.sh; ffmpeg's decoder reads all of it (the oracle).

    aac_forge_elements.py IN.aac OUT.aac MODE

IN is a mono AAC-LC ADTS stream (no CRC) whose raw data blocks are one SCE, maybe after
fill elements, then END. MODE:

  pulse     pulse_data (ISO/IEC 14496-3 Table 4.7) in every long-window frame: three
            pulses (amplitudes 5, 1 and 15) at the first three lines plus 0, 1 and 3 of the
            first band coded with a spectrum codebook. A pulse adds its amplitude to the
            quantised value's magnitude (a zero becomes negative), before dequantisation.
            The rest of the stream is unchanged.
  dse-pce   every frame starts with a program config element (Table 4.2: one front SCE,
            the stream's own tag) and a data stream element (Table 4.10) of 300 bytes, so
            the escape of its count and its byte alignment are used, then the SCE and END.
            The ADTS channel configuration becomes 0, as a PCE requires. Neither element
            changes the audio: the decode must equal IN's.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aac_adts import frames, pack, skip_fills  # noqa: E402

SWIFT = "../../Sources/TonearmCodecs/AAC/AACHuffman+Codebooks.swift"
# swb_offset_long_window for 22.05 and 24 kHz (Table 4.131): the first bands suffice.
SWB_24 = [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 60, 68, 76, 84, 92, 100, 108, 116, 124, 136, 148, 160, 172, 188,
          204, 220, 240, 260, 284, 308, 336, 364, 396, 432, 468, 508, 552, 600, 652, 704, 768, 832, 896, 960, 1024]


def scale_factor_codes():
    """Codeword → index of Table 4.A.1, from the decoder's copy of it."""
    text = open(__file__.rsplit("/", 2)[0] + "/" + SWIFT).read()
    body = re.search(r"scaleFactorCodes: \[UInt32\] = \[(.*?)\]", text, re.S).group(1)
    entries = [int(x.replace("_", ""), 16) for x in re.findall(r"0x[0-9A-F_]+", body)]
    return {format(e & 0xFFFFFF, "0%db" % (e >> 24)): i for i, e in enumerate(entries)}


SF = scale_factor_codes()


def skip_scale_factor(bits, s):
    for n in range(1, 20):
        if bits[s:s + n] in SF:
            return s + n
    raise SystemExit("no scale factor codeword at bit %d" % s)


def pulse_position(bits, s):
    """Given the SCE's first bit, the bit of pulse_data_present and the first band coded
    with a spectrum codebook (None for a short-window frame or one without such a band)."""
    s += 7 + 8  # id_syn_ele, element_instance_tag, global_gain
    sequence = int(bits[s + 1:s + 3], 2)
    if sequence == 2:
        return None, None
    max_sfb = int(bits[s + 4:s + 10], 2)
    assert bits[s + 10] == "0", "predictor data: not LC"
    s += 11
    books = []
    while len(books) < max_sfb:  # section_data, long windows: 4-bit book, 5-bit lengths
        book = int(bits[s:s + 4], 2)
        s += 4
        length = 0
        while True:
            step = int(bits[s:s + 5], 2)
            s += 5
            length += step
            if step != 31:
                break
        books += [book] * length
    first_noise = True
    for book in books:  # scale_factor_data
        if book == 0:
            continue
        if book == 13 and first_noise:
            s += 9
            first_noise = False
        else:
            s = skip_scale_factor(bits, s)
    band = next((b for b, book in enumerate(books) if 1 <= book <= 11), None)
    return s, band


def main():
    src, dst, mode = sys.argv[1:4]
    out = b""
    forged = 0
    for header, bits in frames(open(src, "rb").read()):
        s = skip_fills(bits)
        if mode == "pulse":
            at, band = pulse_position(bits, s)
            if at is not None and band is not None and SWB_24[band + 1] - SWB_24[band] >= 4:
                assert bits[at] == "0", "pulse data already present"
                pulses = "1" + "10" + format(band, "06b") + "00000" + "0101" + "00001" + "0001" + "00010" + "1111"
                bits = bits[:at] + pulses + bits[at + 1:]
                forged += 1
        elif mode == "dse-pce":
            assert s % 8 == 0, "alignment is counted from the block's start"
            tag = bits[s + 3:s + 7]
            index = header[2] >> 2 & 15
            # ID_PCE, tag 0, object type LC, the rate; 1 front, 0 side, back, LFE, data, CCE;
            # no mixdowns; the front element (an SCE with the stream's tag); byte alignment,
            # an empty comment. Alignment counts from the block's start, where the PCE is.
            pce = "101" + "0000" + "01" + format(index, "04b") + "0001" + "0000" + "0000" + "00" + "000" + "0000"
            pce += "000" + "0" + tag
            pce += "0" * (-len(pce) % 8) + "00000000"
            # ID_DSE, tag 0, data_byte_align_flag 1, count 255 + escape 45 = 300, alignment.
            dse = "100" + "0000" + "1" + "11111111" + format(45, "08b")
            dse += "0" * (-(len(pce) + len(dse)) % 8)
            dse += "".join(format((7 * i + 3) & 0xFF, "08b") for i in range(300))
            bits = bits[:s] + pce + dse + bits[s:]
            header[2] &= 0xFE  # channel configuration 0
            header[3] &= 0x3F
            forged += 1
        else:
            raise SystemExit("unknown mode " + mode)
        out += pack(header, bits)
    assert forged > 0, "nothing forged"
    open(dst, "wb").write(out)


main()
