"""Your timm RandAugment with its photometric steps in C (NOTE [ Your timm RandAugment in
C ]): the same images as timm's __call__ for the same generator states, on real photos,
over the configurations timm's recipes use and beyond (DeiT's, with and without its
increasing levels; more layers, uniform and clamped magnitudes, weighted choice), every
operation drawn; Pillow's refusals alike; the generators left as timm leaves them; in a
loader (DeiT's training transform), batches equal to timm's and Pillow's own."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from PIL import Image

import jpegloader
from jpegloader.pipelines.classification import timm_augment
from tests.conftest import shared

aa = pytest.importorskip("timm.data.auto_augment", reason="timm is the oracle here")

HPARAMS = {"translate_const": 100, "img_mean": (124, 116, 104)}
CONFIGS = ["rand-m9-mstd0.5",  # DeiT's, as the benchmark runs it
           "rand-m9-mstd0.5-inc1",  # DeiT's own (0 bits at the top: Pillow 13 refuses)
           "rand-m7-n4-mstd101-mmax14",  # uniform magnitudes, a higher ceiling
           "rand-m9-n3-mstd0.5-tweights",  # weighted choice, without replacement
           "rand-m10-n15-mstd0-p1.0"]  # every operation, fixed magnitudes, always applied


@pytest.fixture(scope="module")
def crops():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[::31][:6]
    sizes = [(224, 224), (96, 96), (223, 157), (17, 300), (2, 2)]
    images = [Image.open(f).convert("RGB") for f in files]
    return [Image.fromarray(np.asarray(im.resize(size))) for im, size in zip(images, sizes)] \
        + [Image.fromarray(np.asarray(images[5]))]


def _run(fn, t, image, seed):
    random.seed(seed)
    np.random.seed(seed)
    try:
        out = np.asarray(fn(t, image))
    except (ValueError, TypeError) as e:  # Pillow's refusals (0 bits; an RGB fill on L)
        out = f"{type(e).__name__}: {e}"
    return out, random.getstate(), np.random.get_state()[1].copy()


@pytest.fixture
def on_bytes(monkeypatch) -> list:
    """timm's functions done on the bytes, from now on."""
    calls, table = [], dict(timm_augment._on_bytes())
    monkeypatch.setattr(timm_augment, "_on_bytes", lambda: {
        fn: (lambda *a, _f=fn, _g=g, **k: calls.append(_f.__name__) or _g(*a, **k))
        for fn, g in table.items()})
    return calls


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("interpolation", ["bicubic", "random"])
def test_the_images_are_timms_for_the_same_draws(crops, config, interpolation, on_bytes):
    hparams = dict(HPARAMS, **({"interpolation": Image.Resampling.BICUBIC}
                               if interpolation == "bicubic" else {}))
    t = aa.rand_augment_transform(config, hparams)
    for k, image in enumerate(crops):
        for seed in range(30):
            ours, *after_ours = _run(timm_augment.call, t, image, 1000 * k + seed)
            theirs, *after_theirs = _run(timm_augment.theirs(), t, image, 1000 * k + seed)
            assert type(ours) is type(theirs) and np.array_equal(ours, theirs), (config, k, seed)
            assert after_ours[0] == after_theirs[0] and np.array_equal(after_ours[1],
                                                                       after_theirs[1])
    assert len(on_bytes) > 10


def test_every_photometric_function_is_done_on_the_bytes(crops, on_bytes):
    t = aa.rand_augment_transform("rand-m10-n15-mstd0.5", dict(HPARAMS))
    for seed in range(40):
        ours, *_ = _run(timm_augment.call, t, crops[0], seed)
        theirs, *_ = _run(timm_augment.theirs(), t, crops[0], seed)
        assert type(ours) is type(theirs) and np.array_equal(ours, theirs), seed
    assert {fn.__name__ for fn in timm_augment._on_bytes()} == set(on_bytes)


def test_what_it_does_not_take_is_timms(crops):
    t = aa.rand_augment_transform("rand-m9-mstd0.5", dict(HPARAMS))
    with_info = crops[0].copy()
    with_info.info["dpi"] = (72, 72)
    for image in (crops[0].convert("L"), with_info):
        for seed in range(10):
            ours, *_ = _run(timm_augment.call, t, image, seed)
            theirs, *_ = _run(timm_augment.theirs(), t, image, seed)
            assert type(ours) is type(theirs) and np.array_equal(ours, theirs)


def test_the_probe_passes_and_leaves_the_generators_as_they_were():
    timm_augment.usable.cache_clear()
    random.seed(5)
    np.random.seed(5)
    before = random.getstate(), np.random.get_state()[1].copy()
    assert timm_augment.usable()
    assert random.getstate() == before[0] and np.array_equal(np.random.get_state()[1],
                                                             before[1])


def test_deits_transform_in_a_loader_runs_in_c_with_timms_pixels(tmp_path, monkeypatch):
    """DeiT's training transform (timm's create_transform, rand-m9-mstd0.5, bicubic):
    RandAugment first after the native crop takes the crop's bytes; the batches equal
    the same objects run by timm and Pillow alone."""
    from timm.data import create_transform
    from torchvision.datasets import ImageFolder

    from jpegloader.pipelines.classification import pil_affine
    photos = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:24]
    for k, photo in enumerate(photos):
        (tmp_path / f"c{k % 2}").mkdir(exist_ok=True)
        (tmp_path / f"c{k % 2}" / photo.name).symlink_to(photo.resolve())
    transform = create_transform(96, is_training=True, auto_augment="rand-m9-mstd0.5",
                                 interpolation="bicubic", re_prob=0.25)
    dataset = ImageFolder(str(tmp_path), transform)
    steps, real = [], timm_augment.steps
    monkeypatch.setattr(timm_augment, "steps", lambda *a, **k: steps.append(1) or real(*a, **k))

    def batches(usable: bool):
        monkeypatch.setattr(pil_affine, "usable", lambda: usable)
        monkeypatch.setattr(timm_augment, "usable", lambda: usable)
        loader = jpegloader.DataLoader(dataset, batch_size=8, shuffle=True, num_workers=0,
                                       generator=torch.Generator().manual_seed(3))
        assert loader.eligibility.accelerated, loader.eligibility.report()
        steps.clear()
        return [b[0] for b in loader]

    in_c = batches(True)
    assert len(steps) == len(dataset)  # every sample through the bytes path
    assert all(torch.equal(x, y) for x, y in zip(in_c, batches(False), strict=True))
    assert not steps


def test_the_switch_holds_timms_call_only_for_its_objects():
    from jpegloader.pipelines.classification.yours_in_c import yours_in_c
    t = aa.rand_augment_transform("rand-m9-mstd0.5", dict(HPARAMS))
    with yours_in_c([object()]):
        assert aa.RandAugment.__call__ is timm_augment.theirs()
    with yours_in_c([t]):
        assert aa.RandAugment.__call__ is timm_augment.call
    assert aa.RandAugment.__call__ is timm_augment.theirs()
