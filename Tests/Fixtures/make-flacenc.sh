#!/usr/bin/env bash
# Goldens for the FLAC encoder's size test (FLACEncoderTests.testSizeAgainstReferenceFLAC):
# the audio bytes (frames only, no metadata) that the reference `flac` writes at each level
# -0 to -8 for a music excerpt, so the test can hold the native encoder to them without flac.
#
# The excerpt is real music: the first 15 s (661500 frames, 44.1 kHz, 16-bit stereo) of
# the IETF testbench's subset/24 (../shared/corpus/flac-test-files), which the test
# decodes itself and checks against the MD5 recorded here.
#
# Needs: flac, python3. Deterministic for one flac version (1.4.2 on Debian 12).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
SRC="../../../shared/corpus/flac-test-files/subset/24 - variable blocksize file created with flake revision 264.flac"
FRAMES=661500
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
RAW=(--force-raw-format --endian=little --sign=signed)
flac --silent --force -d "${RAW[@]}" --until=$FRAMES -o "$TMP/src.raw" "$SRC"
for L in 0 1 2 3 4 5 6 7 8; do
    flac --silent --force -$L "${RAW[@]}" --channels=2 --bps=16 --sample-rate=44100 -o "$TMP/$L.flac" "$TMP/src.raw"
done
python3 - "$TMP" "$FRAMES" "$(flac --version)" > flacenc/sizes.json <<'PY'
import hashlib, json, sys
tmp, frames, version = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def audio_bytes(path):
    """Bytes after the last metadata block (RFC 9639 §8.1 block headers)."""
    b = open(path, 'rb').read()
    assert b[:4] == b'fLaC'
    i = 4
    while True:
        last, length = b[i] & 0x80, int.from_bytes(b[i + 1:i + 4], 'big')
        i += 4 + length
        if last:
            return len(b) - i

raw = open(tmp + '/src.raw', 'rb').read()
assert len(raw) == frames * 4
print(json.dumps({
    'source': 'subset/24 - variable blocksize file created with flake revision 264.flac',
    'frames': frames,
    'pcmMD5': hashlib.md5(raw).hexdigest(),
    'reference': version,
    'audioBytes': {f'flac -{L}': audio_bytes(f'{tmp}/{L}.flac') for L in range(9)},
}, indent=2))
PY
