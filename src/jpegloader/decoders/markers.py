"""What a JPEG's markers say before its first scan, read without decoding: the EXIF
orientation and the number of components.

Readers that honour EXIF (OpenCV's ``imread``/``imdecode``, PIL's ``exif_transpose``)
turn an image whose orientation is not 1; the C core decodes the stored pixels.  A
pipeline that must give OpenCV's image sends such samples, and four-component (CMYK,
YCCK) ones, whose colour conversion OpenCV does its own way, to the Python path.
"""
from __future__ import annotations

from dataclasses import dataclass

_ORIENTATION_TAG = 0x0112
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # frame headers, not DHT/JPG/DAC
_NO_LENGTH = frozenset([0x01, *range(0xD0, 0xD9)])  # TEM, RSTn, SOI


@dataclass(frozen=True)
class Markers:
    orientation: int = 1  # EXIF orientation, 1 to 8; 1 when there is none
    components: int = 0   # from the frame header; 0 when none was found


def _orientation(exif: bytes) -> int:
    """The Orientation tag of IFD0 in an APP1 Exif payload (after b"Exif\\0\\0")."""
    if len(exif) < 8 or exif[:2] not in (b"II", b"MM"):
        return 1
    order = "little" if exif[:2] == b"II" else "big"
    ifd = int.from_bytes(exif[4:8], order)
    if ifd + 2 > len(exif):
        return 1
    for k in range(int.from_bytes(exif[ifd:ifd + 2], order)):
        entry = ifd + 2 + 12 * k
        if entry + 12 > len(exif):
            break
        if int.from_bytes(exif[entry:entry + 2], order) == _ORIENTATION_TAG:
            value = int.from_bytes(exif[entry + 8:entry + 10], order)
            return value if 1 <= value <= 8 else 1
    return 1


def read_markers(data) -> Markers:
    """The markers of one file's bytes (any buffer); anything unreadable reads as the
    defaults, and the decoder then says what is wrong with the file.  The first APP1
    Exif segment counts, as in PIL and OpenCV."""
    data = memoryview(data).cast("B")
    n, pos = len(data), 2
    orientation, seen_exif = 1, False
    if n < 4 or data[0] != 0xFF or data[1] != 0xD8:
        return Markers()
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            break
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _NO_LENGTH:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan
            break
        length = data[pos + 2] << 8 | data[pos + 3]
        body = pos + 4
        if marker == 0xE1 and not seen_exif and bytes(data[body:body + 6]) == b"Exif\0\0":
            seen_exif = True
            orientation = _orientation(bytes(data[body + 6:pos + 2 + length]))
        elif marker in _SOF:
            components = data[body + 5] if body + 5 < n else 0
            return Markers(orientation, components)
        pos += 2 + length
    return Markers(orientation)
