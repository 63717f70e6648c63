"""NOTE [ A collate_fn's batch made in the slot ]: DETR's collate_fn (the ``detr``
0.1.4 wheel's own ``util.misc``) recognised on stand-ins, and its batch written into
a slot's bytes equal to what it makes itself.  (RT-DETR's: test_rtdetr.py.)"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate

from jpegloader.bench import peers
from jpegloader.pipelines.detection.slot_collates import Padding
from jpegloader.pipelines.slot_batches import pack, unpack

try:
    misc = peers.detr().util.misc
except peers.PeerMissing as e:
    pytest.skip(str(e), allow_module_level=True)


class Carrier:
    """A batch of images and their mask, as a fork might name it."""

    def __init__(self, tensors, mask):
        self.tensors, self.mask = tensors, mask


def padded_to_32(batch):
    """A fork's collate_fn that pads each side up to a multiple of 32."""
    images, targets = zip(*batch)
    h = -(-max(i.shape[1] for i in images) // 32) * 32
    w = -(-max(i.shape[2] for i in images) // 32) * 32
    out = images[0].new_zeros((len(images), images[0].shape[0], h, w))
    mask = torch.ones((len(images), h, w), dtype=torch.bool)
    for k, image in enumerate(images):
        out[k, :, :image.shape[1], :image.shape[2]] = image
        mask[k, :image.shape[1], :image.shape[2]] = False
    return Carrier(out, mask), targets


class Tagged(Carrier):
    """A carrier with state of its own besides the two tensors."""

    def __init__(self, tensors, mask):
        super().__init__(tensors, mask)
        self.device = tensors.device


def carried_by(cls):
    def collate(batch):
        made = misc.collate_fn(batch)
        return cls(made[0].tensors, made[0].mask), made[1]
    return collate


def samples(dtype=torch.float32, seed=0):
    """Four DETR-sized samples of unequal heights and widths, with targets."""
    g = torch.Generator().manual_seed(seed)
    shapes = ((3, 100, 150), (3, 160, 83), (3, 43, 200), (3, 160, 200))
    return [((torch.rand(s, generator=g) * 255).to(dtype),
             {"boxes": torch.rand(k + 1, 4, generator=g), "labels": torch.arange(k + 1)})
            for k, s in enumerate(shapes)]


def pads(fn, dtype):
    kind = Padding.of(fn, dtype)
    return kind.nested if isinstance(kind, Padding) else None


def padded_in(batch, arena, nested, dtype, reserve):
    return Padding(dtype, nested).collate(batch, arena, reserve)


def test_detrs_collate_is_recognised_with_its_own_nested_tensor():
    assert pads(misc.collate_fn, torch.float32) is misc.NestedTensor
    assert pads(misc.collate_fn, torch.uint8) is misc.NestedTensor
    assert pads(carried_by(Carrier), torch.float32) is Carrier


@pytest.mark.parametrize("fn", [default_collate, lambda b: tuple(zip(*b)), padded_to_32,
                                carried_by(Tagged)],
                         ids=["default_collate", "zip", "pads to 32", "state of its own"])
def test_other_collates_are_not(fn):
    assert Padding.of(fn, torch.float32) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_the_batch_written_in_a_used_slot_equals_detrs_own(dtype):
    batch = samples(dtype)
    want = misc.collate_fn(batch)
    arena = np.full(64 << 20, 0xFF, np.uint8)  # an earlier batch's bytes
    reserved = []
    got, written = padded_in(batch, arena, misc.NestedTensor, dtype, reserved.append)
    assert type(got[0]) is misc.NestedTensor and got[1] == want[1]
    assert got[0].tensors.dtype == dtype and got[0].tensors.shape == want[0].tensors.shape
    assert torch.equal(got[0].tensors, want[0].tensors)
    assert torch.equal(got[0].mask, want[0].mask)
    assert sum(r.size for r in reserved) <= written < sum(r.size for r in reserved) + 64
    # the packer names them in place: the slot's bytes are not copied again
    packed = pack(got, arena, written=written)
    assert packed.used == written
    arena_t = torch.from_numpy(arena)
    images, targets = unpack(packed, arena_t)
    assert images.tensors.untyped_storage().data_ptr() == arena_t.data_ptr()
    assert torch.equal(images.tensors, want[0].tensors) and torch.equal(images.mask,
                                                                       want[0].mask)
    assert all(torch.equal(a["boxes"], b["boxes"]) for a, b in zip(targets, want[1]))


def test_a_large_target_goes_after_the_padded_batch():
    batch = [(image, {"masks": torch.ones(1, 300, 300, dtype=torch.uint8) * k})
             for k, (image, _) in enumerate(samples())]
    arena = np.zeros(64 << 20, np.uint8)
    got, written = padded_in(batch, arena, misc.NestedTensor, torch.float32, lambda v: None)
    packed = pack(got, arena, written=written)
    images, targets = unpack(packed, torch.from_numpy(arena))
    want = misc.collate_fn(batch)
    assert torch.equal(images.tensors, want[0].tensors)
    assert [int(t["masks"].max()) for t in targets] == [0, 1, 2, 3]
    assert packed.used > written


def test_what_it_cannot_pad_goes_to_the_collate_fn():
    arena = np.zeros(64 << 20, np.uint8)
    batch = samples()
    made = padded_in(batch, arena, misc.NestedTensor, torch.float64, lambda v: None)
    assert made is None  # not the dtype recognised
    assert padded_in([(b[0][None], b[1]) for b in batch], arena, misc.NestedTensor,
                     torch.float32, lambda v: None) is None  # not 3-D
    assert padded_in(batch, np.zeros(1000, np.uint8), misc.NestedTensor, torch.float32,
                     lambda v: None) is None  # does not fit
