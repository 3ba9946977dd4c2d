"""ADTS frames as bit strings, for the AAC forging tools (aac_forge_ltp.py,
aac_forge_elements.py): split a stream into frames, skip a block's leading fill elements,
and pack a changed block back into a frame with its length fixed."""


def frames(data):
    """(header, raw_data_block as a '0'/'1' string) per frame; no CRC allowed."""
    at = 0
    while at + 7 <= len(data):
        header = bytearray(data[at:at + 7])
        assert header[1] & 1, "a CRC: not handled"
        length = (header[3] & 3) << 11 | header[4] << 3 | header[5] >> 5
        yield header, "".join(format(b, "08b") for b in data[at + 7:at + length])
        at += length


def skip_fills(bits):
    """The position of the first element after the block's fill elements (id 6, a count of 4
    bits, 8 more when it is 15); it must be an SCE."""
    s = 0
    while bits[s:s + 3] == "110":
        count = int(bits[s + 3:s + 7], 2)
        s += 7
        if count == 15:
            count += int(bits[s:s + 8], 2) - 1
            s += 8
        s += 8 * count
    assert bits[s:s + 3] == "000", "not an SCE"
    return s


def pack(header, bits):
    """The frame: `bits` without its trailing zeros, padded to the byte, after `header` with
    its frame length set."""
    bits = bits.rstrip("0")
    bits += "0" * (-len(bits) % 8)
    payload = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    size = 7 + len(payload)
    header[3] = header[3] & 0xFC | size >> 11
    header[4] = size >> 3 & 0xFF
    header[5] = header[5] & 0x1F | (size & 7) << 5
    return bytes(header) + payload
