#!/usr/bin/env bash
# Regenerates the compressed CAF fixtures in caf/ and a golden NAME.json beside each.
# Deterministic: a second run gives byte-identical files (checked with ffmpeg 5.1.x on
# Debian 12: its alac, flac, aac and libopus encoders).
#
# Needs: ffmpeg and ffprobe, python3 (stdlib only).
#
# Two kinds of file, named so that a reader can tell them apart:
#   * ffmpeg_*.caf: written by ffmpeg's caf muxer from a real encoder (ALAC 16 and 24 bit,
#     stereo and mono; FLAC; Opus). What ffmpeg 5.1 writes, and the tests rely on:
#       - 'pakt' comes after 'data' (the muxer learns the sizes as it goes), so a push
#         stream cannot read these files ('optm'); the tests move 'pakt' forward to stream them.
#       - ALAC: a 48-byte 'kuki' in the old form ('frma' atom, then the 36-byte 'alac'
#         atom), desc format flags 0 (Apple puts the source bit depth there), and a 'pakt'
#         of valid frames = packets × 4096 with priming 0 and remainder 0.
#       - FLAC and Opus: no 'kuki' at all. FLAC's desc says 4410 frames per packet while
#         the encoder's blocks are 4608, and the table ends with a 0-byte entry that is no
#         packet (ffprobe stops before it, so it lists one packet fewer than 'pakt').
#       - AAC: refused ("muxing codec currently unsupported").
#   * remux_*.caf: NOT written by a CAF muxer. This script builds them from real encoder
#     packets so that the cookie forms ffmpeg does not write are covered: AAC (ffmpeg's
#     aac encoder, ADTS headers stripped; the AudioSpecificConfig ffmpeg gives its MP4),
#     FLAC (the packets of ffmpeg_flac.caf, with the STREAMINFO of the same encode written
#     as a .flac file) and Opus (the packets of ffmpeg_opus.caf, with the OpusHead of the
#     same encode written as Ogg). They are laid out as Apple's writers lay out CAF: desc,
#     kuki, pakt (with the encoder's priming and the remainder), then data. Their cookies:
#       - AAC: an MPEG-4 ES_Descriptor (esds without its box header and version, tag 0x03,
#         sizes in the 4-byte 0x80 0x80 0x80 n form), ES_ID 0.
#       - FLAC: a whole 'dfLa' box (size, 'dfLa', version and flags, STREAMINFO marked last).
#       - Opus: the OpusHead of RFC 7845 §5.1.
#
# The goldens hold ffprobe's view (codec, rate, channels, every packet's size, pts and
# position, the extradata it derives) beside facts read from the bytes by the small CAF
# reader at the bottom of this script: the chunk list, the desc fields, the 'kuki' bytes,
# the 'pakt' counts and entries, the data offset; plus "cookie", the magic cookie in the
# form Tonearm gives for the codec everywhere (AAC: the AudioSpecificConfig; ALAC: the
# 24-byte ALACSpecificConfig; FLAC: the body of a dfLa box; Opus: the OpusHead), and
# "expected": the format ID, the format flags Apple gives (the ALAC/FLAC source bit depth:
# 1 = 16 bit, 3 = 24 bit) and the source bit depth.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

OUT=caf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -rf "$OUT"
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)

noise() { printf '0*if(eq(n,0),st(0,%s),0)+0.002*(2*random(0)-1)' "$1"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
source_wav() { # name exprs rate frames codec
  "${FF[@]}" -f lavfi -i "aevalsrc=exprs='$2':s=$3,atrim=end_sample=$4" -c:a "$5" "${BX[@]}" "$TMP/$1.wav"
}
# Odd lengths, so that the last packet is short and the remainder is not 0.
source_wav st44 "$STEREO" 44100 11111 pcm_s16le   # 0.25 s stereo
source_wav mo22 "$MONO"   22050  7777 pcm_s16le   # 0.35 s mono
source_wav t44  "$STEREO" 44100  9999 pcm_s24le   # 0.23 s stereo, 24-bit
source_wav m48  "$MONO"   48000 10001 pcm_s24le   # 0.21 s mono, 24-bit
source_wav st48 "$STEREO" 48000 14401 pcm_s16le   # 0.3 s stereo
source_wav mo48 "$MONO"   48000  9601 pcm_s16le   # 0.2 s mono

enc() { # name source [ffmpeg output options...]
  local name=$1 src=$2
  shift 2
  "${FF[@]}" -i "$TMP/$src.wav" "$@" "${BX[@]}" "$OUT/$name"
}

# ------------------------------------------------------------------ ffmpeg's caf muxer
enc ffmpeg_alac_16_stereo.caf st44 -c:a alac
enc ffmpeg_alac_16_mono.caf   mo22 -c:a alac
enc ffmpeg_alac_24_stereo.caf t44  -c:a alac -sample_fmt s32p
enc ffmpeg_alac_24_mono.caf   m48  -c:a alac -sample_fmt s32p
enc ffmpeg_flac.caf           st44 -c:a flac
enc ffmpeg_opus.caf           st48 -c:a libopus -b:a 48k
# AAC: the caf muxer refuses it; check that it still does, so this note stays true.
if "${FF[@]}" -i "$TMP/st44.wav" -c:a aac "${BX[@]}" -f caf "$TMP/aac.caf" 2>/dev/null; then
  echo "make-caf.sh: this ffmpeg writes AAC into CAF; make ffmpeg_aac fixtures instead of remuxing" >&2
  exit 1
fi

# ------------------------------------------------------------------ remuxed (see the header)
cat > "$TMP/caf.py" <<'EOF'
import json, os, struct, subprocess, sys

def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout

# ---- a small CAF reader of its own
def chunks(data):
    assert data[:4] == b"caff" and struct.unpack(">HH", data[4:8]) == (1, 0)
    i, out = 8, []
    while i + 12 <= len(data):
        kind, size = struct.unpack(">4sq", data[i:i + 12])
        body = i + 12
        if size < 0:
            size = len(data) - body
        out.append((kind.decode("latin-1"), i, size, data[body:body + size]))
        i = body + size
    return out

def varint(b, at):
    v = 0
    while True:
        x = b[at]; at += 1
        v = v << 7 | (x & 0x7F)
        if x < 0x80:
            return v, at

def read(path):
    data = open(path, "rb").read()
    c = {k: (off, size, body) for k, off, size, body in reversed(chunks(data))}
    rate, fid, flags, bpp, fpp, ch, bits = struct.unpack(">dIIIIII", c["desc"][2])
    desc = {"sampleRate": rate, "formatID": struct.pack(">I", fid).decode("latin-1"), "formatFlags": flags,
            "bytesPerPacket": bpp, "framesPerPacket": fpp, "channels": ch, "bitsPerChannel": bits}
    f = {"chunks": [{"id": k, "offset": o, "size": s} for k, o, s, _ in chunks(data)], "desc": desc,
         "kuki": c["kuki"][2].hex() if "kuki" in c else None}
    off, size, _ = c["data"]
    f["dataOffset"] = off + 16
    f["dataSize"] = size - 4
    if "pakt" in c:
        p = c["pakt"][2]
        n, valid, priming, remainder = struct.unpack(">qqii", p[:24])
        sizes, frames, at = [], [], 24
        for _ in range(n):
            if bpp == 0:
                s, at = varint(p, at); sizes.append(s)
            if fpp == 0:
                s, at = varint(p, at); frames.append(s)
        f["pakt"] = {"packets": n, "validFrames": valid, "primingFrames": priming, "remainderFrames": remainder,
                     "sizes": sizes, "frames": frames}
    return f, data

# ---- cookies
def descriptor(b, at):
    tag = b[at]; at += 1
    size = 0
    for _ in range(4):
        x = b[at]; at += 1
        size = size << 7 | (x & 0x7F)
        if x < 0x80:
            break
    return tag, at, at + size

def asc_from_es(b):
    # ISO/IEC 14496-1 §7.2.6: ES_Descriptor → DecoderConfigDescriptor → DecoderSpecificInfo.
    tag, at, end = descriptor(b, 0)
    assert tag == 3
    flags = b[at + 2]; at += 3
    assert flags == 0
    tag, at, end = descriptor(b, at)
    assert tag == 4
    tag, at, end = descriptor(b, at + 13)
    assert tag == 5
    return b[at:end]

def tonearm_cookie(fid, kuki):
    """The cookie as Tonearm gives it for the codec in every container."""
    if kuki is None:
        return None
    k = bytes.fromhex(kuki)
    if fid == "aac ":
        return asc_from_es(k).hex()
    if fid == "alac":
        if k[4:12] == b"frmaalac":
            return k[24:48].hex()
        return k[:24].hex()
    if fid == "flac":
        assert k[4:8] == b"dfLa"
        return k[8:struct.unpack(">I", k[:4])[0]].hex()
    if fid == "opus":
        assert k[:8] == b"OpusHead"
        return k.hex()
    raise SystemExit("no cookie rule for " + fid)

def bit_depth(fid, cookie):
    if cookie is None:
        return None
    c = bytes.fromhex(cookie)
    if fid == "alac":
        return c[5]
    if fid == "flac":
        return (struct.unpack(">Q", c[8 + 10:8 + 18])[0] >> 36 & 31) + 1
    return None

# ---- remuxing
def be(fmt, *v):
    return struct.pack(">" + fmt, *v)

def chunk(kind, body):
    return kind + be("q", len(body)) + body

def write_varint(v):
    out = [v & 0x7F]
    v >>= 7
    while v:
        out.append(0x80 | (v & 0x7F)); v >>= 7
    return bytes(reversed(out))

def write_caf(path, rate, fid, flags, fpp, channels, kuki, packets, valid, priming, remainder):
    desc = be("d", rate) + fid + be("IIIII", flags, 0, fpp, channels, 0)
    pakt = be("qqii", len(packets), valid, priming, remainder) + b"".join(write_varint(len(p)) for p in packets)
    data = b"caff" + be("HH", 1, 0) + chunk(b"desc", desc) + chunk(b"kuki", kuki) + chunk(b"pakt", pakt) \
        + chunk(b"data", be("I", 0) + b"".join(packets))
    open(path, "wb").write(data)

def caf_packets(path):
    f, data = read(path)
    sizes = f["pakt"]["sizes"]
    while sizes and sizes[-1] == 0:
        sizes = sizes[:-1]
    at, out = f["dataOffset"], []
    for s in sizes:
        out.append(data[at:at + s]); at += s
    return f, out

def extradata(path):
    a = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_streams", "-show_data", path]))["streams"][0]
    return bytes.fromhex("".join("".join(l.split(":", 1)[1][:41].split()) for l in a["extradata"].strip().splitlines()))

def es_descriptor(asc, avg, peak, buffer):
    def d(tag, body):
        n = len(body)
        return bytes([tag, 0x80 | (n >> 21 & 0x7F), 0x80 | (n >> 14 & 0x7F), 0x80 | (n >> 7 & 0x7F), n & 0x7F]) + body
    config = bytes([0x40, 0x15]) + be("I", buffer)[1:] + be("II", peak, avg) + d(5, asc)
    return d(3, be("H", 0) + b"\0" + d(4, config) + d(6, b"\x02"))

def remux_aac(out, adts, m4a, frames, rate):
    data = open(adts, "rb").read()
    packets, at = [], 0
    while at < len(data):
        assert data[at] == 0xFF and data[at + 1] & 0xF6 == 0xF0
        header = 7 if data[at + 1] & 1 else 9
        n = (data[at + 3] & 3) << 11 | data[at + 4] << 3 | data[at + 5] >> 5
        packets.append(data[at + header:at + n]); at += n
    asc = extradata(m4a)
    channels = (asc[1] >> 3) & 15
    sizes = [int(p["size"]) for p in json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_packets", m4a]))["packets"]]
    assert sizes == [len(p) for p in packets], "ADTS payloads differ from the MP4 packets"
    seconds = len(packets) * 1024 / rate
    avg = int(sum(map(len, packets)) * 8 / seconds)
    peak = int(max(len(p) for p in packets) * 8 * rate // 1024)
    kuki = es_descriptor(asc, avg, peak, max(len(p) for p in packets))
    priming = 1024  # ffmpeg's aac encoder delay (its MP4 edit list says the same)
    write_caf(out, rate, b"aac ", 0, 1024, channels, kuki, packets, frames, priming,
              len(packets) * 1024 - priming - frames)

def remux_flac(out, caf, flac, frames):
    f, packets = caf_packets(caf)
    data = open(flac, "rb").read()
    assert data[:4] == b"fLaC"
    at, streaminfo = 4, None
    while True:
        header = data[at]; n = int.from_bytes(data[at + 1:at + 4], "big")
        if header & 0x7F == 0:
            streaminfo = data[at + 4:at + 4 + n]
        at += 4 + n
        if header & 0x80:
            break
    assert data[at:] == b"".join(packets), "the CAF's FLAC packets differ from the .flac frames"
    block = struct.unpack(">H", streaminfo[2:4])[0]
    bits = (struct.unpack(">Q", streaminfo[10:18])[0] >> 36 & 31) + 1
    body = be("I", 0) + bytes([0x80, 0, 0, 34]) + streaminfo
    kuki = be("I", 8 + len(body)) + b"dfLa" + body
    flags = {16: 1, 20: 2, 24: 3, 32: 4}.get(bits, 0)
    write_caf(out, f["desc"]["sampleRate"], b"flac", flags, block, f["desc"]["channels"], kuki, packets, frames, 0,
              len(packets) * block - frames)

def remux_opus(out, caf, ogg, frames):
    f, packets = caf_packets(caf)
    head = extradata(ogg)
    assert head[:8] == b"OpusHead"
    pre_skip = struct.unpack("<H", head[10:12])[0]
    total = len(packets) * 960
    write_caf(out, 48000.0, b"opus", 0, 960, head[9], head, packets, frames, pre_skip, total - pre_skip - frames)

# ---- goldens
def golden(path, remuxed_from):
    probe = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_streams", "-show_data", path]))
    packets = json.loads(run(["ffprobe", "-v", "error", "-of", "json", "-show_packets", path]))["packets"]
    a = probe["streams"][0]
    f, _ = read(path)
    fid = f["desc"]["formatID"]
    cookie = tonearm_cookie(fid, f["kuki"])
    depth = bit_depth(fid, cookie)
    num = lambda x: None if x in (None, "N/A") else int(x)
    g = {
        "codec": a["codec_name"],
        "sampleRate": int(a["sample_rate"]),
        "channels": a["channels"],
        "bitsPerRawSample": num(a.get("bits_per_raw_sample")),
        "extradata": "".join("".join(l.split(":", 1)[1][:41].split()) for l in (a.get("extradata") or "").strip().splitlines()),
        "packets": len(packets),
        "packetSizes": [int(p["size"]) for p in packets],
        "packetPts": [num(p.get("pts")) for p in packets],
        "packetPos": [num(p.get("pos")) for p in packets],
        "caf": f,
        "cookie": cookie,
        "remuxedFrom": remuxed_from,
        "expected": {"fileType": "caff", "formatID": fid,
                     "formatFlags": {16: 1, 20: 2, 24: 3, 32: 4}.get(depth, 0) if depth else f["desc"]["formatFlags"],
                     "sourceBitDepth": depth},
    }
    with open(os.path.splitext(path)[0] + ".json", "w") as out:
        json.dump(g, out, indent=1, sort_keys=True)
        out.write("\n")

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "aac":
        remux_aac(args[0], args[1], args[2], int(args[3]), float(args[4]))
    elif cmd == "flac":
        remux_flac(args[0], args[1], args[2], int(args[3]))
    elif cmd == "opus":
        remux_opus(args[0], args[1], args[2], int(args[3]))
    elif cmd == "golden":
        golden(args[0], args[1] if len(args) > 1 else None)
EOF
CAF=(python3 "$TMP/caf.py")

# AAC: the same encode as ADTS (for the packets) and as MP4 (for the AudioSpecificConfig
# ffmpeg gives it, and its packet sizes, which the script checks against the ADTS payloads).
for v in "stereo st44 11111 44100" "mono mo48 9601 48000"; do
  set -- $v
  "${FF[@]}" -i "$TMP/$2.wav" -c:a aac -b:a 64k "${BX[@]}" -f adts "$TMP/aac_$1.aac"
  "${FF[@]}" -i "$TMP/$2.wav" -c:a aac -b:a 64k "${BX[@]}" "$TMP/aac_$1.m4a"
  "${CAF[@]}" aac "$OUT/remux_aac_$1.caf" "$TMP/aac_$1.aac" "$TMP/aac_$1.m4a" "$3" "$4"
done
# FLAC: the STREAMINFO of the same encode (the script checks that the frames are the same bytes).
"${FF[@]}" -i "$TMP/st44.wav" -c:a flac "${BX[@]}" "$TMP/flac.flac"
"${CAF[@]}" flac "$OUT/remux_flac.caf" "$OUT/ffmpeg_flac.caf" "$TMP/flac.flac" 11111
# Opus: the OpusHead of the same encode in Ogg.
"${FF[@]}" -i "$TMP/st48.wav" -c:a libopus -b:a 48k "${BX[@]}" "$TMP/opus.opus"
"${CAF[@]}" opus "$OUT/remux_opus.caf" "$OUT/ffmpeg_opus.caf" "$TMP/opus.opus" 14401

# ------------------------------------------------------------------ goldens
for f in "$OUT"/ffmpeg_*.caf; do "${CAF[@]}" golden "$f"; done
"${CAF[@]}" golden "$OUT/remux_aac_stereo.caf" "ffmpeg aac encoder, 44100 Hz stereo, ADTS headers stripped"
"${CAF[@]}" golden "$OUT/remux_aac_mono.caf" "ffmpeg aac encoder, 48000 Hz mono, ADTS headers stripped"
"${CAF[@]}" golden "$OUT/remux_flac.caf" "packets of ffmpeg_flac.caf, STREAMINFO of the same encode as .flac"
"${CAF[@]}" golden "$OUT/remux_opus.caf" "packets of ffmpeg_opus.caf, OpusHead of the same encode as Ogg"

echo "fixtures: $(ls "$OUT" | grep -vc '\.json$') files, $(du -sh "$OUT" | cut -f1) in $(pwd)/$OUT"
