#!/usr/bin/env bash
# Regenerates the Vorbis decoder fixtures in vorbis/ and a golden NAME.json beside each.
# Deterministic for a given toolset (checked with ffmpeg 5.1.x and vorbis-tools 1.4.2 on
# Debian 12): sources come from ffmpeg's lavfi with fixed seeds.
#
# Needs: ffmpeg and ffprobe, oggenc (vorbis-tools), python3 (stdlib only).
#
# The set covers two encoders (libvorbis through oggenc, and ffmpeg's own `vorbis`
# encoder, whose setup headers differ: residue type, books, floor layouts), qualities −1,
# 0, 5 and 10, input rates 8 to 96 kHz, mono, stereo, 3, 5.1 and 7.1 channels, and a file
# of clicks over a quiet tone, where libvorbis switches to short blocks.
#
# Each golden holds the rate, channels, the frame count oggdec (libvorbis) decodes, the
# count ffmpeg decodes (ffmpeg 5.1 leaves 128 frames of end padding on q-1-mono-8k, where
# oggdec trims by the last granule position as Tonearm's parser does), which float decoder
# is the oracle, and the SHA-256 of its f32le decode, for reference. The tests compare
# Tonearm's output with that decoder's and with oggdec's live.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=vorbis
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "$2"; }
# A music-like mixture: a few partials with vibrato and tremolo, plus a little noise.
mix() { # seed base-frequency
  printf '%s+0.25*sin(2*PI*%s*t+2*sin(2*PI*5*t))*(0.6+0.4*sin(2*PI*0.7*t))+0.15*sin(2*PI*%s*1.5*t)+0.08*sin(2*PI*%s*4.1*t)' \
    "$(noise "$1" 0.03)" "$2" "$2" "$2"
}
source_wav() { # name exprs rate seconds
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3:d=$4" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}

# oggenc writes no time-dependent data with these options (no comments but its vendor string).
enc() { # name source quality
  oggenc -Q --serial 1 -q "$3" -o "$OUT/$1.ogg" "$TMP/$2.wav"
}

source_wav mono8 "$(mix 1111 300)" 8000 2
source_wav st22 "$(mix 2222 440)|$(mix 3333 550)" 22050 1.5
source_wav st44 "$(mix 4444 220)|$(mix 5555 330)" 44100 1.5
source_wav st48 "$(mix 6666 660)|$(mix 7777 770)" 48000 1
source_wav mono96 "$(mix 8888 1000)+0.1*sin(2*PI*(200+8000*t)*t)" 96000 1
source_wav ch3 "$(mix 1212 200)|$(mix 1313 300)|$(mix 1414 400)" 44100 1
source_wav ch6 "$(mix 2121 200)|$(mix 2323 300)|$(mix 2424 400)|$(mix 2525 500)|$(mix 2626 600)|0.3*sin(2*PI*60*t)" 48000 1
source_wav ch8 "$(mix 3131 200)|$(mix 3232 250)|$(mix 3333 300)|$(mix 3434 350)|$(mix 3535 400)|$(mix 3636 450)|$(mix 3737 500)|0.3*sin(2*PI*50*t)" 48000 1
# Clicks every 0.25 s (a decaying burst of noise) over a quiet tone: transients that make
# libvorbis switch to short blocks.
CLICK="0.05*sin(2*PI*500*t)+0.8*exp(-200*mod(t,0.25))*(2*random(0)-1)"
source_wav clicks "$CLICK|0.05*sin(2*PI*700*t)+0.8*exp(-150*mod(t+0.1,0.25))*(2*random(1)-1)" 44100 1.5

enc q-1-mono-8k mono8 -1
enc q0-stereo-22k st22 0
enc q5-stereo-44k st44 5
enc q10-stereo-48k st48 10
enc q2-mono-96k mono96 2
enc q4-3ch-44k ch3 4
enc q3-5.1-48k ch6 3
enc q1-7.1-48k ch8 1
enc q5-clicks-44k clicks 5
# ffmpeg's own encoder (-strict -2: it is experimental), a second encoder's choices.
"${FF[@]}" -i "$TMP/st44.wav" -c:a vorbis -strict -2 -ac 2 "${BX[@]}" "$OUT/ffvorbis-stereo-44k.ogg"
# Vorbis in MP4 (object type 0xDD, the headers Xiph-laced in the esds; ffmpeg's muxer calls
# it experimental): the q5 file's packets, remuxed. Its edit list trims the first packet's
# duration, which a Vorbis decoder never outputs; the tests expect the Ogg file's decode.
# The moov goes first (faststart), so that it also plays as a live stream.
"${FF[@]}" -i "$OUT/q5-stereo-44k.ogg" -c copy -strict -2 -movflags +faststart "${BX[@]}" "$OUT/q5-stereo-44k.mp4"

for f in "$OUT"/*.ogg; do
  n=${f%.ogg}
  # ffmpeg 5.1's native decoder disagrees with libvorbis (by up to 0.39, in 9 of the 65
  # blocks, angle channel only) on ffmpeg's own encoder's output, where Tonearm agrees with
  # oggdec within 1 LSB: that file codes magnitude 0 with a nonzero angle 812 times, where
  # Vorbis I §4.3.5 gives the angle A and ffmpeg's decoder −A. There is no float libvorbis
  # oracle (ffmpeg's libvorbis wrapper and oggdec give 16 bits), so that file has none: its
  # gate is oggdec's.
  oracle=vorbis
  case "$f" in *ffvorbis*) oracle=none ;; esac
  "${FF[@]}" -c:a vorbis -i "$f" -f f32le "$TMP/dec.raw"
  oggdec -Q -R -o "$TMP/dec16.raw" "$f"
  rate=$(ffprobe -v error -select_streams a:0 -show_entries stream=sample_rate -of csv=p=0 "$f")
  ch=$(ffprobe -v error -select_streams a:0 -show_entries stream=channels -of csv=p=0 "$f")
  python3 - "$TMP/dec.raw" "$TMP/dec16.raw" "$rate" "$ch" "$oracle" "$n.json" <<'PY2'
import hashlib, json, sys
raw, raw16, rate, ch, oracle, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
data = open(raw, "rb").read()
# frames: oggdec's (libvorbis's) length, the reference; ffmpeg's may differ at the end.
g = {"sampleRate": rate, "channels": ch, "frames": len(open(raw16, "rb").read()) // (2 * ch),
     "ffmpegFrames": len(data) // (4 * ch), "floatOracle": oracle,
     "ffmpegF32SHA256": hashlib.sha256(data).hexdigest()}
open(out, "w").write(json.dumps(g, indent=2, sort_keys=True) + "\n")
PY2
done
ls -l "$OUT"
