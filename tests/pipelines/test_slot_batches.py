"""A collate_fn's batch through the slot (NOTE [ A collate_fn's batch in the slot ]):
what comes out equals what went in, large plain tensors become views of the slot,
views of one storage stay views of one region, and what does not fit travels as
torch sends it."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision import tv_tensors

from jpegloader.pipelines import slot_batches as sb


class Padded:
    """A user's batch class (as DETR's NestedTensor)."""

    def __init__(self, tensors, mask):
        self.tensors, self.mask = tensors, mask


def roundtrip(batch, arena_bytes=8 << 20):
    arena = np.zeros(arena_bytes, np.uint8)
    packed = sb.pack(batch, arena)
    assert packed is not None
    return sb.unpack(packed, torch.from_numpy(arena)), packed, arena


def in_arena(t: torch.Tensor, arena: np.ndarray) -> bool:
    start = arena.ctypes.data
    return start <= t.data_ptr() < start + arena.nbytes


def test_a_padded_batch_and_its_targets_come_out_as_they_went_in():
    images = torch.randn(2, 3, 200, 300)
    mask = torch.rand(2, 200, 300) > 0.5
    targets = ({"boxes": torch.rand(3, 4), "labels": torch.tensor([1, 2, 3]),
                "image_id": torch.tensor([7]), "name": "a"},
               {"boxes": torch.zeros((0, 4)), "labels": torch.zeros(0, dtype=torch.int64),
                "image_id": torch.tensor([9]), "name": "b"})
    (got, got_targets), packed, arena = roundtrip((Padded(images, mask), targets))
    assert torch.equal(got.tensors, images) and torch.equal(got.mask, mask)
    assert in_arena(got.tensors, arena) and in_arena(got.mask, arena)
    start = arena.ctypes.data
    assert (got.tensors.data_ptr() - start) % 64 == (got.mask.data_ptr() - start) % 64 == 0
    for a, b in zip(got_targets, targets, strict=True):
        assert a.keys() == b.keys()
        for k, v in b.items():
            if isinstance(v, torch.Tensor):
                assert a[k].dtype == v.dtype and a[k].shape == v.shape and torch.equal(a[k], v)
                assert not in_arena(a[k], arena)  # small: by value
            else:
                assert a[k] == v
    assert packed.used == images.numel() * 4 + mask.numel()  # both 64-byte multiples
    assert sb.rows(packed, 1 << 20) == -(-packed.used // (1 << 20))


def test_views_of_one_storage_stay_views_of_one_region():
    whole = torch.arange(64 * 1024, dtype=torch.float32)
    batch = [whole, whole[10:20], whole.view(256, 256).t()]
    (a, b, c), packed, _ = roundtrip(batch)
    assert packed.used == whole.numel() * 4  # the storage placed once
    assert torch.equal(b, whole[10:20]) and torch.equal(c, whole.view(256, 256).t())
    a[15] = -1.0
    assert b[5] == -1.0 and c[15 % 256, 15 // 256] == -1.0


def test_what_does_not_fit_and_subclasses_travel_as_torch_sends_them():
    small_arena = 1 << 20
    big = torch.ones(1 << 19)  # 2 MB: does not fit
    fits = torch.full((1 << 17,), 2.0)  # 512 KB
    boxes = tv_tensors.BoundingBoxes(torch.rand(20000, 4), format="XYXY", canvas_size=(9, 9))
    (got_big, got_fits, got_boxes), _, arena = roundtrip([big, fits, boxes], small_arena)
    assert torch.equal(got_big, big) and not in_arena(got_big, arena)
    assert torch.equal(got_fits, fits) and in_arena(got_fits, arena)
    assert type(got_boxes) is tv_tensors.BoundingBoxes and got_boxes.canvas_size == (9, 9)
    assert torch.equal(got_boxes, boxes)


def test_a_batch_with_nothing_to_place_is_left_as_it_is():
    assert sb.pack({"x": torch.zeros(3)}, np.zeros(1 << 20, np.uint8)) is None


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bool, torch.int64, torch.float16])
def test_every_dtype_keeps_its_values(dtype):
    t = (torch.rand(300, 300) * 200).to(dtype)
    (got,), _, _ = roundtrip([t])
    assert got.dtype == dtype and torch.equal(got, t)
