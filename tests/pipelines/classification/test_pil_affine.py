"""Pillow's bilinear and bicubic affine transforms of RGB images in C (NOTE [ Your
affine warps in C ]), held to the installed Pillow's own bytes on real photos:
RandAugment's shears, translations and rotations, general warps, edges, fill colours;
the calls it hands back to Pillow (the switch around your objects: test_pillow_in_c.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from jpegloader.pipelines.classification import _pillow, pil_affine
from tests.conftest import shared

BILINEAR, BICUBIC = Image.Resampling.BILINEAR, Image.Resampling.BICUBIC
NEAREST = Image.Resampling.NEAREST
AFFINE = Image.Transform.AFFINE


@pytest.fixture(scope="module")
def photos():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[::37][:8]
    images = [Image.open(f).convert("RGB") for f in files]
    # a RandAugment-sized crop, odd sizes (not a multiple of the 4-pixel loop), a strip,
    # one and two pixels
    return [images[0].resize((224, 224)), images[1].resize((223, 157)),
            images[2].resize((5, 301)), images[3].resize((1, 1)), images[4].resize((2, 1)),
            *images[5:]]


def _matrices(rng):
    """RandAugment's warps at every magnitude it can draw, and arbitrary ones."""
    for degrees in np.linspace(-30, 30, 13):  # Rotate: the centre-based matrix
        angle = -math.radians(degrees)
        c, s = math.cos(angle), math.sin(angle)
        yield (c, s, 112 - 112 * c - 112 * s, -s, c, 112 + 112 * s - 112 * c)
    for shear in np.linspace(-0.3, 0.3, 7):  # ShearX, ShearY
        yield (1.0, float(shear), 0.0, 0.0, 1.0, 0.0)
        yield (1.0, 0.0, 0.0, float(shear), 1.0, 0.0)
    for shift in (-150, -73, -1, 0, 1, 66, 150, 400):  # TranslateX, TranslateY: copies
        yield (1.0, 0.0, float(shift), 0.0, 1.0, 0.0)
        yield (1.0, 0.0, 0.0, 0.0, 1.0, float(shift))
    yield (1.0, 0.0, 10.5, 0.0, 1.0, -3.25)  # half pixels: interpolated, not copied
    for _ in range(24):
        a = rng.uniform(-1.5, 1.5, 6) * (1, 1, 80, 1, 1, 80)
        yield tuple(float(v) for v in a)


@pytest.mark.parametrize("resample", [BILINEAR, BICUBIC], ids=["bilinear", "bicubic"])
@pytest.mark.parametrize("avx2", [True, False], ids=["avx2", "one-pixel"])
def test_the_c_warp_gives_pillows_bytes_on_real_photos(photos, avx2, resample):
    rng = np.random.default_rng(7)
    before = _pillow.allow_avx2(avx2)
    try:
        cases = 0
        for image in photos:
            for a in _matrices(rng):
                size = image.size if rng.random() < 0.6 else \
                    (int(rng.integers(1, 260)), int(rng.integers(1, 260)))
                fill = None if rng.random() < 0.5 else tuple(int(v) for v in
                                                            rng.integers(0, 256, 3))
                ours = pil_affine.transform(image, size, AFFINE, a, resample, fillcolor=fill)
                theirs = pil_affine.PILLOWS(image, size, AFFINE, a, resample, fillcolor=fill)
                assert ours.mode == theirs.mode == "RGB" and ours.size == theirs.size
                assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (image.size, a,
                                                                              size, fill)
                cases += 1
        assert cases > 500
    finally:
        _pillow.allow_avx2(before)


def _counted(monkeypatch) -> list:
    """The C warp's calls, from now on."""
    calls, real = [], _pillow.affine
    monkeypatch.setattr(_pillow, "affine", lambda *args: calls.append(args) or real(*args))
    return calls


def test_what_the_c_warp_does_not_take_is_pillows_own(photos, monkeypatch):
    calls = _counted(monkeypatch)
    image = photos[0]
    a = (1.0, 0.2, -5.0, 0.1, 1.0, 3.0)
    cases = [(image, AFFINE, a, NEAREST, None),            # nearest: Pillow's is as fast
             (image.convert("L"), AFFINE, a, BILINEAR, None),
             (image.convert("RGBA"), AFFINE, a, BILINEAR, None),
             (image, AFFINE, a, BILINEAR, "red"),            # a colour Pillow parses
             (image, Image.Transform.PERSPECTIVE, (*a, 0.001, 0.0), BILINEAR, None),
             (image, AFFINE, (1.0, float("nan"), 0.0, 0.0, 1.0, 0.0), BILINEAR, None)]
    for im, method, data, resample, fill in cases:
        ours = pil_affine.transform(im, im.size, method, data, resample, fillcolor=fill)
        theirs = pil_affine.PILLOWS(im, im.size, method, data, resample, fillcolor=fill)
        assert ours.mode == theirs.mode
        assert np.array_equal(np.asarray(ours), np.asarray(theirs))
    with pytest.raises(ValueError, match="LANCZOS"):  # Pillow's own refusal
        pil_affine.transform(image, image.size, AFFINE, a, Image.Resampling.LANCZOS)
    assert calls == []
    pil_affine.transform(image, image.size, AFFINE, a, BILINEAR)
    pil_affine.transform(image, image.size, AFFINE, a, BICUBIC)
    assert len(calls) == 2
