#!/usr/bin/env bash
# Regenerates the fixtures of the opt-in FFmpeg backend (issue 18) in ffmpeg/: codecs
# Tonearm has no native decoder for (WMA v1/v2, DTS, WavPack, TTA, APE, RealAudio 1.0,
# AMR-WB) and containers it cannot parse (ASF, Matroska, MPEG-TS, RealMedia, APE, WavPack,
# TTA), each with a golden NAME.json of ffprobe/ffmpeg values (tools/ffmpeg_golden.py).
# AC-3, E-AC-3, AMR-NB, Speex, Vorbis and Opus in their own containers are in ac3/, amr/,
# ogg/ and mp4/ already and are not repeated here.
#
# Deterministic: the sources are ffmpeg aevalsrc signals with fixed noise seeds (those of
# make-sync.sh), ffmpeg runs with bitexact flags, and JMAC, wavpack and libvo-amrwbenc have
# no randomness (checked with ffmpeg 5.1.x, JMAC 1.74, WavPack 5.6.0 and libvo-amrwbenc
# 0.1.3 on Debian 12: two runs give byte-identical files). Under +bitexact the ASF muxer
# writes a constant file ID and creation date 0, Matroska a fixed segment UID and no date.
# The tagged files (wmav2_stereo_44k.wma, the .mka files) are made without -map_metadata -1
# but still bitexact; they take their title/artist (and chapters) from an ffmetadata file.
#
# Needs: ffmpeg, ffprobe, python3 (stdlib), and from Debian: wavpack (CLI), libjmac-java
# (the `jmac` command, with a Java runtime) and libvo-amrwbenc0.
#
# Made:
#   wmav1_stereo_44k.wma, wmav2_stereo_44k.wma (tagged), wmav2_mono_22k.wma  ASF, ffmpeg
#   dts_5.1_48k.dts           raw DTS core, ffmpeg's experimental dca encoder (768 kbit/s)
#   wavpack_stereo_44k.wv     ffmpeg's wavpack encoder and wv muxer (lossless)
#   wavpack_cli_stereo_44k.wv the wavpack CLI (-m: MD5, RIFF header kept), as rips are made
#   tta_stereo_44k.tta        ffmpeg's tta encoder and muxer
#   apelike_stereo.ape        Monkey's Audio 3.99, level 2000, by JMAC (libjmac-java)
#   ac3_in_mkv.mka            AC-3 stereo in Matroska, title/artist and 2 chapters
#   eac3_5.1_in_mkv.mka       E-AC-3 5.1 in Matroska, title/artist
#   mp2_in_ts.ts              MPEG-1 Layer II in MPEG-TS
#   aac_in_asf.asf            AAC-LC in ASF (ffmpeg's asf muxer takes it, tag 0x00FF)
#   ac3_in_rm.rm              AC-3 in RealMedia ('dnet'; ffmpeg's rm muxer byte-swaps it)
#   ra144_in_rm.rm            RealAudio 1.0 (14.4K, ra_144) in RealMedia: ffmpeg 5.1 has
#                             a real_144 encoder, so one RealAudio codec can be made
#   amrwb_1265_16k.awb        AMR-WB 12.65 kbit/s, libvo-amrwbenc via tools/amrwb_encode.py
#
# Not made, and why:
#   * WMA Pro, WMA Lossless (WMA 9/10): ffmpeg has decoders only (`ffmpeg -encoders` lists
#     wmav1 and wmav2), and Debian has no other encoder.
#   * RealAudio cook/sipr/atrac3/ralf (the usual .ra/.rm codecs): no encoder in ffmpeg or
#     Debian; only ra_144 (above) can be written.
#   * APE from Monkey's Audio itself: the `mac` tool is not in Debian (no monkeys-audio
#     package); JMAC, a Java port of Monkey's Audio 3.97/3.99, writes the file instead, and
#     ffmpeg decodes it losslessly. A multi-frame APE is not made: at level 2000 a frame
#     holds 73728 samples (1.67 s at 44.1 kHz), too big for the size budget.
#   * AMR-WB from ffmpeg or SoX: this ffmpeg has no libvo-amrwbenc and Debian's SoX is
#     built without AMR-WB encoding; the library itself is in Debian, so it is called
#     directly.
#
# Surprises found in the output (also in README.md):
#   * DTS: the dca decoder gives fltp, but s32p (fixed-point core) when opened with
#     AV_CODEC_FLAG_BITEXACT, and the samples differ. The goldens' hashes are of the
#     bitexact decode (`ffmpeg -bitexact`); f32leSHA256NoBitexact is the other one.
#   * WMA: 22 packets (one 2048-frame block each, 743 bytes = block_align) decode to only
#     21 x 2048 frames (the decoder's first block gives no output); the ASF WAVEFORMATEX has
#     no channel mask, so ffprobe's channel layout is unset. ASF packet positions are the
#     ASF data packet's (several WMA blocks share one pos).
#   * AAC in ASF: the first packet has no duration, no priming is signalled (45 x 1024 =
#     46080 frames decoded, 1024 of them priming), block_align 1536.
#   * MP2 in MPEG-TS: first pts 126000 (1.4 s, the muxer's default delay); ffprobe's
#     duration is 0.940411 s though the 39 packets hold 39 x 1152 frames; only the first
#     frame of each PES packet has a pos.
#   * RealMedia: the AC-3 payload is byte-swapped (0x770B); ra_144 packets all have
#     timestamp 0 and the PROP duration is 0, so ffprobe's pts and duration are all 0.
#   * AMR-WB: ffprobe's duration (1.03125 s, 16500 ticks) is an estimate from the file
#     size; 50 frames decode to 16000 samples.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in ffmpeg ffprobe python3 wavpack jmac; do
  command -v "$tool" >/dev/null || { echo "make-ffmpeg.sh: needs $tool (apt-get install ffmpeg wavpack libjmac-java libvo-amrwbenc0)" >&2; exit 1; }
done

OUT=ffmpeg
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
BXTAG=(-fflags +bitexact -flags +bitexact)   # tagged files: metadata from input 1
export PYTHONDONTWRITEBYTECODE=1

noise() { printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "${2:-0.05}"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
SIX="$(noise 1111111111111)+0.5*sin(2*PI*440*t)|$(noise 2222222222222)+0.5*sin(2*PI*660*t)|$(noise 3333333333333)+0.5*sin(2*PI*880*t)|$(noise 4444444444444)+0.5*sin(2*PI*110*t)|$(noise 5555555555555)+0.5*sin(2*PI*1300*t)|$(noise 6666666666666)+0.5*sin(2*PI*1700*t)"
# Lossless files: the same signal with quieter noise (about 16 LSB), which keeps them small.
QUIET="$(noise 1234567890123 0.0005)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987 0.0005)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"

master() { # name exprs rate frames [layout]
  local name=$1 exprs=$2 rate=$3 frames=$4 layout=${5:-}
  local src="aevalsrc=exprs='$exprs':s=$rate"
  [[ -n $layout ]] && src+=":c=$layout"
  "${FF[@]}" -f lavfi -i "$src,atrim=end_sample=$frames" -c:a pcm_s16le "${BX[@]}" "$TMP/$name.wav"
}
master st44  "$STEREO" 44100 44100          # 1 s stereo
master st48  "$STEREO" 48000 48000          # 1 s stereo
master mo22  "$MONO"   22050 22050          # 1 s mono
master six48 "$SIX"    48000 24000 5.1      # 0.5 s 5.1
master ll44  "$QUIET"  44100 22050          # 0.5 s stereo, lossless codecs
master mo8   "$MONO"   8000  8000           # 1 s mono, RealAudio 1.0
master mo16  "$MONO"   16000 16000          # 1 s mono, AMR-WB

TITLE='Tonearm Test Tone ✓'
ARTIST='Tonearm Fixtures'
# ffmetadata: global title/artist, and two chapters (used by ac3_in_mkv.mka only).
printf ';FFMETADATA1\ntitle=%s\nartist=%s\n' "$TITLE" "$ARTIST" > "$TMP/tags.txt"
{ cat "$TMP/tags.txt"
  printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=First half\n'
  printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=500\nEND=1000\ntitle=Second half\n'
} > "$TMP/chapters.txt"

# ---------------------------------------------------------------------- WMA in ASF
"${FF[@]}" -i "$TMP/st44.wav" -c:a wmav1 -b:a 128k "${BX[@]}" "$OUT/wmav1_stereo_44k.wma"
"${FF[@]}" -i "$TMP/st44.wav" -i "$TMP/tags.txt" -map 0:a -map_metadata 1 -c:a wmav2 -b:a 128k "${BXTAG[@]}" "$OUT/wmav2_stereo_44k.wma"
"${FF[@]}" -i "$TMP/mo22.wav" -c:a wmav2 -b:a 32k "${BX[@]}" "$OUT/wmav2_mono_22k.wma"

# ---------------------------------------------------------------------- DTS
"${FF[@]}" -i "$TMP/six48.wav" -c:a dca -strict -2 -b:a 768k "${BX[@]}" -f dts "$OUT/dts_5.1_48k.dts"

# ---------------------------------------------------------------------- lossless: WavPack, TTA, APE
"${FF[@]}" -i "$TMP/ll44.wav" -c:a wavpack "${BX[@]}" "$OUT/wavpack_stereo_44k.wv"
wavpack -q -m -y "$TMP/ll44.wav" -o "$OUT/wavpack_cli_stereo_44k.wv"
"${FF[@]}" -i "$TMP/ll44.wav" -c:a tta "${BX[@]}" "$OUT/tta_stereo_44k.tta"
jmac c2 "$TMP/ll44.wav" "$OUT/apelike_stereo.ape" > "$TMP/jmac.log" 2>&1 || { cat "$TMP/jmac.log" >&2; exit 1; }

# ---------------------------------------------------------------------- foreign containers
"${FF[@]}" -i "$TMP/st48.wav" -i "$TMP/chapters.txt" -map 0:a -map_metadata 1 -map_chapters 1 \
  -c:a ac3 -b:a 192k "${BXTAG[@]}" "$OUT/ac3_in_mkv.mka"
"${FF[@]}" -i "$TMP/six48.wav" -i "$TMP/tags.txt" -map 0:a -map_metadata 1 \
  -c:a eac3 -b:a 384k "${BXTAG[@]}" "$OUT/eac3_5.1_in_mkv.mka"
"${FF[@]}" -i "$TMP/st44.wav" -c:a mp2 -b:a 128k "${BX[@]}" -f mpegts "$OUT/mp2_in_ts.ts"
"${FF[@]}" -i "$TMP/st44.wav" -c:a aac -b:a 96k "${BX[@]}" -f asf "$OUT/aac_in_asf.asf"
"${FF[@]}" -i "$TMP/st48.wav" -c:a ac3 -b:a 192k "${BX[@]}" -f rm "$OUT/ac3_in_rm.rm"
"${FF[@]}" -i "$TMP/mo8.wav" -c:a real_144 "${BX[@]}" -f rm "$OUT/ra144_in_rm.rm"

# ---------------------------------------------------------------------- AMR-WB
python3 tools/amrwb_encode.py "$TMP/mo16.wav" "$OUT/amrwb_1265_16k.awb" 2

# ---------------------------------------------------------------------- goldens
# ffmpeg_golden.py also checks that ffprobe reads each file and that ffmpeg decodes it
# without an error (-xerror, nothing on stderr); --source: lossless, must decode to it.
gold() { python3 tools/ffmpeg_golden.py "$@"; }
gold "$OUT/wmav1_stereo_44k.wma"
gold "$OUT/wmav2_stereo_44k.wma"
gold "$OUT/wmav2_mono_22k.wma"
gold "$OUT/dts_5.1_48k.dts"
gold "$OUT/wavpack_stereo_44k.wv"     --source "$TMP/ll44.wav"
gold "$OUT/wavpack_cli_stereo_44k.wv" --source "$TMP/ll44.wav"
gold "$OUT/tta_stereo_44k.tta"        --source "$TMP/ll44.wav"
gold "$OUT/apelike_stereo.ape"        --source "$TMP/ll44.wav"
gold "$OUT/ac3_in_mkv.mka"
gold "$OUT/eac3_5.1_in_mkv.mka"
gold "$OUT/mp2_in_ts.ts"
gold "$OUT/aac_in_asf.asf"
gold "$OUT/ac3_in_rm.rm"
gold "$OUT/ra144_in_rm.rm"
gold "$OUT/amrwb_1265_16k.awb"
echo "ffmpeg fixtures: $(du -ch "$OUT" | tail -1)"
