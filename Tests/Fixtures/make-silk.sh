#!/usr/bin/env bash
# Regenerates the SILK-only Opus fixtures in silk/ (for SILKDecoderTests) and, beside each
# NAME.opus, NAME.toc: the TOC bytes' configs seen in its packets ("config stereo code"
# and a count per line), which the tests assert so that a changed encoder cannot quietly
# turn a fixture into hybrid or CELT frames.
#
# Needs: sox, ffmpeg (with libopus), python3 (stdlib only).
#
# There is no speech corpus here, so the source is speech-like: a sawtooth with a gliding
# pitch and tremolo through formant-like peaks (voiced), pink noise (unvoiced) and a
# second voiced part, 2 s in all at 16 kHz. The stereo source puts two such voices at
# different pitches into the two channels, partly mixed, so mid and side both carry
# signal. libopus in VoIP mode at 16-24 kbit/s with a cutoff codes these as SILK-only
# frames of the bandwidth the cutoff names (4000 NB, 6000 MB, 8000 WB). The -fec files
# need a little more rate: below it libopus writes no LBRR frames.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=silk
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1

voice() { # NAME SECONDS PITCHSWEEP TREMOLO F1 F2
    sox -R -n -r 16000 -c 1 -b 16 "$TMP/$1.wav" synth "$2" sawtooth "$3" tremolo $4 \
        equalizer "$5" 300h 12 equalizer "$6" 400h 10 equalizer 2500 500h 8 lowpass 3800 gain -n -6
}
voice v1 1.0 110:190 "5 40" 700 1200
voice v2 0.7 210:150 "3 30" 500 1800
voice v3 1.0 160:230 "6 35" 400 2000
voice v4 0.7 130:100 "4 30" 800 1300
sox -R -n -r 16000 -c 1 -b 16 "$TMP/n1.wav" synth 0.3 pinknoise highpass 1500 gain -n -20
sox -R -n -r 16000 -c 1 -b 16 "$TMP/n2.wav" synth 0.3 pinknoise highpass 1200 gain -n -22
sox -R "$TMP/v1.wav" "$TMP/n1.wav" "$TMP/v2.wav" "$TMP/mono.wav"
sox -R "$TMP/v3.wav" "$TMP/n2.wav" "$TMP/v4.wav" "$TMP/other.wav"
# Left: mostly the first voice; right: mostly the second.
sox -R -M "$TMP/mono.wav" "$TMP/other.wav" "$TMP/stereo.wav" remix 1v0.8,2v0.3 1v0.3,2v0.8

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
enc() { # NAME SOURCE CUTOFF FRAME_MS KBPS [extra ffmpeg options]
    local name=$1 src=$2 cutoff=$3 ms=$4 kbps=$5
    shift 5
    "${FF[@]}" -i "$TMP/$src.wav" "${BX[@]}" -c:a libopus -application voip -b:a "${kbps}k" \
        -cutoff "$cutoff" -frame_duration "$ms" "$@" "$OUT/$name.opus"
}
enc nb-mono-20 mono 4000 20 12
enc nb-mono-60 mono 4000 60 12
enc mb-mono-20 mono 6000 20 14
enc mb-mono-40 mono 6000 40 14
enc wb-mono-10 mono 8000 10 16
enc wb-mono-20 mono 8000 20 16
enc wb-mono-40 mono 8000 40 16
enc wb-mono-60 mono 8000 60 16
enc nb-stereo-20 stereo 4000 20 20
enc mb-stereo-60 stereo 6000 60 22
enc wb-stereo-20 stereo 8000 20 18
enc wb-stereo-40 stereo 8000 40 18
# In-band FEC: LBRR frames in the packets (20% expected loss).
enc wb-mono-20-fec mono 8000 20 22 -fec 1 -packet_loss 20
enc nb-mono-60-fec mono 4000 60 18 -fec 1 -packet_loss 20
enc wb-stereo-20-fec stereo 8000 20 24 -fec 1 -packet_loss 20

python3 - "$OUT" <<'PY'
import glob, sys
def packets(path):
    data = open(path, 'rb').read()
    i, out, cur = 0, [], b''
    while i < len(data):
        assert data[i:i + 4] == b'OggS'
        n = data[i + 26]
        lacing = data[i + 27:i + 27 + n]
        j = i + 27 + n
        for s in lacing:
            cur += data[j:j + s]
            j += s
            if s < 255:
                out.append(cur)
                cur = b''
        i = j
    return out[2:]
for path in sorted(glob.glob(sys.argv[1] + '/*.opus')):
    counts = {}
    for p in packets(path):
        key = (p[0] >> 3, p[0] >> 2 & 1, p[0] & 3)
        counts[key] = counts.get(key, 0) + 1
    with open(path[:-5] + '.toc', 'w') as f:
        for (c, s, k), n in sorted(counts.items()):
            f.write(f'{c} {s} {k} {n}\n')
PY
