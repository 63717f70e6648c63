"""The EXIF orientation and component count read from a JPEG's markers agree with
PIL's reading of the same files (the real corpus) and of files written here."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from jpegloader.decoders.markers import Markers, read_markers
from tests.conftest import SHARED_DATA, noisy_jpeg


def _with_orientation(value: int, mode: str = "RGB") -> bytes:
    image = Image.open(io.BytesIO(noisy_jpeg(32, 24, value))).convert(mode)
    exif = Image.Exif()
    exif[0x0112] = value
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    return out.getvalue()


@pytest.mark.parametrize("value", range(1, 9))
def test_orientation_as_written(value):
    assert read_markers(_with_orientation(value)) == Markers(value, 3)


@pytest.mark.parametrize("mode,components", [("L", 1), ("CMYK", 4)])
def test_components(mode, components):
    assert read_markers(_with_orientation(1, mode)).components == components


def test_not_a_jpeg_reads_as_defaults():
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, "PNG")
    assert read_markers(out.getvalue()) == Markers()
    assert read_markers(b"") == Markers()
    assert read_markers(noisy_jpeg(16, 16, 0)[:40]).components == 0


def test_the_corpus_agrees_with_pil():
    files = sorted(p for p in SHARED_DATA.glob("**/*") if p.is_file() and
                   p.suffix.lower() in (".jpg", ".jpeg"))
    if not files:
        pytest.skip(f"needs the real-image corpus in {SHARED_DATA}")
    checked = 0
    for path in files:
        try:
            with Image.open(path) as im:
                if im.format not in ("JPEG", "MPO"):
                    continue
                orientation = im.getexif().get(0x0112, 1)
                components = len(im.getbands())
        except Exception:  # noqa: BLE001 - PIL cannot read it: nothing to compare
            continue
        got = read_markers(path.read_bytes())
        assert got.orientation == (orientation if 1 <= orientation <= 8 else 1), path
        if got.components:  # 0: junk before the frame header, left to the decoder
            assert got.components == components, path
        checked += 1
    assert checked > 100
