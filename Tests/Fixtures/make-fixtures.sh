#!/usr/bin/env bash
# Regenerates the PCM-family test fixtures in pcm/ and a golden NAME.json beside
# each one. Idempotent and deterministic: running it twice gives byte-identical
# files (checked when it was written, with ffmpeg 5.1.x and SoX 14.4.2 on Debian 12).
#
# Needs: ffmpeg, ffprobe, sox, python3 (stdlib only).
#
# Every fixture is made by a real writer (ffmpeg or SoX); the two "edited"
# AIFFs are derived from an ffmpeg AIFF by the small committed tools in tools/.
# The goldens hold oracle values from ffprobe/ffmpeg (see tools/golden.py).
#
# Not made (no available tool can write them):
#   wav_s24_in_32_extensible.wav - 24 valid bits in 32-bit containers. ffmpeg's
#     WAV muxer always writes wValidBitsPerSample = container size (pcm_s32le
#     with -bits_per_raw_sample 24 still says 32, and the samples use all 32
#     bits); pcm_s24le is packed 3 bytes. SoX likewise writes valid = container.
#
# Surprises found in the output (also in README.md):
#   * Piped WAV (wav_streamed.wav): ffmpeg writes 0xFFFFFFFF as both the RIFF
#     size and the data size.
#   * Piped AU (au_unknown_size.au): data size is 0xFFFFFFFF (the AU "unknown"
#     value); ffmpeg's AU header is 32 bytes (24 + 8 zero annotation bytes).
#   * Piped CAF (caf_streamed.caf): the data chunk size is -1 (all 0xFF).
#   * ffmpeg's WAV muxer writes LIST/INFO BEFORE data; the chunk after data in
#     wav_odd_u8_mono.wav is a 'levl' (peak envelope) chunk from -write_peak.
#   * ffmpeg's ADPCM WAVs carry a fact chunk holding the PADDED frame count
#     (whole blocks), whereas SoX's hold the true count.
#   * ffmpeg's W64 data chunk size includes the padding to 8 bytes, so the
#     file decodes to one extra (zero) frame; SoX/libsndfile's W64 does not.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=pcm
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# pcm/ is wholly generated: start from empty so no stale fixture survives.
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
# No encoder version strings, no metadata copied from the input, no random dither.
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
SOX=(sox -R -D)   # -R: repeatable (fixed seed and time stamps), -D: no dither
export PYTHONDONTWRITEBYTECODE=1

# ---------------------------------------------------------------------------
# Deterministic sources (f64 WAV for ffmpeg, raw f64le for SoX).
# Each channel is a different mix of a 440 Hz and a 1.3 kHz sine plus a little
# pseudo-random noise from a fixed seed (aevalsrc's random() with the state set
# by st() on sample 0), so that every sample value (and channel order) matters.
# ---------------------------------------------------------------------------
noise() { # $1 = seed
  printf '0*if(eq(n,0),st(0,%s),0)+0.05*(2*random(0)-1)' "$1"
}
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
SIX="$(noise 1111111111111)+0.5*sin(2*PI*440*t)|$(noise 2222222222222)+0.5*sin(2*PI*660*t)|$(noise 3333333333333)+0.5*sin(2*PI*880*t)|$(noise 4444444444444)+0.5*sin(2*PI*110*t)|$(noise 5555555555555)+0.5*sin(2*PI*1300*t)|$(noise 6666666666666)+0.5*sin(2*PI*1700*t)"

master() { # name exprs rate frames [layout]
  local name=$1 exprs=$2 rate=$3 frames=$4 layout=${5:-}
  local src="aevalsrc=exprs='$exprs':s=$rate"
  [[ -n $layout ]] && src+=":c=$layout"
  "${FF[@]}" -f lavfi -i "$src,atrim=end_sample=$frames" -c:a pcm_f64le "${BX[@]}" "$TMP/$name.wav"
  "${FF[@]}" -i "$TMP/$name.wav" -f f64le "${BX[@]}" "$TMP/$name.f64"
}
master st22 "$STEREO" 22050 5513          # 0.25 s stereo (odd frame count on purpose)
master st44 "$STEREO" 44100 11025         # 0.25 s stereo
master mo22 "$MONO"   22050 5513          # 0.25 s mono
master mo16 "$MONO"   16000 16000         # exactly 1.0 s mono
master mo8  "$MONO"   8000  4001          # 0.5 s mono, odd sample count
master six  "$SIX"    16000 4000  5.1     # 0.25 s, FL FR FC LFE BL BR

golden() { # file fileType formatID [--info k=v ...]
  local f=$1 ft=$2 fid=$3
  shift 3
  python3 tools/golden.py "$OUT/$f" --file-type "$ft" --format-id "$fid" "$@"
}

# ffmpeg encode: name master codec [extra ffmpeg output options...]
ffenc() {
  local name=$1 m=$2 codec=$3
  shift 3
  "${FF[@]}" -i "$TMP/$m.wav" -c:a "$codec" "${BX[@]}" "$@" "$OUT/$name"
}
# ffmpeg encode to a pipe (non-seekable output): name master codec format
ffpipe() {
  local name=$1 m=$2 codec=$3 fmt=$4
  "${FF[@]}" -i "$TMP/$m.wav" -c:a "$codec" "${BX[@]}" -f "$fmt" - > "$OUT/$name"
}
# SoX encode from the raw f64 master: name master rate channels [sox output options...]
soxenc() {
  local name=$1 m=$2 rate=$3 ch=$4
  shift 4
  "${SOX[@]}" -t f64 -r "$rate" -c "$ch" -L "$TMP/$m.f64" "$@" "$OUT/$name"
}

# --------------------------------------------------------------------- WAVE
ffenc wav_s16le_mono_16k.wav mo16 pcm_s16le;      golden wav_s16le_mono_16k.wav WAVE lpcm
ffenc wav_u8_stereo.wav      st22 pcm_u8;         golden wav_u8_stereo.wav      WAVE lpcm
ffenc wav_s24le_stereo.wav   st22 pcm_s24le;      golden wav_s24le_stereo.wav   WAVE lpcm
ffenc wav_s32le_stereo.wav   st22 pcm_s32le;      golden wav_s32le_stereo.wav   WAVE lpcm
ffenc wav_f32le_stereo.wav   st22 pcm_f32le;      golden wav_f32le_stereo.wav   WAVE lpcm
ffenc wav_f64le_mono.wav     mo22 pcm_f64le;      golden wav_f64le_mono.wav     WAVE lpcm
ffenc wav_s16le_5.1.wav      six  pcm_s16le -channel_layout 5.1
golden wav_s16le_5.1.wav WAVE lpcm
# wav_s24_in_32_extensible.wav: skipped, see the note at the top.
ffenc wav_ulaw.wav           st22 pcm_mulaw;      golden wav_ulaw.wav           WAVE ulaw
ffenc wav_alaw.wav           st22 pcm_alaw;       golden wav_alaw.wav           WAVE alaw
ffenc wav_ima_adpcm.wav      st22 adpcm_ima_wav;  golden wav_ima_adpcm.wav      WAVE 0x6D730011
ffenc wav_ima_adpcm_mono.wav mo22 adpcm_ima_wav;  golden wav_ima_adpcm_mono.wav WAVE 0x6D730011
ffenc wav_ms_adpcm.wav       st22 adpcm_ms;       golden wav_ms_adpcm.wav       WAVE 0x6D730002

INFO=(title="Tonearm Test Tone" artist="Tonearm Fixtures" album="PCM Family" comment="440 Hz + 1.3 kHz + noise")
meta=(); ginfo=()
for kv in "${INFO[@]}"; do meta+=(-metadata "$kv"); ginfo+=(--info "$kv"); done
# ffmpeg writes LIST/INFO (INAM, IART, IPRD, ICMT) between fmt and data.
ffenc wav_list_info.wav st22 pcm_s16le "${meta[@]}"
golden wav_list_info.wav WAVE lpcm "${ginfo[@]}"

# 4001 one-byte samples: the data chunk is odd-sized and followed by a pad byte.
# ffmpeg puts LIST before data, so -write_peak adds a 'levl' chunk AFTER the
# data chunk (and its pad byte) to have a real chunk there to skip.
ffenc wav_odd_u8_mono.wav mo8 pcm_u8 -metadata title=odd -write_peak on -peak_format 1
golden wav_odd_u8_mono.wav WAVE lpcm --info title=odd

# Written to a pipe: ffmpeg cannot seek back, so RIFF size and data size stay
# 0xFFFFFFFF (checked with xxd: "RIFF ffff ffff", "data ffff ffff").
ffpipe wav_streamed.wav st22 pcm_s16le wav;       golden wav_streamed.wav       WAVE lpcm

# RF64 (ds64 chunk; RIFF and data sizes are 0xFFFFFFFF) and Sony Wave64.
ffenc rf64_s16le.wav st22 pcm_s16le -rf64 always; golden rf64_s16le.wav RF64 lpcm
# ffmpeg's W64 muxer pads the data chunk to a multiple of 8 bytes and counts the
# padding in the chunk size (22052 data bytes -> size 24 + 22056), so a reader
# that trusts the size (ffmpeg itself included) sees 5514 frames, the last one
# zero. The golden records what ffmpeg decodes (5514).
ffenc w64_s16le.w64  st22 pcm_s16le -f w64;       golden w64_s16le.w64  W64f lpcm

# ------------------------------------------------------------------ AIFF/AIFC
# ffmpeg writes plain AIFF (COMM, SSND) for big-endian integer PCM and AIFC
# (FVER, COMM, SSND, empty compression name) for everything else.
ffenc aiff_s16be.aiff st22 pcm_s16be    -f aiff;  golden aiff_s16be.aiff AIFF lpcm
ffenc aiff_s24be.aiff st22 pcm_s24be    -f aiff;  golden aiff_s24be.aiff AIFF lpcm
ffenc aifc_sowt.aifc  st22 pcm_s16le    -f aiff;  golden aifc_sowt.aifc  AIFC lpcm
ffenc aifc_fl32.aifc  st22 pcm_f32be    -f aiff;  golden aifc_fl32.aifc  AIFC lpcm
ffenc aifc_fl64.aifc  mo22 pcm_f64be    -f aiff;  golden aifc_fl64.aifc  AIFC lpcm
ffenc aifc_ulaw.aifc  st22 pcm_mulaw    -f aiff;  golden aifc_ulaw.aifc  AIFC ulaw
ffenc aifc_alaw.aifc  st44 pcm_alaw     -f aiff;  golden aifc_alaw.aifc  AIFC alaw
# COMM numSampleFrames is the number of 64-frame packets here (Apple's convention).
ffenc aifc_ima4.aifc  st22 adpcm_ima_qt -f aiff;  golden aifc_ima4.aifc  AIFC ima4
python3 tools/reorder_aiff.py "$OUT/aiff_s16be.aiff" "$OUT/aiff_comm_after_ssnd.aiff"
golden aiff_comm_after_ssnd.aiff AIFF lpcm
python3 tools/add_aiff_markers.py "$OUT/aiff_s16be.aiff" "$OUT/aiff_markers.aiff"
golden aiff_markers.aiff AIFF lpcm

# ------------------------------------------------------------------------ CAF
ffenc caf_s16le.caf st22 pcm_s16le    -f caf;     golden caf_s16le.caf caff lpcm
ffenc caf_f32be.caf st22 pcm_f32be    -f caf;     golden caf_f32be.caf caff lpcm
ffenc caf_s24be.caf st22 pcm_s24be    -f caf;     golden caf_s24be.caf caff lpcm
ffenc caf_ulaw.caf  st44 pcm_mulaw    -f caf;     golden caf_ulaw.caf  caff ulaw
ffenc caf_alaw.caf  st22 pcm_alaw     -f caf;     golden caf_alaw.caf  caff alaw
ffenc caf_ima4.caf  st22 adpcm_ima_qt -f caf;     golden caf_ima4.caf  caff ima4
# Piped: the data chunk size is -1 ("runs to end of file").
ffpipe caf_streamed.caf mo22 pcm_s16le caf;       golden caf_streamed.caf caff lpcm

# ------------------------------------------------------------------- NeXT/Sun
ffenc au_s16be.au st22 pcm_s16be -f au;           golden au_s16be.au NeXT lpcm
ffenc au_ulaw.au  mo8  pcm_mulaw -f au;           golden au_ulaw.au  NeXT ulaw
ffenc au_f32be.au mo22 pcm_f32be -f au;           golden au_f32be.au NeXT lpcm
# Piped: the data size field stays 0xFFFFFFFF (checked with xxd).
ffpipe au_unknown_size.au mo22 pcm_s16be au;      golden au_unknown_size.au NeXT lpcm

# ------------------------------------------------------------------------ SoX
# A second, independent writer. SoX's AIFF carries a COMT chunk ("Processed by
# SoX", fixed time stamp under -R) before COMM; its AU has that text as the
# annotation; its WAVs for >16 bits are WAVE_FORMAT_EXTENSIBLE with a fact
# chunk even for PCM; its ADPCM WAVs use other block sizes than ffmpeg's and a
# fact chunk with the true (unpadded) frame count.
soxenc sox_s16.aiff             st22 22050 2 -b 16 -e signed-integer;  golden sox_s16.aiff AIFF lpcm
soxenc sox_u8.wav               st22 22050 2 -b 8 -e unsigned-integer; golden sox_u8.wav   WAVE lpcm
soxenc sox_s24_extensible.wav   st22 22050 2 -b 24 -e signed-integer;  golden sox_s24_extensible.wav WAVE lpcm
soxenc sox_ima_adpcm.wav        st22 22050 2 -e ima-adpcm;             golden sox_ima_adpcm.wav WAVE 0x6D730011
soxenc sox_ms_adpcm.wav         st22 22050 2 -e ms-adpcm;              golden sox_ms_adpcm.wav  WAVE 0x6D730002
soxenc sox_ulaw.au              mo8  8000  1 -b 8 -e mu-law;           golden sox_ulaw.au  NeXT ulaw
# SoX writes W64 and CAF through libsndfile: its W64 data chunk size is exact
# (ffmpeg's includes the 8-byte alignment padding, see w64_s16le.w64), and its
# CAF is big-endian lpcm (formatFlags 0) with a 4 KB 'free' chunk before data.
soxenc sox_s16le.w64            st22 22050 2 -b 16 -e signed-integer;  golden sox_s16le.w64 W64f lpcm
soxenc sox_s16be.caf            st22 22050 2 -b 16 -e signed-integer;  golden sox_s16be.caf caff lpcm

echo "fixtures: $(ls "$OUT" | grep -vc '\.json$') files, $(du -sh . | cut -f1) total in $(pwd)"
