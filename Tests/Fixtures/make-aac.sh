#!/usr/bin/env bash
# Regenerates the AAC decoder fixtures in aacdec/ and their goldens: ffmpeg's native AAC
# encoder (ffmpeg 5.1, Debian 12) in every carrier Tonearm parses. ffmpeg does not mux
# AAC into CAF; the CAF carrier is tested with caf/remux_aac_*.caf (make-caf.sh).
# Deterministic: a second run gives byte-identical files.
#
# Needs: ffmpeg, ffprobe, flac, python3 (stdlib only).
#
# Sources are made by ffmpeg's aevalsrc, 0.3 s or less, below full scale so that no
# decoded sample clips:
#   music      chords that change every 0.075 s (three partials and an overtone each, a
#              different voicing per channel) over low-level noise
#   castanets  sharp clicks (3 ms noise bursts with a fast decay, every 60 ms, offset per
#              channel) over quiet noise: the encoder switches to eight short windows
#   hiss       loud broadband noise with a tone: at a low bit rate the encoder codes the
#              upper bands as noise (PNS)
#   tone       two sines and a little noise (the mono files)
#   surround   a different tone pair per channel, 6 or 8 channels
# Each file gets NAME.json and NAME.golden.flac from tools/aacdec_golden.py: ffmpeg's
# float decode (first 16384 samples, 24-bit), the frame count Tonearm must give, and the
# window sequences this script's own reader finds. See Tests/Fixtures/README.md, "aacdec/".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=aacdec
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/*
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

noise() { # seed level
  printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "$2"
}
chord() { # seed r1 r2 r3 r4 (Hz, one per 0.075 s)
  local f="if(lt(t,0.075),$2,if(lt(t,0.15),$3,if(lt(t,0.225),$4,$5)))"
  printf '%s+0.12*sin(2*PI*%s*t)+0.09*sin(2*PI*%s*1.26*t)+0.08*sin(2*PI*%s*1.498*t)+0.04*sin(4*PI*%s*t)' \
    "$(noise "$1" 0.003)" "$f" "$f" "$f" "$f"
}
MUSIC="$(chord 1234567890123 261.63 220 174.61 196)|$(chord 9876543210987 329.63 277.18 261.63 246.94)"
click() { # seed shift
  printf '%s+if(lt(mod(t+%s,0.06),0.003),0.5*(2*random(1)-1)*exp(-1000*mod(t+%s,0.06)),0)' \
    "$(noise "$1" 0.02)" "$2" "$2"
}
CASTANETS="$(click 1357913579135 0)|$(click 2468024680246 0.02)"
HISS="$(noise 1122334455667 0.25)+0.2*sin(2*PI*700*t)|$(noise 7766554433221 0.25)+0.2*sin(2*PI*900*t)"
TONE="$(noise 4242424242424 0.005)+0.3*sin(2*PI*440*t)+0.1*sin(2*PI*1250*t)"
surround() { # channels
  local e="" sep=""
  for c in $(seq 1 "$1"); do
    e="$e$sep$(noise $((1000 + c)) 0.005)+0.15*sin(2*PI*$((200 + 110 * c))*t)+0.05*sin(2*PI*$((1500 + 370 * c))*t)"
    sep="|"
  done
  printf '%s' "$e"
}

# source NAME EXPRS RATE FRAMES [CHANNEL-LAYOUT]
source_wav() {
  local layout=()
  [ $# -ge 5 ] && layout=(-af "aformat=channel_layouts=$5")
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3:d=1" -af "atrim=end_sample=$4" "${BX[@]}" \
    -c:a pcm_s16le "$TMP/$1.wav"
  if [ $# -ge 5 ]; then
    "${FF[@]}" -i "$TMP/$1.wav" -af "aformat=channel_layouts=$5" "${BX[@]}" -c:a pcm_s16le "$TMP/$1.l.wav"
    mv "$TMP/$1.l.wav" "$TMP/$1.wav"
  fi
  echo "$4" > "$TMP/$1.frames"
}

# enc NAME SOURCE FEATURES -- ffmpeg options (the output format from NAME's extension)
enc() {
  local name=$1 src=$2 features=$3
  shift 4
  "${FF[@]}" -i "$TMP/$src.wav" -c:a aac "$@" "${BX[@]}" "$OUT/$name"
  # shellcheck disable=SC2086
  python3 tools/aacdec_golden.py "$OUT/$name" "$(cat "$TMP/$src.frames")" "ffmpeg -c:a aac $*" $features
}

source_wav music44  "$MUSIC"     44100 13230
source_wav music48  "$MUSIC"     48000 14400
source_wav music32  "$MUSIC"     32000 9600
source_wav music24  "$MUSIC"     24000 7200
source_wav music96  "$MUSIC"     96000 19200
source_wav clicks44 "$CASTANETS" 44100 13230
source_wav hiss44   "$HISS"      44100 13230
source_wav tone8    "$TONE"      8000  2400
source_wav tone16   "$TONE"      16000 4800
source_wav tone22   "$TONE"      22050 6615
source_wav tone64   "$TONE"      64000 12800
source_wav surr51   "$(surround 6)" 48000 9600 5.1
source_wav surr71   "$(surround 8)" 48000 7200 7.1

# Carriers: M4A (gapless: edit list), ADTS, LATM/LOAS, 3GP, fragmented MP4.
enc lc_gapless_44k.m4a    music44  ""          -- -b:a 128k
enc lc_stereo_48k.loas    music48  ""          -- -b:a 96k -aac_pns 0 -f latm
enc lc_stereo_32k.3gp     music32  ""          -- -b:a 64k
enc lc_stereo_24k_frag.mp4 music24 ""          -- -b:a 48k -movflags +empty_moov+default_base_moof -frag_duration 100000
# Every scale factor band table (8; 11.025, 12 and 16; 22.05 and 24; 32; 44.1 and 48; 64;
# 88.2 and 96 kHz), with one rate each, and a few more.
enc lc_mono_8k.aac        tone8    ""          -- -b:a 16k
enc lc_mono_16k.aac       tone16   ""          -- -b:a 32k
enc lc_mono_22k.aac       tone22   ""          -- -b:a 40k
enc lc_mono_64k.aac       tone64   ""          -- -b:a 96k
enc lc_stereo_96k.m4a     music96  ""          -- -b:a 192k
# The tools, each forced on. (PNS noise is random: the seek tests take files without it,
# the LOAS one and lowrate.)
enc lc_transients_44k.aac clicks44 ""          -- -b:a 128k
enc lc_pns_44k.aac        hiss44   "pns"       -- -b:a 48k -aac_pns 1 -aac_is 0
enc lc_intensity_44k.aac  music44  "intensity" -- -b:a 40k -aac_is 1 -aac_pns 0
enc lc_ms_44k.aac         music44  "ms"        -- -b:a 96k -aac_ms 1 -aac_is 0
enc lc_lowrate_44k.m4a    hiss44   "tns"       -- -b:a 24k -aac_tns 1 -aac_pns 0
# Channels: 5.1 (configuration 6) and 7.1 (configuration 7).
enc lc_5.1_48k.m4a        surr51   ""          -- -b:a 256k
enc lc_7.1_48k.aac        surr71   ""          -- -b:a 320k
# A program config element (channel configuration 0) in the AudioSpecificConfig.
enc lc_pce_5.1_48k.m4a    surr51   ""          -- -b:a 256k -aac_pce 1
# MPEG-2 AAC LC (ADTS ID 1).
enc mpeg2_lc_44k.aac      music44  ""          -- -b:a 128k -profile:a mpeg2_aac_low
# AAC Main (prediction) and AAC LTP (long-term prediction): ffmpeg's experimental encoders.
enc main_stereo_44k.aac   music44  "prediction" -- -b:a 128k -profile:a aac_main -aac_pred 1 -aac_pns 0 -strict -2
enc main_transients_44k.aac clicks44 "prediction" -- -b:a 128k -profile:a aac_main -aac_pred 1 -aac_pns 0 -strict -2
# ffmpeg 5.1's LTP encoder writes the object type and its syntax, but its search never
# chose a prediction on any signal tried (tones, chords; -q:a 0.1 to 2): the stream checks
# the LTP syntax, not the prediction itself.
enc ltp_stereo_44k.m4a    music44  ""          -- -b:a 128k -profile:a aac_ltp -aac_ltp 1 -aac_pns 0 -strict -2

# Coupling channel elements, which ffmpeg's encoder never writes: forged from lc_mono_8k's
# frames (tools/aac_forge_cce.py), one per coupling point, with a PCE that lists the CCE,
# and remuxed into M4A (ffmpeg's aac_adtstoasc moves the PCE into the config).
for mode in before-tns after-tns independent; do
  python3 tools/aac_forge_cce.py "$OUT/lc_mono_8k.aac" "$TMP/cce.aac" "$mode"
  "${FF[@]}" -i "$TMP/cce.aac" -c copy "${BX[@]}" "$OUT/forged_cce_$mode.m4a"
  python3 tools/aacdec_golden.py "$OUT/forged_cce_$mode.m4a" 4096 "tools/aac_forge_cce.py lc_mono_8k.aac $mode" cce
done

# LTP prediction, which ffmpeg's LTP encoder never chose: forged into a mono LTP stream's
# long-window frames (tools/aac_forge_ltp.py; ADTS carries object type 4 as profile 3).
"${FF[@]}" -i "$TMP/tone22.wav" -c:a aac -b:a 48k -profile:a aac_ltp -aac_ltp 1 -aac_pns 0 -strict -2 "${BX[@]}" \
  -f adts "$TMP/ltp.aac"
python3 tools/aac_forge_ltp.py "$TMP/ltp.aac" "$OUT/forged_ltp_mono_22k.aac"
python3 tools/aacdec_golden.py "$OUT/forged_ltp_mono_22k.aac" 6615 "tools/aac_forge_ltp.py (ffmpeg -c:a aac -b:a 48k -profile:a aac_ltp)" ltp

# Pulse data, and in-band program config and data stream elements, which ffmpeg's encoder
# never writes: forged into lc_mono_22k's frames (tools/aac_forge_elements.py).
for mode in pulse dse-pce; do
  python3 tools/aac_forge_elements.py "$OUT/lc_mono_22k.aac" "$OUT/forged_${mode}_mono_22k.aac" "$mode"
  python3 tools/aacdec_golden.py "$OUT/forged_${mode}_mono_22k.aac" 6615 \
    "tools/aac_forge_elements.py (ffmpeg -c:a aac -b:a 40k) $mode" ${mode/-/ }
done

du -ch "$OUT"/* | tail -n 1
