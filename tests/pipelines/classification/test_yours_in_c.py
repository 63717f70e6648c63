"""The switch around your PIL-stage objects (NOTE [ Your objects' work in C ]): Pillow's
transform and torchvision's policies' forward are ours only while it is on, each put
back once, a patch of yours left alone; and in a loader the policies run in C with
the batches torchvision and Pillow alone give."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision.transforms as T
from PIL import Image, ImageOps

import jpegloader
from jpegloader.pipelines.classification import _pillow, pil_affine, auto_augment
from jpegloader.pipelines.classification.yours_in_c import yours_in_c
from tests.conftest import shared

NAMES = ((Image.Image, "transform", pil_affine.PILLOWS, pil_affine.transform),
         *((cls, "forward", theirs, auto_augment.forward)
           for cls, theirs in auto_augment.TORCHVISIONS.items()))


def _holding(which: str) -> bool:
    return all(getattr(owner, name) is (ours if which == "ours" else theirs)
               for owner, name, theirs, ours in NAMES)


OBJECTS = (T.RandomGrayscale(), T.TrivialAugmentWide())


def test_the_switch_holds_only_while_your_objects_run():
    assert pil_affine.usable() and auto_augment.usable()
    assert _holding("theirs")
    with yours_in_c(OBJECTS):
        assert _holding("ours")
        with yours_in_c(OBJECTS):  # nested: still ours, and put back once
            assert _holding("ours")
        assert _holding("ours")
    assert _holding("theirs")
    with pytest.raises(KeyError):
        with yours_in_c(OBJECTS):
            raise KeyError("your transform failed")
    assert _holding("theirs")


def test_the_policies_are_ours_only_for_objects_that_use_them(monkeypatch):
    probes = []
    monkeypatch.setattr(auto_augment, "usable", lambda: probes.append(1) or True)
    with yours_in_c((T.RandomGrayscale(),)):
        assert Image.Image.transform is pil_affine.transform
        assert T.RandAugment.forward is auto_augment.TORCHVISIONS[T.RandAugment]
    assert probes == []  # no probe paid for objects without a policy


def test_a_patch_of_yours_stays_yours(monkeypatch):
    def your_forward(self, img):
        return img

    monkeypatch.setattr(T.RandAugment, "forward", your_forward)
    with yours_in_c((T.RandAugment(),)):
        assert T.RandAugment.forward is your_forward
        assert Image.Image.transform is pil_affine.transform
    assert T.RandAugment.forward is your_forward
    assert Image.Image.transform is pil_affine.PILLOWS


def test_a_probe_that_fails_leaves_its_part_to_the_library(monkeypatch):
    monkeypatch.setattr(auto_augment, "usable", lambda: False)
    with yours_in_c(OBJECTS):
        assert Image.Image.transform is pil_affine.transform
        assert T.RandAugment.forward is auto_augment.TORCHVISIONS[T.RandAugment]


def _counted(monkeypatch, function: str) -> list:
    calls, real = [], getattr(_pillow, function)
    monkeypatch.setattr(_pillow, function, lambda *args: calls.append(args) or real(*args))
    return calls


class YourPosterize:
    """A PIL-stage object of yours (lowered by nothing): half the images posterized."""

    def __call__(self, image: Image.Image) -> Image.Image:
        return ImageOps.posterize(image, 3) if torch.rand(()) < 0.5 else image


def _as_list(batch: list[torch.Tensor]) -> list:
    """A collate_fn of yours: the samples as they come."""
    return batch


RA = T.RandAugment(num_ops=3, interpolation=T.InterpolationMode.BILINEAR)
PIPELINES = {
    # first after the native crop, then a tensor: its bytes go straight to the tail
    "randaugment-first": (T.Compose([T.RandomResizedCrop(96), RA, T.PILToTensor()]), None),
    # then an object of yours: it gets the image RandAugment's bytes make
    "then-yours": (T.Compose([T.RandomResizedCrop(96), RA, YourPosterize(),
                              T.PILToTensor()]), None),
    # after an object of yours: an image, as torchvision's forward takes it
    "after-yours": (T.Compose([T.RandomResizedCrop(96), YourPosterize(), RA,
                               T.PILToTensor()]), None),
    # nothing after it: your collate_fn gets PIL images
    "images-out": (T.Compose([T.RandomResizedCrop(96), RA]), _as_list),
    # the references' ta_wide and imagenet policies (bilinear, as they ask)
    "trivialaugment": (T.Compose([T.RandomResizedCrop(96), T.TrivialAugmentWide(
        interpolation=T.InterpolationMode.BILINEAR), T.PILToTensor()]), None),
    "autoaugment": (T.Compose([T.RandomResizedCrop(96), T.AutoAugment(
        interpolation=T.InterpolationMode.BILINEAR), T.PILToTensor()]), None),
}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_auto_augment_in_a_loader_runs_in_c_with_torchvisions_pixels(tmp_path, monkeypatch,
                                                                     pipeline):
    """Your RandAugment (bilinear, as Ultralytics' classify asks) or TrivialAugmentWide
    after a native crop: their warps and photometric steps run in C, and the batches
    equal the same objects run by torchvision and Pillow alone."""
    photos = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:24]
    for k, photo in enumerate(photos):
        (tmp_path / f"c{k % 2}").mkdir(exist_ok=True)
        (tmp_path / f"c{k % 2}" / photo.name).symlink_to(photo.resolve())
    from torchvision.datasets import ImageFolder
    transform, collate_fn = PIPELINES[pipeline]
    dataset = ImageFolder(str(tmp_path), transform)
    warps, enhancements = _counted(monkeypatch, "affine"), _counted(monkeypatch, "enhance")
    as_images, real_forward = [], auto_augment.forward  # RandAugment handed an image
    monkeypatch.setattr(auto_augment, "forward",
                        lambda self, img: as_images.append(1) or real_forward(self, img))

    def batches(usable: bool):
        monkeypatch.setattr(pil_affine, "usable", lambda: usable)
        monkeypatch.setattr(auto_augment, "usable", lambda: usable)
        loader = jpegloader.DataLoader(dataset, batch_size=8, shuffle=True, num_workers=0,
                                       generator=torch.Generator().manual_seed(3),
                                       **({"collate_fn": collate_fn} if collate_fn else {}))
        assert loader.eligibility.accelerated, loader.eligibility.report()
        as_images.clear()  # the verdict's dry run hands it an image: the batches count
        if collate_fn is None:
            return [b[0] for b in loader]
        out = [[np.asarray(image) for image, _ in batch] for batch in loader]
        assert all(isinstance(image, Image.Image) for batch in loader for image, _ in batch)
        return [torch.from_numpy(np.stack(batch)) for batch in out]

    in_c = batches(True)
    assert warps and enhancements, "no warp or no photometric step ran in C"
    # first in the PIL stage, it gets the crop's bytes, and makes no image of them
    assert bool(as_images) == (pipeline == "after-yours")
    counts = len(warps), len(enhancements)
    assert all(torch.equal(x, y) for x, y in zip(in_c, batches(False), strict=True))
    assert (len(warps), len(enhancements)) == counts  # Pillow's own, the second time
