"""The C core's call contract (decoders/_jpeg.pyi): wrong buffers raise ValueError
naming them; wrong plan values are a per-sample status, never a crash."""
from __future__ import annotations

import io
import itertools

import numpy as np
import pytest

from jpegloader.decoders import EncodedBatch, _jpeg, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import (BRIGHTNESS, CONTRAST, HUE, PAD_MODES, PERMUTE,
                                     PLAN_DTYPE, empty_plans)
from jpegloader.pipelines.colour import hue_shift
from tests.conftest import whole_image_plans
from tests.hostile_jpegs import photo_like

LUT = np.zeros((3, 256), np.float32)


def _call(out, out_type, plans=None, lut=LUT, norm=b""):
    batch = EncodedBatch.from_files([b"\xff\xd8"])
    _jpeg.decode_batch(batch.data, batch.offsets,
                       np.zeros(1, PLAN_DTYPE) if plans is None else plans, out, out_type,
                       8, 8, lut, norm, 100, np.zeros(1, np.int32),
                       np.zeros((1, _jpeg.MESSAGE_LENGTH), np.uint8), np.zeros(2))


def test_bad_buffers_raise_value_error_naming_them():
    with pytest.raises(ValueError, match="offsets"):
        _jpeg.probe(b"abc", np.array([0, 10], np.int64), np.zeros((1, 4), np.int32),
                    np.zeros(1, np.int32), np.zeros((1, _jpeg.MESSAGE_LENGTH), np.uint8))
    with pytest.raises(ValueError, match="out is a"):
        _call(np.zeros(10, np.float32), 0)
    with pytest.raises(ValueError, match="out is a"):  # uint8 output: a quarter the bytes
        _call(np.zeros(3 * 8 * 8, np.float32), 1)
    with pytest.raises(ValueError, match="out_type"):
        _call(np.zeros(3 * 8 * 8, np.float32), 4)
    with pytest.raises(ValueError, match="lut"):
        _call(np.zeros(3 * 8 * 8, np.float32), 0, lut=np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="norm"):  # empty, or a mean and std per channel
        _call(np.zeros(3 * 8 * 8, np.float32), 0, norm=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="lut"):
        decode_batch(EncodedBatch.from_files([b""]), empty_plans(1),
                     np.zeros((1, 3, 8, 8), np.float32))


@pytest.mark.parametrize("field, value", [("filter", 5), ("filter", -1),
                                          ("scale_denom", 3)])
def test_invalid_plan_values_are_a_status(field, value):
    data = photo_like(64, 48, seed=1)
    plans = whole_image_plans([(64, 48)], (8, 8))
    plans[field] = value
    out = np.full((1, 3, 8, 8), 7, np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out)
    assert status[0] == st.ERROR and "invalid sample plan" in messages[0]
    assert (out == 0).all()


@pytest.mark.parametrize("op, value", [(7, 1.0), (16, 1.0), (3, 300.0), (3, 1.5), (0, -1.0)])
def test_invalid_colour_steps_are_a_status(op, value):
    data = photo_like(64, 48, seed=2)
    plans = whole_image_plans([(64, 48)], (8, 8))
    plans["colour"]["op"][0, 0] = op
    plans["colour"]["value"][0, 0] = value
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans,
                                    np.zeros((1, 3, 8, 8), np.uint8))
    assert status[0] == st.ERROR and "invalid sample plan" in messages[0]


@pytest.mark.parametrize("arg", [0, 1 | 1 << 2 | 2 << 4, 3 | 1 << 2 | 2 << 4, 1 << 6 | 0b100100])
def test_a_permute_step_that_is_not_a_permutation_is_a_status(arg):
    plans = whole_image_plans([(64, 48)], (8, 8))
    plans["colour"]["op"][0, 0] = PERMUTE
    plans["colour"]["arg"][0, 0] = arg
    status, messages = decode_batch(EncodedBatch.from_files([photo_like(64, 48, seed=3)]),
                                    plans, np.zeros((1, 3, 8, 8), np.uint8))
    assert status[0] == st.ERROR and "invalid sample plan" in messages[0]


def test_colour_first_needs_a_padded_plan():
    plans = whole_image_plans([(64, 48)], (8, 8))
    plans["colour_first"] = 1
    status, messages = decode_batch(EncodedBatch.from_files([photo_like(64, 48, seed=4)]),
                                    plans, np.zeros((1, 3, 8, 8), np.uint8))
    assert status[0] == st.ERROR and "invalid sample plan" in messages[0]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_colour_before_the_padding_is_torchvisions_distort_then_zoom_out_then_crop(perm):
    # NOTE [ Colour before the padding ]: the contrast mean is the photo's, the fill
    # keeps its bytes, and the permutation is torchvision's permute_channels
    from PIL import Image
    from torchvision.transforms.v2 import functional as F
    data = photo_like(64, 48, seed=5)
    photo = Image.open(io.BytesIO(data)).convert("RGB")
    ref = F.adjust_brightness(photo, 1.1)
    ref = F.adjust_contrast(ref, 0.6)
    ref = F.adjust_hue(ref, 0.04)
    ref = F.permute_channels(ref, list(perm))
    ref = F.pad(ref, [5, 7, 11, 3], fill=[123, 117, 104])     # 80 x 58
    ref = F.horizontal_flip(F.crop(ref, 2, 40, 50, 36))        # top, left, h, w
    plans = whole_image_plans([(64, 48)])
    plans["pad_mode"], plans["pad_fill"] = PAD_MODES["constant"], 123 | 117 << 8 | 104 << 16
    plans["colour_first"], plans["flip"] = 1, 1
    for axis, lo, length, start in (("x", 5, 80, 40), ("y", 7, 58, 2)):
        plans[axis]["pad_lo"], plans[axis]["pad_len"] = lo, length
        plans[axis]["pad_start"] = start
    plans["colour"]["op"][0, :4] = [BRIGHTNESS, CONTRAST, HUE, PERMUTE]
    plans["colour"]["value"][0, :3] = [1.1, 0.6, hue_shift(0.04)]
    plans["colour"]["arg"][0, 3] = perm[0] | perm[1] << 2 | perm[2] << 4
    out = np.zeros((1, 50, 36, 3), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out, hwc=True)
    assert status[0] == st.OK, messages[0]
    np.testing.assert_array_equal(out[0], np.asarray(ref))
