#!/usr/bin/env python3
"""libopus's decode of an Ogg Opus file with chosen packets lost: the oracle for Tonearm's
SILK concealment (SILKDecoderTests).

Usage: opus_loss_oracle.py FILE.opus[+FILE.opus...] LOST [CHANNELS]
       opus_loss_oracle.py --version   (libopus's version string)
  LOST: comma-separated indices of the audio packets to treat as lost (0 = the first
  packet after the two header packets); an index followed by f (as 12f) is recovered
  with forward error correction instead: opus_decode_float with decode_fec on the next
  packet (whose LBRR data stands in for the lost one).
  Several files joined by + are decoded one after the other by one decoder (with the
  most channels of any, and the first file's pre-skip): a stream whose bandwidth or
  channel count changes.
  CHANNELS: the decoder's channel count (default: the files' most), e.g. 1 to decode a
  stereo stream to mono.

Writes the interleaved 32-bit float samples at 48 kHz to stdout, pre-skip removed and
not trimmed at the end (every packet's whole duration). A lost packet is concealed the
way a player does: opus_decode_float with no data, for the lost packet's duration.

Calls the system's libopus (libopus.so.0) through ctypes; needs python3 (stdlib only).
"""
import ctypes
import ctypes.util
import struct
import sys


def packets(path):
    data = open(path, 'rb').read()
    i, out, cur = 0, [], b''
    while i < len(data):
        if data[i:i + 4] != b'OggS':
            raise SystemExit('not an Ogg page at %d' % i)
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
    return out


def duration(packet, lib):
    return lib.opus_packet_get_nb_samples(packet, len(packet), 48000)


def main():
    name = ctypes.util.find_library('opus') or 'libopus.so.0'
    lib = ctypes.CDLL(name)
    if sys.argv[1] == '--version':
        lib.opus_get_version_string.restype = ctypes.c_char_p
        print(lib.opus_get_version_string().decode())
        return
    path, lost = sys.argv[1], sys.argv[2]
    fec = {int(x[:-1]) for x in lost.split(',') if x.endswith('f')}
    lost = {int(x.rstrip('f')) for x in lost.split(',') if x}
    lib.opus_decoder_create.restype = ctypes.c_void_p
    lib.opus_decoder_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.opus_decode_float.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_float), ctypes.c_int, ctypes.c_int]
    lib.opus_packet_get_nb_samples.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    files = [packets(p) for p in path.split('+')]
    channels = int(sys.argv[3]) if len(sys.argv) > 3 else max(f[0][9] for f in files)
    pre_skip = struct.unpack('<H', files[0][0][10:12])[0]
    audio = [p for f in files for p in f[2:]]
    err = ctypes.c_int()
    dec = lib.opus_decoder_create(48000, channels, ctypes.byref(err))
    if err.value != 0:
        raise SystemExit('opus_decoder_create: %d' % err.value)
    pcm = (ctypes.c_float * (5760 * channels))()
    out = bytearray()
    for index, packet in enumerate(audio):
        size = duration(packet, lib)
        if index in fec and index + 1 < len(audio):
            following = audio[index + 1]
            n = lib.opus_decode_float(dec, following, len(following), pcm, size, 1)
        elif index in lost:
            n = lib.opus_decode_float(dec, None, 0, pcm, size, 0)
        else:
            n = lib.opus_decode_float(dec, packet, len(packet), pcm, 5760, 0)
        if n < 0:
            raise SystemExit('opus_decode_float: %d at packet %d' % (n, index))
        out += bytes(memoryview(pcm).cast('B')[:n * channels * 4])
    sys.stdout.buffer.write(bytes(out[pre_skip * channels * 4:]))


main()
