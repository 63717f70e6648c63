"""RT-DETR's family: their CocoDetection (load_item), their Compose of torchvision v2
transforms with the stop_epoch policy, their RandomIoUCrop, ConvertPILImage and
ConvertBoxes, and their BatchImageCollateFunction (jpegloader/bench/rtdetr_user.py,
written out in RT-DETR's interface), on the real coco-sample.

Validation equals torch's loader batch for batch (decode="exact": bit-identical);
training equals the user's own objects replayed with the loader's draws; the policy
is followed from the epoch it names.
"""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import torch
from scipy import stats
from torchvision import tv_tensors

pytest.importorskip("pycocotools", reason="torchvision's CocoDetection needs pycocotools")

import jpegloader  # noqa: E402
from jpegloader.bench import rtdetr_user as R  # noqa: E402
from jpegloader.pipelines import DETECTION, DecodeOptions  # noqa: E402
from jpegloader.pipelines.detection.draw import box_seed, draw  # noqa: E402
from jpegloader.pipelines.detection.family import Family  # noqa: E402
from jpegloader.pipelines.detection.steps import IoUCrop  # noqa: E402
from jpegloader.pipelines.stand_ins import canvas  # noqa: E402
from jpegloader.pipelines.random_stream import (  # noqa: E402
    epoch_seed, generators_kept, seed_generators)
from tests.coco_fixtures import coco_sample  # noqa: E402
from tests.pipelines.detection.conftest import (  # noqa: E402
    assert_same_sample, decoded, replaying)


def build(image_set="train", epoch=None, transforms=None):
    img_folder, ann_file = coco_sample()
    with contextlib.redirect_stdout(io.StringIO()):
        ds, collate = R.build(image_set, str(img_folder), str(ann_file))
    if epoch is not None:
        ds.set_epoch(epoch)
    if transforms is not None:
        ds._transforms = transforms
    return ds, collate


def loader(ds, collate, workers=0, cls=jpegloader.DataLoader, **kw):
    return cls(ds, batch_size=4, num_workers=workers, collate_fn=collate, **kw)


def assert_same_batches(ours, theirs):
    n = 0
    for (images, targets), (rimages, rtargets) in zip(ours, theirs, strict=True):
        assert images.shape == rimages.shape and torch.equal(images, rimages), f"batch {n}"
        for k, (a, b) in enumerate(zip(targets, rtargets, strict=True)):
            assert_same_sample((images[k], a), (rimages[k], b), where=f"batch {n} sample {k}")
        n += 1
    return n


@pytest.mark.parametrize("workers", [0, 2])
def test_validation_batches_equal_torchs_loader(workers):
    ds, collate = build("val")
    ours = loader(ds, collate, workers, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility
    assert assert_same_batches(ours, loader(ds, collate, cls=torch.utils.data.DataLoader)) == 20


@pytest.mark.parametrize("epoch", [0, R.STOP_EPOCH])
def test_training_samples_equal_their_objects_replayed(epoch):
    ds, collate = build("train", epoch)
    indices = list(range(len(ds)))
    seed = epoch_seed(3, epoch)
    decoder, ours = decoded(ds, indices, seed, DecodeOptions(dct_scaling=False))
    names = decoder.program.names
    assert ("RandomZoomOut(side_range=(1.0, 4.0), p=0.5)" in names) == (epoch < R.STOP_EPOCH)
    d = draw(decoder.program, seed, indices)
    for k, i in enumerate(indices):
        with replaying(decoder.program, d, k):
            assert_same_sample(ours[k], ds[i], where=f"sample {i}")
        assert ours[k][0].shape == (3, 640, 640)


def test_the_policy_is_followed_from_its_epoch_on():
    ds, collate = build("train", R.STOP_EPOCH - 1)
    ours = loader(ds, collate, 2)
    assert "RandomZoomOut" in str(ours.eligibility)
    next(iter(ours))
    ds.set_epoch(R.STOP_EPOCH)  # as their DataLoader.set_epoch does
    batch = next(iter(ours))
    assert ours.eligibility.accelerated
    assert "RandomZoomOut" not in " ".join(ours.eligibility.split["native"])
    assert "leaves out RandomPhotometricDistort, RandomZoomOut, RandomIoUCrop" in \
        str(ours.eligibility)
    assert batch[0].shape[-2:] in [(s, s) for s in R.SCALES]


def test_training_batches_are_the_same_for_any_num_workers():
    ds, collate = build("train", 0)
    runs = [list(loader(ds, collate, n, generator=torch.Generator().manual_seed(5),
                        shuffle=True)) for n in (0, 2)]
    assert assert_same_batches(*runs) == 20


def test_their_iou_crop_draws_its_own_p_first():
    ds, _ = build("train", 0)
    program = DETECTION.lower(ds, {}).program
    step = next(s for s in program.steps if isinstance(s, IoUCrop))
    assert step.family is Family.RTDETR and step.p == 0.8
    d = draw(program, epoch_seed(2, 0), np.arange(3000))
    target = {"boxes": tv_tensors.BoundingBoxes(torch.tensor([[10.0, 10.0, 200.0, 150.0]]),
                                                format="XYXY", canvas_size=(480, 640))}
    skipped = 0
    for k in range(3000):
        with generators_kept():
            seed_generators(box_seed(d, k))
            skipped += step.params(canvas(480, 640), target) is None
    assert stats.binomtest(skipped, 3000, 0.2).pvalue > 1e-3


def test_a_policy_on_samples_seen_keeps_torchs_loader():
    ds, collate = build("train", 0)
    ds._transforms.policy = {"name": "stop_sample", "sample": 1000,
                             "ops": ["RandomZoomOut"]}
    ours = loader(ds, collate)
    assert not ours.eligibility.accelerated
    assert "depends on the samples seen so far" in str(ours.eligibility)


def test_a_policy_in_stages_keeps_torchs_loader_and_says_so():
    # DEIM's Compose: epochs [start, mosaic stop, stop], Mosaic drawn per sample
    ds, collate = build("train", 0)
    ds._transforms.policy = {"name": "stop_epoch", "epoch": [4, 29, 50],
                             "ops": ["Mosaic", "RandomZoomOut", "RandomIoUCrop"]}
    ours = loader(ds, collate)
    assert not ours.eligibility.accelerated
    assert "are stages (DEIM's), not one stop epoch" in str(ours.eligibility)


class Mosaic(torch.nn.Module):
    """A stand-in for DEIM's Mosaic (four images of the dataset in one): not lowered."""

    def forward(self, *inputs):
        return inputs if len(inputs) > 1 else inputs[0]


def test_a_mosaic_first_keeps_torchs_loader_and_says_so():
    ds, collate = build("train", 0)
    ds._transforms = R.Compose([Mosaic(), *ds._transforms.transforms],
                               policy=ds._transforms.policy)
    ours = loader(ds, collate)
    assert not ours.eligibility.accelerated
    assert "transform 0 Mosaic: it pastes other samples" in str(ours.eligibility)


def test_coco_categories_remapped_to_labels_as_their_load_item_does():
    ds, collate = build("val")
    ds.remap_mscoco_category = True
    ours = loader(ds, collate, 2, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility
    assert assert_same_batches(ours, loader(ds, collate, cls=torch.utils.data.DataLoader)) == 20
    assert max(int(t["labels"].max()) for _, ts in ours for t in ts if len(t["labels"])) < 80
