"""The C core's call contract (decoders/_jpeg.pyi): wrong buffers raise ValueError
naming them; wrong plan values are a per-sample status, never a crash."""
from __future__ import annotations

import numpy as np
import pytest

from jpegloader.decoders import EncodedBatch, _jpeg, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import PLAN_DTYPE, empty_plans
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
        _call(np.zeros(3 * 8 * 8, np.float32), 3)
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


@pytest.mark.parametrize("op, value", [(9, 1.0), (3, 300.0), (3, 1.5), (0, -1.0)])
def test_invalid_colour_steps_are_a_status(op, value):
    data = photo_like(64, 48, seed=2)
    plans = whole_image_plans([(64, 48)], (8, 8))
    plans["colour"]["op"][0, 0] = op
    plans["colour"]["value"][0, 0] = value
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans,
                                    np.zeros((1, 3, 8, 8), np.uint8))
    assert status[0] == st.ERROR and "invalid sample plan" in messages[0]
