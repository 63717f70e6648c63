"""Getting batches to the device: the device copy reads straight from the slot where
it has read its source when it returns (NOTE [ From the slot to the device ])."""
from __future__ import annotations

import collections
import contextlib
import io
import typing

import pytest
import torch

from jpegloader.dataloader.delivery import DeviceFeed, to_device


def test_a_device_feed_to_the_cpu_reads_its_source_at_once():
    assert DeviceFeed("cpu").reads_host_at_once
    assert DeviceFeed("meta").reads_host_at_once is False


def test_batches_copied_from_the_slot_stay_intact_while_held(small_folder):
    # device= lends the batch to the copy (the "cpu" copy is the slot's view itself):
    # every batch held to the end still equals the loader's own without device=
    from torchvision import datasets

    import jpegloader
    from tests.conftest import train_transform
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    runs = []
    for device in (None, "cpu"):
        torch.manual_seed(5)
        runs.append(list(jpegloader.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2,
                                               device=device)))
    assert len(runs[0]) == len(runs[1]) == 6
    for (a, la), (b, lb) in zip(*runs, strict=True):
        assert torch.equal(a, b) and torch.equal(la, lb)


class Pair(typing.NamedTuple):
    image: torch.Tensor
    label: torch.Tensor


class Padded:
    """An object with its own ``to(device)`` and no ``non_blocking`` (DETR's
    NestedTensor's shape)."""

    def __init__(self, tensors, mask):
        self.tensors, self.mask = tensors, mask

    def to(self, device):
        return Padded(self.tensors.to(device), self.mask.to(device))


def test_every_batch_structure_torch_pins_reaches_the_device():
    batch = {"pair": Pair(torch.zeros(2), torch.ones(2)), "names": ("a", "b"),
             "nested": [Padded(torch.zeros(3), torch.ones(3, dtype=torch.bool))],
             "ordered": collections.OrderedDict(x=torch.zeros(1)), "count": 3}
    moved = to_device(batch, torch.device("meta"))
    assert type(moved["pair"]) is Pair and moved["pair"].image.is_meta
    assert moved["pair"].label.is_meta
    assert moved["names"] == ("a", "b") and moved["count"] == 3
    assert type(moved["nested"][0]) is Padded and moved["nested"][0].tensors.is_meta
    assert moved["nested"][0].mask.is_meta
    assert type(moved["ordered"]) is collections.OrderedDict and moved["ordered"]["x"].is_meta


class NamedSamples(torch.utils.data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return Pair(torch.full((2,), float(i)), torch.tensor(i))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_namedtuple_batch_on_torchs_loader_reaches_the_device(device):
    import jpegloader
    batches = list(jpegloader.DataLoader(NamedSamples(), batch_size=3, device=device))
    assert [type(b) for b in batches] == [Pair, Pair]
    assert all(b.image.device.type == device and b.label.device.type == device
               for b in batches)
    if device == "cpu":
        assert torch.cat([b.label for b in batches]).tolist() == list(range(6))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_detrs_nested_tensor_batches_reach_the_device(device):
    """A recipe the package accelerates whose collate builds an object with its own
    ``to()``: its images and mask are moved, its targets too."""
    pytest.importorskip("pycocotools", reason="torchvision's CocoDetection needs pycocotools")
    import jpegloader
    from jpegloader.bench import peers
    from tests.coco_fixtures import coco_sample
    try:
        detr = peers.detr()
    except peers.PeerMissing as e:
        pytest.skip(str(e))
    coco, collate_fn = detr.datasets.coco, detr.util.misc.collate_fn
    img_folder, ann_file = coco_sample()
    with contextlib.redirect_stdout(io.StringIO()):
        ds = coco.CocoDetection(str(img_folder), str(ann_file), coco.make_coco_transforms("val"),
                                return_masks=False)
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=collate_fn,
                                   device=device)
    assert loader.eligibility.accelerated
    plain = jpegloader.DataLoader(ds, batch_size=4, num_workers=0, collate_fn=collate_fn)
    for k, ((images, targets), (want, want_targets)) in enumerate(zip(loader, plain)):
        assert type(images) is detr.util.misc.NestedTensor
        assert images.tensors.device.type == device and images.mask.device.type == device
        assert all(t["boxes"].device.type == device for t in targets)
        if device == "cpu":
            assert torch.equal(images.tensors, want.tensors)
            assert torch.equal(images.mask, want.mask)
        if k == 2:
            break
