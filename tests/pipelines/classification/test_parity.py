"""Accelerated pixels against torchvision-on-PIL on real ImageNet images, with the same
random parameters replayed through torchvision's functional ops.

Tolerance (mean absolute difference per image, 0-255 scale): median <= 1.0 and worst
<= 3.0 with DCT scaling allowed (decode="auto"); with decode="exact" the resampler is
Pillow's own arithmetic (every filter, in the installed Pillow's pass order), so the
only difference left is libjpeg-turbo's version: worst <= 0.5 is asserted, and the
measured figures are in the README.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode as IM

from jpegloader.decoders import EncodedBatch, decode_batch, probe
from jpegloader.decoders.plans import to_plans
from jpegloader.pipelines.classification.draw import draw, replay
from tests.conftest import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    eval_transform,
    lower,
    shared,
    train_transform,
    variants,
)


def _normalize():
    return [T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]


def deit_eval():
    return T.Compose([T.Resize(256, interpolation=IM.BICUBIC), T.CenterCrop(224), *_normalize()])


def jitter_train():
    return T.Compose([T.RandomResizedCrop(224, interpolation=IM.BICUBIC),
                      T.RandomHorizontalFlip(), T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)],
                                                              p=0.8),
                      T.RandomGrayscale(0.2), *_normalize()])


def run(files, transform, allow_dct, seed=123) -> dict[str, float]:
    """Mean absolute difference (0-255) per file between the C core and the replay."""
    program = lower(transform)
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, header_status, _ = probe(batch)
    assert (header_status == 0).all()
    d = draw(program, info[:, 0], info[:, 1], seed, np.arange(len(files)))
    plans = to_plans(d.geometry, info[:, 0], info[:, 1], allow_dct, colour=d.colour)
    out = np.empty((len(files), 3, *program.output_size), np.dtype(program.output_dtype))
    status, messages = decode_batch(batch, plans, out, program.lut_array)
    diffs = {}
    for k, f in enumerate(files):
        assert status[k] == 0, f"{f.name}: {messages[k]}"
        ref = replay(program, d, k, Image.open(f).convert("RGB"))
        ours = torch.from_numpy(out[k])
        diffs[f.name] = (levels(ours, program) - levels(ref, program)).abs().mean().item()
    return diffs


def levels(t: torch.Tensor, program) -> torch.Tensor:
    """Pixels on the 0-255 scale (undoing Normalize where there is one)."""
    if program.output_dtype == "uint8":
        return t.double()
    lut = torch.from_numpy(program.lut_array.copy()).double()
    lo, step = lut[:, :1], (lut[:, 255:] - lut[:, :1]) / 255
    return (t.double() - lo[:, :, None]) / step[:, :, None]


@pytest.fixture(scope="module")
def imagenet_files():
    return sorted(shared("imagenet-sample").glob("*/*.JPEG"))


def timm_train():
    pytest.importorskip("timm", reason="timm is a test dependency (the [test] extra)")
    from tests.recipes import timm_train
    return timm_train()


PIPELINES = {"eval": eval_transform, "train": train_transform, "deit-eval": deit_eval,
             "jitter-train": jitter_train, "timm-train": timm_train}


def assert_within_bound(diffs: dict) -> None:
    """The README's bound for decode="auto": mean absolute difference per image at most
    1.0 at the median and 3.0 at worst."""
    worst = max(diffs, key=diffs.get)
    assert np.median(list(diffs.values())) <= 1.0
    assert diffs[worst] <= 3.0, f"{worst}: mean abs diff {diffs[worst]:.3f}"


@pytest.mark.parametrize("name", variants(PIPELINES, keep=["eval"]))
def test_auto_decode_within_tolerance(imagenet_files, name):
    assert_within_bound(run(imagenet_files, PIPELINES[name](), allow_dct=True))


# Output sizes from low-resolution and progressive-resizing schedules up to 1024, each
# filter, a centre crop and a random crop: NOTE [ How far to scale in the DCT domain ].
SIZES = [(32, IM.BILINEAR, "eval"), (40, IM.BICUBIC, "eval"), (48, IM.BILINEAR, "train"),
         (56, IM.LANCZOS, "eval"), (64, IM.BILINEAR, "eval"), (64, IM.BOX, "eval"),
         (64, IM.HAMMING, "eval"), (80, IM.BILINEAR, "eval"), (96, IM.HAMMING, "train"),
         (112, IM.BICUBIC, "train"),
         (128, IM.BILINEAR, "eval"), (128, IM.BOX, "train"), (160, IM.BICUBIC, "eval"),
         (192, IM.BILINEAR, "eval"), (320, IM.LANCZOS, "train"), (512, IM.BILINEAR, "eval"),
         (1024, IM.BICUBIC, "eval")]


@pytest.mark.parametrize("size, mode, kind", variants(SIZES, keep=SIZES[:3] + SIZES[11:12]),
                         ids=[f"{s}-{m.value}-{k}" for s, m, k in SIZES])
def test_auto_decode_within_tolerance_at_every_size(imagenet_files, size, mode, kind):
    if kind == "eval":
        first = [T.Resize(size, interpolation=mode), T.CenterCrop(size * 7 // 8)]
    else:
        first = [T.RandomResizedCrop(size, interpolation=mode), T.RandomHorizontalFlip()]
    files = imagenet_files if size < 512 else imagenet_files[::4]  # no DCT scaling there
    assert_within_bound(run(files, T.Compose([*first, *_normalize()]), allow_dct=True))


@pytest.mark.parametrize("name", variants(PIPELINES, keep=["train"]))
def test_exact_decode_matches_pillow(imagenet_files, name):
    diffs = run(imagenet_files, PIPELINES[name](), allow_dct=False)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= 0.5, f"{worst}: mean abs diff {diffs[worst]:.3f}"
    # Measured: every image bit-identical (same decoded pixels, same arithmetic); only
    # a libjpeg-turbo in Pillow that decodes differently from the system's may differ.
    identical = np.mean([d == 0 for d in diffs.values()])
    assert identical >= 0.95, f"only {identical:.1%} of the images are bit-identical"


@pytest.mark.parametrize("mode", [IM.BILINEAR, IM.BICUBIC, IM.BOX, IM.HAMMING, IM.LANCZOS])
def test_every_pillow_filter_is_exact(imagenet_files, mode):
    # Up- and down-scaling on both axes (200 -> 160 x 260 crops): all of a filter's taps.
    transform = T.Compose([T.RandomResizedCrop((160, 260), scale=(0.05, 1.0),
                                               interpolation=mode), T.PILToTensor()])
    diffs = run(imagenet_files[:120], transform, allow_dct=False)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= 0.5, f"{mode.value} {worst}: mean abs diff {diffs[worst]:.3f}"


def test_uint8_output_is_the_levels_pil_to_tensor_gives(imagenet_files):
    transform = T.Compose([T.Resize(232), T.CenterCrop(224), T.PILToTensor()])
    program = lower(transform)
    assert program.output_dtype == "uint8" and program.lut is None
    diffs = run(imagenet_files[:60], transform, allow_dct=False)
    assert max(diffs.values()) <= 0.5


def test_tall_reductions_follow_the_installed_pillows_pass_order(imagenet_files):
    # A reduction that shrinks the height far more than the width: Pillow 13 runs its
    # vertical pass first here, earlier Pillows the horizontal one; either way the
    # result is bit-identical (NOTE [ Pillow's pass order ]).
    transform = T.Compose([T.Resize((120, 330)), T.PILToTensor()])
    diffs = run(imagenet_files[:60], transform, allow_dct=False)
    assert sum(d == 0 for d in diffs.values()) >= 55, diffs


def test_large_images_use_dct_scaling_within_tolerance():
    files = sorted(shared("edge-cases/large").glob("*.jpg"))
    program = lower(eval_transform())
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, _, _ = probe(batch)
    d = draw(program, info[:, 0], info[:, 1], 0, np.arange(len(files)))
    plans = to_plans(d.geometry, info[:, 0], info[:, 1], dct_scaling=True)
    assert (plans["scale_denom"] >= 4).all(), plans["scale_denom"]
    diffs = run(files, eval_transform(), allow_dct=True)
    for name, diff in diffs.items():
        assert diff <= 3.0, f"{name}: mean abs diff {diff:.3f}"


def test_corrupt_sample_reports_status_and_zeroes_slot(imagenet_files):
    data = imagenet_files[0].read_bytes()
    program = lower(eval_transform())
    batch = EncodedBatch.from_files([data[: len(data) // 2], b"not a jpeg at all"])
    info, _, _ = probe(batch)
    w, h = np.maximum(info[:, 0], 1), np.maximum(info[:, 1], 1)
    d = draw(program, w, h, 0, [0, 1])
    plans = to_plans(d.geometry, w, h, True)
    out = np.full((2, 3, 224, 224), 7.0, np.float32)  # poison: stale pixels must not survive
    status, messages = decode_batch(batch, plans, out, program.lut_array)
    assert (status != 0).all()
    assert all(messages)
    assert (out == 0).all()


@pytest.mark.parametrize("size", [(99, 99), (5, 7), (15, 17), (16, 33)])
@pytest.mark.parametrize("tail", ["normalize", "uint8"])
def test_odd_sized_flipped_output_matches_pillow(imagenet_files, size, tail):
    # Sides that are not multiples of the 16-wide SIMD loops (whose ragged end is the
    # last 16 done again), and rows under 16 (the scalar loops), every sample mirrored.
    ending = _normalize() if tail == "normalize" else [T.PILToTensor()]
    transform = T.Compose([T.Resize(max(size) + 1), T.CenterCrop(size),
                           T.RandomHorizontalFlip(p=1.0), *ending])
    diffs = run(imagenet_files[:40], transform, allow_dct=False)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= 0.5, f"{worst}: mean abs diff {diffs[worst]:.3f}"
    assert np.mean([d == 0 for d in diffs.values()]) >= 0.95


@pytest.mark.parametrize("shift", [0, 13, 243])
def test_fast_hue_equals_pillow_formulas_on_every_rgb_value(shift):
    # NOTE [ Fast exact HSV ] in colour.c: the table-driven hue step against the
    # per-pixel transcription of Pillow's conversions, all 2**24 inputs.
    from jpegloader.decoders import _jpeg
    assert _jpeg.hue_selfcheck(shift) == 0
