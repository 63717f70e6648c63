"""pin_memory=True pins in a thread of the loader's own, as torch's loader does
(NOTE [ Pinned in a thread of its own ]): checked with pinning emulated on the CPU
(jpegloader.bench.pinning), for structure only: which thread pins, the order, what
an error in pinning says, shutdown, abandonment and resume.  Never timings."""
from __future__ import annotations

import gc
import threading
import time

import pytest
import torch
from torchvision import datasets

import jpegloader
from jpegloader.bench.pinning import emulated_pinning
from tests.conftest import train_transform

PIN_THREAD = "jpegloader pin memory"


def _pin_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == PIN_THREAD]


def _no_pin_thread_within(seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while _pin_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _pin_threads()


@pytest.fixture
def pinning_threads(monkeypatch):
    """Emulated pinning that records the thread each copy into pinned memory ran on."""
    seen: list[str] = []
    with emulated_pinning():
        empty, pin = torch.empty, torch.Tensor.pin_memory

        def recording_empty(*args, pin_memory=False, **kwargs):
            if pin_memory:
                seen.append(threading.current_thread().name)
            return empty(*args, pin_memory=pin_memory, **kwargs)

        def recording_pin(self, device=None):
            seen.append(threading.current_thread().name)
            return pin(self, device)

        monkeypatch.setattr(torch, "empty", recording_empty)
        monkeypatch.setattr(torch.Tensor, "pin_memory", recording_pin)
        yield seen


def _batches(ds, pin: bool, num_workers: int = 2, **kwargs) -> list:
    torch.manual_seed(11)
    return list(jpegloader.DataLoader(ds, batch_size=4, shuffle=True,
                                      num_workers=num_workers, pin_memory=pin, **kwargs))


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_batches_are_pinned_in_the_pin_thread_in_the_samplers_order(small_folder,
                                                                    pinning_threads, context):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    plain = _batches(ds, False, multiprocessing_context=context)
    pinning_threads.clear()
    pinned = _batches(ds, True, multiprocessing_context=context)
    assert len(pinned) == len(plain) == 6
    for (a, la), (b, lb) in zip(plain, pinned, strict=True):
        assert torch.equal(a, b) and torch.equal(la, lb)
    assert pinning_threads and set(pinning_threads) == {PIN_THREAD}, pinning_threads
    assert _no_pin_thread_within()


def _pair_collate(samples):
    images, labels = zip(*samples)
    return {"images": torch.stack(images), "labels": torch.tensor(labels),
            "names": ["x"] * len(samples)}


def test_a_collate_fns_batch_is_pinned_there_too(small_folder, pinning_threads):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    plain = _batches(ds, False, collate_fn=_pair_collate)
    pinning_threads.clear()
    pinned = _batches(ds, True, collate_fn=_pair_collate)
    for a, b in zip(plain, pinned, strict=True):
        assert torch.equal(a["images"], b["images"]) and b["names"] == ["x"] * 4
    assert pinning_threads and set(pinning_threads) == {PIN_THREAD}


def test_at_no_workers_batches_are_pinned_in_the_loop_as_torchs_loader_pins_them(small_folder):
    # no pin thread without workers (torch's loader pins in the loop then too); the
    # batches are pinned, equal to the unpinned ones, the collate_fn's included
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    for collate in (None, _pair_collate):
        extra = {} if collate is None else {"collate_fn": collate}
        plain = _batches(ds, False, num_workers=0, **extra)
        with emulated_pinning():
            pinned = _batches(ds, True, num_workers=0, **extra)
            assert not _pin_threads()
            images = [b[0] if collate is None else b["images"] for b in pinned]
            assert all(x.is_pinned() for x in images)
        for a, b in zip(plain, pinned, strict=True):
            if collate is None:
                assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
            else:
                assert torch.equal(a["images"], b["images"]) and b["names"] == a["names"]


class Unpinnable:
    def pin_memory(self):
        raise ValueError("this object cannot be pinned")


def _unpinnable_collate(samples):
    return Unpinnable()


def test_an_error_in_pinning_names_the_batch_and_the_pin_thread(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    with emulated_pinning():
        loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True,
                                       collate_fn=_unpinnable_collate)
        with pytest.raises(ValueError, match="in pin memory thread for batch 0") as e:
            next(iter(loader))
        assert "this object cannot be pinned" in str(e.value)
    assert _no_pin_thread_within()


def test_an_abandoned_or_closed_epoch_leaves_no_pin_thread(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    with emulated_pinning():
        for persistent in (False, True):
            loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, pin_memory=True,
                                           persistent_workers=persistent)
            it = iter(loader)
            next(it)
            assert len(_pin_threads()) == 1
            del it  # abandoned mid-epoch
            gc.collect()
            assert _no_pin_thread_within(), persistent
            first = next(iter(loader))  # a new epoch on the same (or new) workers
            assert len(_pin_threads()) == 1
            for _ in zip(range(3), iter(loader)):  # a new epoch closes the last one
                pass
            assert len(_pin_threads()) <= 1
            del loader, first
            gc.collect()
            assert _no_pin_thread_within(), persistent


def test_a_resume_takes_up_after_the_last_batch_taken_not_the_last_pinned(small_folder):
    # batches the pin thread made ahead and nobody took are made again after a resume
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    with emulated_pinning():
        whole = _batches(ds, True)
        torch.manual_seed(11)
        loader = jpegloader.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2,
                                       pin_memory=True)
        it = iter(loader)
        taken = [next(it) for _ in range(2)]
        time.sleep(0.3)  # the pin thread runs ahead meanwhile
        state = loader.state_dict()
        del it
        resumed = jpegloader.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2,
                                        pin_memory=True)
        resumed.load_state_dict(state)
        rest = list(resumed)
    assert len(taken) + len(rest) == len(whole)
    for (a, la), (b, lb) in zip(whole, taken + rest, strict=True):
        assert torch.equal(a, b) and torch.equal(la, lb)


def test_emulated_pinning_reuses_a_block_once_its_tensors_are_gone():
    # as torch's caching host allocator: a block per power-of-two size, handed out
    # again once nothing uses it, and not while a view of it lives
    with emulated_pinning() as blocks:
        x = torch.arange(3000, dtype=torch.float32)
        first = x.pin_memory()
        address = first.data_ptr()
        view = first[10:]
        del first
        second = x.pin_memory()
        assert second.data_ptr() != address and blocks.allocated == 2
        del view, second
        third = torch.empty((3000,), dtype=torch.float32, pin_memory=True).copy_(x)
        assert blocks.allocated == 2 and torch.equal(third, x)
        assert third.is_pinned() and third.pin_memory() is third and not x.is_pinned()
    with emulated_pinning(cached=False) as blocks:  # a new block every time
        assert torch.equal(x.pin_memory(), x) and torch.equal(x.pin_memory(), x)
        assert blocks.allocated == 2 and not any(blocks.free.values())
    assert not third.is_pinned()  # torch's own answer again


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8, torch.bfloat16, torch.bool,
                                   torch.int64])
@pytest.mark.parametrize("elements", [1, 255, 4099, 70_001, 1 << 20])
@pytest.mark.parametrize("offset", [0, 3])
def test_a_pinned_host_copy_holds_the_same_bytes(dtype, elements, offset):
    # streaming stores for large tensors (NOTE [ Pinned copies bypass the caches ]),
    # any alignment of source or end; torch's copy for the rest
    from jpegloader.dataloader.delivery import host_copy
    g = torch.Generator().manual_seed(elements)
    base = torch.randint(0, 256, (elements + offset,), dtype=torch.uint8, generator=g)
    t = base.to(dtype)[offset:]
    with emulated_pinning():
        out = host_copy(t, pinned=True)
        assert out.is_pinned() and out.data_ptr() != t.data_ptr()
    assert out.dtype == t.dtype and out.shape == t.shape and torch.equal(out, t)
    assert torch.equal(host_copy(t, pinned=False), t)


def test_the_stream_copy_refuses_buffers_of_two_lengths():
    from jpegloader.dataloader._host_copy import stream_copy
    with pytest.raises(ValueError, match="src is a 10-byte buffer, expected 12 bytes"):
        stream_copy(bytearray(12), bytes(10))
    with pytest.raises(TypeError):
        stream_copy(bytes(12), bytes(12))  # not writable


class _Meta(dict):
    """A mapping with its own attribute, which torch's walk keeps (a copy of it)."""
    tag = "meta"


def test_pin_batch_makes_what_torchs_pin_memory_makes():
    # the structure is torch's own walk's; the large contiguous tensors are pinned by
    # host_copy first, in place, the rest (small, strided, needing grad) by torch
    from torchvision import tv_tensors
    from torch.utils.data._utils.pin_memory import pin_memory
    from jpegloader.dataloader.delivery import pin_batch
    from collections import namedtuple
    Pair = namedtuple("Pair", "image target")

    def batch():
        g = torch.Generator().manual_seed(3)
        big = torch.rand(3, 200, 300, generator=g)
        boxes = tv_tensors.BoundingBoxes(torch.rand(5, 4, generator=g), format="XYXY",
                                         canvas_size=(200, 300))
        meta = _Meta(strided=torch.rand(300, 200, generator=g).t(),
                     grad=torch.rand(70_000, generator=g).requires_grad_())
        return (Pair(tv_tensors.Image(big), {"boxes": boxes, "name": "a.jpg"}),
                [big, big[1]], meta, 7)

    with emulated_pinning():
        expected = pin_memory(batch())
        pinned = pin_batch(batch())

        def same(a, b):
            if isinstance(a, torch.Tensor):
                # the emulation's pin_memory drops tv_tensors' class, real torch's keeps
                # it (torchvision's __torch_function__), as pin_batch does
                assert type(b) is type(a) or type(a) is torch.Tensor, (type(a), type(b))
                assert b.is_pinned() and torch.equal(a, b) and a.stride() == b.stride()
            elif isinstance(a, dict):
                assert type(a) is type(b) and a.keys() == b.keys() and getattr(b, "tag", None) == \
                    getattr(a, "tag", None)
                for k in a:
                    same(a[k], b[k])
            elif isinstance(a, (list, tuple)):
                assert type(a) is type(b) and len(a) == len(b)
                for x, y in zip(a, b):
                    same(x, y)
            else:
                assert a == b
        same(expected, pinned)
        assert type(pinned[0].image) is tv_tensors.Image  # pinned in place: itself
        # a batch whose tensors may be someone else's (num_workers=0: the user's
        # collate_fn ran here) is left as it is; its pinned copy is torch's walk's
        theirs = batch()
        address = theirs[0].image.data_ptr()
        copied = pin_batch(theirs, own=False)
        assert theirs[0].image.data_ptr() == address and not theirs[0].image.is_pinned()
        same(expected, copied)
