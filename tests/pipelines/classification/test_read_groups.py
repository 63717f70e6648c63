"""NOTE [ Reading a batch in groups ]: a batch read and decoded in several groups
of files gives the batch read in one, sample for sample, including a sample that
takes the Python path in the middle of the batch."""
from __future__ import annotations

import pytest
import torch
from PIL import Image
from torchvision import datasets

import jpegloader
from jpegloader.sources import read_files as contract
from tests.conftest import train_transform, write_image_folder


def _batches(root, workers: int) -> list:
    torch.manual_seed(5)
    dataset = datasets.ImageFolder(str(root), train_transform())
    loader = jpegloader.DataLoader(dataset, batch_size=10, shuffle=True, num_workers=workers)
    assert loader.eligibility.accelerated
    return [(x.clone(), y.clone()) for x, y in loader]


@pytest.mark.parametrize("workers", [0, 2])
def test_groups_of_any_size_give_the_same_batches(tmp_path, monkeypatch, workers):
    root = write_image_folder(tmp_path / "data", 24, size=(96, 72))
    # A PNG under a .jpg name: the C core refuses it, the Python path reads it.
    png = Image.new("RGB", (80, 60), (200, 30, 90))
    png.save(root / "c1" / "img_png.jpg", format="PNG")
    whole = _batches(root, workers)
    for budget in (1, 9000):  # every file alone; a few files per group
        monkeypatch.setattr(contract, "READ_BUDGET", budget)
        grouped = _batches(root, workers)
        assert len(grouped) == len(whole)
        for (xa, ya), (xb, yb) in zip(whole, grouped, strict=True):
            assert torch.equal(ya, yb)
            assert torch.equal(xa, xb)


def test_groups_keep_to_the_budget(tmp_path):
    paths = []
    for k, size in enumerate([5, 5, 5, 20, 1, 1]):
        path = tmp_path / f"f{k}"
        path.write_bytes(bytes([k]) * size)
        paths.append(str(path))
    seen = []
    for part, batch in contract.read_in_groups(paths, budget=10):
        # checked as it comes: the next group reuses the buffer
        seen.append((part.start, part.stop))
        for k, i in enumerate(range(part.start, part.stop)):
            got = bytes(batch.data[batch.offsets[k]:batch.offsets[k + 1]])
            assert got == open(paths[i], "rb").read()
    assert seen == [(0, 2), (2, 3), (3, 4), (4, 6)]
