"""Helpers of the detection tests: the references' datasets built as their scripts
build them (on coco-sample, or the generated set where the corpus is absent), the
loaders compared, a batch decoded as a worker decodes it, the user's objects replayed
with the loader's draws, and a set of odd files."""
from __future__ import annotations

import contextlib
import json
import shutil
import sys
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import tv_tensors

import jpegloader
from jpegloader.bench.pinning import emulated_pinning
from jpegloader.pipelines import DETECTION, DecodeOptions
from jpegloader.pipelines.detection.draw import box_seed
from jpegloader.pipelines.detection.states import flattened
from jpegloader.pipelines.detection.steps import Flip, Resize
from tests import detection_references_copy as R
from tests.coco_fixtures import coco_sample


def build(policy: str, backend: str = "pil", image_set: str = "train", with_masks=False,
          target_keys=None, folder=None, ann=None):
    img_folder, ann_file = coco_sample()
    transforms = R.DetectionPresetEval(backend) if policy == "eval" else \
        R.DetectionPresetTrain(data_augmentation=policy, backend=backend)
    return R.get_coco(str(folder or img_folder), str(ann or ann_file), image_set, transforms,
                      with_masks=with_masks, target_keys=target_keys)


def loader(ds, workers=0, cls=jpegloader.DataLoader, **kw):
    kw.setdefault("batch_size", 4)
    return cls(ds, num_workers=workers, collate_fn=R.collate_fn, **kw)


def assert_same_sample(ours, ref, exact_pixels=True, where=""):
    (img, target), (rimg, rtarget) = ours, ref
    assert type(img) is type(rimg), where
    assert img.shape == rimg.shape and img.dtype == rimg.dtype, where
    if exact_pixels == "level":
        # torch's contrast mean sums in an order that depends on its threads: the
        # C core's exact mean leaves a few pixels one level off (colour_tensor.h)
        diff = (img.double() - rimg.double()).abs() * (255.0 if img.is_floating_point() else 1)
        assert diff.max().item() <= 1 + 1e-6 and (diff > 0.5).float().mean() < 0.05, where
    elif exact_pixels:
        assert torch.equal(img, rimg), where
    else:
        diff = (img.double() - rimg.double()).abs()
        scale = 255.0 if img.is_floating_point() else 1.0
        assert diff.mean().item() * scale <= 1.0 and diff.max().item() * scale <= 12, where
    assert target.keys() == rtarget.keys(), where
    for key, value in rtarget.items():
        got = target[key]
        assert type(got) is type(value), (where, key)
        if isinstance(value, torch.Tensor):
            assert got.dtype == value.dtype and torch.equal(got, value), (where, key)
            if isinstance(value, tv_tensors.BoundingBoxes):
                assert got.format == value.format and got.canvas_size == value.canvas_size
        else:
            assert got == value, (where, key)


def flat(batches):
    return [s for images, targets in batches for s in zip(images, targets)]


@contextmanager
def replaying(program, draws, k):
    """torch.rand / torch.randint answer as the loader drew for sample k, in step order:
    RandomHorizontalFlip asks torch.rand(1) >= p, RandomShortestSize torch.randint(n, ...).
    RandomIoUCrop's own draws (torch.rand(2), torch.randint(low=, high=, size=)) come
    from torch's generator seeded as the loader seeds it (NOTE [ Draws that depend on the
    boxes ])."""
    answers = []
    for step in flattened(program.steps):
        if isinstance(step, Flip):
            answers.append(("rand", 0.0 if step.flips(draws, k) else 1.0))
        elif isinstance(step, Resize) and step.slot >= 0:
            answers.append(("randint", step.sizes.index(step.choice(draws, k))))
    queue = iter(answers)
    real_rand, real_randint = torch.rand, torch.randint

    def answer(kind):
        got, value = next(queue)
        assert got == kind
        return value

    def rand(*a, **kw):
        # RandomZoomOut and RandomPhotometricDistort also ask torch.rand(1): theirs come
        # from the seeded generator
        asker = type(sys._getframe(1).f_locals.get("self")).__name__
        if a == (1,) and not kw and asker == "RandomHorizontalFlip":
            return torch.tensor([answer("rand")])
        return real_rand(*a, **kw)

    def randint(*a, **kw):
        return real_randint(*a, **kw) if "low" in kw else torch.tensor(answer("randint"))

    if any(s.draws_own for s in flattened(program.steps)):
        torch.manual_seed(box_seed(draws, k))
    with mock.patch.object(torch, "rand", rand), mock.patch.object(torch, "randint", randint):
        yield
    assert next(queue, None) is None, "a draw the transforms never asked for"


def decoded(ds, indices, seed, options=DecodeOptions(), report_too=False, pinned=False):
    """(decoder, the samples) of one batch decoded as a worker would; with
    ``report_too``, its report last; with ``pinned``, for the pin thread (assembled
    with pinning emulated)."""
    lowering = DETECTION.lower(ds, {"collate_fn": R.collate_fn})
    assert lowering.ok, lowering.checks
    decoder = DETECTION.decoder(lowering, options)
    arrays = tuple(np.zeros((len(indices), *shape), dtype=torch.empty((), dtype=dt).numpy().dtype)
                   for shape, dt in decoder.layout)
    report = decoder.decode(indices, seed, arrays, "in the test", pinned=pinned)
    with emulated_pinning() if pinned else contextlib.nullcontext():
        images, targets = decoder.assemble([torch.from_numpy(a) for a in arrays],
                                           report.extras)
    return (decoder, list(zip(images, targets))) + ((report,) if report_too else ())


@pytest.fixture
def odd_coco(tmp_path):
    """Four real photos; one whose JSON size is wrong (smaller than the file), one with
    a degenerate box and a box reaching outside, one PNG named .jpg, one missing."""
    img_folder, ann_file = coco_sample()
    data = json.loads(ann_file.read_text())
    by_image = {}
    for a in data["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    images = [im for im in data["images"] if by_image.get(im["id"])][:4]
    folder = tmp_path / "images"
    folder.mkdir()
    for im in images:
        shutil.copy(img_folder / im["file_name"], folder / im["file_name"])
    images[0]["height"], images[0]["width"] = 100, 120                  # the file wins
    bad = by_image[images[1]["id"]]
    bad[0]["bbox"] = [10.0, 10.0, 0.0, 5.0]                               # degenerate
    bad[1]["bbox"] = [images[1]["width"] - 5.0, 3.0, 40.0, 9.0]          # reaches outside
    Image.open(folder / images[2]["file_name"]).convert("RGB").save(
        folder / images[2]["file_name"], format="PNG")                    # PNG named .jpg
    keep = {im["id"] for im in images}
    data["images"] = images
    data["annotations"] = [a for a in data["annotations"] if a["image_id"] in keep]
    ann = tmp_path / "instances.json"
    ann.write_text(json.dumps(data))
    return folder, ann, images[3]["file_name"], images[1]["id"]
