#!/usr/bin/env bash
# Regenerates the sync-word fixtures (MPEG audio, ADTS/LOAS, AC-3/E-AC-3, AMR) in mpeg/,
# adts/, ac3/ and amr/, with a golden NAME.json beside each one. Deterministic: the sources
# are ffmpeg aevalsrc signals with fixed noise seeds, ffmpeg runs with bitexact flags, SoX
# with -R -D, and LAME, the tag writer below and tools/eac3_dependent.py have no
# randomness (checked with ffmpeg 5.1.x, LAME 3.100 and SoX 14.4.2 on Debian 12: two runs
# give byte-identical files).
#
# Needs: ffmpeg (with libmp3lame and libtwolame), ffprobe, lame, sox (with AMR-NB, from
# libopencore-amrnb), python3 (stdlib only).
#
# Not made, and why:
#   * MPEG layer I: no encoder here writes it (ffmpeg has only an mp1 decoder, twolame
#     and toolame write layer II). The tests build silent layer I frames by hand.
#   * AMR-WB: this ffmpeg has no AMR encoder (no libopencore-amrnb/libvo-amrwbenc, see
#     `ffmpeg -encoders | grep amr`), and Debian's SoX is built without AMR-WB encoding
#     ("SoX was compiled without AMR-WB encoding support"). The tests build AMR-WB frames by
#     hand. AMR-NB comes from SoX.
#   * E-AC-3 with dependent substreams: ffmpeg's eac3 encoder writes only independent
#     substream 0, so ac3/eac3_7.1_dependent.eac3 is spliced from the two E-AC-3 fixtures
#     by tools/eac3_dependent.py (see there).
#   * HE-AAC: no HE-AAC encoder (libfdk_aac) in Debian's ffmpeg.
#   * ADTS with a CRC: ffmpeg's ADTS muxer never writes one, so adts/aac_crc.aac is
#     ffmpeg's ADTS with each header rewritten (protection_absent = 0, two CRC bytes
#     inserted, frame length + 2) by the Python below.
#   * The 60-second LAME tone for the gapless check is too big to commit; the test
#     makes it with lame when lame is installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for d in mpeg adts ac3 amr; do rm -rf "$d"; mkdir -p "$d"; done

FF=(ffmpeg -hide_banner -nostdin -v error -y)
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1)
export PYTHONDONTWRITEBYTECODE=1

noise() { printf '0*if(eq(n,0),st(0,%s),0)+0.05*(2*random(0)-1)' "$1"; }
STEREO="$(noise 1234567890123)+0.5*sin(2*PI*440*t)+0.3*sin(2*PI*1300*t)|$(noise 9876543210987)+0.3*sin(2*PI*440*t)+0.5*sin(2*PI*1300*t)"
MONO="$(noise 4242424242424)+0.6*sin(2*PI*440*t)+0.25*sin(2*PI*1300*t)"
SIX="$(noise 1111111111111)+0.5*sin(2*PI*440*t)|$(noise 2222222222222)+0.5*sin(2*PI*660*t)|$(noise 3333333333333)+0.5*sin(2*PI*880*t)|$(noise 4444444444444)+0.5*sin(2*PI*110*t)|$(noise 5555555555555)+0.5*sin(2*PI*1300*t)|$(noise 6666666666666)+0.5*sin(2*PI*1700*t)"

master() { # name exprs rate frames [layout]
  local name=$1 exprs=$2 rate=$3 frames=$4 layout=${5:-}
  local src="aevalsrc=exprs='$exprs':s=$rate"
  [[ -n $layout ]] && src+=":c=$layout"
  "${FF[@]}" -f lavfi -i "$src,atrim=end_sample=$frames" -c:a pcm_s16le "${BX[@]}" "$TMP/$name.wav"
}
master st44 "$STEREO" 44100 44100          # 1 s stereo
master st48 "$STEREO" 48000 48000          # 1 s stereo
master mo44 "$MONO"   44100 22050          # 0.5 s mono
master mo22 "$MONO"   22050 22050          # 1 s mono, MPEG-2
master mo11 "$MONO"   11025 16538          # 1.5 s mono, MPEG-2.5
master six44 "$SIX"   44100 22050 5.1      # 0.5 s 5.1
master six48 "$SIX"   48000 24000 5.1      # 0.5 s 5.1
master mo8 "$MONO"    8000 8000            # 1 s mono, AMR-NB

LAME=(lame --quiet --noreplaygain)

# ---------------------------------------------------------------------- MPEG
"${LAME[@]}" -b 128 "$TMP/st44.wav" mpeg/lame_cbr128.mp3            # Info + LAME tag
"${LAME[@]}" -V 4 "$TMP/st44.wav" mpeg/lame_vbr_v4.mp3              # Xing + TOC + LAME tag
"${LAME[@]}" -b 64 "$TMP/mo22.wav" mpeg/lame_mpeg2_22k.mp3          # MPEG-2, 576 frames/packet
"${LAME[@]}" -b 32 "$TMP/mo11.wav" mpeg/lame_mpeg25_11k.mp3         # MPEG-2.5
"${LAME[@]}" -t -b 128 "$TMP/st44.wav" mpeg/lame_no_tag.mp3         # -t: no Xing/Info frame at all
"${LAME[@]}" -p -b 160 "$TMP/st44.wav" mpeg/lame_crc.mp3            # CRC on every frame, the Info frame too
"${FF[@]}" -i "$TMP/st44.wav" -c:a libmp3lame -b:a 128k "${BX[@]}" -write_xing 0 -id3v2_version 0 mpeg/ffmpeg_no_xing.mp3
"${FF[@]}" -i "$TMP/st44.wav" -c:a libmp3lame -q:a 5 "${BX[@]}" -id3v2_version 0 mpeg/ffmpeg_xing_vbr.mp3   # 'Lavc' LAME tag
"${FF[@]}" -i "$TMP/st44.wav" -c:a mp2 -b:a 192k "${BX[@]}" -f mp2 mpeg/ffmpeg_layer2.mp2
"${FF[@]}" -i "$TMP/st48.wav" -c:a libtwolame -b:a 192k "${BX[@]}" -f mp2 mpeg/twolame_layer2.mp2

# Tagged MP3s: tags written by the Python below around LAME's output.
"${LAME[@]}" -b 96 -m m "$TMP/mo44.wav" "$TMP/plain.mp3"

# ---------------------------------------------------------------------- ADTS / LOAS
"${FF[@]}" -i "$TMP/st44.wav" -c:a aac -b:a 96k "${BX[@]}" -f adts adts/aac_lc_stereo.aac
"${FF[@]}" -i "$TMP/mo22.wav" -c:a aac -b:a 48k "${BX[@]}" -f adts adts/aac_lc_mono_22k.aac
"${FF[@]}" -i "$TMP/six48.wav" -c:a aac -b:a 256k "${BX[@]}" -f adts adts/aac_lc_5.1.aac
"${FF[@]}" -i "$TMP/st44.wav" -c:a aac -b:a 96k "${BX[@]}" -f latm adts/latm.loas

# ---------------------------------------------------------------------- AC-3 / E-AC-3
"${FF[@]}" -i "$TMP/st48.wav" -c:a ac3 -b:a 192k "${BX[@]}" -f ac3 ac3/ac3_stereo_48k.ac3
"${FF[@]}" -i "$TMP/six44.wav" -c:a ac3 -b:a 384k "${BX[@]}" -f ac3 ac3/ac3_5.1_44k.ac3
"${FF[@]}" -i "$TMP/st48.wav" -c:a eac3 -b:a 128k "${BX[@]}" -f eac3 ac3/eac3_stereo_48k.eac3
"${FF[@]}" -i "$TMP/six48.wav" -c:a eac3 -b:a 384k "${BX[@]}" -f eac3 ac3/eac3_5.1_48k.eac3

# E-AC-3 7.1: 5.1 independent frames, each followed by a dependent frame (the stereo
# fixture's, remapped to Lrs/Rrs), and every third unit by a second one (substream 1).
python3 tools/eac3_dependent.py ac3/eac3_5.1_48k.eac3 ac3/eac3_stereo_48k.eac3 ac3/eac3_7.1_dependent.eac3

# ---------------------------------------------------------------------- AMR-NB
SOX=(sox -R -D)
"${SOX[@]}" "$TMP/mo8.wav" -t amr-nb -C 7 amr/amrnb_122.amr      # MR122, 32-byte frames
"${SOX[@]}" "$TMP/mo8.wav" -t amr-nb -C 0 amr/amrnb_475.amr      # MR475, 13-byte frames
# A mode change mid-stream (AMR may switch at any frame): MR475's frames then MR122's.
python3 -c 'import sys; a, b = (open(p, "rb").read() for p in sys.argv[1:3]); open(sys.argv[3], "wb").write(a + b[6:])' \
  amr/amrnb_475.amr amr/amrnb_122.amr amr/amrnb_mixed.amr
# The same frames in 3GP (samr sample entry), for the MP4 parser. They stay in amr/: the
# MP4 tests count and check every file in mp4/ against make-mp4.sh's goldens.
"${FF[@]}" -i amr/amrnb_122.amr -c copy "${BX[@]}" amr/amrnb_122_remux.3gp
"${FF[@]}" -i amr/amrnb_mixed.amr -c copy "${BX[@]}" amr/amrnb_mixed_remux.3gp

# ---------------------------------------------------------------------- Python: tags, CRC, goldens
cat > "$TMP/sync.py" <<'PY'
import hashlib, json, os, struct, subprocess, sys

def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])

def unsync(b):
    out = bytearray()
    for i, x in enumerate(b):
        out.append(x)
        if x == 0xFF and (i + 1 == len(b) or b[i + 1] == 0 or b[i + 1] >= 0xE0):
            out.append(0)
    return bytes(out)

def picture(n, seed):
    # Deterministic "image": a PNG signature then bytes that include MPEG sync patterns
    # (0xFF 0xFB 0x90 0x64 is a valid MP3 header), so a parser that searched inside the
    # tag would find false syncs.
    out = bytearray(b"\x89PNG\r\n\x1a\n")
    x = seed
    while len(out) < n:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append((x >> 16) & 0xFF)
        if len(out) % 997 == 0:
            out += b"\xff\xfb\x90\x64"
    return bytes(out[:n])

def utf16(s):
    return b"\xff\xfe" + s.encode("utf-16-le")

def frame23(fid, data):
    return fid.encode() + struct.pack(">I", len(data)) + b"\x00\x00" + data

def frame24(fid, data, flags=0):
    return fid.encode() + syncsafe(len(data)) + struct.pack(">H", flags) + data

def frame22(fid, data):
    return fid.encode() + struct.pack(">I", len(data))[1:] + data

def id3v1(title, artist, album, year, comment, track, genre):
    def f(s, n):
        return s.encode("latin-1")[:n].ljust(n, b"\x00")
    return b"TAG" + f(title, 30) + f(artist, 30) + f(album, 30) + f(year, 4) + f(comment, 28) + b"\x00" + bytes([track, genre])

def ape(items):
    body = b""
    for key, value, flags in items:
        body += struct.pack("<II", len(value), flags) + key.encode() + b"\x00" + value
    size = len(body) + 32
    def hdr(is_header):
        flags = (1 << 31) | ((1 << 29) if is_header else 0)
        return b"APETAGEX" + struct.pack("<IIII", 2000, size, len(items), flags) + b"\x00" * 8
    return hdr(True) + body + hdr(False)

def make_tagged(plain, outdir):
    audio = open(plain, "rb").read()
    # ID3v2.3: UTF-16 title, Latin-1 text, a numeric genre, a comment, an iTunes comment to
    # be ignored, and a ~20 KB front cover; then APEv2 and ID3v1 tags at the end.
    frames = frame23("TIT2", b"\x01" + utf16("Tonearm Test Tone \u2713"))
    frames += frame23("TPE1", b"\x00Tonearm Fixtures")
    frames += frame23("TALB", b"\x00Framed Family")
    frames += frame23("TRCK", b"\x003/12")
    frames += frame23("TYER", b"\x002024")
    frames += frame23("TCON", b"\x00(13)")
    frames += frame23("COMM", b"\x00eng" + b"iTunNORM\x00" + b" 00000000 00000000")
    frames += frame23("COMM", b"\x00eng" + b"\x00" + b"Sync test")
    frames += frame23("APIC", b"\x00image/png\x00\x03cover\x00" + picture(20000, 7))
    body = frames + b"\x00" * 512  # padding
    tag = b"ID3\x03\x00\x00" + syncsafe(len(body)) + body
    apetag = ape([("Title", b"APE title (ignored)", 0), ("Composer", b"APE Composer", 0),
                  ("Cover Art (Front)", b"cover.png\x00" + picture(100, 3), 2)])
    v1 = id3v1("v1 title", "v1 artist", "v1 album", "1999", "v1 comment", 7, 17)
    open(os.path.join(outdir, "tagged_id3v23_ape_id3v1.mp3"), "wb").write(tag + audio + apetag + v1)

    # ID3v2.4: UTF-8, an extended header, tag-level unsynchronisation (the cover holds
    # 0xFF bytes that need it), a data length indicator on one frame, and a footer.
    pic = b"\x03image/png\x00\x03\x00" + picture(3000, 11)
    frames = frame24("TIT2", b"\x03" + "Unsynchronised \u00e9t\u00e9".encode("utf-8"))
    frames += frame24("TPE1", b"\x03Tonearm Fixtures")
    frames += frame24("TDRC", b"\x032024-05-01")
    frames += frame24("TCON", b"\x0313")
    u = unsync(pic)
    frames += fid_dli("APIC", u, len(pic))
    ext = syncsafe(6) + b"\x01\x00"
    body = ext + frames  # in 2.4, unsynchronisation is applied frame by frame
    tag = b"ID3\x04\x00" + bytes([0x80 | 0x40 | 0x10]) + syncsafe(len(body)) + body
    footer = b"3DI\x04\x00" + bytes([0x80 | 0x40 | 0x10]) + syncsafe(len(body))
    open(os.path.join(outdir, "tagged_id3v24_unsync.mp3"), "wb").write(tag + footer + audio)

    # ID3v2.2 (three-letter frames, a PIC) and an ID3v1.1 tag that fills the rest.
    frames = frame22("TT2", b"\x00Two point two") + frame22("TP1", b"\x00Tonearm Fixtures")
    frames += frame22("PIC", b"\x00PNG\x03\x00" + picture(500, 5))
    tag = b"ID3\x02\x00\x00" + syncsafe(len(frames)) + frames
    v1 = id3v1("v1 title", "v1 artist", "v1 album", "1999", "v1 comment", 7, 17)
    open(os.path.join(outdir, "tagged_id3v22_id3v1.mp3"), "wb").write(tag + audio + v1)

def fid_dli(fid, data, plain_len):
    # Frame flags: unsynchronisation (0x02) and a data length indicator (0x01).
    payload = syncsafe(plain_len) + data
    return fid.encode() + syncsafe(len(payload)) + struct.pack(">H", 0x0003) + payload

def add_crc(src, dst):
    # Rewrites each ADTS header with protection_absent = 0 and a CRC-16 (polynomial 0x8005,
    # initial value 0xFFFF) of the header's 56 bits, which ffmpeg does not check.
    data = open(src, "rb").read()
    out = bytearray()
    i = 0
    while i + 7 <= len(data):
        h = bytearray(data[i:i + 7])
        length = ((h[3] & 3) << 11) | (h[4] << 3) | (h[5] >> 5)
        assert h[0] == 0xFF and h[1] & 0xF6 == 0xF0 and h[1] & 1 == 1, "not a CRC-less ADTS frame"
        body = data[i + 7:i + length]
        h[1] &= 0xFE
        n = length + 2
        h[3] = (h[3] & 0xFC) | (n >> 11)
        h[4] = (n >> 3) & 0xFF
        h[5] = (h[5] & 0x1F) | ((n & 7) << 5)
        crc = 0xFFFF
        for byte in h:
            for bit in range(7, -1, -1):
                top = (crc >> 15) & 1
                crc = (crc << 1) & 0xFFFF
                if top ^ ((byte >> bit) & 1):
                    crc ^= 0x8005
        out += h + struct.pack(">H", crc) + body
        i += length
    open(dst, "wb").write(bytes(out))

# ------------------------------------------------------------------ goldens

def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout

def lame_tag(data):
    """Xing/Info/VBRI and LAME fields of the first MPEG frame, read independently."""
    i = 0
    if data[:3] == b"ID3":
        i = 10 + ((data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9])
        if data[3] == 4 and data[5] & 0x10:
            i += 10
    while i + 4 <= len(data) and not (data[i] == 0xFF and data[i + 1] & 0xE0 == 0xE0):
        i += 1
    f = data[i:i + 2000]
    out = {}
    for tag in (b"Xing", b"Info"):
        k = f.find(tag, 4, 60)
        if k >= 0:
            flags = struct.unpack(">I", f[k + 4:k + 8])[0]
            p = k + 8
            out["vbrHeader"] = tag.decode()
            if flags & 1:
                out["xingFrames"] = struct.unpack(">I", f[p:p + 4])[0]; p += 4
            if flags & 2:
                out["xingBytes"] = struct.unpack(">I", f[p:p + 4])[0]; p += 4
            if flags & 4:
                p += 100
            if flags & 8:
                p += 4
            enc = f[p:p + 9]
            if enc[:4] in (b"LAME", b"Lavf", b"Lavc", b"L3.9"):
                out["encoder"] = enc.split(b"\x00")[0].decode("latin-1").strip()
                a, b, c = f[p + 21], f[p + 22], f[p + 23]
                out["encoderDelay"] = (a << 4) | (b >> 4)
                out["encoderPadding"] = ((b & 15) << 8) | c
            return out
    if f[36:40] == b"VBRI":
        out["vbrHeader"] = "VBRI"
    return out

def golden(path, file_type, format_id, info=None, header_bytes=0, artwork=None):
    probe = json.loads(run(["ffprobe", "-v", "fatal", "-of", "json", "-select_streams", "a:0",
                            "-show_streams", "-show_format", "-show_packets", path]))
    st = probe["streams"][0]
    packets = probe["packets"]
    channels = int(st["channels"])
    pcm = run(["ffmpeg", "-nostdin", "-v", "fatal", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"])
    data = open(path, "rb").read()
    g = {
        "file": os.path.basename(path),
        "container": probe["format"]["format_name"],
        "codec": st["codec_name"],
        "sampleRate": int(st["sample_rate"]),
        "channels": channels,
        "channelLayout": st.get("channel_layout"),
        "fileSize": len(data),
        "packets": len(packets),
        "packetSizes": [int(p["size"]) for p in packets],
        "packetOffsets": [int(p["pos"]) for p in packets],
        "decodedFrames": len(pcm) // (2 * channels),
        "s16leSHA256": hashlib.sha256(pcm).hexdigest(),
        "expected": {"fileType": file_type, "formatID": format_id},
    }
    if header_bytes:
        # ffprobe's ADTS packets include the header; Tonearm's (Apple's) do not.
        g["expected"]["packetHeaderBytes"] = header_bytes
    if format_id == ".mp3":
        g["expected"].update(lame_tag(data))
    if info:
        g["expected"]["info"] = info
    if artwork is not None:
        g["expected"]["artworkBytes"] = len(artwork)
        g["expected"]["artworkSHA256"] = hashlib.sha256(artwork).hexdigest()
    out = os.path.splitext(path)[0] + ".json"
    with open(out, "w") as fp:
        fp.write(json.dumps(g, indent=2, sort_keys=True) + "\n")

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "tags":
        make_tagged(sys.argv[2], sys.argv[3])
    elif cmd == "crc":
        add_crc(sys.argv[2], sys.argv[3])
    elif cmd == "golden":
        path, ft, fid = sys.argv[2:5]
        extra = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
        art = None
        if "artworkSeed" in extra:
            art = picture(extra["artworkLength"], extra["artworkSeed"])
        golden(path, ft, fid, info=extra.get("info"), header_bytes=extra.get("headerBytes", 0), artwork=art)
PY

python3 "$TMP/sync.py" tags "$TMP/plain.mp3" mpeg
python3 "$TMP/sync.py" crc adts/aac_lc_stereo.aac adts/aac_lc_crc.aac

gold() { python3 "$TMP/sync.py" golden "$@"; }
gold mpeg/lame_cbr128.mp3       MPG3 .mp3
gold mpeg/lame_vbr_v4.mp3       MPG3 .mp3
gold mpeg/lame_mpeg2_22k.mp3    MPG3 .mp3
gold mpeg/lame_mpeg25_11k.mp3   MPG3 .mp3
gold mpeg/lame_no_tag.mp3       MPG3 .mp3
gold mpeg/lame_crc.mp3          MPG3 .mp3
gold mpeg/ffmpeg_no_xing.mp3    MPG3 .mp3
gold mpeg/ffmpeg_xing_vbr.mp3   MPG3 .mp3
gold mpeg/ffmpeg_layer2.mp2     MPG2 .mp2
gold mpeg/twolame_layer2.mp2    MPG2 .mp2
gold mpeg/tagged_id3v23_ape_id3v1.mp3 MPG3 .mp3 '{"info": {"title": "Tonearm Test Tone \u2713", "artist": "Tonearm Fixtures", "album": "Framed Family", "track number": "3/12", "year": "2024", "genre": "Pop", "comments": "Sync test", "composer": "APE Composer"}, "artworkSeed": 7, "artworkLength": 20000}'
gold mpeg/tagged_id3v24_unsync.mp3    MPG3 .mp3 '{"info": {"title": "Unsynchronised \u00e9t\u00e9", "artist": "Tonearm Fixtures", "year": "2024-05-01", "genre": "Pop"}, "artworkSeed": 11, "artworkLength": 3000}'
gold mpeg/tagged_id3v22_id3v1.mp3     MPG3 .mp3 '{"info": {"title": "Two point two", "artist": "Tonearm Fixtures", "album": "v1 album", "year": "1999", "comments": "v1 comment", "track number": "7", "genre": "Rock"}, "artworkSeed": 5, "artworkLength": 500}'
gold adts/aac_lc_stereo.aac     adts "aac " '{"headerBytes": 7}'
gold adts/aac_lc_mono_22k.aac   adts "aac " '{"headerBytes": 7}'
gold adts/aac_lc_5.1.aac        adts "aac " '{"headerBytes": 7}'
gold adts/aac_lc_crc.aac        adts "aac " '{"headerBytes": 9}'
gold adts/latm.loas             loas "aac "
gold ac3/ac3_stereo_48k.ac3     ac-3 ac-3
gold ac3/ac3_5.1_44k.ac3        ac-3 ac-3
gold ac3/eac3_stereo_48k.eac3   ec-3 ec-3
gold ac3/eac3_5.1_48k.eac3      ec-3 ec-3
gold ac3/eac3_7.1_dependent.eac3 ec-3 ec-3
gold amr/amrnb_122.amr          amrf samr
gold amr/amrnb_475.amr          amrf samr
gold amr/amrnb_mixed.amr        amrf samr
gold amr/amrnb_122_remux.3gp          3gpp samr
gold amr/amrnb_mixed_remux.3gp        3gpp samr
echo "sync fixtures: $(du -ch mpeg adts ac3 amr | tail -1)"
