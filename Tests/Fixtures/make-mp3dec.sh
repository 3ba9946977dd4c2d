#!/usr/bin/env bash
# Regenerates the MPEG audio decoder fixtures in mp3dec/ (Layer II and III; the Layer I
# files, layer1_*.mp1, come from make-mp1.py and the forged_* ones from make-mp3forged.py,
# and are left alone) and their goldens.
# Deterministic: a second run gives byte-identical files (LAME 3.100, TwoLAME 0.4.0,
# ffmpeg 5.1, flac 1.4, Debian 12).
#
# Needs: ffmpeg, ffprobe, lame, twolame, mpg123, flac, python3 (stdlib only).
#
# Sources are made by ffmpeg's aevalsrc, about 1 s each, below full scale so no decoded
# sample clips:
#   music      chords that change every 0.25 s (three partials and an overtone each, a
#              different voicing per channel) over low-level noise
#   castanets  sharp clicks (3 ms noise bursts with a fast decay, 8 a second, offset per
#              channel) over quiet noise: LAME switches to short blocks on every click
#   tone       two sines and a little noise (the low-rate and mono files)
# Each file gets NAME.json and NAME.golden.flac from tools/mp3dec_golden.py: the frame
# count of ffmpeg's float decoder (mp3float, mp2float) after gapless trimming, mpg123's count
# and distance, the first 16384 samples (8192 stereo frames) of ffmpeg's f32le rounded to
# 24 bits, and what the script's own frame and side-info reader finds in the bitstream
# (modes, block types, frames that use the bit reservoir). See Tests/Fixtures/README.md,
# "mp3dec/".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=mp3dec
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
# Only this script's files: layer1_* (make-mp1.py) and forged_* (make-mp3forged.py) stay.
find "$OUT" -maxdepth 1 -type f \( -name 'lame_*' -o -name 'twolame_*' -o -name 'ffmpeg_*' \) -delete
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
LAME=(lame --quiet --noreplaygain)

noise() { # seed level
  printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "$2"
}
# A chord per quarter second: root r, major third, fifth, and the octave's overtone.
chord() { # seed r1 r2 r3 r4 (Hz, one per quarter second)
  local f="if(lt(t,0.25),$2,if(lt(t,0.5),$3,if(lt(t,0.75),$4,$5)))"
  printf '%s+0.12*sin(2*PI*%s*t)+0.09*sin(2*PI*%s*1.26*t)+0.08*sin(2*PI*%s*1.498*t)+0.04*sin(4*PI*%s*t)' \
    "$(noise "$1" 0.01)" "$f" "$f" "$f" "$f"
}
MUSIC="$(chord 1234567890123 261.63 220 174.61 196)|$(chord 9876543210987 329.63 277.18 261.63 246.94)"
# Clicks: 3 ms bursts every 125 ms (shifted 40 ms on the right), decaying in about 1 ms.
click() { # seed shift
  printf '%s+if(lt(mod(t+%s,0.125),0.003),0.5*(2*random(1)-1)*exp(-1000*mod(t+%s,0.125)),0)' \
    "$(noise "$1" 0.02)" "$2" "$2"
}
CASTANETS="$(click 1357913579135 0)|$(click 2468024680246 0.04)"
TONE="$(noise 4242424242424 0.005)+0.3*sin(2*PI*440*t)+0.1*sin(2*PI*1250*t)"
TONE2="$TONE|$(noise 3141592653589 0.005)+0.3*sin(2*PI*550*t)+0.1*sin(2*PI*1700*t)"

master() { # name exprs rate seconds
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3:d=$4" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}
master music     "$MUSIC"     44100 1
master castanets "$CASTANETS" 44100 1
master tone      "$TONE"      44100 1
master tone2     "$TONE2"     44100 1
master music48   "$MUSIC"     48000 1
master music32   "$MUSIC"     32000 1
master music22   "$MUSIC"     22050 1
master music24   "$MUSIC"     24000 1
master music16   "$MUSIC"     16000 1
master music11   "$MUSIC"     11025 1
master music8    "$MUSIC"     8000  1
# The --nogap pair: one 1.6 s signal cut at 0.8 s (35280 frames, not a multiple of 1152).
master long      "$MUSIC"     44100 1.6
"${FF[@]}" -i "$TMP/long.wav" -af atrim=end_sample=35280 "${BX[@]}" "$TMP/nogap_a.wav"
"${FF[@]}" -i "$TMP/long.wav" -af atrim=start_sample=35280 "${BX[@]}" "$TMP/nogap_b.wav"

golden() { # file encoder-command
  python3 tools/mp3dec_golden.py "$OUT/$1" "$2"
}
lame3() { # name source kHz options... (--resample kHz: LAME would pick a lower output
  local name=$1 src=$2 khz=$3 # rate for low bit rates on its own)
  shift 3
  "${LAME[@]}" "$@" --resample "$khz" "$TMP/$src.wav" "$OUT/$name.mp3"
  golden "$name.mp3" "lame $* --resample $khz"
}

# Layer III, LAME.
lame3 lame_cbr128_js        music     44.1   -b 128 -m j
lame3 lame_cbr320_stereo    music     44.1   -b 320 -m s
lame3 lame_vbr_v2           music     44.1   -V 2
lame3 lame_mono_64k         tone      44.1   -b 64 -m m
lame3 lame_dual_mono        tone2     44.1   -b 128 -m d
lame3 lame_ms_forced        music     44.1   -b 128 -m f
lame3 lame_crc              music     44.1   -b 128 -p
lame3 lame_transients       castanets 44.1   -b 128 -m j
lame3 lame_transients_v0    castanets 44.1   -V 0
# 32 kbit/s stereo at 44.1 kHz: 104-byte frames, so granules borrow from the reservoir all
# the time. Frames this small have no room for LAME's Info tag (nor those of 16k, 24k and
# 8k below): ffmpeg then trims nothing and gives the encoder delay and padding too.
lame3 lame_cbr32_reservoir  music     44.1   -b 32
lame3 lame_mpeg1_48k        music48   48     -b 160
lame3 lame_mpeg1_32k        music32   32     -b 96
lame3 lame_mpeg2_22k_64k    music22   22.05  -b 64
lame3 lame_mpeg2_24k        music24   24     -b 48 -m j
lame3 lame_mpeg2_16k        music16   16     -b 32
lame3 lame_mpeg25_11k       music11   11.025 -b 32
lame3 lame_mpeg25_8k        music8    8      -b 16 -m m
# Gapless pair: one LAME run over both halves (LAME's --nogap keeps its state across files;
# --nogaptags writes each file's LAME tag with its own delay and padding).
"${LAME[@]}" -b 128 --nogaptags --nogapout "$TMP" --nogap "$TMP/nogap_a.wav" "$TMP/nogap_b.wav"
mv "$TMP/nogap_a.mp3" "$OUT/lame_nogap_a.mp3"
mv "$TMP/nogap_b.mp3" "$OUT/lame_nogap_b.mp3"
golden lame_nogap_a.mp3 "lame -b 128 --nogaptags --nogap nogap_a.wav nogap_b.wav (first)"
golden lame_nogap_b.mp3 "lame -b 128 --nogaptags --nogap nogap_a.wav nogap_b.wav (second)"

# Layer II, TwoLAME (-p: CRC) and ffmpeg's encoder.
two() { # name source options...
  local name=$1 src=$2
  shift 2
  twolame --quiet "$@" "$TMP/$src.wav" "$OUT/$name.mp2"
  golden "$name.mp2" "twolame $*"
}
two twolame_stereo_crc    music  -m s -b 192 -p
two twolame_joint         music  -m j -b 128
two twolame_mono          tone   -m m -b 96
two twolame_dual_crc      tone2  -m d -b 192 -p
two twolame_mpeg2_24k     music24 -m j -b 64
two twolame_mpeg2_16k_crc music16 -m s -b 48 -p
"${FF[@]}" -i "$TMP/music.wav" -c:a mp2 -b:a 160k "${BX[@]}" "$OUT/ffmpeg_mp2.mp2"
golden ffmpeg_mp2.mp2 "ffmpeg -c:a mp2 -b:a 160k"

du -ch "$OUT"/* | tail -n 1
