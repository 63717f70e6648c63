"""Your RandAugment, TrivialAugmentWide and AutoAugment with their photometric steps in
C (NOTE [ Your RandAugment in C ]): the same images as torchvision's forward for the
same generator state, on real photos, over their configurations and policies, every
operation drawn at every magnitude bin; the generator left where torchvision's leaves
it; what they hand to torchvision."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision.transforms as T
from PIL import Image

from jpegloader.pipelines.classification import auto_augment
from tests.conftest import shared

BILINEAR, NEAREST = T.InterpolationMode.BILINEAR, T.InterpolationMode.NEAREST


@pytest.fixture(scope="module")
def crops():
    files = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[::29][:8]
    images = [Image.open(f).convert("RGB") for f in files]
    sizes = [(224, 224), (96, 96), (223, 157), (17, 300), (300, 17), (2, 2)]
    # as the loader hands them over: the crop's bytes, no file's info
    return [Image.fromarray(np.asarray(im)) for im in
            [im.resize(size) for im, size in zip(images, sizes)] + images[6:]]


def _theirs(t):
    return auto_augment.TORCHVISIONS[next(c for c in auto_augment.TORCHVISIONS
                                          if isinstance(t, c))]


def _both(t, image: Image.Image, seed: int):
    """(ours, torchvision's) from the same generator state, ours not handed over; the
    generator left alike."""
    assert isinstance(image, Image.Image) and image.mode == "RGB" and not image.info
    torch.default_generator.manual_seed(seed)
    ours = auto_augment.forward(t, image)
    after_ours = torch.get_rng_state()
    torch.default_generator.manual_seed(seed)
    theirs = _theirs(t)(t, image)
    assert torch.equal(after_ours, torch.get_rng_state()), "the draws differ in number"
    return ours, theirs


OBJECTS = {
    "ra-defaults": lambda: T.RandAugment(),  # 2 ops, magnitude 9 of 31, nearest
    "ra-ultralytics": lambda: T.RandAugment(interpolation=BILINEAR),
    "ra-strong-fill": lambda: T.RandAugment(num_ops=4, magnitude=30, interpolation=BILINEAR,
                                            fill=[128, 128, 128]),
    "ra-one-weak": lambda: T.RandAugment(num_ops=1, magnitude=0),
    "ra-10-bins": lambda: T.RandAugment(num_ops=3, magnitude=5, num_magnitude_bins=10, fill=7),
    "ra-no-ops": lambda: T.RandAugment(num_ops=0),
    "ta-defaults": lambda: T.TrivialAugmentWide(),  # the references' ta_wide
    "ta-bilinear-fill": lambda: T.TrivialAugmentWide(interpolation=BILINEAR, fill=[3, 200, 9]),
    "ta-8-bins": lambda: T.TrivialAugmentWide(num_magnitude_bins=8),
    "aa-imagenet": lambda: T.AutoAugment(),  # the references' imagenet policy
    "aa-cifar10-bilinear": lambda: T.AutoAugment(T.AutoAugmentPolicy.CIFAR10,
                                                 interpolation=BILINEAR),
    "aa-svhn-fill": lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=[50, 60, 70]),
}


@pytest.fixture
def photometric(monkeypatch) -> list:
    """The operations done on the bytes, from now on."""
    calls, real = [], auto_augment._photometric
    monkeypatch.setattr(auto_augment, "_photometric",
                        lambda p, name, m: calls.append(name) or real(p, name, m))
    return calls


@pytest.mark.parametrize("which", OBJECTS)
def test_the_images_are_torchvisions_for_the_same_draws(crops, which, photometric):
    t = OBJECTS[which]()
    for k, image in enumerate(crops):
        for seed in range(16):
            ours, theirs = _both(t, image, 1000 * k + seed)
            assert (ours.mode, ours.size) == (theirs.mode, theirs.size)
            assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (which, k, seed)
    assert len(photometric) > 20 or which == "ra-no-ops"


def test_every_operation_at_every_magnitude_is_torchvisions(crops, photometric):
    """num_ops=1 at each bin, seeds enough to draw each of the 14 operations and both
    signs; the operations seen are counted from torchvision's own space."""
    seen = set()
    for magnitude in range(31):
        t = T.RandAugment(num_ops=1, magnitude=magnitude, interpolation=BILINEAR)
        for seed in range(40):
            image = crops[seed % 3]
            ours, theirs = _both(t, image, 7919 * magnitude + seed)
            assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (magnitude, seed)
            torch.default_generator.manual_seed(7919 * magnitude + seed)
            seen.add(int(torch.randint(14, (1,)).item()))
    assert seen == set(range(14))
    # the rest: warps and Identity (Invert is AutoAugment's alone)
    assert set(photometric) == auto_augment.PHOTOMETRIC - {"Invert"}


def test_trivialaugment_draws_every_operation_at_every_bin_as_torchvision(crops, photometric):
    t = T.TrivialAugmentWide(interpolation=BILINEAR)
    for seed in range(700):
        ours, theirs = _both(t, crops[seed % 3], seed)
        assert np.array_equal(np.asarray(ours), np.asarray(theirs)), seed
    assert set(photometric) == auto_augment.PHOTOMETRIC - {"Invert"}


def test_autoaugment_applies_every_policy_step_as_torchvision(crops, photometric):
    """Each policy, seeds enough for each sub-policy and both of its steps' chances."""
    for policy in T.AutoAugmentPolicy:
        t = T.AutoAugment(policy, interpolation=BILINEAR)
        for seed in range(300):
            ours, theirs = _both(t, crops[seed % 3], seed)
            assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (policy, seed)
    assert set(photometric) == auto_augment.PHOTOMETRIC


def test_a_subclass_with_its_own_operations_keeps_them(crops):
    class Photometric(T.RandAugment):
        def _augmentation_space(self, num_bins, image_size):
            space = super()._augmentation_space(num_bins, image_size)
            return {name: space[name] for name in ("Sharpness", "Equalize", "Rotate")}

    t = Photometric(num_ops=3)
    for seed in range(20):
        ours, theirs = _both(t, crops[0], seed)
        assert np.array_equal(np.asarray(ours), np.asarray(theirs))


def test_what_it_does_not_take_is_torchvisions(crops, monkeypatch):
    calls = []
    real = auto_augment.TORCHVISIONS[T.RandAugment]
    monkeypatch.setitem(auto_augment.TORCHVISIONS, T.RandAugment,
                        lambda self, img: calls.append(type(img)) or real(self, img))
    t = T.RandAugment(num_ops=3)
    with_info = crops[0].copy()
    with_info.info["dpi"] = (72, 72)  # Pillow's operations keep or drop it: theirs
    images = (crops[0].convert("L"), crops[0].convert("RGBA"), with_info,
              T.functional.pil_to_tensor(crops[0]))
    for image in images:
        for seed in range(6):
            torch.default_generator.manual_seed(seed)
            try:
                theirs = real(t, image)
            except OSError:  # Pillow's ImageOps refuses RGBA: so must this
                torch.default_generator.manual_seed(seed)
                with pytest.raises(OSError):
                    auto_augment.forward(t, image)
                continue
            torch.default_generator.manual_seed(seed)
            assert np.array_equal(np.asarray(auto_augment.forward(t, image)), np.asarray(theirs))
    assert len(calls) == 6 * len(images)
    auto_augment.forward(t, crops[0])
    assert len(calls) == 6 * len(images)


def test_the_probe_passes_and_leaves_the_generator_as_it_was():
    auto_augment.usable.cache_clear()
    torch.default_generator.manual_seed(11)
    state = torch.get_rng_state()
    assert auto_augment.usable()
    assert torch.equal(state, torch.get_rng_state())


def test_a_torchvision_without_the_private_parts_leaves_the_policies_to_it(monkeypatch):
    from torchvision.transforms import autoaugment
    auto_augment.usable.cache_clear()
    monkeypatch.delattr(autoaugment, "_apply_op")
    try:
        assert not auto_augment.usable()
        assert not auto_augment.takes_bytes(T.RandAugment())
    finally:
        auto_augment.usable.cache_clear()
