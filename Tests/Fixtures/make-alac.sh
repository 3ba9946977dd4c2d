#!/usr/bin/env bash
# Regenerates the ALAC fixtures in alac/ and their goldens (alac/goldens.json).
# Deterministic: a second run gives byte-identical files (ffmpeg 5.1.x, Debian 12).
#
# Needs: ffmpeg, python3 (stdlib only).
#
# ffmpeg's own ALAC encoder writes the 16- and 24-bit files, in M4A and in CAF: mono,
# stereo, 5.1 and 7.1, a stereo file with a burst of full-scale noise (which ffmpeg
# stores as uncompressed "escape" frames) and one with 30-tap predictors. Every source has an odd length, so the last frame is partial (it carries its
# own sample count). ffmpeg cannot encode 20- or 32-bit ALAC: alac/alac_forge.py builds
# those CAF files itself (see Tests/Fixtures/README.md, "alac/").
#
# The golden of each file is the SHA-256 of ffmpeg's decoded PCM in ffmpeg's channel order
# (`-f s16le` for 16-bit files, `-f s32le` for the others), with its frame count.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=alac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
find "$OUT" -maxdepth 1 -type f \( -name '*.m4a' -o -name '*.caf' -o -name '*.json' \) -delete 2>/dev/null || true
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
export PYTHONDONTWRITEBYTECODE=1

noise() { # $1 = seed, $2 = level
  printf '0*if(eq(n,0),st(0,%s),0)+%s*(2*random(0)-1)' "$1" "${2:-0.0002}"
}
# Tones and a little noise, each channel its own mix.
tone() { # seed f1 f2
  printf '%s+0.45*sin(2*PI*%s*t)+0.25*sin(2*PI*%s*t)' "$(noise "$1")" "$2" "$3"
}
MONO="$(tone 4242424242424 440 1300)"
STEREO="$(tone 1234567890123 440 1300)|$(tone 9876543210987 550 1700)"
SIX="$(tone 1111111111111 440 660)|$(tone 2222222222222 550 770)|$(tone 3333333333333 660 880)|$(tone 4444444444444 60 110)|$(tone 5555555555555 990 1300)|$(tone 6666666666666 1100 1700)"
EIGHT="$SIX|$(tone 7777777777777 1210 1900)|$(tone 8888888888888 1320 2100)"
# Loud noise from 0.1 s to 0.2 s: no predictor helps, so ffmpeg escapes those frames.
BURST="if(between(t,0.1,0.2),$(noise 1357913579135 0.9),$(tone 1234567890123 440 1300))|if(between(t,0.1,0.2),$(noise 2468024680246 0.9),$(tone 9876543210987 550 1700))"

master() { # name exprs rate frames pcm-codec [layout]
  local name=$1 exprs=$2 rate=$3 frames=$4 codec=$5 layout=${6:-}
  local src="aevalsrc=exprs='$exprs':s=$rate"
  [[ -n $layout ]] && src+=":c=$layout"
  "${FF[@]}" -f lavfi -i "$src,atrim=end_sample=$frames" -c:a "$codec" "${BX[@]}" "$TMP/$name.wav"
}
master mono  "$MONO"   22050 6001 pcm_s16le
master st    "$STEREO" 22050 6001 pcm_s16le
master st24  "$STEREO" 22050 4501 pcm_s24le
master six   "$SIX"    11025 3001 pcm_s16le "5.1(side)"
master eight "$EIGHT"  8000  3001 pcm_s16le "7.1(wide)"
master burst "$BURST"  22050 7001 pcm_s16le

alac() { # master output [ffmpeg options...]
  local m=$1 out=$2
  shift 2
  "${FF[@]}" -i "$TMP/$m.wav" -c:a alac "$@" "${BX[@]}" "$OUT/$out"
}
for ext in m4a caf; do
  alac mono  alac_16_mono.$ext
  alac st    alac_16_stereo.$ext
  alac st24  alac_24_stereo.$ext -sample_fmt s32p
done
alac six   alac_16_5.1.m4a
alac eight alac_16_7.1.m4a
alac six   alac_16_5.1.caf
alac eight alac_16_7.1.caf
alac burst alac_16_stereo_escape.m4a
alac st    alac_16_stereo_order30.m4a -min_prediction_order 30 -max_prediction_order 30

# 20- and 32-bit files, built by the forge (ffmpeg's encoder cannot write them).
python3 "$OUT/alac_forge.py" "$OUT"

# Goldens: ffmpeg's decode of every fixture, and of the ALAC files in caf/.
python3 - "$OUT" <<'PY'
import hashlib, json, os, subprocess, sys
out = sys.argv[1]
files = sorted(f for f in os.listdir(out) if f.endswith((".m4a", ".caf")))
files += ["../caf/" + f for f in sorted(os.listdir(os.path.join(out, "../caf"))) if f.startswith("ffmpeg_alac_") and f.endswith(".caf")]
goldens = {}
for f in files:
    path = os.path.join(out, f)
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                            "stream=channels,bits_per_raw_sample,sample_rate", "-of", "json", path],
                           check=True, stdout=subprocess.PIPE).stdout
    s = json.loads(probe)["streams"][0]
    bits = int(s.get("bits_per_raw_sample") or 16)
    fmt = "s16le" if bits == 16 else "s32le"
    pcm = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", fmt, "-"], check=True,
                         stdout=subprocess.PIPE).stdout
    width = 2 if fmt == "s16le" else 4
    goldens[os.path.basename(f)] = {
        "path": f, "bits": bits, "channels": s["channels"], "sampleRate": int(s["sample_rate"]),
        "format": fmt, "frames": len(pcm) // (width * s["channels"]), "sha256": hashlib.sha256(pcm).hexdigest(),
    }
with open(os.path.join(out, "goldens.json"), "w") as fh:
    fh.write(json.dumps(goldens, indent=1, sort_keys=True) + "\n")
PY

echo "fixtures: $(ls "$OUT" | grep -cE '\.(m4a|caf)$') files, $(du -ch "$OUT"/*.m4a "$OUT"/*.caf | tail -1 | cut -f1) in $(pwd)/$OUT"
