#!/usr/bin/env python3
"""Goldens of the AAC decoder fixtures (Tests/Fixtures/aacdec/), for make-aac.sh.

    aacdec_golden.py FILE SOURCE-FRAMES ENCODER-COMMAND [FEATURE...]
        → FILE.json and FILE.golden.flac beside FILE

The oracle is ffmpeg's float AAC decoder, `ffmpeg -v error -c:a aac -i FILE -f f32le -`
(aac_latm for LOAS). The JSON holds:
- `frames`: the frames Tonearm must give. ADTS and LATM carry no trimming: every packet's
  1024 frames, as ffmpeg gives. MP4 and 3GP carry an edit list: the track's duration
  (ffprobe's), which is the source's frame count (SOURCE-FRAMES, `gapless` true). ffmpeg
  5.1 drops the priming but keeps the end's padding: `ffmpegFrames` records its count.
  ffmpeg writes no priming edit into a fragmented MP4 (empty moov): its duration is the
  source's 1024 frames later, and both decoders keep the priming.
- the stream facts from ffprobe (profile, rate, channels, layout, packets);
- `windowSequences`: how many frames start with each window sequence, from this script's
  own reading of each raw_data_block's first channel element (the packets as ffmpeg
  copies them to ADTS), so that "short windows occur" is checked, not assumed (null for
  LOAS, whose packets ffmpeg cannot copy to ADTS);
- `features`: what the encode was made to exercise (PNS, intensity, M/S, TNS): the
  decoder tests check its statistics show each of them.

The golden PCM is ffmpeg's first 16384 samples (all the frames Tonearm gives, if fewer),
rounded to 24 bits and stored as FLAC by golden_pcm.py, which the other decoder goldens
share.
"""
import json
import os
import subprocess
import sys

from golden_pcm import Bits, write_golden_flac

SEQUENCES = ["onlyLong", "longStart", "eightShort", "longStop"]


def run(argv, stdin=None):
    return subprocess.run(argv, check=True, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout


def raw_blocks(adts):
    """The raw_data_blocks of an ADTS stream (one per frame)."""
    at, out = 0, []
    while at + 7 <= len(adts):
        assert adts[at] == 0xFF and adts[at + 1] & 0xF6 == 0xF0, "not ADTS at %d" % at
        protection_absent = adts[at + 1] & 1
        length = (adts[at + 3] & 3) << 11 | adts[at + 4] << 3 | adts[at + 5] >> 5
        header = 7 if protection_absent else 9
        out.append(adts[at + header:at + length])
        at += length
    return out


def first_window_sequence(block):
    r = Bits(block)
    kind = r.read(3)
    r.read(4)  # element_instance_tag
    if kind in (0, 3):  # SCE, LFE: global_gain, then ics_info
        r.read(8)
    elif kind == 1:  # CPE: common_window; without it, the first ICS's global_gain
        if not r.read(1):
            r.read(8)
    else:
        return None
    r.read(1)  # ics_reserved_bit
    return SEQUENCES[r.read(2)]


def main():
    path, source_frames, command, features = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    base = os.path.splitext(path)[0]
    probe = json.loads(run(["ffprobe", "-v", "error", "-count_packets", "-show_streams", "-show_format", "-of", "json", path]))
    stream, container = probe["streams"][0], probe["format"]["format_name"]
    channels, rate = int(stream["channels"]), int(stream["sample_rate"])
    decoder = "aac_latm" if stream["codec_name"] == "aac_latm" else "aac"
    pcm = run(["ffmpeg", "-v", "error", "-nostdin", "-c:a", decoder, "-i", path, "-f", "f32le", "-"])
    ffmpeg_frames = len(pcm) // (4 * channels)
    packets = int(stream["nb_read_packets"])
    trimmed = container.startswith("mov")
    frames = round(float(stream["duration"]) * rate) if trimmed else ffmpeg_frames
    if not trimmed:
        assert ffmpeg_frames == 1024 * packets
    sequences = None
    if decoder == "aac":  # ffmpeg cannot copy LATM's packets into ADTS
        blocks = raw_blocks(run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-c:a", "copy", "-f", "adts", "-"]))
        assert len(blocks) == packets
        sequences = {}
        for b in blocks:
            s = first_window_sequence(b)
            if s:
                sequences[s] = sequences.get(s, 0) + 1
        sequences = dict(sorted(sequences.items()))
    # No more than the frames Tonearm gives (ffmpeg keeps an M4A's end padding).
    n, peak = write_golden_flac(base + ".golden.flac", pcm[:frames * channels * 4], channels, rate, path)
    golden = {
        "encoder": command,
        "container": container,
        "codec": stream["codec_name"],
        "profile": stream.get("profile"),
        "sampleRate": rate,
        "channels": channels,
        "channelLayout": stream.get("channel_layout"),
        "packets": packets,
        "sourceFrames": source_frames,
        "gapless": frames == source_frames,
        "frames": frames,
        "ffmpegFrames": ffmpeg_frames,
        "ffmpegDecoder": decoder,
        "goldenFrames": n,
        "peak": round(peak, 6),
        "windowSequences": sequences,
        "features": sorted(features),
    }
    with open(base + ".json", "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")


main()
