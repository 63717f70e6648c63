"""Hostile JPEG inputs built from a valid file: truncations, byte flips, a
decompression-bomb header, a progressive file with thousands of scans, huge
EXIF and ICC segments.  Each builder returns bytes; nothing is written here."""
from __future__ import annotations

import io
import struct

import numpy as np
from PIL import Image

SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def photo_like(width: int = 96, height: int = 72, seed: int = 0, **save) -> bytes:
    """A smooth random-texture JPEG (saved with Pillow's options ``save``)."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(0, 255, size=(height // 8 + 2, width // 8 + 2, 3)).astype(np.uint8)
    img = Image.fromarray(coarse).resize((width, height), Image.BICUBIC)
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=save.pop("quality", 90), **save)
    return out.getvalue()


def segments(data: bytes) -> list[tuple[int, int, int]]:
    """(marker, start, end) of each marker segment before the first SOS's data;
    the SOS entry ends at its header."""
    out, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        out.append((marker, pos, pos + 2 + length))
        if marker == 0xDA:
            break
        pos += 2 + length
    return out


def truncations(data: bytes, steps: int = 10) -> list[tuple[str, bytes]]:
    """The file cut at every 1/steps of its length (0% to 90%)."""
    return [(f"truncated at {100 * k // steps}%", data[:len(data) * k // steps])
            for k in range(steps)]


def byte_flips(data: bytes, seed: int, flips: int = 8) -> bytes:
    """``flips`` random bytes XORed with random non-zero values, past the SOI."""
    rng = np.random.default_rng(seed)
    out = bytearray(data)
    for pos in rng.integers(2, len(out), size=flips):
        out[pos] ^= int(rng.integers(1, 256))
    return bytes(out)


def with_dimensions(data: bytes, width: int, height: int) -> bytes:
    """The same file with its frame header claiming ``width`` x ``height``: a
    decompression bomb when large (the data stays small)."""
    for marker, start, _ in segments(data):
        if marker in SOF_MARKERS:
            out = bytearray(data)
            out[start + 5:start + 9] = struct.pack(">HH", height, width)
            return bytes(out)
    raise ValueError("no frame header found")


def with_repeated_last_scan(progressive: bytes, extra_scans: int) -> bytes:
    """A progressive file whose last scan is repeated ``extra_scans`` more times
    before the EOI: libjpeg warns of a bogus progression and decodes each one."""
    last_sos = progressive.rfind(b"\xff\xda")
    eoi = progressive.rfind(b"\xff\xd9")
    if last_sos < 0 or eoi < last_sos:
        raise ValueError("not a progressive JPEG with an EOI")
    scan = progressive[last_sos:eoi]
    return progressive[:eoi] + scan * extra_scans + progressive[eoi:]


def with_app_segments(data: bytes, marker: int, count: int, payload: bytes = b"") -> bytes:
    """``count`` APPn segments of the maximum size (64 KiB each) after the SOI:
    huge EXIF (APP1) or ICC (APP2) blocks."""
    body = (payload + bytes(65533))[:65533]
    seg = bytes([0xFF, marker]) + struct.pack(">H", 65535) + body
    return data[:2] + seg * count + data[2:]

