"""The datasets the classification pipeline reads as the datasets themselves do:
DatasetFolder, timm's ImageDataset (with its replacement of unopenable files), and
Subsets of them (indices mapped through)."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import Subset
from torchvision import datasets
from torchvision import transforms as T
from torchvision.datasets.folder import default_loader

import jpegloader
from tests.conftest import eval_transform, train_transform, write_image_folder


def _eval_batches(ds, **kwargs):
    return list(jpegloader.DataLoader(ds, batch_size=4, **kwargs))


def _assert_same_as_native(ds, workers=2):
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=workers)
    assert loader.eligibility.accelerated, loader.eligibility.report()
    ours = list(loader)
    native = list(TorchDataLoader(ds, batch_size=4))
    assert len(ours) == len(native)
    for a, b in zip(ours, native, strict=True):
        assert torch.equal(a[1], b[1])
        assert (a[0] - b[0]).abs().mean().item() < 0.02  # normalized units: ~1 level


def test_subset_maps_indices_through(small_folder):
    base = datasets.ImageFolder(str(small_folder), eval_transform())
    _assert_same_as_native(Subset(base, [5, 0, 17, -1, 3, 3, 11]))
    # nested, with a shuffled order of its own
    _assert_same_as_native(Subset(Subset(base, list(range(20, 2, -1))), [4, 0, 9, 2, 2]))


def test_subset_with_invalid_indices_falls_back(small_folder, caplog):
    base = datasets.ImageFolder(str(small_folder), eval_transform())
    verdict = jpegloader.explain(Subset(base, [0, 99]), batch_size=2)
    assert not verdict.accelerated and "dataset.subset" in verdict.summary()


def test_subset_of_a_train_pipeline_is_reproducible_for_any_workers(small_folder):
    base = datasets.ImageFolder(str(small_folder), train_transform())
    ds = Subset(base, [3, 1, 4, 1, 5, 9, 2, 6])
    runs = []
    for workers in (0, 2):
        g = torch.Generator().manual_seed(8)
        runs.append([b[0] for b in jpegloader.DataLoader(ds, batch_size=3, shuffle=True,
                                                         generator=g, num_workers=workers)])
    assert all(torch.equal(a, b) for a, b in zip(*runs, strict=True))


def test_dataset_folder_with_the_default_loader(small_folder):
    ds = datasets.DatasetFolder(str(small_folder), default_loader, extensions=(".jpg",),
                                transform=eval_transform())
    _assert_same_as_native(ds)
    custom = datasets.DatasetFolder(str(small_folder), lambda p: default_loader(p),
                                    extensions=(".jpg",), transform=eval_transform())
    assert "dataset.loader" in jpegloader.explain(custom, batch_size=4).summary()


def _timm_dataset(root, transform, **kwargs):
    pytest.importorskip("timm", reason="timm is a test dependency (the [test] extra)")
    from timm.data import ImageDataset
    return ImageDataset(str(root), transform=transform, **kwargs)


def test_timm_image_dataset_over_a_folder(small_folder):
    ds = _timm_dataset(small_folder, T.Compose([T.Resize(72), T.CenterCrop(64), T.ToTensor()]))
    _assert_same_as_native(ds)
    assert "timm ImageDataset" in jpegloader.explain(ds, batch_size=4).report()


def test_timm_image_dataset_in_a_subset_with_uint8_output(small_folder):
    ds = Subset(_timm_dataset(small_folder, T.Compose([T.Resize(72), T.CenterCrop(64),
                                                       T.PILToTensor()])), [7, 2, 2, 9, 0])
    loader = jpegloader.DataLoader(ds, batch_size=5)
    assert loader.eligibility.accelerated
    (images, labels), = list(loader)
    native, native_labels = next(iter(TorchDataLoader(ds, batch_size=5)))
    assert images.dtype == torch.uint8 and torch.equal(labels, native_labels)
    assert (images.int() - native.int()).abs().float().mean() <= 1.0


@pytest.mark.parametrize("kwargs, fragment", [({"input_img_mode": "L"}, "input_img_mode"),
                                              ({"load_bytes": True}, "load_bytes")])
def test_timm_reading_options_the_fast_path_cannot_give_fall_back(small_folder, kwargs,
                                                                  fragment):
    ds = _timm_dataset(small_folder, eval_transform(), **kwargs)
    verdict = jpegloader.explain(ds, batch_size=4)
    assert not verdict.accelerated and fragment in verdict.summary()


def test_timm_replaces_an_unopenable_file_with_the_next_sample_as_timm_does(tmp_path):
    root = write_image_folder(tmp_path / "d", 6)
    ds = _timm_dataset(root, eval_transform())
    bad = 2
    open(ds.reader.samples[bad][0], "wb").write(b"not an image")  # noqa: SIM115
    native = list(TorchDataLoader(ds, batch_size=6))[0]
    ours = list(jpegloader.DataLoader(ds, batch_size=6, num_workers=1))[0]
    assert torch.equal(ours[1], native[1])
    assert ours[1][bad].item() == ds.reader.samples[bad + 1][1]
    assert (ours[0] - native[0]).abs().mean().item() < 0.02
