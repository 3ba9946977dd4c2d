#!/usr/bin/env bash
# Regenerates the MPEG-TS fixtures in mpegts/ (issue 20's native demuxer), each with a
# golden NAME.json of ffprobe/ffmpeg values (tools/mpegts_golden.py).
#
# Deterministic: aevalsrc signals with fixed noise seeds, ffmpeg with bitexact flags.
# Checked with ffmpeg 5.1.x on Debian 12. ffmpeg cannot encode HE-AAC: there is none.
#
# Needs: ffmpeg (with libopus and libmp3lame), ffprobe, python3 (stdlib).
#
# Made (1.5 s of 48 kHz stereo unless said; ffmpeg's mpegts muxer: PAT, PMT on PID 0x1000,
# the audio on PID 0x100):
#   aac.ts        ffmpeg's aac 96 kbit/s (stream type 0x0F, ADTS)
#   mp2.ts        mp2 128 kbit/s (stream type 0x03)
#   mp3.ts        libmp3lame 128 kbit/s (stream type 0x03)
#   ac3.ts        ac3 192 kbit/s (private 0x06 with DVB's AC-3 descriptor 0x6A)
#   eac3.ts       eac3 128 kbit/s (private 0x06 with DVB's E-AC-3 descriptor 0x7A)
#   opus.ts       libopus 64 kbit/s (private 0x06, registration 'Opus', extension
#                 descriptor 0x7F/0x80; each access unit behind the 0x7FE0 control header,
#                 the first with a start trim of 312)
#   latm.ts       aac 96 kbit/s as LATM in LOAS (-mpegts_flags latm, stream type 0x11)
#   aac_m2ts.m2ts aac.ts's encode in 192-byte packets (-mpegts_m2ts_mode 1: a 4-byte
#                 arrival timestamp before each packet; the AAC as private 0x06, HDMV)
#   aac_204.ts    aac.ts with 16 bytes after every packet (tools/mpegts_rewrite.py
#                 --parity204): a 204-byte stream. The 16 bytes are a fixed pattern, not
#                 real Reed-Solomon parity, which nothing here computes.
#   two_langs.ts  two audio streams: AAC 'eng' (PID 0x100) and MP2 'fra' (PID 0x101),
#                 with golden files for both (two_langs.json, two_langs.a1.json)
#   id3.ts        aac.ts with a timed ID3 stream added by tools/mpegts_rewrite.py
#                 --timed-id3 (ffmpeg 5.1 cannot mux one): three ID3v2.4 tags, titled
#                 "Tonearm TS One" (with TPE1), "Tonearm TS Two", and a PRIV frame alone
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in ffmpeg ffprobe python3; do
  command -v "$tool" >/dev/null || { echo "make-mpegts.sh: needs $tool" >&2; exit 1; }
done

OUT=mpegts
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags:a +bitexact -map_metadata -1)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "${2:-0.05}"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
OTHER="$(noise 5555555555555)+0.4*sin(2*PI*660*t)|$(noise 7777777777777)+0.4*sin(2*PI*880*t)"

"${FF[@]}" -f lavfi -i "aevalsrc=exprs='$STEREO':s=48000,atrim=end_sample=72000" -c:a pcm_s16le "${BX[@]}" "$TMP/st48.wav"
"${FF[@]}" -f lavfi -i "aevalsrc=exprs='$OTHER':s=48000,atrim=end_sample=72000" -c:a pcm_s16le "${BX[@]}" "$TMP/ot48.wav"

"${FF[@]}" -i "$TMP/st48.wav" -c:a aac -b:a 96k "${BX[@]}" "$OUT/aac.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a mp2 -b:a 128k "${BX[@]}" "$OUT/mp2.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a libmp3lame -b:a 128k "${BX[@]}" "$OUT/mp3.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a ac3 -b:a 192k "${BX[@]}" "$OUT/ac3.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a eac3 -b:a 128k "${BX[@]}" "$OUT/eac3.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a libopus -b:a 64k "${BX[@]}" "$OUT/opus.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a aac -b:a 96k "${BX[@]}" -mpegts_flags latm "$OUT/latm.ts"
"${FF[@]}" -i "$TMP/st48.wav" -c:a aac -b:a 96k "${BX[@]}" -mpegts_m2ts_mode 1 -f mpegts "$OUT/aac_m2ts.m2ts"
python3 tools/mpegts_rewrite.py "$OUT/aac.ts" "$OUT/aac_204.ts" --parity204
"${FF[@]}" -i "$TMP/st48.wav" -i "$TMP/ot48.wav" -map 0:a -map 1:a -c:a:0 aac -b:a:0 96k -c:a:1 mp2 -b:a:1 128k \
  "${BX[@]}" -metadata:s:a:0 language=eng -metadata:s:a:1 language=fra "$OUT/two_langs.ts"
python3 tools/mpegts_rewrite.py "$OUT/aac.ts" "$OUT/id3.ts" --timed-id3

for f in "$OUT"/*.ts "$OUT"/*.m2ts; do python3 tools/mpegts_golden.py "$f"; done
python3 tools/mpegts_golden.py "$OUT/two_langs.ts" a:1
echo "mpegts fixtures: $(du -ch "$OUT" | tail -1)"
