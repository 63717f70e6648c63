"""A file replaced by an image of another size between epochs, under the same loader.

Each image's size is remembered in the shared file table after the first epoch
and later plans are drawn from it, so a file rewritten with a larger image used
to be decoded through the old crop window: a magnified corner, silently.  The C
core now checks the header against the size the plan was drawn for (NOTE [ A
plan fits one image size ] in csrc/pipeline.c) and the sample is drawn again for
its real size.  Real photos from ../shared/data; the changed file is another
real photo resized.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from PIL import Image
from torchvision import datasets

import jpegloader
from tests.conftest import eval_transform, shared, to_255, train_transform

#: (width factor, height factor) of the replacement, relative to the original
CHANGES = {
    "larger": (1.6, 1.6),
    "larger-other-aspect": (2.0, 1.2),
    "smaller": (0.6, 0.6),
    "smaller-other-aspect": (0.5, 0.8),
}
FILES = 8
CHANGED = 3  # the index of the file that is replaced
#: mean absolute difference on 0-255 between the C core and PIL (decode="exact")
TOLERANCE = 1.0


def _folder(root: Path) -> list[Path]:
    photos = sorted(shared("imagenet-sample").rglob("*.JPEG"))[:FILES + 1]
    (root / "c").mkdir(parents=True)
    copies = []
    for k, photo in enumerate(photos[:FILES]):
        copies.append(root / "c" / f"{k:02d}.jpg")
        shutil.copyfile(photo, copies[-1])
    return copies + [photos[FILES]]


def _replace(path: Path, source: Path, factors: tuple[float, float]) -> None:
    with Image.open(path) as old:
        size = (round(old.width * factors[0]), round(old.height * factors[1]))
    with Image.open(source) as new:
        new.convert("RGB").resize(size, Image.BICUBIC).save(path, quality=92)


def _batch(loader) -> torch.Tensor:
    (images, labels), = list(loader)
    assert labels.tolist() == [0] * FILES
    return images


def _diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (to_255(a) - to_255(b)).abs().mean().item()


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_eval_same_loader_after_a_file_changed_size(tmp_path, change, num_workers):
    files = _folder(tmp_path / "d")
    ds = datasets.ImageFolder(str(tmp_path / "d"), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=FILES, num_workers=num_workers,
                                   persistent_workers=num_workers > 0, decode="exact")
    assert loader.eligibility.accelerated
    try:
        _batch(loader)  # sizes now remembered in the shared table
        _replace(files[CHANGED], files[FILES], CHANGES[change])
        images = _batch(loader)
        for k in range(FILES):
            assert _diff(images[k], ds[k][0]) <= TOLERANCE, (files[k].name, change)
        images = _batch(loader)  # and the epoch after, from the size read again
        assert _diff(images[CHANGED], ds[CHANGED][0]) <= TOLERANCE, change
    finally:
        loader.close()


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_train_same_loader_after_a_file_changed_size(tmp_path, change, num_workers):
    """The second epoch equals a fresh loader's second epoch over the changed files:
    the same draws (seeded by the loader's generator), for the image's real size."""
    files = _folder(tmp_path / "d")
    ds = datasets.ImageFolder(str(tmp_path / "d"), train_transform())

    def loader():
        return jpegloader.DataLoader(ds, batch_size=FILES, num_workers=num_workers,
                                     persistent_workers=num_workers > 0, decode="exact",
                                     generator=torch.Generator().manual_seed(7))
    same, fresh = loader(), loader()
    try:
        _batch(same)
        _replace(files[CHANGED], files[FILES], CHANGES[change])
        got = _batch(same)
        _batch(fresh)
        want = _batch(fresh)
        for k in range(FILES):
            assert _diff(got[k], want[k]) <= TOLERANCE, (files[k].name, change)
        assert same.python_path_samples >= 1  # the changed one, drawn again
    finally:
        same.close()
        fresh.close()
