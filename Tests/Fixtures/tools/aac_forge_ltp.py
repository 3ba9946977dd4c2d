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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aac_adts import frames, pack, skip_fills  # noqa: E402


def main():
    src, dst = sys.argv[1:3]
    out = b""
    n = 0
    for header, bits in frames(open(src, "rb").read()):
        assert header[2] >> 6 == 3, "not AAC LTP (profile 3)"
        s = skip_fills(bits)
        # id_syn_ele (3) tag (4) global_gain (8), then ics_info: reserved (1),
        # window_sequence (2), window_shape (1), max_sfb (6), predictor_data_present (1).
        sequence, max_sfb, present = int(bits[s + 16:s + 18], 2), int(bits[s + 19:s + 25], 2), bits[s + 25]
        if sequence != 2 and present == "0":
            lag = 1100 if n % 2 == 0 else 600
            ltp = "1" + "1" + format(lag, "011b") + "000" + "1" * min(max_sfb, 40)
            bits = bits[:s + 25] + ltp + bits[s + 26:]
            n += 1
        out += pack(header, bits)
    assert n > 0, "no long-window frame"
    open(dst, "wb").write(out)


main()
