"""decode_each: a batch whose samples each go into an output of their own (sizes and
types of their own, as detection's and YOLO's images are) in one call gives, sample
for sample, what decode_batch gives for a batch of that one sample; on one thread or
several; a skipped or broken sample is a status and zeros, never its neighbours'."""
from __future__ import annotations

import numpy as np
import pytest

from jpegloader.decoders import EncodedBatch, Output, _jpeg, decode_batch, decode_each
from jpegloader.decoders import skipped_plans
from jpegloader.decoders import status as st
from jpegloader.pipelines.yolo.draw import letterbox_plans
from tests.conftest import whole_image_plans
from tests.hostile_jpegs import photo_like

#: (width, height) of each photo and (width, height) it is resized to
SIZES = [((64, 48), (32, 24)), ((40, 90), (40, 90)), ((33, 17), (50, 31)),
         ((128, 96), (128, 96)), ((70, 70), (35, 35))]
LUT = np.repeat(np.arange(256, dtype=np.float32)[None] / np.float32(255), 3, axis=0)


def _output(kind: str, w: int, h: int) -> Output:
    if kind == "float":
        return Output(np.full((1, 3, h, w), -1, np.float32), LUT)
    if kind == "levels":
        return Output(np.full((1, 3, h, w), 7, np.uint8))
    return Output(np.full((1, h, w, 3), 7, np.uint8), hwc=True, bgr=kind == "bgr")


def _batch():
    files = [photo_like(w, h, seed=k) for k, ((w, h), _) in enumerate(SIZES)]
    files[2] = files[2][:len(files[2]) // 3]  # truncated: a status of its own
    plans = skipped_plans(len(SIZES))
    for k, (size, out) in enumerate(SIZES):
        plans[k] = whole_image_plans([size], out)[0]
    (w, h), _ = SIZES[1]  # OpenCV's BGR rows: a whole photo as load_image reads it
    plans[1] = letterbox_plans([((h, w), (h, w), {"new_unpad": (w, h), "top": 0, "bottom": 0,
                                                  "left": 0, "right": 0})], 0)[0]
    return EncodedBatch.from_files(files), plans


@pytest.mark.parametrize("threads", [1, 2])
def test_each_sample_equals_decode_batch_of_that_sample_alone(threads):
    batch, plans = _batch()
    kinds = ["float", "bgr", "levels", "hwc", "levels"]
    plans[4]["skip"] = 1
    outputs = [_output(kind, *out) for kind, (_, out) in zip(kinds, SIZES)]
    status, messages = decode_each(batch, plans, outputs, threads=threads)
    for k, o in enumerate(outputs):
        one = EncodedBatch(batch.data, batch.offsets[k:k + 2])
        want = np.full_like(o.out, 99)
        s, m = decode_batch(one, plans[k:k + 1], want, o.lut, hwc=o.hwc, bgr=o.bgr)
        assert (status[k], messages[k]) == (s[0], m[0]), k
        assert np.array_equal(o.out, want), k
    assert list(status[[0, 1, 3]]) == [st.OK] * 3 and status[2] != st.OK
    assert status[4] == st.SKIPPED and not (outputs[2].out.any() or outputs[4].out.any())


def test_skipped_plans_decode_nothing():
    batch, _ = _batch()
    outputs = [Output.skipped() for _ in SIZES]
    status, _ = decode_each(batch, skipped_plans(len(SIZES)), outputs)
    assert (status == st.SKIPPED).all()


def test_bad_outputs_raise_value_error_naming_them():
    batch, plans = _batch()
    outputs = [_output("levels", *out) for _, out in SIZES]
    with pytest.raises(ValueError, match="5 outputs given"):
        decode_each(batch, plans, outputs[:4])
    with pytest.raises(ValueError, match="out must be"):  # a batch of two in one output
        decode_each(batch, plans, [Output(np.zeros((2, 3, 4, 4), np.uint8))] * 5)
    parts = [(o.out, 1, h, w, LUT, b"") for o, (_, (w, h)) in zip(outputs, SIZES)]
    call = (batch.data, batch.offsets, plans)
    tail = (100, np.zeros(5, np.int32), np.zeros((5, _jpeg.MESSAGE_LENGTH), np.uint8),
            np.zeros(2))
    with pytest.raises(ValueError, match="4 outputs for 5 samples"):
        _jpeg.decode_each(*call, tuple(parts[:4]), *tail)
    with pytest.raises(ValueError, match="an output's out"):
        _jpeg.decode_each(*call, tuple(parts[:4] + [(np.zeros(5, np.uint8), 1, 2, 2, LUT,
                                                     b"")]), *tail)
    with pytest.raises(ValueError, match="out_type 0 to 3"):
        _jpeg.decode_each(*call, tuple(parts[:4] + [(np.zeros(12, np.uint8), 4, 2, 2, LUT,
                                                     b"")]), *tail)
