"""DETR's family: their CocoDetection (prepare = their ConvertCocoPolysToMask), their
transforms and their NestedTensor collate (DETR's own code: the ``detr`` 0.1.4 wheel,
fetched into a cache by jpegloader.bench.peers), on the real coco-sample.

Validation equals torch's loader batch for batch (decode="exact": bit-identical);
training equals the user's own objects replayed with the loader's seeds (Python's
random and torch's generator, seeded per sample); the draws follow the transforms'
distributions.
"""
from __future__ import annotations

import contextlib
import io
import os
import random

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import stats
from torchvision.datasets import VisionDataset

pytest.importorskip("pycocotools", reason="torchvision's CocoDetection needs pycocotools")

import jpegloader  # noqa: E402
from jpegloader.bench import peers  # noqa: E402
from jpegloader.pipelines import DETECTION, DecodeOptions  # noqa: E402
from jpegloader.pipelines.detection.draw import box_seed, draw, run_steps  # noqa: E402
from jpegloader.pipelines.random_stream import (  # noqa: E402
    epoch_seed, generators_kept, seed_generators)
from jpegloader.pipelines.slot_batches import MIN_BYTES  # noqa: E402
from tests.coco_fixtures import coco_sample  # noqa: E402
from tests.pipelines.detection.conftest import decoded  # noqa: E402

try:
    _detr = peers.detr()
except peers.PeerMissing as e:
    pytest.skip(str(e), allow_module_level=True)
coco, T, misc = _detr.datasets.coco, _detr.datasets.transforms, _detr.util.misc
#: the sizes make_coco_transforms("train") resizes to
SCALES = [480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800]


def build(image_set="train", masks=False, transforms=None, cls=coco.CocoDetection):
    img_folder, ann_file = coco_sample()
    with contextlib.redirect_stdout(io.StringIO()):
        ds = cls(str(img_folder), str(ann_file), coco.make_coco_transforms(image_set),
                 return_masks=masks)
    if transforms is not None:
        ds._transforms = transforms
    return ds


def loader(ds, workers=0, cls=jpegloader.DataLoader, **kw):
    return cls(ds, batch_size=4, num_workers=workers, collate_fn=misc.collate_fn, **kw)


def assert_same_target(got: dict, want: dict, where=""):
    assert got.keys() == want.keys(), where
    for key, value in want.items():
        assert type(got[key]) is type(value) and got[key].dtype == value.dtype, (where, key)
        assert torch.equal(got[key], value), (where, key)


def assert_same_batches(ours, theirs):
    n = 0
    for (images, targets), (rimages, rtargets) in zip(ours, theirs, strict=True):
        assert type(images) is type(rimages) is misc.NestedTensor
        assert torch.equal(images.mask, rimages.mask)
        assert images.tensors.shape == rimages.tensors.shape
        assert torch.equal(images.tensors, rimages.tensors), f"batch {n}"
        for k, (a, b) in enumerate(zip(targets, rtargets, strict=True)):
            assert_same_target(a, b, f"batch {n} sample {k}")
        n += 1
    return n


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("masks", [False, True])
def test_validation_batches_equal_torchs_loader(workers, masks):
    ds = build("val", masks)
    ours = loader(ds, workers, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility
    assert assert_same_batches(ours, loader(ds, cls=torch.utils.data.DataLoader)) == 20


def test_batches_held_come_through_the_slot_and_are_never_overwritten():
    # NOTE [ A collate_fn's batch in the slot ]: every batch kept, so each slot is
    # still held when the ring comes round
    ds = build("val")
    got = list(loader(ds, 2, decode="exact"))
    # the images and the mask are views of one slot, but where a batch pads to more
    # than PADDING_ROOM times the largest photo (1333 x 1332 here)
    in_slot = [images.tensors.untyped_storage().data_ptr() ==
               images.mask.untyped_storage().data_ptr() for images, _ in got]
    assert sum(in_slot) >= 18
    assert assert_same_batches(got, list(loader(ds, cls=torch.utils.data.DataLoader))) == 20


def test_batches_too_small_for_the_slot_travel_as_torch_sends_them_intact():
    # NOTE [ A collate_fn's batch made in the slot ]: a padded batch under the packer's
    # MIN_BYTES is written in the slot but pickled as torch pickles it; the slot's
    # pages must outlive the pickling
    small = T.Compose([T.RandomResize([12], max_size=16), T.ToTensor(),
                       T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = build("val", transforms=small)
    got = list(loader(ds, 2, decode="exact"))
    assert max(images.tensors.numel() for images, _ in got) * 4 < MIN_BYTES
    assert assert_same_batches(got, list(loader(ds, cls=torch.utils.data.DataLoader))) == 20


def test_with_their_padding_made_in_the_slot_nothing_of_yours_runs_in_the_workers():
    # NOTE [ A collate_fn's batch made in the slot ]: so batches go to the least loaded
    # worker and the workers are kept between epochs; the heap is still theirs to size
    def as_a_list(batch):  # not what their collate_fn gives: it runs in the workers
        return list(misc.collate_fn(batch))

    ds = build("val")
    theirs = DETECTION.decoder(DETECTION.lower(ds, {"collate_fn": misc.collate_fn}),
                               DecodeOptions())
    assert not theirs.runs_user_code and theirs.heap_unsized
    yours = DETECTION.decoder(DETECTION.lower(ds, {"collate_fn": as_a_list}),
                              DecodeOptions())
    assert yours.runs_user_code and yours.heap_unsized is False


def replayed(ds, d, k: int, i: int):
    """Sample i as the user's own objects give it with sample k's seeds."""
    with generators_kept():
        seed_generators(box_seed(d, k))
        return ds[i]


@pytest.mark.parametrize("masks", [False, True])
def test_training_samples_equal_their_objects_replayed(masks):
    ds = build("train", masks)
    indices = list(range(len(ds)))
    seed = epoch_seed(11, 2)
    decoder, ours = decoded(ds, indices, seed, DecodeOptions(dct_scaling=False))
    d = draw(decoder.program, seed, indices)
    sizes = set()
    for k, i in enumerate(indices):
        image, target = replayed(ds, d, k, i)
        assert ours[k][0].shape == image.shape and torch.equal(ours[k][0], image), f"sample {i}"
        assert_same_target(ours[k][1], target, f"sample {i}")
        sizes.add(tuple(image.shape))
    assert len(sizes) > 10  # resized, cropped and resized again: many shapes


def test_training_under_dct_scaling_is_within_the_documented_tolerance():
    ds = build("train")
    indices = list(range(0, len(ds), 3))
    seed = epoch_seed(5, 0)
    decoder, ours = decoded(ds, indices, seed)
    d = draw(decoder.program, seed, indices)
    for k, i in enumerate(indices):
        image, target = replayed(ds, d, k, i)
        diff = (ours[k][0] - image).abs() * torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
        assert diff.mean() * 255 <= 1.0 and diff.max() * 255 <= 12, f"sample {i}"
        assert_same_target(ours[k][1], target, f"sample {i}")


def test_training_batches_are_the_same_for_any_num_workers():
    ds = build("train")
    runs = [list(loader(ds, n, generator=torch.Generator().manual_seed(3), shuffle=True))
            for n in (0, 2)]
    assert assert_same_batches(*runs) == 20


def test_the_verdict_names_the_family_and_the_collate():
    ds = build("train")
    lowering = DETECTION.lower(ds, {"collate_fn": misc.collate_fn})
    assert lowering.ok
    text = " ".join(c.message for c in lowering.checks)
    assert "DETR's CocoDetection" in text and "collate_fn, run in the workers" in text
    # NOTE [ A collate_fn's batch made in the slot ]
    assert "DETR's padding: written straight into the batch's slot" in text
    assert "RandomSelect(p=0.5: RandomResize" in text and "RandomSizeCrop(384, 600)" in text
    assert lowering.split["yours"] == []


class ForkedCocoDetection(coco.CocoDetection):
    """A fork's dataset that adds a key of its own in __getitem__."""

    def __getitem__(self, idx):
        image, target = super().__getitem__(idx)
        target["extra"] = torch.zeros(len(target["boxes"]))
        return image, target


ForkedCocoDetection.__name__ = "CocoDetection"


def test_a_getitem_that_is_not_detrs_keeps_torchs_loader():
    ds = build("val", cls=ForkedCocoDetection)
    ours = loader(ds)
    assert not ours.eligibility.accelerated
    assert "__getitem__" in str(ours.eligibility) and "another target" in str(ours.eligibility)
    assert ds._transforms is not None  # never set aside (a copy is probed)


class WatchedCocoDetection(coco.CocoDetection):
    """Records what is done to this very object: reads of a sample, and each time
    its ``_transforms`` is set (from the second, the first is its __init__'s)."""

    def __setattr__(self, name, value):
        if name == "_transforms" and "_transforms" in self.__dict__:
            self.__dict__.setdefault("_log", []).append(("set", value))
        super().__setattr__(name, value)

    def __getitem__(self, idx):
        self.__dict__.setdefault("_log", []).append(("read", idx))
        return super().__getitem__(idx)


WatchedCocoDetection.__name__ = "CocoDetection"


def test_the_verdict_touches_nothing_of_the_users_and_asks_once(monkeypatch):
    """NOTE [ The verdict touches nothing of the user's ]: the sample probe runs on a
    shallow copy, so the user's dataset is neither read nor changed, and a second
    epoch start (or a second loader over it) does not probe it again."""
    from jpegloader.pipelines.detection import recognise
    ds = build("val", cls=WatchedCocoDetection)
    transforms = ds._transforms
    calls = []
    real = recognise._try_getitem

    def counting(*args):
        calls.append(args[2])
        return real(*args)
    monkeypatch.setattr(recognise, "_try_getitem", counting)
    ours = loader(ds)
    assert ours.eligibility.accelerated
    for _ in range(2):
        next(iter(ours))
    assert loader(ds).eligibility.accelerated
    assert calls == [0]
    assert ds._transforms is transforms and ds.__dict__.get("_log", []) == []
    # what the answer depends on changed: asked again, and the answer replaced
    ds.ids = ds.ids[1:] + ds.ids[:1]
    assert loader(ds).eligibility.accelerated
    assert calls == [0, 0]
    assert len(recognise._PROBED[ds]) == 1


class Erase:
    """A transform of the user's own after the tensor conversion."""

    def __call__(self, image, target):
        image = image.clone()
        i = random.randint(0, image.shape[1] - 8)
        image[:, i:i + 8] = 0
        return image, target


def test_a_step_of_the_users_own_runs_after_the_native_part():
    t = coco.make_coco_transforms("train")
    ds = build("train", transforms=T.Compose([*t.transforms, Erase()]))
    ours = loader(ds, 2, generator=torch.Generator().manual_seed(1), shuffle=True)
    assert ours.eligibility.accelerated
    assert ours.eligibility.split["yours"] == ["Erase"]
    again = loader(ds, 0, generator=torch.Generator().manual_seed(1), shuffle=True)
    assert assert_same_batches(ours, again) == 20


def test_a_third_resize_runs_as_yours():
    resize = T.RandomResize([500, 600], max_size=1000)
    t = T.Compose([resize, T.RandomSizeCrop(300, 400), resize, resize, T.ToTensor()])
    program = DETECTION.lower(build("train", transforms=t), {}).program
    assert [type(s).__name__ for s in program.steps] == ["DetrResize", "DetrSizeCrop",
                                                         "DetrResize"]
    assert len(program.yours) == 2


# -- the draws follow their transforms' distributions -----------------------------------
def shapes(program, size, n=3000):
    """The Geometry run_steps gives n samples of an h x w photo, seeded as the loader
    seeds them."""
    d = draw(program, epoch_seed(1, 0), np.arange(n))
    target = {"boxes": torch.zeros((0, 4)), "labels": torch.zeros(0, dtype=torch.int64),
              "area": torch.zeros(0), "iscrowd": torch.zeros(0, dtype=torch.int64)}
    return [run_steps(program, d, k, size, dict(target))[0] for k in range(n)]


def second_branch(g) -> bool:
    """Whether RandomSelect took its second branch (resize, crop, resize): a window of
    the resized photo kept, or that resized again."""
    return g.then is not None or g.crop != (0, 0, g.scaled[1], g.scaled[0])


def uniform(values, options):
    counts = [sum(v == o for v in values) for o in options]
    assert sum(counts) == len(values)
    return stats.chisquare(counts).pvalue


def test_flip_select_and_resize_draws_follow_their_distributions():
    got = shapes(DETECTION.lower(build("train"), {}).program, (480, 640))
    assert stats.binomtest(sum(g.flip for g in got), len(got), 0.5).pvalue > 1e-3
    first = [g for g in got if not second_branch(g)]
    assert stats.binomtest(len(first), len(got), 0.5).pvalue > 1e-3
    # RandomResize(scales, max_size=1333) on 480 x 640: each scale alike
    assert uniform([g.scaled[0] for g in first], SCALES) > 1e-3
    second = [g for g in got if second_branch(g)]
    assert uniform([g.scaled[0] for g in second], [400, 500, 600]) > 1e-3
    assert uniform([min(g.output) for g in second], SCALES) > 1e-3


def test_the_size_crop_draws_follow_their_distribution():
    program = DETECTION.lower(build("train", transforms=T.Compose(
        [T.RandomSizeCrop(384, 600)])), {}).program
    got = shapes(program, (500, 700), n=4000)
    widths = [g.crop[2] for g in got]
    heights = [g.crop[3] for g in got]
    assert min(widths) == 384 and max(widths) == 600 and max(heights) == 500
    # random.randint: each width alike; the offset uniform over what is left
    assert stats.chisquare(np.histogram(widths, bins=9, range=(384, 601))[0]).pvalue > 1e-3
    assert stats.chisquare(np.histogram(heights, bins=9, range=(384, 501))[0]).pvalue > 1e-3
    left = [(g.crop[0] + 0.5) / (701 - g.crop[2]) for g in got]  # torch.randint
    assert stats.kstest(left, "uniform").pvalue > 1e-3


# -- Deformable-DETR: the same transforms over its own copy of torchvision's dataset ---------
class TvCocoDetection(VisionDataset):
    """Deformable-DETR's datasets/torchvision_datasets/coco.py, written out: images read
    with get_image, from a cache of the files' bytes when cache_mode is set."""

    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None,
                 cache_mode=False, local_rank=0, local_size=1):
        super().__init__(root, transforms, transform, target_transform)
        from pycocotools.coco import COCO
        with contextlib.redirect_stdout(io.StringIO()):
            self.coco = COCO(annFile)
        self.ids = list(sorted(self.coco.imgs.keys()))
        self.cache_mode = cache_mode
        self.cache = {}

    def get_image(self, path):
        if self.cache_mode:
            if path not in self.cache:
                with open(os.path.join(self.root, path), "rb") as f:
                    self.cache[path] = f.read()
            return Image.open(io.BytesIO(self.cache[path])).convert("RGB")
        return Image.open(os.path.join(self.root, path)).convert("RGB")

    def __getitem__(self, index):
        coco = self.coco
        img_id = self.ids[index]
        target = coco.loadAnns(coco.getAnnIds(imgIds=img_id))
        img = self.get_image(coco.loadImgs(img_id)[0]["file_name"])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.ids)


class CocoDetection(TvCocoDetection):
    """Deformable-DETR's datasets/coco.py."""

    def __init__(self, img_folder, ann_file, transforms, return_masks, cache_mode=False):
        super().__init__(img_folder, ann_file, cache_mode=cache_mode)
        self._transforms = transforms
        self.prepare = coco.ConvertCocoPolysToMask(return_masks)

    def __getitem__(self, idx):
        img, target = super().__getitem__(idx)
        target = {"image_id": self.ids[idx], "annotations": target}
        img, target = self.prepare(img, target)
        if self._transforms is not None:
            img, target = self._transforms(img, target)
        return img, target


@pytest.mark.parametrize("cache_mode", [False, True])
def test_deformable_detrs_own_dataset_base_accelerates_alike(cache_mode):
    img_folder, ann_file = coco_sample()
    ds = CocoDetection(str(img_folder), str(ann_file), coco.make_coco_transforms("val"),
                       return_masks=False, cache_mode=cache_mode)
    ours = loader(ds, 2, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility
    assert assert_same_batches(ours, loader(ds, cls=torch.utils.data.DataLoader)) == 20
    train = CocoDetection(str(img_folder), str(ann_file), coco.make_coco_transforms("train"),
                          return_masks=True)
    indices = list(range(0, len(train), 4))
    seed = epoch_seed(4, 1)
    decoder, got = decoded(train, indices, seed, DecodeOptions(dct_scaling=False))
    d = draw(decoder.program, seed, indices)
    for k, i in enumerate(indices):
        image, target = replayed(train, d, k, i)
        assert torch.equal(got[k][0], image), f"sample {i}"
        assert_same_target(got[k][1], target, f"sample {i}")


def test_pinned_batches_pin_what_torchs_loader_pins(monkeypatch):
    # pin_memory=True pins a collate_fn's batch as torch's pin_memory does: the
    # targets' tensors are pinned; DETR's NestedTensor has no pin_memory, so it stays
    # where it is (here: lent from the slot), as torch's loader leaves it
    from jpegloader.bench.pinning import emulated_pinning
    ds = build("val")
    plain = list(loader(ds, 2))
    with emulated_pinning():
        pinned_at, pin = set(), torch.Tensor.pin_memory

        def recording_pin(self, device=None):
            out = pin(self, device)
            pinned_at.add(out.data_ptr())
            return out
        monkeypatch.setattr(torch.Tensor, "pin_memory", recording_pin)
        pinned = list(loader(ds, 2, pin_memory=True))
        theirs = next(iter(loader(ds, 2, cls=torch.utils.data.DataLoader, pin_memory=True)))
    assert assert_same_batches(pinned, plain) == 20
    for images, targets in [*pinned, theirs]:
        assert images.tensors.data_ptr() not in pinned_at
        assert all(t.data_ptr() in pinned_at for target in targets for t in target.values())
