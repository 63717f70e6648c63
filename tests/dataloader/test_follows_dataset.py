"""NOTE [ The pipeline follows the dataset ]: torch reads the dataset's transform and
samples at every sample, so a change between epochs changes the batches; the loader
renews its verdict at each epoch start and follows (or falls back, logged).  With
persistent workers torch's workers keep the dataset they started with, and so do ours."""
from __future__ import annotations

import logging

import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from tests.conftest import IMAGENET_MEAN, IMAGENET_STD, eval_transform


def _sized(size: int):
    return T.Compose([T.Resize(size), T.CenterCrop(size), T.ToTensor(),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


def _close(a, b) -> bool:
    return a[0].shape == b[0].shape and torch.equal(a[1], b[1]) and \
        (a[0] - b[0]).abs().mean().item() < 0.02


@pytest.mark.parametrize("workers", [0, 2])
def test_a_replaced_transform_is_honoured(small_folder, workers):
    ds = datasets.ImageFolder(str(small_folder), _sized(96))
    loader = jpegloader.DataLoader(ds, batch_size=8, num_workers=workers)
    assert next(iter(loader))[0].shape[-1] == 96
    ds.transform = _sized(64)  # as DeiT III swaps its transform after building loaders
    ours = list(loader)
    assert loader.eligibility.accelerated
    assert all(_close(a, b) for a, b in zip(ours, TorchDataLoader(ds, batch_size=8),
                                            strict=True))
    assert ours[0][0].shape[-2:] == (64, 64)


def test_progressive_resizing_in_place(small_folder):
    transform = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ToTensor()])
    ds = datasets.ImageFolder(str(small_folder), transform)
    loader = jpegloader.DataLoader(ds, batch_size=6, num_workers=2)
    for size in (32, 48, 64):
        transform.transforms[0].size = (size, size)  # the recipe's per-epoch schedule
        shapes = {tuple(b[0].shape[-2:]) for b in loader}
        assert shapes == {(size, size)}


def test_a_samples_list_changed_between_epochs(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=5, num_workers=2)
    list(loader)
    ds.samples = ds.samples[::-1][:11]  # reordered and trimmed
    ours = list(loader)
    native = list(TorchDataLoader(ds, batch_size=5))
    assert sum(len(b[1]) for b in ours) == 11
    assert all(_close(a, b) for a, b in zip(ours, native, strict=True))


def test_an_unsupported_replacement_falls_back_logged_then_accelerates_again(small_folder,
                                                                             caplog):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=8)
    list(loader)
    ds.transform = T.Compose([T.GaussianBlur(3), T.Resize(64), T.CenterCrop(56), T.ToTensor()])
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        torch.manual_seed(0)
        ours = list(loader)
    assert not loader.eligibility.accelerated and "GaussianBlur" in loader.eligibility.summary()
    assert caplog.text.count("Failed to initialize Habana Dataloader") == 1
    torch.manual_seed(0)
    native = list(TorchDataLoader(ds, batch_size=8))
    assert all(torch.equal(a[0], b[0]) for a, b in zip(ours, native, strict=True))
    ds.transform = _sized(48)
    assert next(iter(loader))[0].shape[-1] == 48 and loader.eligibility.accelerated


def test_persistent_workers_keep_the_dataset_they_started_with_as_torchs_do(small_folder,
                                                                           caplog):
    batches = {}
    for name, cls in (("torch", TorchDataLoader), ("jpegloader", jpegloader.DataLoader)):
        ds = datasets.ImageFolder(str(small_folder), _sized(64))
        loader = cls(ds, batch_size=8, num_workers=2, persistent_workers=True)
        list(loader)
        ds.transform = _sized(32)
        with caplog.at_level(logging.WARNING, logger="jpegloader"):
            batches[name] = list(loader)
        del loader
    assert batches["torch"][0][0].shape[-1] == 64  # torch's workers never see the change
    assert all(_close(a, b) for a, b in zip(batches["jpegloader"], batches["torch"],
                                            strict=True))
    assert "the workers keep the copy of the dataset they started with" in caplog.text


def test_renewing_the_verdict_keeps_the_workers_when_nothing_changed(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=8, num_workers=2, persistent_workers=True)
    list(loader)
    first = [w.pid for w in loader._workers()]
    list(loader)
    assert [w.pid for w in loader._workers()] == first
    loader.close()
