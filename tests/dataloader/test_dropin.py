"""Where jpegloader.DataLoader must behave as torch's and torchdata's loaders do, as
PyTorch's own DataLoader tests and torchdata's StatefulDataLoader state-dict tests
exercise them: a global swap of torch's class, typing, workers that go with the last
reference, and resume semantics."""
from __future__ import annotations

import gc
import time
from typing import List  # noqa: UP035 - the spelling user annotations use

import pytest
import torch
import torch.utils.data
from torch.utils.data import IterableDataset, TensorDataset, get_worker_info
from torchvision import datasets

import jpegloader
from jpegloader.dataloader.loader import TorchDataLoader
from tests.conftest import eval_transform, worker_pids


# -- the global swap -----------------------------------------------------------------------
def test_a_global_swap_of_torchs_class_works(small_folder):
    """torch.utils.data.DataLoader = jpegloader.DataLoader: len() and iteration, on the
    accelerated path and the fallback (a RecursionError before)."""
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    saved = torch.utils.data.DataLoader
    torch.utils.data.DataLoader = jpegloader.DataLoader
    try:
        for dataset in (ds, TensorDataset(torch.arange(10))):
            loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
            assert len(loader) == -(-len(dataset) // 4)
            assert sum(len(b[-1]) for b in loader) == len(dataset)
            loader.load_state_dict(loader.state_dict())
            assert sum(len(b[-1]) for b in loader) == len(dataset)
    finally:
        torch.utils.data.DataLoader = saved
    assert TorchDataLoader is saved


# -- typing --------------------------------------------------------------------------------
def test_subscripted_like_torchs_generic_class():
    alias = jpegloader.DataLoader[List[torch.Tensor]]
    assert alias.__origin__ is jpegloader.DataLoader
    loader: jpegloader.DataLoader[int] = jpegloader.DataLoader(TensorDataset(torch.zeros(2)))
    assert isinstance(loader, TorchDataLoader)


# -- workers go with the last reference ----------------------------------------------------
class _Stream(IterableDataset):
    def __init__(self, n: int):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(torch.tensor([float(i)]) for i in range(start, self.n, step))


def _datasets(folder):
    return {"accelerated": datasets.ImageFolder(str(folder), eval_transform()),
            "fallback": TensorDataset(torch.arange(24)),
            "iterable": _Stream(24)}


@pytest.mark.parametrize("kind", ["accelerated", "fallback", "iterable"])
def test_persistent_workers_leave_with_the_last_reference(small_folder, kind):
    """No reference cycle keeps the loader, its iterator and its workers alive until the
    cyclic collector runs (PyTorch's TestDataLoaderPersistentWorkers.test_partial_workers)."""
    dataset = _datasets(small_folder)[kind]
    before = worker_pids()
    gc.collect()
    gc.disable()
    try:
        loader = jpegloader.DataLoader(dataset, batch_size=4, num_workers=2,
                                       persistent_workers=True)
        assert loader.eligibility.accelerated == (kind == "accelerated")
        it = iter(loader)
        next(it)
        assert len(worker_pids() - before) == 2
        del it, loader
        deadline = time.monotonic() + 1.0
        while worker_pids() - before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not worker_pids() - before, "workers outlived the loader"
    finally:
        gc.enable()


# -- resume semantics (torchdata's StatefulDataLoader) -------------------------------------
def _fallback(**kwargs):
    return jpegloader.DataLoader(TensorDataset(torch.arange(20)), batch_size=2, **kwargs)


def _ids(batches) -> list[int]:
    return [int(i) for b in batches for i in b[0]]


def test_state_dict_right_after_load_state_dict_is_the_loaded_position():
    torch.manual_seed(0)
    first = _fallback(shuffle=True)
    it = iter(first)
    seen = [next(it) for _ in range(3)]
    state = first.state_dict()
    second = _fallback(shuffle=True)
    second.load_state_dict(state)
    again = second.state_dict()  # checkpointed before its first step
    assert again == state and again["batches_yielded"] == 3
    third = _fallback(shuffle=True)
    third.load_state_dict(again)
    rest = list(third)
    assert len(rest) == 7
    assert sorted(_ids(seen) + _ids(rest)) == list(range(20))


@pytest.mark.parametrize("num_workers", [0, 2])
def test_in_order_false_checkpoint_neither_loses_nor_repeats(num_workers):
    torch.manual_seed(1)
    kwargs = {"shuffle": True, "num_workers": num_workers, "in_order": False}
    first = _fallback(**kwargs)
    assert first.in_order is False
    it = iter(first)
    seen = [next(it) for _ in range(4)]
    state = first.state_dict()
    del it
    second = _fallback(**kwargs)
    second.load_state_dict(state)
    rest = list(second)
    assert sorted(_ids(seen) + _ids(rest)) == list(range(20))


@pytest.mark.parametrize("num_workers", [0, 2])
def test_an_iterable_dataset_resumes_where_it_stopped(num_workers):
    loader = jpegloader.DataLoader(_Stream(24), batch_size=3, num_workers=num_workers)
    full = [b.flatten().tolist() for b in loader]
    it = iter(loader)
    seen = [next(it).flatten().tolist() for _ in range(3)]
    state = loader.state_dict()
    del it
    resumed = jpegloader.DataLoader(_Stream(24), batch_size=3, num_workers=num_workers)
    resumed.load_state_dict(state)
    rest = [b.flatten().tolist() for b in resumed]
    assert seen + rest == full and len(rest) == len(full) - 3


def test_snapshot_every_n_steps_is_accepted_as_torchdata_takes_it():
    # torchdata's StatefulDataLoader takes None, 0 and any positive count
    for value in (5, 1, 0, None):
        assert _fallback(snapshot_every_n_steps=value).snapshot_every_n_steps == value
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match="snapshot_every_n_steps"):
            _fallback(snapshot_every_n_steps=bad)


# -- options from the environment ----------------------------------------------------------
def test_decode_and_on_error_from_the_environment(small_folder, monkeypatch):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    monkeypatch.setenv("JPEGLOADER_DECODE", "Exact")
    monkeypatch.setenv("JPEGLOADER_ON_ERROR", "skip")
    loader = jpegloader.DataLoader(ds, batch_size=4)
    assert (loader.decode, loader.on_error) == ("exact", "skip")
    assert jpegloader.DataLoader(ds, decode="auto").decode == "auto"  # the argument wins
    monkeypatch.setenv("JPEGLOADER_DECODE", "fast")
    with pytest.raises(ValueError, match="JPEGLOADER_DECODE='fast' is not one of auto, exact"):
        jpegloader.DataLoader(ds)
    monkeypatch.delenv("JPEGLOADER_DECODE")
    monkeypatch.delenv("JPEGLOADER_ON_ERROR")
    assert (jpegloader.DataLoader(ds).decode, jpegloader.DataLoader(ds).on_error) == \
        ("auto", "raise")


class _SlowFirst(torch.utils.data.Dataset):
    """Item 0 takes a while (a huge photo, a slow object store)."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 0:
            import time
            time.sleep(0.5)
        return torch.tensor([i])


def test_in_order_false_is_said_in_the_verdict_and_keeps_the_samplers_order(small_folder):
    """NOTE [ Batches in order ]: the documented behaviour (README, Options), on both
    paths, and the verdict says it where in_order=False was passed."""
    from torchvision import datasets

    from tests.conftest import eval_transform
    slow = jpegloader.DataLoader(_SlowFirst(), batch_size=1, num_workers=2, in_order=False)
    assert [int(b) for b in slow] == list(range(10))
    assert "in_order=False: batches still come in the sampler's order" in \
        slow.eligibility.report()
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    fast = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, in_order=False)
    assert fast.eligibility.accelerated
    assert "in_order=False: batches still come" in fast.eligibility.report()
    assert torch.cat([b[1] for b in fast]).tolist() == [t for _, t in ds.samples]
    assert "in_order" not in jpegloader.DataLoader(ds, batch_size=4).eligibility.report()
    assert "in_order=False" in jpegloader.explain(ds, batch_size=4, in_order=False).report()
