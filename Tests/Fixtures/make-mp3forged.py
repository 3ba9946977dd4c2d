#!/usr/bin/env python3
"""Forges MPEG layer III streams that no installed encoder writes, from LAME's fixtures.

LAME never codes intensity stereo or mixed blocks, yet decoders must handle both. Each
forged file is a LAME fixture of mp3dec/ (made by make-mp3dec.sh; run that first) with a
few header or side-information bits set; the rest of every frame is untouched, so the
stream stays decodable and ffmpeg's and mpg123's float decoders serve as oracles:

  forged_is_mpeg1.mp3     lame_cbr128_js.mp3 with the intensity-stereo bit of the mode
                          extension set in every joint-stereo frame (MPEG-1 intensity
                          stereo, with and without mid/side)
  forged_is_lsf.mp3       lame_mpeg2_22k_64k.mp3 likewise (MPEG-2 LSF intensity stereo:
                          the right channel's scale factors are read with the
                          intensity tables of 13818-3 and become positions); as that
                          rereads the right channel's data, which then decodes loud,
                          every global_gain is also lowered by 16 quarter steps (1/16)
  forged_mixed_mpeg1.mp3  lame_transients.mp3 with mixed_block_flag set in every
                          short-block granule (8 long bands, then short bands 3 to 12)
  forged_mixed_lsf.mp3    lame_mpeg2_24k.mp3 likewise (6 long bands in LSF)

None of these files has a CRC (the bits changed would break it). The goldens come from
tools/mp3dec_golden.py as for every mp3dec/ file; where ffmpeg and mpg123 disagree (the
LSF mixed blocks: ffmpeg treats them differently from mpg123), the golden says so and the
tests accept a match with either.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "mp3dec")
BITRATES = {True: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
            False: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]}
RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}


def frames(data):
    """Offsets of the layer III frames (after an ID3v2 tag), with their lengths."""
    i = 0
    if data[:3] == b"ID3":
        i = 10 + (data[6] << 21 | data[7] << 14 | data[8] << 7 | data[9])
    while i + 4 <= len(data):
        if data[i] != 0xFF or data[i + 1] & 0xE0 != 0xE0:
            i += 1
            continue
        version = data[i + 1] >> 3 & 3
        mpeg1 = version == 3
        rate = RATES[version][data[i + 2] >> 2 & 3]
        kbps = BITRATES[mpeg1][data[i + 2] >> 4]
        length = (144 if mpeg1 else 72) * kbps * 1000 // rate + (data[i + 2] >> 1 & 1)
        yield i, mpeg1
        i += length


def bits(data, pos, n):
    v = 0
    for k in range(n):
        v = v << 1 | (data[(pos + k) // 8] >> (7 - (pos + k) % 8) & 1)
    return v


def set_intensity(data):
    count = 0
    for i, _ in frames(data):
        if data[i + 3] >> 6 == 1:  # joint stereo
            data[i + 3] |= 0x10
            count += 1
    return count


def side_info_records(data):
    """Bit positions of each granule/channel record of the side information, with the
    layout facts: (position, mpeg1)."""
    for i, mpeg1 in frames(data):
        channels = 1 if data[i + 3] >> 6 == 3 else 2
        # main_data_begin and private bits (and MPEG-1's scfsi), then one record per
        # granule and channel: part2_3_length 12, big_values 9, global_gain 8,
        # scalefac_compress 4 (LSF 9), window_switching_flag 1, block_type 2, mixed 1, …
        head = (9 + (5 if channels == 1 else 3) + 4 * channels) if mpeg1 else (8 + channels)
        record = 59 if mpeg1 else 63
        for k in range((2 if mpeg1 else 1) * channels):
            yield (i + 4) * 8 + head + record * k, mpeg1


def put_bits(data, pos, n, value):
    for k in range(n):
        p = pos + k
        bit = value >> (n - 1 - k) & 1
        data[p // 8] = data[p // 8] & ~(1 << (7 - p % 8)) | bit << (7 - p % 8)


def lower_gain(data, quarter_steps):
    """Lowers every granule's global_gain: 2^(-steps/4) in amplitude."""
    for g, _ in side_info_records(data):
        put_bits(data, g + 21, 8, max(0, bits(data, g + 21, 8) - quarter_steps))


def set_mixed(data):
    count = 0
    for g, mpeg1 in side_info_records(data):
        switch = 12 + 9 + 8 + (4 if mpeg1 else 9)
        if bits(data, g + switch, 1) == 1 and bits(data, g + switch + 1, 2) == 2:
            put_bits(data, g + switch + 3, 1, 1)
            count += 1
    return count


def main():
    made = []
    for name, source, forge in [("forged_is_mpeg1", "lame_cbr128_js", set_intensity),
                                ("forged_is_lsf", "lame_mpeg2_22k_64k", set_intensity),
                                ("forged_mixed_mpeg1", "lame_transients", set_mixed),
                                ("forged_mixed_lsf", "lame_mpeg2_24k", set_mixed)]:
        data = bytearray(open(os.path.join(DIR, source + ".mp3"), "rb").read())
        assert all(data[i + 1] & 1 == 1 for i, _ in frames(data)), "a CRC would no longer match"
        n = forge(data)
        if name == "forged_is_lsf":
            lower_gain(data, 16)
        assert n > 0, name
        out = os.path.join(DIR, name + ".mp3")
        open(out, "wb").write(data)
        what = "intensity-stereo bit set in %d frames" % n if forge is set_intensity else "mixed_block_flag set in %d granules" % n
        subprocess.run([sys.executable, os.path.join(HERE, "tools", "mp3dec_golden.py"), out,
                        "make-mp3forged.py from %s.mp3: %s" % (source, what)], check=True)
        made.append((name, what))
    for name, what in made:
        print(name, what)


if __name__ == "__main__":
    main()
