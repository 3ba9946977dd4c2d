#!/usr/bin/env bash
# Regenerates the Matroska/WebM fixtures in matroska/ (issue 19's native demuxer), each
# with a golden NAME.json of ffprobe/ffmpeg values (tools/matroska_golden.py).
#
# Deterministic: aevalsrc signals with fixed noise seeds, ffmpeg with bitexact flags (the
# Matroska muxer then writes a fixed segment UID, no date, and no CRC-32 elements), except
# tagged.mka, which is written without them so that it has CRC-32 elements to skip.
# Checked with ffmpeg 5.1.x on Debian 12.
#
# Needs: ffmpeg (with libopus, libvorbis and libmp3lame), ffprobe, python3 (stdlib).
#
# Made (1 s unless said; -cluster_time_limit 250 gives several Clusters and CuePoints):
#   opus_stereo.webm     libopus 96 kbit/s 48 kHz stereo, WebM (CodecDelay, SeekPreRoll,
#                        the last packet in a BlockGroup with DiscardPadding)
#   opus_mono.mka        libopus 48 kbit/s mono, Matroska
#   vorbis_stereo.webm   libvorbis q3 44.1 kHz stereo, WebM (Xiph-laced CodecPrivate)
#   aac_stereo.mka       ffmpeg's aac 96 kbit/s 44.1 kHz (A_AAC, CodecPrivate the ASC)
#   flac_stereo.mka      flac 44.1 kHz stereo, 0.5 s (CodecPrivate "fLaC" + STREAMINFO)
#   mp3_stereo.mka       libmp3lame 128 kbit/s 44.1 kHz (A_MPEG/L3)
#   ac3_stereo.mka       ac3 192 kbit/s 48 kHz (A_AC3, packets all 768 bytes)
#   pcm_s16le.mka        A_PCM/INT/LIT 16-bit 44.1 kHz stereo, 0.25 s
#   pcm_s24be.mka        A_PCM/INT/BIG 24-bit 48 kHz stereo, 0.2 s
#   pcm_f32le.mka        A_PCM/FLOAT/IEEE 32-bit 48 kHz mono, 0.2 s
#   tagged.mka           Opus with title, artist, album, date, comment and three chapters
#                        (an ffmetadata file), CRC-32 elements (not bitexact)
#   live.webm            Opus WebM written to a pipe: the Segment has the unknown size
#                        (01 FF FF FF FF FF FF FF) and there are no Cues; ffmpeg 5.1 still
#                        gives its Clusters sizes
#   live_unknown.webm    live.webm with the Clusters' sizes unknown too (matroska_rewrite.py)
#   nocues.mka           AAC Matroska written to a pipe: no Cues, no seek entry for them
#   laced_xiph.mka       opus_mono.mka's packets, 4 to a SimpleBlock, Xiph lacing
#   laced_ebml.mka       the same with EBML lacing
#   laced_fixed.mka      ac3_stereo.mka's packets, 4 to a SimpleBlock, fixed-size lacing
#   stripped_ac3.mka     ac3_stereo.mka with header stripping (ContentCompAlgo 3): the
#                        sync word 0B 77 cut from every frame, given in ContentCompSettings
# The laced files get a DefaultDuration (20 ms, 32 ms), which times the laced frames, and
# lose their SeekHead and Cues (matroska_rewrite.py cannot keep the offsets right).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in ffmpeg ffprobe python3; do
  command -v "$tool" >/dev/null || { echo "make-matroska.sh: needs $tool" >&2; exit 1; }
done

OUT=matroska
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
CL=(-cluster_time_limit 250)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "${2:-0.05}"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
QUIET="$(noise 1234567890123 0.0005)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987 0.0005)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"

master() { # name exprs rate frames
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3,atrim=end_sample=$4" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}
master st48 "$STEREO" 48000 48000
master st44 "$STEREO" 44100 44100
master mo48 "$MONO"   48000 48000
master ll44 "$QUIET"  44100 22050
master ll48 "$QUIET"  48000 9600

"${FF[@]}" -i "$TMP/st48.wav" -c:a libopus -b:a 96k "${BX[@]}" "${CL[@]}" "$OUT/opus_stereo.webm"
"${FF[@]}" -i "$TMP/mo48.wav" -c:a libopus -b:a 48k "${BX[@]}" "${CL[@]}" "$OUT/opus_mono.mka"
"${FF[@]}" -i "$TMP/st44.wav" -c:a libvorbis -q:a 3 "${BX[@]}" "${CL[@]}" "$OUT/vorbis_stereo.webm"
"${FF[@]}" -i "$TMP/st44.wav" -c:a aac -b:a 96k "${BX[@]}" "${CL[@]}" "$OUT/aac_stereo.mka"
"${FF[@]}" -i "$TMP/ll44.wav" -c:a flac "${BX[@]}" "${CL[@]}" "$OUT/flac_stereo.mka"
"${FF[@]}" -i "$TMP/st44.wav" -c:a libmp3lame -b:a 128k "${BX[@]}" "${CL[@]}" "$OUT/mp3_stereo.mka"
"${FF[@]}" -i "$TMP/st48.wav" -c:a ac3 -b:a 192k "${BX[@]}" "${CL[@]}" "$OUT/ac3_stereo.mka"
"${FF[@]}" -i "$TMP/ll44.wav" -af atrim=end_sample=11025 -c:a pcm_s16le "${BX[@]}" "${CL[@]}" "$OUT/pcm_s16le.mka"
"${FF[@]}" -i "$TMP/ll48.wav" -c:a pcm_s24be "${BX[@]}" "${CL[@]}" "$OUT/pcm_s24be.mka"
"${FF[@]}" -i "$TMP/ll48.wav" -ac 1 -c:a pcm_f32le "${BX[@]}" "${CL[@]}" "$OUT/pcm_f32le.mka"

# Tags and chapters from an ffmetadata file; not bitexact, for the CRC-32 elements.
{ printf ';FFMETADATA1\ntitle=Tonearm Matroska ✓\nartist=Tonearm Fixtures\nalbum=Issue 19\n'
  printf 'date=2026\ncomment=three chapters\n'
  printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=300\ntitle=Opening\n'
  printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=300\nEND=650\ntitle=Middle\n'
  printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=650\nEND=1000\ntitle=Ending ✓\n'
} > "$TMP/meta.txt"
"${FF[@]}" -i "$TMP/st48.wav" -i "$TMP/meta.txt" -map 0:a -map_metadata 1 -map_chapters 1 \
  -c:a libopus -b:a 64k "${CL[@]}" "$OUT/tagged.mka"

# A pipe is not seekable: the Segment's size stays unknown and no Cues are written.
"${FF[@]}" -i "$TMP/st48.wav" -c:a libopus -b:a 64k "${BX[@]}" "${CL[@]}" -f webm - > "$OUT/live.webm"
"${FF[@]}" -i "$TMP/st44.wav" -c:a aac -b:a 64k "${BX[@]}" "${CL[@]}" -f matroska - > "$OUT/nocues.mka"
python3 tools/matroska_rewrite.py "$OUT/live.webm" "$OUT/live_unknown.webm" --unknown-sizes
# The Segment's size is unknown in both: 18 53 80 67 then 01 FF FF FF FF FF FF FF.
for f in live.webm live_unknown.webm; do
  head -c 64 "$OUT/$f" | od -An -tx1 | tr -d ' \n' | grep -q '1853806701ffffffffffffff' \
    || { echo "make-matroska.sh: $f has no unknown-size Segment" >&2; exit 1; }
done

python3 tools/matroska_rewrite.py "$OUT/opus_mono.mka" "$OUT/laced_xiph.mka" --lace xiph
python3 tools/matroska_rewrite.py "$OUT/opus_mono.mka" "$OUT/laced_ebml.mka" --lace ebml
python3 tools/matroska_rewrite.py "$OUT/ac3_stereo.mka" "$OUT/laced_fixed.mka" --lace fixed
# Header stripping: every AC-3 frame begins with the sync word 0B 77.
python3 tools/matroska_rewrite.py "$OUT/ac3_stereo.mka" "$OUT/stripped_ac3.mka" --strip 0b77

for f in "$OUT"/*.webm "$OUT"/*.mka; do python3 tools/matroska_golden.py "$f"; done
echo "matroska fixtures: $(du -ch "$OUT" | tail -1)"
