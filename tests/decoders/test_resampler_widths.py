"""The resampler's last step has three vector kernels: 32 bytes at a time for byte
output (rows of 32 or more), 16 at a time for floats and shorter rows, and levels
to floats at the end of the vertical-first order; each does a ragged end again as
the last full chunk, and each mirrors for flips.  These tests hold them to each
other and to their own mirror images across row widths on both sides of 16 and 32
(Pillow parity itself is tests/pipelines/classification/test_parity.py)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import FILTERS
from tests.conftest import whole_image_plans
from tests.hostile_jpegs import photo_like

SIZES = [(300, 200), (97, 141), (640, 427), (250, 250)]
IDENTITY = np.tile(np.arange(256, dtype=np.float32), (3, 1))  # float output = the level


def _decode(out_size, dtype, flip, filter_, vertical_first=0):
    batch = EncodedBatch.from_files([photo_like(w, h, seed=i) for i, (w, h) in enumerate(SIZES)])
    plans = whole_image_plans(SIZES, out_size)
    plans["filter"] = FILTERS[filter_]
    plans["flip"] = flip
    plans["vertical_first"] = vertical_first
    w, h = out_size
    out = np.zeros((len(SIZES), 3, h, w), dtype)
    status, messages = decode_batch(batch, plans, out, IDENTITY if dtype == np.float32 else None)
    assert (status == st.OK).all(), messages
    return out


@pytest.mark.parametrize("width", [224, 250, 64, 33, 32, 31, 17, 16])
@pytest.mark.parametrize("filter_", ["bilinear", "lanczos"])
def test_byte_and_float_kernels_give_the_same_levels(width, filter_):
    size = (width, 90)
    as_bytes = _decode(size, np.uint8, 0, filter_)
    as_floats = _decode(size, np.float32, 0, filter_)
    # the vertical-first order: the same passes, converted to floats at the end
    np.testing.assert_array_equal(_decode(size, np.uint8, 0, filter_, 1),
                                  _decode(size, np.float32, 0, filter_, 1).astype(np.uint8))
    np.testing.assert_array_equal(as_bytes, as_floats.astype(np.uint8))
    assert as_bytes.std() > 10  # real pictures, not a blank


@pytest.mark.parametrize("width", [224, 250, 33, 31, 16])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("vertical_first", [0, 1], ids=["horizontal-first", "vertical-first"])
def test_a_flip_mirrors_every_row_exactly(width, dtype, vertical_first):
    size = (width, 70)
    plain = _decode(size, dtype, 0, "bilinear", vertical_first)
    flipped = _decode(size, dtype, 1, "bilinear", vertical_first)
    np.testing.assert_array_equal(flipped, plain[..., ::-1])


@pytest.mark.parametrize("vertical_first", [0, 1])
def test_rgb_split_keeps_every_pixel_across_widths(vertical_first):
    # The split into planes runs 32 pixels at a time (AVX2), 16 (SSSE3) below 32, and
    # does a ragged end as the last full chunk again; at its own size the resample is
    # an identity, so the output is the decoded image itself, as PIL decodes it.
    widths = [16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100]
    for width in widths:
        data = photo_like(width, 40, seed=width, subsampling=0)
        plans = whole_image_plans([(width, 40)])
        plans["vertical_first"] = vertical_first
        out = np.zeros((1, 3, 40, width), np.uint8)
        status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out, None)
        assert (status == st.OK).all(), messages
        want = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).transpose(2, 0, 1)
        assert np.array_equal(out[0], want), width
