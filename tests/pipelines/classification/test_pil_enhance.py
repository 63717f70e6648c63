"""Pillow's ImageEnhance and ImageOps' tone curves on an RGB image's bytes in C (NOTE
[ Pillow's enhancements in C ]), held to the installed Pillow's own images on real
photos: every factor RandAugment, TrivialAugmentWide and ColorJitter draw and beyond,
every posterize depth, solarize thresholds, invert, autocontrast and equalize on photos,
flat, narrow and saturated images; the AVX2 and plain loops alike."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageEnhance, ImageOps

from jpegloader.pipelines.classification import _pillow, pil_enhance
from tests.conftest import shared


@pytest.fixture(scope="module")
def photos():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[::41][:7]
    images = [Image.open(f).convert("RGB") for f in files]
    # a RandAugment-sized crop, odd sizes (vector loops' tails), strips too thin for a
    # 3 x 3, one pixel, a photo as decoded, and a dark one (narrow histograms)
    dark = np.asarray(images[6].resize((97, 61))) // 7 + 20
    return [np.asarray(im) for im in (
        images[0].resize((224, 224)), images[1].resize((223, 157)), images[2].resize((2, 301)),
        images[3].resize((301, 2)), images[4].resize((3, 3)), images[5].resize((1, 1)),
        images[6])] + [np.ascontiguousarray(dark), np.full((7, 9, 3), 200, np.uint8)]


# RandAugment's and TrivialAugmentWide's factors (1 +- magnitude, up to 1.99),
# ColorJitter's, 0 and 1 (Pillow's shortcuts), extrapolations far past both ends
FACTORS = (0.0, 0.01, 0.1, 0.37, 0.5, 0.73, 0.99, 1.0, 1.01, 1.3, 1.5, 1.99, 2.0, 3.7,
           -0.2, -4.0, 100.0, 1e20, 7)


def _same(ours: np.ndarray, theirs: Image.Image) -> bool:
    return theirs.mode == "RGB" and np.array_equal(ours, np.asarray(theirs))


@pytest.mark.parametrize("avx2", [True, False], ids=["avx2", "plain"])
@pytest.mark.parametrize("name", pil_enhance.ENHANCEMENTS)
def test_the_enhancements_give_pillows_bytes_on_real_photos(photos, name, avx2):
    before = _pillow.allow_avx2(avx2)
    try:
        for pixels in photos:
            image = Image.fromarray(pixels)
            for factor in FACTORS:
                theirs = getattr(ImageEnhance, name)(image).enhance(factor)
                assert _same(pil_enhance.enhanced(pixels, name, factor), theirs), (
                    name, pixels.shape, factor)
    finally:
        _pillow.allow_avx2(before)


def test_the_tone_curves_give_pillows_bytes_on_real_photos(photos):
    for pixels in photos:
        image = Image.fromarray(pixels)
        assert _same(pil_enhance.autocontrasted(pixels), ImageOps.autocontrast(image))
        assert _same(pil_enhance.equalized(pixels), ImageOps.equalize(image))
        assert _same(pil_enhance.inverted(pixels), ImageOps.invert(image))
        for bits in range(1, 9):
            assert _same(pil_enhance.posterized(pixels, bits), ImageOps.posterize(image, bits))
        for threshold in (0, 0.5, 1.0, 64, 127.9, 128, 200.0, 255, 255.5, 256, -3.0):
            assert _same(pil_enhance.solarized(pixels, threshold),
                         ImageOps.solarize(image, threshold)), threshold


def test_equalize_where_the_table_overflows_a_byte_is_clamped_as_pillows():
    """Mostly white: the lightest level's count left out of the step, the table's last
    entries run past 255, and Image.point clamps them."""
    rng = np.random.default_rng(5)
    for share in (0.5, 0.8, 0.95):
        pixels = np.where(rng.random((40, 30, 3)) < share, 255,
                          rng.integers(0, 256, (40, 30, 3))).astype(np.uint8)
        assert _same(pil_enhance.equalized(pixels), ImageOps.equalize(Image.fromarray(pixels)))


def test_the_buffers_are_checked():
    pixels = np.zeros((4, 5, 3), np.uint8)
    with pytest.raises(ValueError, match="kind 0-3"):
        _pillow.enhance(pixels, 5, 4, np.empty_like(pixels), 4, 1.0)
    with pytest.raises(ValueError, match="finite"):
        _pillow.enhance(pixels, 5, 4, np.empty_like(pixels), 0, float("nan"))
    with pytest.raises(ValueError, match="apart"):
        _pillow.enhance(pixels, 5, 4, pixels, 0, 1.0)
    with pytest.raises(ValueError):
        _pillow.enhance(pixels, 6, 4, np.empty_like(pixels), 0, 1.0)
    with pytest.raises(ValueError, match="whole RGB pixels"):
        _pillow.histograms(np.zeros(7, np.uint8), np.empty((3, 256), np.int64))
    with pytest.raises(ValueError):
        _pillow.apply_luts(pixels, np.empty((4, 4, 3), np.uint8), np.zeros((3, 256), np.uint8))


def test_the_probe_passes_with_the_installed_pillow():
    assert pil_enhance.usable()
