#!/usr/bin/env python3
"""Forges AAC LTP prediction into a mono AAC LTP stream, for make-aac.sh: ffmpeg's LTP
encoder writes the object type but its search never chose a prediction; ffmpeg's decoder
applies one (the oracle).

    aac_forge_ltp.py IN.aac OUT.aac

IN is a mono ADTS stream of object type 4 (AAC LTP) whose raw data blocks start with an
SCE (after fill elements). In every long-window frame whose ics_info says
predictor_data_present = 0, the script sets it and inserts ltp_data (ISO/IEC 14496-3 §4.4.2.1): ltp_data_present 1, a lag
(alternately 1100 and 600 samples, so both of the decoder's history cases occur),
ltp_coef index 0 (0.570829), and ltp_long_used set for every band below
min(max_sfb, 40). The coded spectrum is unchanged: the prediction adds to it, and the
stream stays valid.
"""
import sys


def main():
    src, dst = sys.argv[1:3]
    data = open(src, "rb").read()
    out = b""
    at, n = 0, 0
    while at + 7 <= len(data):
        header = bytearray(data[at:at + 7])
        assert header[1] & 1, "a CRC: not handled"
        assert header[2] >> 6 == 3, "not AAC LTP (profile 3)"
        length = (header[3] & 3) << 11 | header[4] << 3 | header[5] >> 5
        bits = "".join(format(b, "08b") for b in data[at + 7:at + length])
        at += length
        # Fill elements first (ffmpeg's first frame has one): id 6, count (4, + 8 when 15).
        s = 0
        while bits[s:s + 3] == "110":
            count = int(bits[s + 3:s + 7], 2)
            s += 7
            if count == 15:
                count += int(bits[s:s + 8], 2) - 1
                s += 8
            s += 8 * count
        # id_syn_ele (3) tag (4) global_gain (8), then ics_info: reserved (1),
        # window_sequence (2), window_shape (1), max_sfb (6), predictor_data_present (1).
        assert bits[s:s + 3] == "000", "not an SCE"
        sequence, max_sfb, present = int(bits[s + 16:s + 18], 2), int(bits[s + 19:s + 25], 2), bits[s + 25]
        if sequence != 2 and present == "0":
            lag = 1100 if n % 2 == 0 else 600
            ltp = "1" + "1" + format(lag, "011b") + "000" + "1" * min(max_sfb, 40)
            bits = bits[:s + 25] + ltp + bits[s + 26:]
            n += 1
        bits = bits.rstrip("0")
        bits += "0" * (-len(bits) % 8)
        payload = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
        size = 7 + len(payload)
        header[3] = header[3] & 0xFC | size >> 11
        header[4] = size >> 3 & 0xFF
        header[5] = header[5] & 0x1F | (size & 7) << 5
        out += bytes(header) + payload
    assert n > 0, "no long-window frame"
    open(dst, "wb").write(out)


main()
