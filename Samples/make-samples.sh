#!/usr/bin/env bash
# Makes the bundled samples that README's first command and `tonearm demo` use.
# Real encoders (ffmpeg, lame), deterministic output.
set -euo pipefail
cd "$(dirname "$0")"
src='aevalsrc=0.4*sin(2*PI*440*t)+0.2*sin(2*PI*660*t)|0.4*sin(2*PI*554.37*t)+0.2*sin(2*PI*880*t):s=44100:d=0.5'
bitexact=(-fflags +bitexact -flags +bitexact -map_metadata -1)
ffmpeg -v error -y -f lavfi -i "$src" "${bitexact[@]}" -c:a pcm_s16le -metadata title="Tonearm sample" tone-stereo.wav
ffmpeg -v error -y -f lavfi -i "$src" "${bitexact[@]}" -c:a adpcm_ima_qt -f caf tone-ima4.caf
ffmpeg -v error -y -f lavfi -i "$src" "${bitexact[@]}" -ar 16000 -ac 1 -c:a pcm_s16be tone-mono-16k.aiff
lame --quiet --noreplaygain -b 128 --tt "Tonearm sample" tone-stereo.wav tone-stereo.mp3
ls -l tone-*
