"""Multi-view transforms (DINO, SimCLR, MoCo, BYOL): recognised by structure, each
image decoded once, every view equal to the user's transform replayed with its draws."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import stats
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from jpegloader.bench.recipes import DinoMultiCrop, ViewGenerator
from jpegloader.decoders import EncodedBatch, decode_batch, decode_views, probe
from jpegloader.decoders.plans import to_plans, view_plans
from jpegloader.pipelines.classification.draw import draw, replay
from jpegloader.pipelines.classification.lower import lower_transform
from jpegloader.pipelines.classification.views import recognise_views, view_seed
from jpegloader.pipelines.random_stream import epoch_seed
from tests.conftest import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    decode_natively,
    photo_folder,
    shared,
)


def _norm():
    return [T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]


def _augment(size, scale=(0.08, 1.0)):
    return T.Compose([T.RandomResizedCrop(size, scale=scale), T.RandomHorizontalFlip(),
                      T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
                      T.RandomGrayscale(0.2), *_norm()])


class TwoCropsTransform:
    """MoCo v2's: one base transform, two draws."""

    def __init__(self, base_transform):
        self.base_transform = base_transform

    def __call__(self, x):
        q = self.base_transform(x)
        k = self.base_transform(x)
        return [q, k]


class TwoCropsTransformV3:
    """MoCo v3's (and BYOL's): two different transforms."""

    def __init__(self, base_transform1, base_transform2):
        self.base_transform1 = base_transform1
        self.base_transform2 = base_transform2

    def __call__(self, x):
        return [self.base_transform1(x), self.base_transform2(x)]


class ListOfViews:
    """A list of Composes applied in turn, returned as a tuple."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        return tuple(t(x) for t in self.transforms)


class ConvertsFirst:
    """Not a plain multi-view container: it changes the image before the views."""

    def __init__(self, base):
        self.base = base

    def __call__(self, x):
        x = x.rotate(90)
        return [self.base(x), self.base(x)]


class RandomCount:
    """A random number of views cannot be batched."""

    def __init__(self, base):
        self.base = base

    def __call__(self, x):
        return [self.base(x) for _ in range(random.randint(1, 4))]


def test_containers_are_recognised_by_structure():
    a, b = _augment(32), _augment(16)
    dino = DinoMultiCrop(local_crops=3)
    cases = {
        "dino": (dino, ["global_transfo1", "global_transfo2", *["local_transfo"] * 3]),
        "moco-v2": (TwoCropsTransform(a), ["base_transform"] * 2),
        "moco-v3": (TwoCropsTransformV3(a, b), ["base_transform1", "base_transform2"]),
        "simclr": (ViewGenerator(a, n_views=3), ["base_transform"] * 3),
        "list": (ListOfViews([a, b, a]), ["transforms[0]", "transforms[1]", "transforms[2]"]),
    }
    for name, (container, expected) in cases.items():
        found = recognise_views(container)
        assert found is not None, name
        views, _ = found
        assert [n for n, _ in views] == expected, name
    # the user's object is not changed by the probe
    assert dino.global_transfo1.transforms[0].size == (224, 224)
    for not_views in (ConvertsFirst(a), RandomCount(a), a, lambda x: [a(x), a(x)], None):
        assert recognise_views(not_views) is None


def test_each_view_is_byte_for_byte_its_own_decode():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:24]
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, _, _ = probe(batch)
    w, h = info[:, 0], info[:, 1]
    programs = [lower_transform(t)[0] for t in
                (_augment(224, (0.4, 1)), _augment(96, (0.05, 0.4)), T.Compose(
                    [T.Resize(80), T.CenterCrop(64), T.PILToTensor()]))]
    indices = np.arange(len(files))
    draws = [draw(p, w, h, view_seed(7, v), indices) for v, p in enumerate(programs)]
    plans = view_plans([(d.geometry, d.colour) for d in draws], w, h, True)
    # one DCT scale per sample: the finest any view would take alone
    own = np.stack([to_plans(d.geometry, w, h, True)["scale_denom"] for d in draws], axis=1)
    assert (plans["scale_denom"] == own.min(axis=1)[:, None]).all()
    assert (own.max(axis=1) > own.min(axis=1)).any(), "the scales never differ: no test"
    outs = [np.zeros((len(files), 3, *p.output_size), np.dtype(p.output_dtype))
            for p in programs]
    status, _ = decode_views(batch, plans, outs, [p.lut_array for p in programs],
                             [None] * 3, [False] * 3, threads=2)
    assert (status == 0).all()
    for v, p in enumerate(programs):
        alone = np.zeros_like(outs[v])
        s, _ = decode_batch(batch, np.ascontiguousarray(plans[:, v]), alone, p.lut_array)
        assert (s == 0).all() and np.array_equal(alone, outs[v]), v


def test_a_view_plan_that_differs_in_scale_fails_that_sample_only():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:2]
    batch = EncodedBatch.from_files([f.read_bytes() for f in files])
    info, _, _ = probe(batch)
    w, h = info[:, 0], info[:, 1]
    p = lower_transform(_augment(32))[0]
    d = draw(p, w, h, 1, [0, 1])
    plans = view_plans([(d.geometry, d.colour)] * 2, w, h, False)
    plans[0, 1]["scale_denom"] = 2
    outs = [np.full((2, 3, 32, 32), 7.0, np.float32) for _ in range(2)]
    status, messages = decode_views(batch, plans, outs, [p.lut_array] * 2, [None] * 2,
                                    [False] * 2)
    assert status[0] != 0 and "view 1" in messages[0] and status[1] == 0
    assert not outs[0][0].any() and not outs[1][0].any()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return photo_folder(tmp_path_factory.mktemp("views") / "d", 20, classes=2)


def test_every_view_equals_the_user_transform_replayed_with_its_draws(folder):
    """DINO's multi-crop: native crop, flip, jitter and grayscale, then the user's
    GaussianBlur and Solarization seeded per view; decode="exact" gives PIL's pixels."""
    ds = datasets.ImageFolder(str(folder), DinoMultiCrop(local_crops=3))
    seed, n = epoch_seed(5, 2), len(ds)
    decoder, arrays, report = decode_natively(ds, seed)
    programs, indices = decoder.views.programs, list(range(n))
    assert report.count == n and report.python_path == 0
    images = [Image.open(ds.samples[i][0]).convert("RGB") for i in indices]
    widths, heights = [im.width for im in images], [im.height for im in images]
    identical = 0
    for v, program in enumerate(programs):
        key = view_seed(seed, v)
        d = draw(program, widths, heights, key, indices)
        for k, image in enumerate(images):
            ref = replay(program, d, k, image, key, indices[k])
            diff = (torch.from_numpy(arrays[v][k]).double() - ref.double()).abs().mean().item()
            identical += diff == 0
            assert diff < 0.05, (v, k, diff)
    assert identical >= len(programs) * n - 2, f"{identical} of {len(programs) * n}"
    assert np.array_equal(arrays[-1], [ds.samples[i][1] for i in indices])


def test_view_draws_follow_each_views_distribution_and_are_independent():
    g = T.RandomResizedCrop(224, scale=(0.4, 1.0))
    local = T.RandomResizedCrop(96, scale=(0.05, 0.4))
    container = TwoCropsTransformV3(T.Compose([g, T.RandomHorizontalFlip(), *_norm()]),
                                    T.Compose([local, T.RandomHorizontalFlip(0.3), *_norm()]))
    views, _ = lower_transform_views(container)
    n, width, height = 4000, 500, 375
    idx = np.arange(n)
    torch.manual_seed(0)
    img = torch.empty(3, height, width)
    crit = 1.95 * np.sqrt(2 / n)  # two-sample KS at alpha = 0.001
    areas, flips = [], []
    for v, (program, t) in enumerate(zip(views.programs, (g, local), strict=True)):
        d = draw(program, np.full(n, width), np.full(n, height), view_seed(3, v), idx)
        ours = d.geometry.crop_w * d.geometry.crop_h / (width * height)
        ref = np.array([np.prod(T.RandomResizedCrop.get_params(img, t.scale, t.ratio)[2:])
                        for _ in range(n)]) / (width * height)
        assert stats.ks_2samp(ours, ref).statistic < crit, v
        areas.append(ours)
        flips.append(d.geometry.flip)
    assert abs(flips[0].mean() - 0.5) < 0.03 and abs(flips[1].mean() - 0.3) < 0.03
    # one stream per view: the views' draws are uncorrelated
    assert abs(np.corrcoef(areas[0], areas[1])[0, 1]) < 0.06
    assert abs(np.corrcoef(flips[0], flips[1])[0, 1]) < 0.06


def lower_transform_views(container):
    from jpegloader.pipelines.classification.views import lower_views
    return lower_views(container)


def _batches(loader):
    return [([v.clone() for v in views], y.clone()) for views, y in loader]


def test_batches_have_torchs_structure_and_are_the_same_for_any_num_workers(folder):
    container = TwoCropsTransformV3(_augment(48), T.Compose([T.Resize(40), T.CenterCrop(32),
                                                             *_norm()]))
    ds = datasets.ImageFolder(str(folder), container)
    ref = next(iter(TorchDataLoader(ds, batch_size=6)))
    runs = []
    for workers in (0, 2):
        loader = jpegloader.DataLoader(ds, batch_size=6, shuffle=True, num_workers=workers,
                                       generator=torch.Generator().manual_seed(3))
        assert loader.eligibility.accelerated, loader.eligibility.report()
        runs.append(_batches(loader))
    first = runs[0][0]
    assert type(first[0]) is type(ref[0]) is list and len(first[0]) == len(ref[0]) == 2
    for ours, theirs in zip(first[0], ref[0], strict=True):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert first[1].dtype == ref[1].dtype
    for a, b in zip(*runs, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a[0], b[0], strict=True))
        assert torch.equal(a[1], b[1])
    # the deterministic view is torch's own, pixel for pixel within the tolerance
    loader = jpegloader.DataLoader(ds, batch_size=6, decode="exact")
    ours = next(iter(loader))
    assert torch.equal(ours[1], ref[1])
    assert (ours[0][1] - ref[0][1]).abs().mean() < 0.01


def test_a_custom_collate_with_views_falls_back_saying_why(folder):
    ds = datasets.ImageFolder(str(folder), TwoCropsTransform(_augment(32)))
    verdict = jpegloader.explain(ds, batch_size=4, collate_fn=lambda b: b)
    assert not verdict.accelerated
    assert "multi-view" in verdict.summary()


def test_a_view_that_does_not_lower_is_named(folder):
    bad = T.Compose([T.RandAugment(), T.RandomResizedCrop(32), T.ToTensor()])
    ds = datasets.ImageFolder(str(folder), TwoCropsTransformV3(_augment(32), bad))
    verdict = jpegloader.explain(ds, batch_size=4)
    assert not verdict.accelerated
    assert "view 2 of 2 (base_transform2)" in verdict.summary()


def test_the_split_is_named_per_view(folder):
    ds = datasets.ImageFolder(str(folder), DinoMultiCrop())
    verdict = jpegloader.explain(ds, batch_size=4)
    assert verdict.accelerated
    views = verdict.split["views"]
    assert [v["view"] for v in views] == ["view 1 of 10 (global_transfo1)",
                                          "view 2 of 10 (global_transfo2)",
                                          "views 3-10 of 10 (local_transfo)"]
    assert views[1]["yours"] == ["RandomGaussianBlur", "RandomSolarize"]
    assert "RandomResizedCrop(96x96, bicubic)" in views[2]["native"]
    report = verdict.report()
    assert "views 3-10 of 10 (local_transfo): native: decode, RandomResizedCrop(96x96" in report
    assert "10 views of each image, decoded once" in report


def test_samples_the_c_core_cannot_decode_get_every_view_from_python(tmp_path):
    """A CMYK JPEG and a PNG named .JPEG take the Python path: opened once, each view
    replayed with its own draws."""
    edge = shared("edge-cases")
    root = tmp_path / "d" / "c"
    root.mkdir(parents=True)
    for f in [edge / "cmyk/pil_sample_cmyk.jpg", edge / "png-named-jpeg/hopper_png.JPEG",
              *sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:3]]:
        (root / f.name).write_bytes(f.read_bytes())
    ds = datasets.ImageFolder(str(root.parent), TwoCropsTransformV3(
        _augment(48), T.Compose([T.Resize(40), T.CenterCrop(32), *_norm()])))
    seed, n = 11, len(ds)
    decoder, arrays, report = decode_natively(ds, seed)
    indices = list(range(n))
    assert report.count == n and report.python_path == 2
    for k in indices:
        image = Image.open(ds.samples[k][0]).convert("RGB")
        for v, program in enumerate(decoder.views.programs):
            key = view_seed(seed, v)
            d = draw(program, [image.width], [image.height], key, [k])
            ref = replay(program, d, 0, image, key, k)
            assert (torch.from_numpy(arrays[v][k]) - ref).abs().mean() < 0.05, (k, v)
