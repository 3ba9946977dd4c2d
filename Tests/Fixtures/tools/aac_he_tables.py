"""Normative tables of ISO/IEC 14496-3 for the HE-AAC stream generator (aac_sbr_forge.py).

Data of the standard, written out in this file's own form: each Huffman table is one string
of code words in the order of the value they code, from the smallest value (-LAV, or 0 for the
IPD/OPD tables, whose values are taken modulo 8) to the largest. A code word is written
LENGTH:HEX, the code's bits as a hexadecimal number of LENGTH bits. `huffman()` turns a string
into (length, code) pairs and checks that the code is prefix-free and complete, so a
transcription slip is caught when the generator starts.

SBR: subclause 4.A.6.1 (Annex 4.A, "Huffman tables for SBR"): the envelope tables in time (t_)
and frequency (f_) direction for 1.5 dB and 3.0 dB amplitude resolution, their balance forms
for the second channel of a coupled pair, and the noise-floor tables (the frequency direction
of the noise floor uses the 3.0 dB envelope tables). LAV: 60, 24, 31, 12, 31, 12.
PS: Annex 8.B (huffman tables of parametric stereo): IID with default and fine quantisation,
ICC, IPD and OPD, each in frequency (f_) and time (t_) direction. LAV: 14, 30, 7; IPD/OPD 0..7.
"""

# SBR envelope, 1.5 dB (bs_amp_res 0), time / frequency direction: values -60..60.
T_HUFFMAN_ENV_1_5DB = """
18:3ffd6 18:3ffd7 18:3ffd8 18:3ffd9 18:3ffda 18:3ffdb 19:7ffb8 19:7ffb9 19:7ffba 19:7ffbb
19:7ffbc 19:7ffbd 19:7ffbe 19:7ffbf 19:7ffc0 19:7ffc1 19:7ffc2 19:7ffc3 19:7ffc4 19:7ffc5
19:7ffc6 19:7ffc7 19:7ffc8 19:7ffc9 19:7ffca 19:7ffcb 19:7ffcc 19:7ffcd 19:7ffce 19:7ffcf
19:7ffd0 19:7ffd1 19:7ffd2 19:7ffd3 17:1ffe6 18:3ffd4 16:fff0 17:1ffe9 18:3ffd5 17:1ffe7
16:fff1 16:ffec 16:ffed 16:ffee 15:7ff4 14:3ff9 14:3ff7 13:1ffa 13:1ff9 12:ffb
11:7fc 10:3fc 9:1fd 8:fd 7:7d 6:3d 5:1d 4:d 3:5 2:1
2:0 3:4 4:c 5:1c 6:3c 7:7c 8:fc 9:1fc 10:3fd 12:ffa
13:1ff8 14:3ff6 14:3ff8 15:7ff5 16:ffef 17:1ffe8 16:fff2 19:7ffd4 19:7ffd5 19:7ffd6
19:7ffd7 19:7ffd8 19:7ffd9 19:7ffda 19:7ffdb 19:7ffdc 19:7ffdd 19:7ffde 19:7ffdf 19:7ffe0
19:7ffe1 19:7ffe2 19:7ffe3 19:7ffe4 19:7ffe5 19:7ffe6 19:7ffe7 19:7ffe8 19:7ffe9 19:7ffea
19:7ffeb 19:7ffec 19:7ffed 19:7ffee 19:7ffef 19:7fff0 19:7fff1 19:7fff2 19:7fff3 19:7fff4
19:7fff5 19:7fff6 19:7fff7 19:7fff8 19:7fff9 19:7fffa 19:7fffb 19:7fffc 19:7fffd 19:7fffe
19:7ffff
"""
F_HUFFMAN_ENV_1_5DB = """
19:7ffe7 19:7ffe8 20:fffd2 20:fffd3 20:fffd4 20:fffd5 20:fffd6 20:fffd7 20:fffd8 19:7ffda
20:fffd9 20:fffda 20:fffdb 20:fffdc 19:7ffdb 20:fffdd 19:7ffdc 19:7ffdd 20:fffde 18:3ffe4
20:fffdf 20:fffe0 20:fffe1 19:7ffde 20:fffe2 20:fffe3 20:fffe4 19:7ffdf 20:fffe5 19:7ffe0
18:3ffe8 19:7ffe1 18:3ffe0 18:3ffe9 17:1ffef 18:3ffe5 17:1ffec 17:1ffed 17:1ffee 16:fff4
16:fff3 16:fff0 15:7ff7 15:7ff6 14:3ffa 13:1ffa 13:1ff9 12:ffa 12:ff8 11:7f9
10:3fb 9:1fc 9:1fa 8:fb 7:7c 6:3c 5:1c 4:c 3:5 2:1
2:0 3:4 4:d 5:1d 6:3d 8:fa 8:fc 9:1fb 10:3fa 11:7f8
11:7fa 11:7fb 12:ff9 12:ffb 13:1ff8 13:1ffb 14:3ff8 14:3ff9 16:fff1 16:fff2
17:1ffea 17:1ffeb 18:3ffe1 18:3ffe2 18:3ffea 18:3ffe3 18:3ffe6 18:3ffe7 18:3ffeb 20:fffe6
19:7ffe2 20:fffe7 20:fffe8 20:fffe9 20:fffea 20:fffeb 20:fffec 19:7ffe3 20:fffed 20:fffee
20:fffef 20:ffff0 19:7ffe4 20:ffff1 18:3ffec 20:ffff2 20:ffff3 19:7ffe5 19:7ffe6 20:ffff4
20:ffff5 20:ffff6 20:ffff7 20:ffff8 20:ffff9 20:ffffa 20:ffffb 20:ffffc 20:ffffd 20:ffffe
20:fffff
"""
# SBR balance envelope of a coupled pair, 1.5 dB: values -24..24.
T_HUFFMAN_ENV_BAL_1_5DB = """
16:ffe4 16:ffe5 16:ffe6 16:ffe7 16:ffe8 16:ffe9 16:ffea 16:ffeb 16:ffec 16:ffed
16:ffee 16:ffef 16:fff0 16:fff1 16:fff2 16:fff3 16:fff4 16:ffe2 12:ffc 11:7fc
9:1fe 7:7e 5:1e 3:6 1:0 2:2 4:e 6:3e 8:fe 11:7fd
12:ffd 15:7ff0 16:ffe3 16:fff5 16:fff6 16:fff7 16:fff8 16:fff9 16:fffa 17:1fff6
17:1fff7 17:1fff8 17:1fff9 17:1fffa 17:1fffb 17:1fffc 17:1fffd 17:1fffe 17:1ffff
"""
F_HUFFMAN_ENV_BAL_1_5DB = """
18:3ffe2 18:3ffe3 18:3ffe4 18:3ffe5 18:3ffe6 18:3ffe7 18:3ffe8 18:3ffe9 18:3ffea 18:3ffeb
18:3ffec 18:3ffed 18:3ffee 18:3ffef 18:3fff0 16:fff7 17:1fff0 14:3ffc 11:7fe 11:7fc
8:fe 7:7e 4:e 2:2 1:0 3:6 5:1e 6:3e 9:1fe 11:7fd
12:ffe 15:7ffa 16:fff6 18:3fff1 18:3fff2 18:3fff3 18:3fff4 18:3fff5 18:3fff6 18:3fff7
18:3fff8 18:3fff9 18:3fffa 18:3fffb 18:3fffc 18:3fffd 18:3fffe 19:7fffe 19:7ffff
"""
# SBR envelope, 3.0 dB (bs_amp_res 1): values -31..31. F_HUFFMAN_ENV_3_0DB also codes noise floors in frequency.
T_HUFFMAN_ENV_3_0DB = """
18:3ffed 18:3ffee 19:7ffde 19:7ffdf 19:7ffe0 19:7ffe1 19:7ffe2 19:7ffe3 19:7ffe4 19:7ffe5
19:7ffe6 19:7ffe7 19:7ffe8 19:7ffe9 19:7ffea 19:7ffeb 19:7ffec 17:1fff4 16:fff7 16:fff9
16:fff8 14:3ffb 14:3ffa 14:3ff8 13:1ffa 12:ffc 11:7fc 8:fe 6:3e 4:e
2:2 1:0 3:6 5:1e 7:7e 9:1fe 11:7fd 13:1ffb 14:3ff9 14:3ffc
15:7ffa 16:fff6 17:1fff5 18:3ffec 19:7ffed 19:7ffee 19:7ffef 19:7fff0 19:7fff1 19:7fff2
19:7fff3 19:7fff4 19:7fff5 19:7fff6 19:7fff7 19:7fff8 19:7fff9 19:7fffa 19:7fffb 19:7fffc
19:7fffd 19:7fffe 19:7ffff
"""
F_HUFFMAN_ENV_3_0DB = """
20:ffff0 20:ffff1 20:ffff2 20:ffff3 20:ffff4 20:ffff5 20:ffff6 18:3fff3 19:7fff5 19:7ffee
19:7ffef 19:7fff6 18:3fff4 18:3fff2 20:ffff7 19:7fff0 17:1fff5 18:3fff0 17:1fff4 16:fff7
16:fff6 15:7ff8 14:3ffb 12:ffd 11:7fd 10:3fd 9:1fd 8:fd 6:3e 4:e
2:2 1:0 3:6 5:1e 8:fc 9:1fc 10:3fc 11:7fc 12:ffc 13:1ffc
14:3ffa 15:7ff9 15:7ffa 16:fff8 16:fff9 17:1fff6 17:1fff7 18:3fff5 18:3fff6 18:3fff1
20:ffff8 19:7fff1 19:7fff2 19:7fff3 20:ffff9 19:7fff7 19:7fff4 20:ffffa 20:ffffb 20:ffffc
20:ffffd 20:ffffe 20:fffff
"""
# SBR balance envelope, 3.0 dB: values -12..12. F_HUFFMAN_ENV_BAL_3_0DB also codes balance noise floors in frequency.
T_HUFFMAN_ENV_BAL_3_0DB = """
13:1ff2 13:1ff3 13:1ff4 13:1ff5 13:1ff6 13:1ff7 13:1ff8 12:ff8 8:fe 7:7e
4:e 3:6 1:0 2:2 5:1e 6:3e 9:1fe 13:1ff9 13:1ffa 13:1ffb
13:1ffc 13:1ffd 13:1ffe 14:3ffe 14:3fff
"""
F_HUFFMAN_ENV_BAL_3_0DB = """
13:1ff7 13:1ff8 13:1ff9 13:1ffa 13:1ffb 14:3ff8 14:3ff9 11:7fc 8:fe 7:7e
4:e 2:2 1:0 3:6 5:1e 6:3e 9:1fe 12:ffa 13:1ff6 14:3ffa
14:3ffb 14:3ffc 14:3ffd 14:3ffe 14:3fff
"""
# SBR noise floor in time direction: values -31..31; balance form -12..12.
T_HUFFMAN_NOISE_3_0DB = """
13:1fce 13:1fcf 13:1fd0 13:1fd1 13:1fd2 13:1fd3 13:1fd4 13:1fd5 13:1fd6 13:1fd7
13:1fd8 13:1fd9 13:1fda 13:1fdb 13:1fdc 13:1fdd 13:1fde 13:1fdf 13:1fe0 13:1fe1
13:1fe2 13:1fe3 13:1fe4 13:1fe5 13:1fe6 13:1fe7 11:7f2 8:fd 6:3e 4:e
3:6 1:0 2:2 5:1e 8:fc 10:3f8 13:1fcc 13:1fe8 13:1fe9 13:1fea
13:1feb 13:1fec 13:1fcd 13:1fed 13:1fee 13:1fef 13:1ff0 13:1ff1 13:1ff2 13:1ff3
13:1ff4 13:1ff5 13:1ff6 13:1ff7 13:1ff8 13:1ff9 13:1ffa 13:1ffb 13:1ffc 13:1ffd
13:1ffe 14:3ffe 14:3fff
"""
T_HUFFMAN_NOISE_BAL_3_0DB = """
8:ec 8:ed 8:ee 8:ef 8:f0 8:f1 8:f2 8:f3 8:f4 8:f5
5:1c 2:2 1:0 3:6 6:3a 8:f6 8:f7 8:f8 8:f9 8:fa
8:fb 8:fc 8:fd 8:fe 8:ff
"""
# PS IID, fine quantisation (iid_mode 3..5): values -30..30.
F_HUFF_IID_FINE = """
18:1feb4 18:1feb5 18:1fd76 18:1fd77 18:1fd74 18:1fd75 18:1fe8a 18:1fe8b 18:1fe88 17:fe80
18:1feb6 17:fe82 17:feb8 16:7f42 16:7fae 15:3faf 14:1fd1 14:1fe9 13:fe9 12:7ea
12:7fb 11:3fb 10:1fb 10:1ff 8:7c 7:3c 6:1c 5:c 4:0 3:1
1:1 3:2 4:1 5:d 6:1d 7:3d 8:7d 9:fc 10:1fc 11:3fc
11:3f4 12:7eb 13:fea 14:1fea 14:1fd6 15:3fd0 16:7faf 16:7f43 17:feb9 17:fe83
18:1feb7 17:fe81 18:1fe89 18:1fe8e 18:1fe8f 18:1fe8c 18:1fe8d 18:1feb2 18:1feb3 18:1feb0
18:1feb1
"""
T_HUFF_IID_FINE = """
16:4ed4 16:4ed5 16:4ece 16:4ecf 16:4ecc 16:4ed6 16:4ed8 16:4f46 16:4f60 15:2718
15:2719 15:2764 15:2765 15:276d 15:27b1 14:13b7 14:13d6 13:9c7 13:9e9 13:9ed
12:4ee 12:4f7 11:278 10:139 9:9a 9:9f 7:20 6:11 5:a 3:3
1:1 2:0 5:b 6:12 7:21 8:4c 9:9b 10:13a 11:279 11:270
12:4ef 12:4e2 13:9ea 13:9d8 14:13d7 14:13d0 15:27b2 15:27a2 15:271a 15:271b
16:4f66 16:4f67 16:4f61 16:4f47 16:4ed9 16:4ed7 16:4ecd 16:4ed2 16:4ed3 16:4ed0
16:4ed1
"""
# PS IID, default quantisation (iid_mode 0..2): values -14..14.
F_HUFF_IID_DEF = """
17:1fffb 17:1fffc 17:1fffd 17:1fffa 16:fffc 15:7ffc 13:1ffd 10:3fe 9:1fe 7:7e
6:3c 5:1d 4:d 3:5 1:0 3:4 4:c 5:1c 6:3d 6:3e
8:fe 11:7fe 13:1ffc 14:3ffc 14:3ffd 15:7ffd 17:1fffe 18:3fffe 18:3ffff
"""
T_HUFF_IID_DEF = """
19:7fff9 19:7fffa 19:7fffb 20:ffff8 20:ffff9 20:ffffa 17:1fffd 15:7ffe 12:ffe 10:3fe
8:fe 6:3e 4:e 2:2 1:0 3:6 5:1e 7:7e 9:1fe 11:7fe
13:1ffe 14:3ffe 17:1fffc 19:7fff8 20:ffffb 20:ffffc 20:ffffd 20:ffffe 20:fffff
"""
# PS ICC: values -7..7.
F_HUFF_ICC = """
14:3fff 14:3ffe 12:ffe 10:3fe 7:7e 5:1e 3:6 1:0 2:2 4:e
6:3e 8:fe 9:1fe 11:7fe 13:1ffe
"""
T_HUFF_ICC = """
14:3ffe 13:1ffe 11:7fe 9:1fe 7:7e 5:1e 3:6 1:0 2:2 4:e
6:3e 8:fe 10:3fe 12:ffe 14:3fff
"""
# PS IPD and OPD: values 0..7 (differences modulo 8).
F_HUFF_IPD = """
1:1 3:0 4:6 4:4 4:2 4:3 4:5 4:7
"""
T_HUFF_IPD = """
1:1 3:2 4:2 5:3 5:2 4:0 4:3 3:3
"""
F_HUFF_OPD = """
1:1 3:1 4:6 4:4 5:f 5:e 4:5 3:0
"""
T_HUFF_OPD = """
1:1 3:2 4:1 5:7 5:6 4:0 4:2 3:3
"""


def huffman(table):
    """(length, code) per value of one table string; raises if the code is not complete and prefix-free."""
    words = []
    for token in table.split():
        length, code = token.split(":")
        words.append((int(length), int(code, 16)))
    kraft = sum(2.0 ** -length for length, _ in words)
    seen = sorted(format(code, "0%db" % length) for length, code in words)
    if abs(kraft - 1) > 1e-12 or any(b.startswith(a) for a, b in zip(seen, seen[1:])):
        raise ValueError("Huffman table is not a complete prefix code")
    return words


# Table 4.82 (bs_start_freq offsets), one row per SBR output rate class: 16 kHz, 22.05 kHz,
# 24 kHz, 32 kHz, 44.1 to 64 kHz, above 64 kHz.
START_FREQ_OFFSETS = {
    "16000": (-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7),
    "22050": (-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13),
    "24000": (-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16),
    "32000": (-6, -4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16),
    "44100-64000": (-4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20),
    "above 64000": (-2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20, 24),
}
