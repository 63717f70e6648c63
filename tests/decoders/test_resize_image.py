"""resize_hwc: an image already in memory resized as Pillow's Image.resize (bilinear)
resizes it, bit for bit, in the installed Pillow's pass order, into planes of bytes or
of floats through the tensor table (looked up, or computed by division); with the
512-bit loops and without."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from torchvision import transforms as T

from jpegloader.decoders import _jpeg
from jpegloader.decoders import resize_hwc as _resize
from jpegloader.decoders.plans import vertical_first
from jpegloader.pipelines.tensor_stage import division_form, lut_array, run_on_ramp
from tests.hostile_jpegs import photo_like

#: (height, width) -> (height, width): shrinking, enlarging, one axis alone, tall
#: reductions (Pillow 13's vertical pass first), rows both sides of 16 and 32
CASES = [((480, 640), (640, 640)), ((1500, 1200), (640, 640)), ((300, 400), (800, 1066)),
         ((2000, 500), (640, 640)), ((500, 2000), (640, 640)), ((37, 53), (640, 640)),
         ((640, 640), (640, 640)), ((1000, 999), (13, 900)), ((333, 250), (333, 31)),
         ((90, 17), (15, 90))]


def resize_hwc(src, out, lut=None, norm=None):
    h, w = src.shape[:2]
    _resize(src, out, vertical_first(w, h, out.shape[2], out.shape[1]), lut, norm)


def photo(h: int, w: int, seed: int) -> np.ndarray:
    with Image.open(__import__("io").BytesIO(photo_like(w, h, seed=seed))) as im:
        pixels = np.array(im.convert("RGB"))
    pixels[h // 3: h // 2, : w // 2] = 114  # a flat fill beside the photo, as a zoom-out's
    return pixels


@pytest.mark.parametrize("avx512", [True, False])
def test_bytes_equal_pillows_resize(avx512):
    before = _jpeg.allow_avx512(avx512)
    try:
        for k, ((h, w), (oh, ow)) in enumerate(CASES):
            src = photo(h, w, k)
            want = np.asarray(Image.fromarray(src).resize((ow, oh), Image.BILINEAR))
            out = np.empty((3, oh, ow), np.uint8)
            resize_hwc(src, out)
            assert np.array_equal(out.transpose(1, 2, 0), want), ((h, w), (oh, ow))
    finally:
        _jpeg.allow_avx512(before)


def test_floats_are_the_table_of_pillows_bytes_looked_up_or_divided():
    stage = [T.ToTensor(), T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
    lut = lut_array(run_on_ramp(stage)[1])
    norm = division_form(stage, lut)
    assert norm is not None
    for k, ((h, w), (oh, ow)) in enumerate(CASES[:6]):
        src = photo(h, w, k)
        want = np.asarray(Image.fromarray(src).resize((ow, oh), Image.BILINEAR))
        expected = np.stack([lut[c][want[..., c]] for c in range(3)])
        for n in (None, norm):
            out = np.empty((3, oh, ow), np.float32)
            resize_hwc(src, out, lut, n)
            assert np.array_equal(out, expected), ((h, w), (oh, ow), n is None)


def test_bad_buffers_raise_value_error():
    with pytest.raises(ValueError, match="resize_hwc takes"):
        resize_hwc(np.zeros((4, 4, 4), np.uint8), np.zeros((3, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="resize_hwc takes"):
        resize_hwc(np.zeros((4, 4, 3), np.uint8), np.zeros((2, 2, 3), np.float32))
    with pytest.raises(ValueError):
        _jpeg.resize_hwc(np.zeros((4, 4, 3), np.uint8), np.zeros((3, 2, 2), np.uint8),
                         4, 4, 3, 3, 0, 1, np.zeros((3, 256), np.float32), b"")
