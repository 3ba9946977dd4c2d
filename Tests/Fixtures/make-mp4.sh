#!/usr/bin/env bash
# Regenerates the MP4-family fixtures in mp4/ and a golden NAME.json beside each.
# Deterministic: a second run gives byte-identical files (checked with ffmpeg 5.1.x on
# Debian 12: its aac, alac, flac, libopus, libmp3lame, ac3 and eac3 encoders).
#
# Needs: ffmpeg and ffprobe, python3 (stdlib only).
#
# Every file is written by ffmpeg's mov/mp4 muxer from a synthetic source (sines plus a
# little noise from a fixed seed). The goldens hold ffprobe's view of the first audio
# stream (rate, channels, codec, every packet's size, pts and duration, start_pts,
# duration_ts, tags, chapters) plus facts read from the bytes by the small box walker at
# the bottom of this script (top-level boxes, mvhd/mdhd timescales, mdhd duration (the sum
# of the stts deltas), the edit list, brands,
# the cover image's size and SHA-256), and the Apple file type and format ID each file has
# by construction.
#
# Not made: 3GP with AMR ('samr'/'sawb'): this ffmpeg has no AMR encoder (no
# libopencore-amrnb or libvo-amrwbenc); the 3GP and 3G2 fixtures carry AAC, and the AMR
# sample entries are tested with hand-made boxes in MP4Tests.swift.
#
# What ffmpeg writes (seen while making these, and relied on by the tests):
#   * The movie timescale (mvhd) is 1000, so an edit's duration is in milliseconds while
#     the media's are in samples. ffprobe turns the edit's duration into duration_ts by
#     rounding, which can be more than the media holds after the priming (AC-3 here: 517 ms
#     ≈ 22800 frames, but 15 × 1536 − 256 = 22784 remain).
#   * The edit's media_time is the encoder delay: AAC 1024, MP3 1105, AC-3/E-AC-3 256,
#     Opus 312 (its pre-skip); ALAC and FLAC 0. ffprobe shows it as a first pts of
#     -media_time with "skip samples" side data.
#   * The last stts delta is the real length of the last packet (e.g. 68 for AAC), not the
#     codec's frame count. ffprobe does not always show it: for aac_3gpp.3gp it gives the
#     last packet 873 frames where stts says 871, stretching it to the rounded edit (11113
#     frames after the priming, while the source and the media hold 11111).
#   * Fragmented files (empty_moov) have no edit list, so nothing marks the priming.
#   * M4B needs -brand "M4B " (the ipod muxer writes "M4A " for .m4b).
#   * With chapters, ffmpeg writes both a QuickTime chapter track (a 'text' track that the
#     audio track's tref/chap points to) and a Nero 'chpl' box in moov/udta.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=mp4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+0.05*(2*random(0)-1)' "$1"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
source_wav() { # name exprs rate frames
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3,atrim=end_sample=$4" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}
source_wav st44 "$STEREO" 44100 33075    # 0.75 s stereo (exactly 750 ms)
source_wav st48 "$STEREO" 48000 24000    # 0.5 s stereo
source_wav mo22 "$MONO"   22050 11111    # 0.504 s mono: not a whole number of ms
source_wav bk44 "$STEREO" 44100 66150    # 1.5 s stereo, for chapters

# A 4x4 PNG for the cover, made with the standard library.
python3 - "$TMP/cover.png" <<'EOF'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
rows = b"".join(b"\x00" + b"".join(bytes([x * 60, y * 60, 128]) for x in range(4)) for y in range(4))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
open(sys.argv[1], "wb").write(png)
EOF

cat > "$TMP/chapters.txt" <<'EOF'
;FFMETADATA1
title=Chaptered Book
artist=Tonearm Fixtures

[CHAPTER]
TIMEBASE=1/1000
START=0
END=400
title=Opening

[CHAPTER]
TIMEBASE=1/1000
START=400
END=1000
title=Middle Part

[CHAPTER]
TIMEBASE=1/1000
START=1000
END=1500
title=Ende – Schluss
EOF

enc() { # name source [ffmpeg output options...]
  local name=$1 src=$2
  shift 2
  "${FF[@]}" -i "$TMP/$src.wav" "$@" "${BX[@]}" "$OUT/$name"
}

# ------------------------------------------------------------------ AAC
enc aac_faststart.m4a st44 -c:a aac -b:a 64k -movflags +faststart
enc aac_moov_end.m4a  st44 -c:a aac -b:a 64k
enc aac_frag.mp4      st44 -c:a aac -b:a 64k -movflags frag_keyframe+empty_moov -frag_duration 200000
enc aac_dash.mp4      st44 -c:a aac -b:a 64k -movflags frag_keyframe+empty_moov+default_base_moof -frag_duration 200000
enc aac_3gpp.3gp      mo22 -c:a aac -b:a 24k
enc aac_3gpp2.3g2      mo22 -c:a aac -b:a 24k -movflags +faststart

# ------------------------------------------------------------------ other codecs
enc alac.m4a   mo22 -c:a alac -movflags +faststart
enc flac.mp4   mo22 -c:a flac -strict -2 -movflags +faststart
enc opus.mp4   st48 -c:a libopus -b:a 48k -strict -2 -movflags +faststart
enc mp3.mp4    st44 -c:a libmp3lame -b:a 64k -movflags +faststart
enc ac3.mp4    st48 -c:a ac3 -b:a 96k -movflags +faststart
enc eac3.mp4   st48 -c:a eac3 -b:a 96k -movflags +faststart

# ------------------------------------------------------------------ metadata, chapters, tracks
"${FF[@]}" -i "$TMP/st44.wav" -i "$TMP/cover.png" -map 0:a -map 1:v -c:a aac -b:a 32k -c:v copy \
  -disposition:v attached_pic "${BX[@]}" -movflags +faststart \
  -metadata title="Tonearm Tone" -metadata artist="Tonearm Fixtures" -metadata album="MP4 Family" \
  -metadata track="3/12" -metadata date=2024 -metadata genre=Electronic -metadata comment="440 Hz and 1.3 kHz" \
  -metadata composer="A. Composer" -metadata copyright="(c) Nobody" -metadata encoding_tool="Tonearm make-mp4" \
  "$OUT/tags_cover.m4a"
"${FF[@]}" -i "$TMP/bk44.wav" -i "$TMP/chapters.txt" -map 0:a -map_metadata 1 -map_chapters 1 -c:a aac -b:a 32k \
  -fflags +bitexact -flags +bitexact -brand "M4B " -movflags +faststart "$OUT/chapters.m4b"
"${FF[@]}" -i "$TMP/bk44.wav" -i "$TMP/chapters.txt" -map 0:a -map_metadata 1 -map_chapters 1 -c:a aac -b:a 32k \
  -fflags +bitexact -flags +bitexact -brand "M4B " "$OUT/chapters_moov_end.m4b"
# Two audio tracks, interleaved chunk by chunk: AAC stereo first, AC-3 mono second.
"${FF[@]}" -i "$TMP/st48.wav" -map 0:a -map 0:a -c:a:0 aac -b:a:0 32k -c:a:1 ac3 -b:a:1 64k -ac:a:1 1 \
  "${BX[@]}" -movflags +faststart "$OUT/two_tracks.mp4"

# ------------------------------------------------------------------ goldens
golden() { # file fileType formatID
  python3 "$TMP/golden.py" "$OUT/$1" "$2" "$3"
}
cat > "$TMP/golden.py" <<'EOF'
import hashlib, json, os, struct, subprocess, sys

path, file_type, format_id = sys.argv[1:4]

def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout

probe = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_format", "-show_streams",
                        "-show_chapters", "-show_data", path]))
packets = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_packets",
                          "-select_streams", "a:0", path]))["packets"]
audio = [s for s in probe["streams"] if s["codec_type"] == "audio"]
a = audio[0]

# A small box walker of its own, for facts ffprobe does not show.
data = open(path, "rb").read()
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"udta", b"mvex", b"tref"}
def boxes(start, end):
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            header = 16
        elif size == 0:
            size = end - i
        yield kind, i, i + header, i + size
        i += size
top = [k.decode("latin-1") for k, _, _, _ in boxes(0, len(data))]
facts = {"topLevelBoxes": top, "tracks": []}
for kind, s, b, e in boxes(0, len(data)):
    if kind == b"ftyp":
        facts["majorBrand"] = data[b:b + 4].decode("latin-1")
    if kind != b"moov":
        continue
    for k2, s2, b2, e2 in boxes(b, e):
        if k2 == b"mvhd":
            v = data[b2]
            facts["movieTimescale"] = struct.unpack(">I", data[b2 + (20 if v else 12):b2 + (24 if v else 16)])[0]
        if k2 != b"trak":
            continue
        track = {"edits": []}
        def walk(start, end):
            for k3, s3, b3, e3 in boxes(start, end):
                if k3 in CONTAINERS:
                    walk(b3, e3)
                elif k3 == b"hdlr":
                    track["handler"] = data[b3 + 8:b3 + 12].decode("latin-1")
                elif k3 == b"mdhd":
                    v = data[b3]
                    track["timescale"] = struct.unpack(">I", data[b3 + (20 if v else 12):b3 + (24 if v else 16)])[0]
                    track["duration"] = (struct.unpack(">Q", data[b3 + 24:b3 + 32]) if v else struct.unpack(">I", data[b3 + 16:b3 + 20]))[0]
                elif k3 == b"elst":
                    v = data[b3]
                    n = struct.unpack(">I", data[b3 + 4:b3 + 8])[0]
                    at = b3 + 8
                    for _ in range(n):
                        if v:
                            d, t = struct.unpack(">Qq", data[at:at + 16]); at += 20
                        else:
                            d, t = struct.unpack(">Ii", data[at:at + 8]); at += 12
                        track["edits"].append({"segmentDuration": d, "mediaTime": t})
        walk(b2, e2)
        facts["tracks"].append(track)

def cover():
    # The first covr data item in moov/udta/meta/ilst.
    i = data.find(b"covr")
    if i < 0:
        return None
    size = struct.unpack(">I", data[i + 4:i + 8])[0]
    body = data[i + 4 + 16:i + 4 + size]
    return {"size": len(body), "sha256": hashlib.sha256(body).hexdigest(), "hex": body.hex()}

def extradata(text):
    # ffprobe's hex dump: "00000000: 4f70 7573 ...  text" per line.
    out = ""
    for line in (text or "").strip().splitlines():
        out += "".join(line.split(":", 1)[1][:41].split())
    return out

def num(x):
    return None if x in (None, "N/A") else int(x)

golden = {
    "codec": a["codec_name"],
    "sampleRate": int(a["sample_rate"]),
    "channels": a["channels"],
    "timeBase": a["time_base"],
    "startPts": num(a.get("start_pts")),
    "durationTs": num(a.get("duration_ts")),
    "audioStreams": len(audio),
    "packets": len(packets),
    "packetSizes": [int(p["size"]) for p in packets],
    "packetPts": [num(p.get("pts")) for p in packets],
    "packetDurations": [num(p.get("duration")) for p in packets],
    "packetPos": [num(p.get("pos")) for p in packets],
    "extradata": extradata(a.get("extradata")),
    "skipSamples": [int(sd.get("skip_samples", 0)) for p in packets[:1] for sd in p.get("side_data_list", [])],
    "tags": probe["format"].get("tags", {}),
    "chapters": [{"start": float(c["start_time"]), "title": c.get("tags", {}).get("title", "")} for c in probe.get("chapters", [])],
    "cover": cover(),
    "expected": {"fileType": file_type, "formatID": format_id},
    "boxes": facts,
}
with open(os.path.splitext(path)[0] + ".json", "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True, ensure_ascii=False)
    f.write("\n")
EOF

golden aac_faststart.m4a       m4af "aac "
golden aac_moov_end.m4a        m4af "aac "
golden aac_frag.mp4            mp4f "aac "
golden aac_dash.mp4            mp4f "aac "
golden aac_3gpp.3gp            3gpp "aac "
golden aac_3gpp2.3g2            3gp2 "aac "
golden alac.m4a                m4af alac
golden flac.mp4                mp4f flac
golden opus.mp4                mp4f opus
golden mp3.mp4                 mp4f .mp3
golden ac3.mp4                 mp4f ac-3
golden eac3.mp4                mp4f ec-3
golden tags_cover.m4a          m4af "aac "
golden chapters.m4b            m4bf "aac "
golden chapters_moov_end.m4b   m4bf "aac "
golden two_tracks.mp4          mp4f "aac "

echo "fixtures: $(ls "$OUT" | grep -vc '\.json$') files, $(du -sh "$OUT" | cut -f1) in $(pwd)/$OUT"
