"""Accelerated pixels against torchvision-on-PIL on real ImageNet images.

Tolerance (mean absolute difference per image, 0-255 scale): median <= 1.0 and
worst <= 3.0 with DCT scaling allowed (decode="auto"); with decode="exact" the
resampler is Pillow's own arithmetic, so the only difference left is libjpeg
versions (measured: worst 0.09).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from tests.conftest import eval_transform, shared, to_255, train_transform
from jpegloader.decoders import EncodedBatch, decode_batch, probe
from jpegloader.transforms import draw, lower, replay, to_plans


def _run(files, transform, allow_dct, seed=123):
    pipeline = lower(transform)
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, header_status, _ = probe(batch)
    assert (header_status == 0).all()
    g = draw(pipeline, info[:, 0], info[:, 1], seed, np.arange(len(files)))
    plans = to_plans(g, info[:, 0], info[:, 1], allow_dct)
    out = np.empty((len(files), 3, *pipeline.output_size), np.float32)
    status, messages = decode_batch(batch, plans, out, pipeline.lut)
    diffs = {}
    for k, f in enumerate(files):
        assert status[k] == 0, f"{f.name}: {messages[k]}"
        ref = replay(pipeline, g, k, Image.open(f).convert("RGB"))
        diffs[f.name] = (to_255(torch.from_numpy(out[k])) - to_255(ref)).abs().mean().item()
    return diffs


@pytest.fixture(scope="module")
def imagenet_files():
    return sorted(shared("imagenet-sample").glob("*/*.JPEG"))


@pytest.mark.parametrize("make", [eval_transform, train_transform], ids=["eval", "train"])
def test_auto_decode_within_tolerance(imagenet_files, make):
    diffs = _run(imagenet_files, make(), allow_dct=True)
    values = np.array(list(diffs.values()))
    worst = max(diffs, key=diffs.get)
    assert np.median(values) <= 1.0
    assert diffs[worst] <= 3.0, f"{worst}: mean abs diff {diffs[worst]:.3f}"


@pytest.mark.parametrize("make", [eval_transform, train_transform], ids=["eval", "train"])
def test_exact_decode_matches_pillow(imagenet_files, make):
    diffs = _run(imagenet_files, make(), allow_dct=False)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= 0.5, f"{worst}: mean abs diff {diffs[worst]:.3f}"


def test_large_images_use_dct_scaling_within_tolerance():
    files = sorted(shared("edge-cases/large").glob("*.jpg"))
    pipeline = lower(eval_transform())
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, _, _ = probe(batch)
    g = draw(pipeline, info[:, 0], info[:, 1], 0, np.arange(len(files)))
    plans = to_plans(g, info[:, 0], info[:, 1], allow_dct_scaling=True)
    assert (plans["scale_denom"] >= 4).all(), plans["scale_denom"]
    diffs = _run(files, eval_transform(), allow_dct=True)
    for name, d in diffs.items():
        assert d <= 3.0, f"{name}: mean abs diff {d:.3f}"


def test_bad_buffers_raise_value_error():
    from jpegloader.decoders import _jpeg
    with pytest.raises(ValueError, match="offsets"):
        _jpeg.probe(b"abc", np.array([0, 10], np.int64), np.zeros((1, 4), np.int32),
                    np.zeros(1, np.int32), np.zeros((1, _jpeg.MESSAGE_LENGTH), np.uint8))
    with pytest.raises(ValueError, match="out is a"):
        pipeline = lower(eval_transform())
        batch = EncodedBatch.from_files([b"\xff\xd8"])
        from jpegloader.decoders.jpeg import PLAN_DTYPE
        _jpeg.decode_batch(batch.data, batch.offsets, np.zeros(1, PLAN_DTYPE),
                           np.zeros(10, np.float32), 224, 224, pipeline.lut, 100,
                           np.zeros(1, np.int32), np.zeros((1, _jpeg.MESSAGE_LENGTH), np.uint8),
                           np.zeros(2))


def test_corrupt_sample_reports_status_and_zeroes_slot(imagenet_files):
    data = imagenet_files[0].read_bytes()
    pipeline = lower(eval_transform())
    batch = EncodedBatch.from_files([data[: len(data) // 2], b"not a jpeg at all"])
    info, _, _ = probe(batch)
    g = draw(pipeline, np.maximum(info[:, 0], 1), np.maximum(info[:, 1], 1), 0, [0, 1])
    plans = to_plans(g, np.maximum(info[:, 0], 1), np.maximum(info[:, 1], 1), True)
    out = np.full((2, 3, 224, 224), 7.0, np.float32)  # poison: stale pixels must not survive
    status, messages = decode_batch(batch, plans, out, pipeline.lut)
    assert (status != 0).all()
    assert all(messages)
    assert (out == 0).all()


def test_odd_sized_flipped_output_matches_pillow(imagenet_files):
    # 99 columns is not a multiple of the 8-wide SIMD loops: covers their scalar tails,
    # with every sample mirrored.
    from torchvision import transforms as T

    from tests.conftest import IMAGENET_MEAN, IMAGENET_STD
    transform = T.Compose([T.Resize(100), T.CenterCrop(99), T.RandomHorizontalFlip(p=1.0),
                           T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
    diffs = _run(imagenet_files[:40], transform, allow_dct=False)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= 0.5, f"{worst}: mean abs diff {diffs[worst]:.3f}"


@pytest.mark.parametrize("shift", [0, 13, 243])
def test_fast_hue_equals_pillow_formulas_on_every_rgb_value(shift):
    # NOTE [ Fast exact HSV ] in color.c: the table-driven hue step against the
    # per-pixel transcription of Pillow's conversions, all 2**24 inputs.
    from jpegloader.decoders import _jpeg
    assert _jpeg.hue_selfcheck(shift) == 0
