#!/usr/bin/env bash
# Regenerates the HE-AAC (SBR) and HE-AAC v2 (PS) decoder fixtures in aache/.
#
#   Tests/Fixtures/make-aache.sh                     # needs ffmpeg, ffprobe, faad, flac, python3
#   Tests/Fixtures/make-aache.sh --long OUT.m4a MIN  # a long HE-AAC v2 file for benchmarks (not committed)
#   Tests/Fixtures/make-aache.sh --ps-probes         # constant PS parameters through ffmpeg and faad
#
# No HE-AAC encoder can be installed here (ffmpeg cannot encode SBR or PS; libfdk_aac and faac
# are not in Debian main). Each stream is a real AAC-LC core from ffmpeg's encoder at half the
# output rate, to which tools/aac_sbr_forge.py adds an SBR extension payload (and PS) in every
# raw_data_block, written from ISO/IEC 14496-3's syntax; the envelopes follow the band energies
# of the full-band source, the PS parameters its stereo image. The forge's plans (named below)
# say which header, grids, delta directions, coupling, sinusoids and PS modes each frame uses;
# its inventory, in every NAME.json, counts what was written.
#
# Carriers: ADTS with implicit signalling (an LC header at the core rate), M4A with each
# explicit form of the AudioSpecificConfig (object type 5, object type 29, and LC followed by
# the 0x2b7 sync extension with SBR and the 0x548 PS flag), and LATM/LOAS (ffmpeg's muxer,
# LC config: implicit signalling).
#
# The cores are encoded with -aac_pns 0: perceptual noise substitution fills bands with
# random noise that every decoder draws differently, so ffmpeg and faad could not be compared.
#
# Every file is checked: ffprobe's profile (HE-AAC / HE-AACv2), output rate and channels; no
# message from `ffmpeg -v warning` (but the ADTS duration estimate); faad decodes it; and the
# golden JSON records faad's distance to ffmpeg (tools/aache_golden.py). At the end a few
# features are switched off (forge --without) to show that each changes ffmpeg's decode.
# Deterministic: ffmpeg runs with -fflags +bitexact -flags +bitexact -map_metadata -1; the
# forge has no randomness. See Tests/Fixtures/README.md, "aache/".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
FORGE=(python3 tools/aac_sbr_forge.py)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

noise() { # random-register seed level
  printf '0*if(eq(n,0),st(%s,%s),0)+%s*(2*random(%s)-1)' "$1" "$2" "$3" "$1"
}
# A chord with a bright overtone series (content up to the top of the SBR range) and noise.
# The right channel has other notes, part of the left's at another phase and level: PS then
# has level differences, partial coherence and phase differences to code.
LEFT="$(noise 0 1234567 0.03)+0.12*sin(2*PI*220*t)+0.06*sin(2*PI*660*t+1)+0.04*sin(2*PI*1650*t)+0.025*sin(2*PI*3520*t)+0.02*sin(2*PI*6160*t)+0.012*sin(2*PI*9680*t)+0.008*sin(2*PI*13200*t)"
RIGHT="$(noise 1 7654321 0.025)+0.10*sin(2*PI*330*t+0.5)+0.06*sin(2*PI*220*t+0.8)+0.03*sin(2*PI*2475*t)+0.02*sin(2*PI*5500*t+2)+0.012*sin(2*PI*8800*t)+0.008*sin(2*PI*12100*t+1)"

master() { # name rate seconds channels
  local exprs="$LEFT"
  if [ "$4" = 2 ]; then exprs="$LEFT|$RIGHT"; fi
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$exprs':s=$2:d=$3" -c:a pcm_s16le "${BX[@]}" "$TMP/$1.wav"
}
core() { # source core-rate channels bitrate out.aac
  "${FF[@]}" -i "$TMP/$1.wav" -ac "$3" -ar "$2" -c:a aac -aac_pns 0 -b:a "$4" "${BX[@]}" -f adts "$5"
}
# forge NAME SOURCE CORE-RATE CORE-CHANNELS BITRATE PLAN: the forged ADTS stream in $TMP.
forge() {
  core "$2" "$3" "$4" "$5" "$TMP/$1.core.aac"
  "${FORGE[@]}" forge "$TMP/$1.core.aac" "$TMP/$2.wav" "$6" "$TMP/$1.aac" "$TMP/$1.inventory.json"
}

if [ "${1:-}" = "--long" ]; then
  out=${2:?--long OUT.m4a MINUTES} minutes=${3:?--long OUT.m4a MINUTES}
  # An 8-s source looped to the length (the forge's analysis of it then repeats too).
  master loop 44100 8 2
  "${FF[@]}" -stream_loop -1 -i "$TMP/loop.wav" -t "$((minutes * 60))" -c:a pcm_s16le "${BX[@]}" "$TMP/long.wav"
  core long 22050 1 24k "$TMP/long.core.aac"
  "${FORGE[@]}" forge "$TMP/long.core.aac" "$TMP/loop.wav" long "$TMP/long.aac" "$TMP/long.inventory.json"
  "${FF[@]}" -i "$TMP/long.aac" -c copy "${BX[@]}" "$TMP/long.m4a"
  "${FORGE[@]}" m4a "$TMP/long.m4a" aot29 "$out"
  ffprobe -v error -show_entries stream=profile,sample_rate,channels,duration -of compact "$out"
  exit 0
fi

if [ "${1:-}" = "--ps-probes" ]; then
  # Constant PS parameters, decoded by both decoders (see tools/aache_ps_probe.py).
  master s48 48000 0.6 2
  core s48 24000 1 24k "$TMP/probe.core.aac"
  python3 tools/aache_ps_probe.py "$TMP/probe.core.aac" "$TMP/s48.wav"
  exit 0
fi

OUT=aache
rm -rf "$OUT"
mkdir -p "$OUT"

master s48 48000 0.6 2
master s44 44100 0.6 2
master s32 32000 0.6 1
master s22 22050 0.6 1
master s16 16000 0.6 1
master s24 24000 0.6 2
master s96 96000 0.3 2

# expect FILE PROFILE RATE CHANNELS: what ffprobe must report.
expect() {
  local got
  got=$(ffprobe -v error -show_entries stream=profile,sample_rate,channels -of csv=p=0 "$1")
  [ "$got" = "$2,$3,$4" ] || { echo "$1: ffprobe says $got, expected $2,$3,$4" >&2; exit 1; }
}
golden() { # file name [faad-input]
  python3 tools/aache_golden.py "$OUT/$1" "$TMP/$2.inventory.json" "${@:3}"
}
adts() { # name profile rate channels
  cp "$TMP/$1.aac" "$OUT/$1.aac"
  expect "$OUT/$1.aac" "$2" "$3" "$4"
  golden "$1.aac" "$1"
}
m4a() { # name form profile rate channels
  "${FF[@]}" -i "$TMP/$1.aac" -c copy "${BX[@]}" "$TMP/$1.m4a"
  "${FORGE[@]}" m4a "$TMP/$1.m4a" "$2" "$OUT/$1.m4a"
  expect "$OUT/$1.m4a" "$3" "$4" "$5"
  golden "$1.m4a" "$1"
}

# SBR. ffmpeg takes a mono SBR stream without an explicit "no PS" to be HE-AAC v2 (it may
# carry PS) and decodes it to stereo: the ADTS mono file and the AOT 5 one say so.
forge he_stereo_48k       s48 24000 2 40k stereo_tour
forge he_coupled_44k_aot5 s44 22050 2 40k stereo_coupled
forge he_mono_32k_compat  s32 16000 1 24k mono_linear
forge he_mono_16k         s16 8000  1 16k mono_plain
forge he_mono_22k_aot5    s22 11025 1 16k mono_plain
forge he_stereo_24k       s24 12000 2 24k stereo_grids
forge he_stereo_96k_compat s96 48000 2 64k stereo_plain
adts he_stereo_48k                   HE-AAC   48000 2
m4a  he_coupled_44k_aot5  aot5       HE-AAC   44100 2
m4a  he_mono_32k_compat   compat-sbr HE-AAC   32000 1
adts he_mono_16k                     HE-AACv2 16000 2
m4a  he_mono_22k_aot5     aot5       HE-AAC   22050 2
adts he_stereo_24k                   HE-AAC   24000 2
m4a  he_stereo_96k_compat compat-sbr HE-AAC   96000 2

# PS (mono cores of the stereo sources).
forge ps_baseline_48k    s48 24000 1 24k ps_baseline
forge ps_20_44k_aot29    s44 22050 1 24k ps_20
forge ps_34_48k_compat   s48 24000 1 24k ps_34
forge ps_switch_44k      s44 22050 1 24k ps_switch
adts ps_baseline_48k                    HE-AACv2 48000 2
m4a  ps_20_44k_aot29     aot29          HE-AACv2 44100 2
m4a  ps_34_48k_compat    compat-ps      HE-AACv2 48000 2
"${FF[@]}" -i "$TMP/ps_switch_44k.aac" -c copy "${BX[@]}" -f latm "$OUT/ps_switch_44k.loas"
expect "$OUT/ps_switch_44k.loas" HE-AACv2 44100 2
golden ps_switch_44k.loas ps_switch_44k "$TMP/ps_switch_44k.aac"   # faad reads no LATM

# Each feature changes the decoded audio: forge a file again without it and compare ffmpeg's
# decodes (the RMS of the difference must be well above the decoders' own disagreement).
differs() { # name source core-rate channels bitrate plan feature
  "${FORGE[@]}" forge "$TMP/$1.core.aac" "$TMP/$2.wav" "$6" "$TMP/without.aac" "$TMP/without.json" "--without=$7"
  python3 - "$TMP/$1.aac" "$TMP/without.aac" "$7" "$1" <<'EOF'
import math, subprocess, sys
def decode(path):
    pcm = subprocess.run(["ffmpeg", "-v", "error", "-c:a", "aac", "-i", path, "-f", "f32le", "-"],
                         check=True, stdout=subprocess.PIPE).stdout
    return memoryview(pcm).cast("f")
a, b = decode(sys.argv[1]), decode(sys.argv[2])
rms = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)) / min(len(a), len(b)))
print("%-22s without %-9s: RMS of the change %.2g" % (sys.argv[4], sys.argv[3], rms))
if rms < 1e-4:
    sys.exit("switching %s off does not change %s" % (sys.argv[3], sys.argv[4]))
EOF
}
differs he_stereo_48k     s48 24000 2 40k stereo_tour sines
differs he_stereo_48k     s48 24000 2 40k stereo_tour coupling
differs ps_20_44k_aot29   s44 22050 1 24k ps_20       ipdopd
differs ps_baseline_48k   s48 24000 1 24k ps_baseline ps

du -ch "$OUT"/* | tail -n 1
