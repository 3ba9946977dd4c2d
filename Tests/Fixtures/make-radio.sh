#!/usr/bin/env bash
# Regenerates the internet-radio fixtures in radio/ (issue 7) and radio/radio.json.
# Deterministic: a second run gives byte-identical files (checked with LAME 3.100,
# opus-tools 0.2 / libopus 1.3.1, vorbis-tools 1.4.2, ffmpeg 5.1 on Debian 12).
#
# Needs: ffmpeg (sources), lame, opusenc (opus-tools), oggenc (vorbis-tools), python3.
#
# IcecastTestServer (Tests/TonearmTestSupport) streams these through a local Icecast2;
# streaming is real time, so every clip is short (about 5 s) and low bit rate.
#
#   radio.mp3    5.0 s, MPEG-2 Layer III 22.05 kHz mono CBR 32 kbit/s by LAME, without
#                an Info/Xing tag (-t) and without ID3: exactly the frames that ffmpeg's
#                mp3 muxer sends on with -c copy, so the fixture, ffmpeg's sent copy and
#                what a listener gets can be compared byte for byte. A tone that moves
#                up a step every second. Titles come from Icecast's admin API.
#   chain.opus   a chained Ogg Opus stream: three links of 1.5 s (opusenc, 16 kbit/s,
#                48 kHz mono, serials 7001-7003) concatenated, each with its own OpusTags
#                (TITLE, ARTIST). Icecast 2.4 passes Opus pages through unchanged, so a
#                listener receives these exact bytes; the titles are in the stream.
#   chain.ogg    the same as a chained Ogg Vorbis stream (oggenc -q -1 at 22.05 kHz mono,
#                serials 7101-7103). Icecast 2.4 re-pages Vorbis (new serials, pages of
#                about 0.5 s): a listener gets the same packets, not the same bytes.
#
# radio.json holds each file's size and SHA-256 and, for the chains, each link's serial,
# page and packet counts and TITLE/ARTIST as read back from the bytes by the small Ogg
# reader below.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=radio
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

# A tone that steps up every second (or a fixed one), with a little seeded noise.
tone() { # out rate seconds expression
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='0*if(eq(n,0),st(0,1234567),0)+0.02*(2*random(0)-1)+$4':s=$2,atrim=end_sample=$(($2 * $3 / 10))" \
    -c:a pcm_s16le "${BX[@]}" "$1"
}

# radio.mp3: 5 s, 440 Hz up a whole tone every second.
tone "$TMP/steps.wav" 22050 50 "0.4*sin(2*PI*440*pow(1.122462,floor(t))*t)"
lame --quiet -b 32 -m m -t --noreplaygain "$TMP/steps.wav" "$OUT/radio.mp3"

# The chains: three 1.5-s links with different tones and tags.
titles=("First Light" "Zweite Stunde – Übung" "Third's a Charm")
freqs=(330 494 659)
for i in 0 1 2; do
  tone "$TMP/link$i-48k.wav" 48000 15 "0.4*sin(2*PI*${freqs[$i]}*t)"
  tone "$TMP/link$i-22k.wav" 22050 15 "0.4*sin(2*PI*${freqs[$i]}*t)"
  opusenc --quiet --bitrate 16 --serial $((7001 + i)) --title "${titles[$i]}" --artist "Tonearm Radio" \
    "$TMP/link$i-48k.wav" "$TMP/link$i.opus"
  oggenc --quiet -q -1 -s $((7101 + i)) -t "${titles[$i]}" -a "Tonearm Radio" -o "$TMP/link$i.ogg" "$TMP/link$i-22k.wav"
done
cat "$TMP"/link{0,1,2}.opus > "$OUT/chain.opus"
cat "$TMP"/link{0,1,2}.ogg > "$OUT/chain.ogg"

python3 - "$OUT" <<'PY'
import hashlib, json, os, struct, sys

out = sys.argv[1]

def pages(data):
    p = 0
    while p < len(data):
        assert data[p:p + 4] == b"OggS", "no page at %d" % p
        flags = data[p + 5]
        granule, serial = struct.unpack("<qI", data[p + 6:p + 18])
        n = data[p + 26]
        lacing = data[p + 27:p + 27 + n]
        body = data[p + 27 + n:p + 27 + n + sum(lacing)]
        yield flags, granule, serial, lacing, body
        p += 27 + n + sum(lacing)

def comments(packet):
    """TITLE and ARTIST of an OpusTags or Vorbis comment packet."""
    at = 8 if packet.startswith(b"OpusTags") else 7
    n = struct.unpack("<I", packet[at:at + 4])[0]; at += 4 + n
    count = struct.unpack("<I", packet[at:at + 4])[0]; at += 4
    fields = {}
    for _ in range(count):
        n = struct.unpack("<I", packet[at:at + 4])[0]; at += 4
        key, _, value = packet[at:at + n].decode("utf-8").partition("=")
        fields.setdefault(key.upper(), value)
        at += n
    return {"title": fields.get("TITLE"), "artist": fields.get("ARTIST")}

def links(data):
    result, cur = [], b""
    for flags, granule, serial, lacing, body in pages(data):
        if flags & 2:
            result.append({"serial": serial, "pages": 0, "packets": [], "lastGranule": 0})
        link = result[-1]
        assert link["serial"] == serial, "not a simple chain"
        link["pages"] += 1
        link["lastGranule"] = granule
        pos = 0
        for v in lacing:
            cur += body[pos:pos + v]; pos += v
            if v < 255:
                link["packets"].append(cur); cur = b""
    for link in result:
        packets = link.pop("packets")
        link["packets"] = len(packets)
        link.update(comments(packets[1]))
    return result

golden = {}
for name in sorted(os.listdir(out)):
    if name.endswith(".json"):
        continue
    data = open(os.path.join(out, name), "rb").read()
    entry = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if name.endswith((".ogg", ".opus")):
        entry["links"] = links(data)
    golden[name] = entry
with open(os.path.join(out, "radio.json"), "w") as f:
    json.dump(golden, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
ls -l "$OUT"
