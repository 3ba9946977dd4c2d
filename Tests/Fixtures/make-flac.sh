#!/usr/bin/env bash
# Regenerates the FLAC test fixtures in flac/ and a golden NAME.json beside each one.
# Idempotent and deterministic: running it twice gives byte-identical files (checked
# with flac 1.4.2 and ffmpeg 5.1.x on Debian 12).
#
# Needs: flac, ffmpeg, ffprobe, python3 (stdlib only).
#
# Every fixture is written by a real encoder: the reference `flac` tool (libFLAC) at
# its defaults and with other block sizes, depths, channel counts and metadata, and
# ffmpeg's own FLAC encoder. Two are derived by the committed tools in flac/*.py:
# a variable block size stream spliced from flac encodes (neither flac 1.4 nor
# ffmpeg 5.1 writes one: ffmpeg's encoder has no variable block size option), checked
# by `flac -t` against the MD5 of the signal, and a file with an ID3v2 tag in front.
# The goldens hold ffprobe's packets beside facts read by flac/flaclib.py
# (see flac_golden.py); the two must agree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=flac
TOOLS=flac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The fixtures are wholly generated; the tools (flac/*.py) stay.
find "$OUT" -maxdepth 1 -type f \( -name '*.flac' -o -name '*.json' \) -delete 2>/dev/null || true
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
FLAC=(flac --silent --force)
export PYTHONDONTWRITEBYTECODE=1

# ---------------------------------------------------------------------------
# Deterministic sources: per channel a different mix of sines plus a little
# pseudo-random noise from a fixed seed (aevalsrc's random() with its state set on
# sample 0), so that every frame differs. Lengths are odd on purpose: the last frame
# is short.
# ---------------------------------------------------------------------------
noise() { # $1 = seed
  printf '0*if(eq(n,0),st(0,%s),0)+0.0001*(2*random(0)-1)' "$1"
}
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
SIX="$(noise 1111111111111)+0.5*sin(2*PI*440*t)|$(noise 2222222222222)+0.5*sin(2*PI*660*t)|$(noise 3333333333333)+0.5*sin(2*PI*880*t)|$(noise 4444444444444)+0.5*sin(2*PI*110*t)|$(noise 5555555555555)+0.5*sin(2*PI*1300*t)|$(noise 6666666666666)+0.5*sin(2*PI*1700*t)"

master() { # name exprs rate frames codec [layout]
  local name=$1 exprs=$2 rate=$3 frames=$4 codec=$5 layout=${6:-}
  local src="aevalsrc=exprs='$exprs':s=$rate"
  [[ -n $layout ]] && src+=":c=$layout"
  "${FF[@]}" -f lavfi -i "$src,atrim=end_sample=$frames" -c:a "$codec" "${BX[@]}" "$TMP/$name.wav"
}
master st22 "$STEREO" 22050 11026 pcm_s16le          # 0.5 s + 1 frame
master cd44 "$STEREO" 44100 22344 pcm_s16le          # 38 CD sectors of 588 frames (for the cue sheet)
master st24 "$STEREO" 24000 12001 pcm_s24le          # 0.5 s, 24-bit
master mo8  "$MONO"   8000  6001  pcm_s16le          # 0.75 s mono
master six  "$SIX"    22050 11025 pcm_s16le 5.1      # 0.5 s, FL FR FC LFE BL BR

golden() { python3 "$TOOLS/flac_golden.py" "$OUT/$1" "${@:2}"; }
flacenc() { # name master [flac options...]
  local name=$1 m=$2
  shift 2
  "${FLAC[@]}" "$@" -o "$OUT/$name" "$TMP/$m.wav" 2>/dev/null
  golden "$name"
}

# ------------------------------------------------------------------ flac (libFLAC)
# Defaults: -5, 4096-sample blocks, a SEEKTABLE (a point every 10 s), the vendor
# string, 8 KiB of PADDING.
flacenc flac_default.flac      st22
flacenc flac_b1152.flac        st22 -b 1152 --no-padding
flacenc flac_b4608.flac        st22 -b 4608 --no-padding
flacenc flac_b576.flac         st22 --blocksize=576 --no-padding
flacenc flac_24bit_24k.flac    st24 --no-padding
flacenc flac_mono_8k.flac      mo8 --no-padding
# flac adds WAVEFORMATEXTENSIBLE_CHANNEL_MASK=0x003F for a WAVE_FORMAT_EXTENSIBLE source.
flacenc flac_5.1.flac          six --no-padding
# A 2x2 PNG, written by python's zlib (deterministic), as the front cover.
python3 - "$TMP/cover.png" <<'PY'
import struct, sys, zlib
def chunk(t, b): return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
rows = b"\x00\xff\x00\x00\x00\xff\x00" + b"\x00\x00\x00\xff\xff\xff\xff"
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
flacenc flac_tags_picture.flac st22 -b 1152 --no-padding -T "TITLE=Tonearm Test Tone" -T "ARTIST=Tonearm Fixtures" \
  -T "ALBUM=FLAC Family" -T "DATE=2024" -T "TRACKNUMBER=7" -T "COMMENT=440 Hz + 1.3 kHz + noise" \
  --picture="3|image/png|Front|2x2x24|$TMP/cover.png"
# A SEEKTABLE of 10 evenly spaced points: flac rounds each to the frame that holds it,
# which leaves 9 frames with a point, the last without, and one placeholder point.
flacenc flac_seektable.flac    st22 -b 1152 --no-padding -S 10x
# A CUESHEET: track 1 at 0, track 2 with index 00 at 15/75 s and index 01 at 20/75 s.
printf 'FILE "cd44.wav" WAVE\n  TRACK 01 AUDIO\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    INDEX 00 00:00:15\n    INDEX 01 00:00:20\n' > "$TMP/cd44.cue"
flacenc flac_cuesheet.flac     cd44 -b 1152 --no-padding --cuesheet="$TMP/cd44.cue"

# ------------------------------------------------------------------ ffmpeg's encoder
# ffmpeg writes STREAMINFO, then a VORBIS_COMMENT with its vendor string (bitexact: "Lavf").
"${FF[@]}" -i "$TMP/st22.wav" -c:a flac "${BX[@]}" "$OUT/ffmpeg_default.flac";        golden ffmpeg_default.flac
"${FF[@]}" -i "$TMP/st22.wav" -c:a flac -frame_size 1000 -lpc_type fixed -ch_mode mid_side "${BX[@]}" \
  "$OUT/ffmpeg_b1000_fixed.flac";                                                      golden ffmpeg_b1000_fixed.flac
"${FF[@]}" -i "$TMP/mo8.wav" -c:a flac -compression_level 12 "${BX[@]}" "$OUT/ffmpeg_mono_level12.flac"
golden ffmpeg_mono_level12.flac
# To a pipe: ffmpeg cannot go back, so STREAMINFO keeps 0 total samples and no MD5
# (flac -t then has nothing to check but the frames' CRCs).
"${FF[@]}" -i "$TMP/st22.wav" -c:a flac "${BX[@]}" -f flac - > "$OUT/ffmpeg_piped.flac"; golden ffmpeg_piped.flac

# ------------------------------------------------------------------ derived
# Variable block sizes: 2304 frames at 1152, 2304 at 576, the rest at 4096 (its last
# block short), spliced by flac_splice.py; flac -t checks the MD5 of the whole signal.
"${FF[@]}" -i "$TMP/st22.wav" -f s16le "${BX[@]}" "$TMP/st22.raw"
piece() { # name first count blocksize
  head -c $(( ($2 + $3) * 4 )) "$TMP/st22.raw" | tail -c $(( $3 * 4 )) > "$TMP/$1.raw"
  "${FLAC[@]}" --force-raw-format --endian=little --sign=signed --channels=2 --bps=16 --sample-rate=22050 \
    -b "$4" --no-padding --no-seektable -o "$TMP/$1.flac" "$TMP/$1.raw"
}
piece p1 0 2304 1152
piece p2 2304 2304 576
piece p3 4608 6418 4096
python3 "$TOOLS/flac_splice.py" "$OUT/flac_variable.flac" "$TMP/st22.raw" 2 "$TMP/p1.flac" "$TMP/p2.flac" "$TMP/p3.flac"
golden flac_variable.flac
# An ID3v2.3 tag (TIT2) in front of the fLaC marker, as some taggers write it; small
# enough that the marker lies within the probe's first 64 bytes.
python3 - "$OUT/flac_b1152.flac" "$OUT/flac_id3v2.flac" <<'PY'
import struct, sys
text = b"\x00ID3 before fLaC"
frame = b"TIT2" + struct.pack(">I", len(text)) + b"\x00\x00" + text
body = frame + b"\x00" * 8  # padding
size = bytes((len(body) >> s) & 0x7F for s in (21, 14, 7, 0))
open(sys.argv[2], "wb").write(b"ID3\x03\x00\x00" + size + body + open(sys.argv[1], "rb").read())
PY
golden flac_id3v2.flac

# ------------------------------------------------------------------ the corpus
# ffprobe's packets for every file of the IETF FLAC testbench, when it is here
# (../shared/corpus from the package root), so that the corpus tests need not run
# ffprobe: the count, and the CRC-32 (zlib's) of the "size,offset" lines of all packets. A file
# ffprobe complains about (or cannot count) is marked as not accepted: uncommon 05
# (32 bits per sample, which ffmpeg 5.1 does not know), uncommon 11 (ffprobe counts its
# leading junk as a packet) and the faulty files it refuses.
CORPUS=../../../shared/corpus/flac-test-files
if [[ -d $CORPUS ]]; then
  python3 - "$CORPUS" "$OUT/corpus-ffprobe.json" <<'PY'
import json, os, subprocess, sys, zlib
root, out = sys.argv[1], sys.argv[2]
result = {}
for group in ("subset", "uncommon", "faulty"):
    for name in sorted(os.listdir(os.path.join(root, group))):
        if not name.endswith(".flac"):
            continue
        path = os.path.join(root, group, name)
        r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size,pos",
                            "-of", "csv=p=0", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = [l for l in r.stdout.decode().splitlines() if l]
        # A complaint about an attached picture's type (subset 59, AVIF) is not about the audio.
        complaints = [l for l in r.stderr.decode().splitlines() if "attached picture" not in l]
        accepted = r.returncode == 0 and not complaints and bool(lines)
        entry = {"accepted": accepted}
        if accepted:
            entry["packets"] = len(lines)
            entry["sizeOffsetCRC32"] = zlib.crc32(("\n".join(lines) + "\n").encode())
        result[group + "/" + name] = entry
with open(out, "w") as f:
    f.write(json.dumps(result, indent=1, sort_keys=True) + "\n")
PY
fi

echo "fixtures: $(ls "$OUT" | grep -c '\.flac$') files, $(du -ch "$OUT"/*.flac | tail -1 | cut -f1) in $(pwd)/$OUT"
