#!/usr/bin/env bash
# Regenerates the Opus decoder fixtures in opus/: Ogg Opus files from opusenc (opus-tools)
# and ffmpeg's libopus encoder, covering CELT-only frames of 2.5 to 20 ms and multi-frame
# packets of 40 and 60 ms (code 3), CBR and VBR, low and high rates, mono, stereo, 5.1
# (mapping family 1) and family 255, SILK narrowband and wideband, hybrid, and a SILK file
# with in-band FEC (LBRR). OpusDecoderTests decodes each and compares with libopus's float
# decoder (ffmpeg -request_sample_fmt flt -c:a libopus), run by the test itself.
#
# Deterministic (opus-tools 0.2 with libopus 1.3.1, ffmpeg 5.1 on Debian 12): fixed
# serial numbers, bitexact muxing, sources from aevalsrc with fixed noise seeds.
#
# There is no speech corpus here: the "speech-like" source is a harmonic series on a
# gliding 110–170 Hz fundamental, amplitude-modulated at a syllable rate, plus a little
# noise, which is enough to make the encoder choose SILK and hybrid modes.
#
# Needs: ffmpeg (with libopus), opusenc.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=opus
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "$2"; }
MUSIC_L="$(noise 1234567890123 0.03)+0.4*sin(2*PI*440*t)+0.2*sin(2*PI*1320*t)+0.1*sin(2*PI*(2000+3000*t)*t)"
MUSIC_R="$(noise 9876543210987 0.03)+0.3*sin(2*PI*660*t)+0.2*sin(2*PI*3100*t)+0.05*sin(2*PI*9000*t)"
# Speech-like: harmonics of a gliding fundamental, syllabic envelope, a little noise.
F0="(140+30*sin(2*PI*1.3*t))"
SPEECH="$(noise 4242424242424 0.01)+(0.25*sin(2*PI*$F0*t)+0.2*sin(4*PI*$F0*t)+0.15*sin(6*PI*$F0*t)+0.08*sin(10*PI*$F0*t)+0.04*sin(16*PI*$F0*t))*(0.55+0.45*sin(2*PI*4*t))"
source_wav() { # name exprs seconds
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=48000:d=$3" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}
source_wav stereo "$MUSIC_L|$MUSIC_R" 1.5
# Clicks and bursts over quiet tones: transient frames (short MDCTs, anti-collapse).
CLICKS_L="$(noise 77 0)+if(lt(mod(t,0.21),0.003),0.9*(2*random(0)-1),0.01*(2*random(0)-1))+0.2*sin(2*PI*330*t)*lt(mod(t,0.5),0.25)"
CLICKS_R="if(lt(mod(t+0.05,0.17),0.002),0.8*sin(2*PI*5000*t),0.02*sin(2*PI*880*t))"
source_wav clicks "$CLICKS_L|$CLICKS_R" 1.5
source_wav mono "$MUSIC_L" 1.5
source_wav speech "$SPEECH" 2
source_wav surround "$MUSIC_L|$MUSIC_R|0.3*sin(2*PI*220*t)|$(noise 111 0.05)+0.2*sin(2*PI*500*t)|$(noise 222 0.05)+0.2*sin(2*PI*700*t)|0.4*sin(2*PI*60*t)" 1

ffopus() { # name source args...
  local name=$1 src=$2; shift 2
  "${FF[@]}" -i "$TMP/$src.wav" -c:a libopus "$@" "${BX[@]}" "$OUT/$name.opus"
}
# CELT only (-application lowdelay), every frame size; 40 and 60 ms are code-3 packets.
ffopus celt-2.5ms-stereo-cbr stereo -application lowdelay -frame_duration 2.5 -vbr off -b:a 128k
ffopus celt-5ms-mono-vbr mono -application lowdelay -frame_duration 5 -b:a 48k
ffopus celt-10ms-stereo-vbr stereo -application lowdelay -frame_duration 10 -b:a 96k
ffopus celt-20ms-stereo-cbr-low stereo -application lowdelay -frame_duration 20 -vbr off -b:a 24k
ffopus celt-20ms-stereo-vbr-high stereo -application lowdelay -frame_duration 20 -b:a 256k
ffopus celt-20ms-mono-low mono -application lowdelay -frame_duration 20 -b:a 12k
ffopus celt-20ms-transients-low clicks -application lowdelay -frame_duration 20 -b:a 32k
ffopus celt-20ms-transients-high clicks -application lowdelay -frame_duration 20 -b:a 160k
ffopus celt-40ms-stereo-cbr stereo -application lowdelay -frame_duration 40 -vbr off -b:a 64k
ffopus celt-60ms-mono-cvbr mono -application lowdelay -frame_duration 60 -vbr constrained -b:a 32k
# Surround: 5.1 in mapping family 1 (4 streams, 2 coupled), and family 255.
ffopus celt-5.1-family1 surround -application lowdelay -b:a 192k -mapping_family 1
ffopus celt-5.1-family255 surround -application lowdelay -b:a 192k -mapping_family 255
# opusenc: 2.5 ms frames are always CELT; SILK and hybrid from the speech-like source.
opusenc --quiet --serial 101 --framesize 2.5 --hard-cbr --bitrate 64 "$TMP/mono.wav" "$OUT/opusenc-celt-2.5ms-mono.opus"
opusenc --quiet --serial 102 --bitrate 8 --max-delay 0 "$TMP/speech.wav" "$OUT/silk-nb.opus"
opusenc --quiet --serial 103 --bitrate 10 --max-delay 0 "$TMP/speech.wav" "$OUT/silk-wb.opus"
opusenc --quiet --serial 104 --bitrate 28 --max-delay 0 "$TMP/speech.wav" "$OUT/hybrid-swb.opus"
opusenc --quiet --serial 105 --bitrate 14 --expect-loss 20 --max-delay 0 "$TMP/speech.wav" "$OUT/silk-lbrr.opus"
opusenc --quiet --serial 106 --bitrate 40 --framesize 60 --max-delay 0 "$TMP/speech.wav" "$OUT/hybrid-60ms.opus"
# Speech, then music, then speech at a middle rate: the encoder switches modes
# (transitions and redundant CELT frames, RFC 6716 §4.5).
"${FF[@]}" -i "$TMP/speech.wav" -i "$TMP/mono.wav" -i "$TMP/speech.wav" -filter_complex "[0][1][2]concat=n=3:v=0:a=1" \
  -c:a pcm_s16le "${BX[@]}" "$TMP/mixed.wav"
opusenc --quiet --serial 107 --bitrate 20 --max-delay 0 "$TMP/mixed.wav" "$OUT/mixed-modes.opus"

ls -l "$OUT"
