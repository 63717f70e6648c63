"""NOTE [ Levels by division ] (pipelines/tensor_stage.py): the float output is
computed as ((level / 255) - mean) / std only where that gives the user's own
table bit for bit, and the C core's computed floats equal its table's."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision import transforms as T
from torchvision.transforms import v2

from jpegloader.decoders import EncodedBatch, _jpeg, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import FILTERS
from jpegloader.pipelines.tensor_stage import division_form, lut_array, run_on_ramp
from tests.conftest import noisy_jpeg, whole_image_plans
from tests.hostile_jpegs import photo_like

IMAGENET = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def _form(stage):
    kind, lut = run_on_ramp(stage)
    return division_form(stage, lut_array(lut))


def test_totensor_normalize_is_computed_with_torchs_float32_constants():
    form = _form((T.ToTensor(), T.Normalize(*IMAGENET)))
    assert form is not None
    np.testing.assert_array_equal(form, np.float32(np.stack(IMAGENET, axis=1)))
    assert form.dtype == np.float32 and form.shape == (3, 2)


def test_totensor_alone_divides_by_255_only():
    np.testing.assert_array_equal(_form((T.ToTensor(),)), [[0, 1]] * 3)


@pytest.mark.parametrize("stage", [
    (T.ToTensor(), T.Normalize(*IMAGENET), T.Normalize([0.5] * 3, [0.5] * 3)),  # two
    (T.ToTensor(), T.Lambda(lambda t: t * 2)),  # not the arithmetic of a Normalize
    (T.PILToTensor(),),  # uint8 output: no table at all
], ids=["two-normalizes", "scaled", "uint8"])
def test_other_stages_keep_the_table(stage):
    assert _form(stage) is None


def test_a_table_the_arithmetic_misses_by_one_bit_keeps_the_table():
    stage = (T.ToTensor(), T.Normalize(*IMAGENET))
    kind, lut = run_on_ramp(stage)
    table = lut_array(lut).copy()
    table.view(np.int32)[1, 77] += 1
    assert division_form(stage, table) is None


def test_v2_stages_are_computed_only_where_they_match():
    stage = (v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(*IMAGENET))
    kind, lut = run_on_ramp(stage)
    form = division_form(stage, lut_array(lut))
    if form is not None:  # whatever v2 computes, a returned form reproduces its table
        levels = np.arange(256, dtype=np.float32)
        computed = (levels / np.float32(255) - form[:, :1]) / form[:, 1:]
        np.testing.assert_array_equal(computed.view(np.int32), lut_array(lut).view(np.int32))


@pytest.mark.parametrize("out_size", [(224, 224), (37, 29), (16, 40), (100, 61)])
@pytest.mark.parametrize("filter_", ["bilinear", "lanczos"])
@pytest.mark.parametrize("vertical_first", [0, 1], ids=["horizontal-first", "vertical-first"])
def test_computed_floats_equal_the_tables(out_size, filter_, vertical_first):
    stage = (T.ToTensor(), T.Normalize(*IMAGENET))
    kind, lut = run_on_ramp(stage)
    table = lut_array(lut)
    form = division_form(stage, table)
    sizes = [(300, 200), (97, 141), (640, 427), (250, 250)]
    batch = EncodedBatch.from_files([photo_like(w, h, seed=i) for i, (w, h) in enumerate(sizes)])
    plans = whole_image_plans(sizes, out_size)
    plans["filter"] = FILTERS[filter_]
    plans["flip"] = [0, 1, 0, 1]
    plans["vertical_first"] = vertical_first  # the two orders end in different kernels
    w, h = out_size
    outs = []
    for norm in (None, form):
        out = np.full((len(sizes), 3, h, w), np.nan, np.float32)
        status, messages = decode_batch(batch, plans, out, table, norm=norm)
        assert (status == st.OK).all(), messages
        outs.append(out)
    np.testing.assert_array_equal(outs[0].view(np.int32), outs[1].view(np.int32))


@pytest.mark.parametrize("vertical_first", [0, 1], ids=["horizontal-first", "vertical-first"])
@pytest.mark.parametrize("mean_std", [IMAGENET, ([0.5] * 3, [0.5] * 3), ([0.0] * 3, [1.0] * 3),
                                      ([0.3, 0.61, 0.07], [0.17, 0.9, 0.33])],
                         ids=["imagenet", "half", "none", "odd"])
def test_every_level_is_computed_as_its_table_says(vertical_first, mean_std):
    """All 256 levels of every channel, through both kernels that end in floats:
    the C core forms level / 255 without a division (NOTE [ level / 255 without a
    division ] in csrc/resample.c), which must still be torch's float32 quotient."""
    stage = (T.ToTensor(), T.Normalize(*mean_std))
    kind, lut = run_on_ramp(stage)
    table = lut_array(lut)
    form = division_form(stage, table)
    assert form is not None
    # Per-pixel noise decodes to every level; an identity resample keeps them.
    size = (256, 64)
    batch = EncodedBatch.from_files([noisy_jpeg(*size, seed=7, quality=100, subsampling=0)])
    plans = whole_image_plans([size])
    plans["vertical_first"] = vertical_first
    outs = []
    for norm in (None, form):
        out = np.full((1, 3, size[1], size[0]), np.nan, np.float32)
        status, messages = decode_batch(batch, plans, out, table, norm=norm)
        assert (status == st.OK).all(), messages
        outs.append(out)
    for ch in range(3):  # the table is increasing: each float names its level
        levels = np.searchsorted(table[ch], outs[0][0, ch].ravel())
        assert len(np.unique(levels)) == 256
    np.testing.assert_array_equal(outs[0].view(np.int32), outs[1].view(np.int32))


def _array_at(shape, dtype, offset: int, fill) -> np.ndarray:
    """A C-contiguous array of `fill` starting `offset` bytes past a 64-byte boundary
    (the 512-bit float loop streams only to aligned rows)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start:start + nbytes].view(dtype).reshape(shape)
    out[:] = fill
    return out


@pytest.mark.skipif(not _jpeg.cpu_has_avx512(), reason="this processor has no AVX-512: "
                    "only the AVX2 loops run here")
@pytest.mark.parametrize("offset", [0, 16], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("out_size", [(224, 224), (37, 29), (100, 61), (31, 40)])
@pytest.mark.parametrize("filter_", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("output", ["floats", "bytes"])
def test_avx512_loops_give_the_avx2_loops_results(out_size, offset, filter_, output):
    """The last pass by division (rows of 32 or more) and the horizontal pass on rows
    (groups of 32 outputs; the rest by the AVX2 loop) have 512-bit loops beside the
    AVX2 ones; with them turned off the AVX2 loops run on the same processor."""
    floats = output == "floats"
    stage = (T.ToTensor(), T.Normalize(*IMAGENET))
    kind, lut = run_on_ramp(stage)
    table = lut_array(lut) if floats else None
    form = division_form(stage, table) if floats else None
    sizes = [(300, 200), (97, 141), (640, 427), (250, 250)]
    batch = EncodedBatch.from_files([photo_like(w, h, seed=i) for i, (w, h) in enumerate(sizes)])
    plans = whole_image_plans(sizes, out_size)
    plans["filter"] = FILTERS[filter_]
    plans["flip"] = [0, 1, 0, 1]
    w, h = out_size
    outs = []
    for allow in (True, False):
        before = _jpeg.allow_avx512(allow)
        try:
            out = _array_at((len(sizes), 3, h, w), np.float32 if floats else np.uint8, offset,
                            np.nan if floats else 7)
            status, messages = decode_batch(batch, plans, out, table, norm=form)
        finally:
            _jpeg.allow_avx512(before)
        assert (status == st.OK).all(), messages
        outs.append(out)
    if floats:  # bit for bit, and every output written
        np.testing.assert_array_equal(outs[0].view(np.int32), outs[1].view(np.int32))
        assert not np.isnan(outs[0]).any()
    else:
        np.testing.assert_array_equal(outs[0], outs[1])
