#!/usr/bin/env bash
# Regenerates the HLS fixtures in hls/ (issue 20) and their goldens hls/CASE.json.
# Deterministic: a second run gives byte-identical files (checked with ffmpeg 5.1 and
# OpenSSL 3.0 on Debian 12).
#
# Needs: ffmpeg, ffprobe, openssl, python3 (tools/hls_fixtures.py).
#
# One source for every case: 8 s of 44.1 kHz stereo made by aevalsrc (below, never
# committed), a few sines on plucked envelopes, different in each channel. ffmpeg's hls
# muxer cuts it into 2-s segments (-hls_time 2), VOD playlists, AAC LC by ffmpeg's native
# encoder. Every case folder holds index.m3u8 and its segments:
#
#   ts-128k/     AAC 128 kbit/s in MPEG-TS.
#   ts-64k/      AAC 64 kbit/s in MPEG-TS (also the audio rendition of master.m3u8).
#   ts-ac3/      AC-3 48 kbit/s in MPEG-TS: the variant a client without AC-3 must drop.
#   master.m3u8  the three as EXT-X-STREAM-INF variants (BANDWIDTH = the peak segment bit
#                rate, AVERAGE-BANDWIDTH, CODECS), ts-64k with AUDIO="aac-64k", and an
#                EXT-X-MEDIA TYPE=AUDIO rendition of that group pointing at ts-64k.
#   fmp4/        AAC 96 kbit/s in fMP4 (CMAF): EXT-X-MAP init.mp4, seg*.m4s with tfdt.
#   aes/         AAC 64 kbit/s in TS encrypted by ffmpeg (-hls_key_info_file): key.bin
#                beside the playlist, an explicit IV in EXT-X-KEY.
#   aes-rotate/  ts-64k's segments encrypted here by openssl with two keys (key1.bin, then
#                key2.bin from the third segment: two EXT-X-KEY tags), with no IV attribute,
#                so the IV is the media sequence number, which starts at 7.
#   packed/      packed audio: ADTS from ffmpeg (64 kbit/s), cut at frame boundaries near
#                2 s, each segment led by an ID3v2.4 PRIV transportStreamTimestamp tag.
#   packed-mp3/  the same with MP3 frames (libmp3lame, 64 kbit/s CBR).
#   disc/        4 s of the source at 44.1 kHz (a-seg*.ts), EXT-X-DISCONTINUITY, then the
#                next 4 s resampled to 48 kHz (b-seg*.ts), timestamps restarting;
#                EXT-X-DISCONTINUITY-SEQUENCE:2.
#   byterange/   AAC 64 kbit/s in one TS file (-hls_flags single_file), EXT-X-BYTERANGE.
#
# Goldens (tools/hls_fixtures.py golden): the playlist as written (tags, segment URIs,
# EXTINF strings, byte ranges, keys and the IV each segment uses), each segment's size and
# SHA-256 (and its plaintext's, decrypted by openssl, for encrypted ones), tfdt and ID3
# timestamps, the total duration, ffmpeg's decode of the whole playlist (frames and s16le
# SHA-256; and of each part between discontinuities) and the source's frame count.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=hls
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags:a +bitexact -map_metadata -1)
HLS=(-f hls -hls_time 2 -hls_playlist_type vod)
unhex() { python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$1"; }
PY=(python3 tools/hls_fixtures.py)
RATE=44100
SECONDS_LONG=8
SOURCE_FRAMES=$((RATE * SECONDS_LONG))

# The source: per channel three partials, two on plucked (decaying every half or whole
# second) envelopes and one slowly swelling.
L="0.25*sin(2*PI*220*t)*exp(-3*mod(t,0.5))+0.15*sin(2*PI*329.63*t)*(0.6+0.4*sin(PI*t))+0.1*sin(2*PI*659.26*t)*exp(-5*mod(t+0.25,0.5))"
R="0.25*sin(2*PI*277.18*t)*exp(-3*mod(t+0.125,0.5))+0.15*sin(2*PI*440*t)*(0.6+0.4*cos(PI*t))+0.1*sin(2*PI*880*t)*exp(-4*mod(t,1))"
"${FF[@]}" -f lavfi -i "aevalsrc=exprs='$L|$R':s=$RATE:c=stereo:d=$SECONDS_LONG" -c:a pcm_s16le "${BX[@]}" "$TMP/source.wav"

# ts_case FOLDER INPUT ENCODER-OPTIONS... [-- MUXER-OPTIONS...]
ts_case() {
  local dir=$OUT/$1 input=$2; shift 2
  local enc=() mux=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do enc+=("$1"); shift; done
  [ $# -gt 0 ] && shift && mux=("$@")
  mkdir -p "$dir"
  "${FF[@]}" -i "$input" "${enc[@]}" "${BX[@]}" "${HLS[@]}" -hls_segment_type mpegts \
    -hls_segment_filename "$dir/seg%d.ts" ${mux[@]+"${mux[@]}"} "$dir/index.m3u8"
}

ts_case ts-128k "$TMP/source.wav" -c:a aac -b:a 128k
ts_case ts-64k "$TMP/source.wav" -c:a aac -b:a 64k
ts_case ts-ac3 "$TMP/source.wav" -c:a ac3 -b:a 48k -ac 2
"${PY[@]}" master "$OUT"

mkdir -p "$OUT/fmp4"
"${FF[@]}" -i "$TMP/source.wav" -c:a aac -b:a 96k "${BX[@]}" "${HLS[@]}" -hls_segment_type fmp4 \
  -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$OUT/fmp4/seg%d.m4s" "$OUT/fmp4/index.m3u8"

# aes/: ffmpeg's own encryption. The key info file: the key URI as the playlist shows it,
# the key file, the IV.
KEY=8a3f02c9e15d7b46a0c2f9e83d1b5a67
IV=0f1e2d3c4b5a69788796a5b4c3d2e1f0
mkdir -p "$OUT/aes"
unhex "$KEY" > "$OUT/aes/key.bin"
printf 'key.bin\n%s\n%s\n' "$OUT/aes/key.bin" "$IV" > "$TMP/keyinfo"
ts_case aes "$TMP/source.wav" -c:a aac -b:a 64k -- -hls_key_info_file "$TMP/keyinfo"

# aes-rotate/: ts-64k's segments, encrypted here; key1 for the first two, key2 after.
KEY1=3c9d41e07a2b58f6c1d3e5a79b0f2468
KEY2=e4f5a6b7c8d9eaf0112233445566778a
SEQUENCE=7
mkdir -p "$OUT/aes-rotate"
unhex "$KEY1" > "$OUT/aes-rotate/key1.bin"
unhex "$KEY2" > "$OUT/aes-rotate/key2.bin"
{
  sed -n '1,3p' "$OUT/ts-64k/index.m3u8"          # EXTM3U, VERSION, TARGETDURATION
  echo "#EXT-X-MEDIA-SEQUENCE:$SEQUENCE"
  echo "#EXT-X-PLAYLIST-TYPE:VOD"
  n=0
  while read -r extinf && read -r uri; do
    if [ "$n" -eq 0 ]; then echo '#EXT-X-KEY:METHOD=AES-128,URI="key1.bin"'; key=$KEY1; fi
    if [ "$n" -eq 2 ]; then echo '#EXT-X-KEY:METHOD=AES-128,URI="key2.bin"'; key=$KEY2; fi
    printf '%s\n%s\n' "$extinf" "$uri"
    # RFC 8216 §5.2: the IV is the media sequence number, a 128-bit big-endian integer.
    openssl enc -e -aes-128-cbc -K "$key" -iv "$(printf '%032x' $((SEQUENCE + n)))" \
      -in "$OUT/ts-64k/$uri" -out "$OUT/aes-rotate/$uri"
    n=$((n + 1))
  done < <(grep -A1 '^#EXTINF' "$OUT/ts-64k/index.m3u8" | grep -v '^--$')
  echo "#EXT-X-ENDLIST"
} > "$OUT/aes-rotate/index.m3u8"

# packed/ and packed-mp3/: the elementary stream cut and tagged by the Python helper. The
# first timestamp is 1.4 s (126000 at 90 kHz), where ffmpeg's TS muxer starts too.
mkdir -p "$OUT/packed" "$OUT/packed-mp3"
"${FF[@]}" -i "$TMP/source.wav" -c:a aac -b:a 64k "${BX[@]}" -f adts "$TMP/source.aac"
"${PY[@]}" packed "$TMP/source.aac" "$OUT/packed" adts 126000
"${FF[@]}" -i "$TMP/source.wav" -c:a libmp3lame -b:a 64k "${BX[@]}" -write_xing 0 -id3v2_version 0 \
  -f mp3 "$TMP/source.mp3"
"${PY[@]}" packed "$TMP/source.mp3" "$OUT/packed-mp3" mp3 126000

# disc/: two ffmpeg runs (so each restarts its timestamps), joined by hand.
HALF=$((SOURCE_FRAMES / 2))
"${FF[@]}" -i "$TMP/source.wav" -af "atrim=end_sample=$HALF" -c:a pcm_s16le "${BX[@]}" "$TMP/first.wav"
"${FF[@]}" -i "$TMP/source.wav" -af "atrim=start_sample=$HALF,asetpts=N/SR/TB,aresample=48000" \
  -c:a pcm_s16le "${BX[@]}" "$TMP/second.wav"
mkdir -p "$TMP/disc-a" "$TMP/disc-b" "$OUT/disc"
for part in a b; do
  input=$TMP/first.wav; [ $part = b ] && input=$TMP/second.wav
  "${FF[@]}" -i "$input" -c:a aac -b:a 64k "${BX[@]}" "${HLS[@]}" -hls_segment_type mpegts \
    -hls_segment_filename "$OUT/disc/$part-seg%d.ts" "$TMP/disc-$part/index.m3u8"
done
{
  echo "#EXTM3U"
  echo "#EXT-X-VERSION:3"
  grep -h '^#EXT-X-TARGETDURATION' "$TMP"/disc-{a,b}/index.m3u8 | sort -t: -k2 -n | tail -1
  echo "#EXT-X-MEDIA-SEQUENCE:0"
  echo "#EXT-X-DISCONTINUITY-SEQUENCE:2"
  echo "#EXT-X-PLAYLIST-TYPE:VOD"
  grep -A1 '^#EXTINF' "$TMP/disc-a/index.m3u8" | grep -v '^--$'
  echo "#EXT-X-DISCONTINUITY"
  grep -A1 '^#EXTINF' "$TMP/disc-b/index.m3u8" | grep -v '^--$'
  echo "#EXT-X-ENDLIST"
} > "$OUT/disc/index.m3u8"

# (The later -hls_segment_filename wins over ts_case's.)
ts_case byterange "$TMP/source.wav" -c:a aac -b:a 64k -- -hls_flags single_file \
  -hls_segment_filename "$OUT/byterange/audio.ts"

for case in ts-128k ts-64k ts-ac3 fmp4 aes aes-rotate packed packed-mp3 disc byterange; do
  "${PY[@]}" golden "$OUT" "$case" "$SOURCE_FRAMES" key.bin=$KEY key1.bin=$KEY1 key2.bin=$KEY2
done
du -sh "$OUT"
