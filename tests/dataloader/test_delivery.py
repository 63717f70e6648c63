"""Getting batches to the device: the device copy reads straight from the slot where
it has read its source when it returns (NOTE [ From the slot to the device ])."""
from __future__ import annotations

import torch

from jpegloader.dataloader.delivery import DeviceFeed


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
