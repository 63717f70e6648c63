"""NOTE [ Workers kept between epochs ] (dataloader/engine.py): with
persistent_workers=False, the workers of a fully native pipeline serve the next
epoch too, give the same batches as fresh ones, and exit when idle too long, when
the loader is closed, or when the pipeline changes; anything of the user's that
runs in the workers gets fresh workers every epoch, as with torch."""
from __future__ import annotations

import multiprocessing

import pytest
import torch
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from jpegloader.dataloader import engine as loader_module
from tests.conftest import eval_transform, shm_entries, train_transform
from tests.conftest import alive, wait_gone


def _pids(loader) -> list[int]:
    return [w.pid for w in loader._workers()]


def _epoch(loader) -> tuple[list[list[torch.Tensor]], list[int]]:
    """The epoch's batches, and the workers that made them."""
    batches, pids = [], []
    for b in loader:
        pids = pids or _pids(loader)
        batches.append([t.clone() for t in b])
    return batches, pids


def test_native_pipeline_keeps_its_workers_until_idle_too_long(small_folder, monkeypatch):
    monkeypatch.setattr(loader_module, "IDLE_WORKERS_SECONDS", 1.0)
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)
    assert sum(len(b[1]) for b in loader) == len(ds)
    first = _pids(loader)
    assert len(first) == 2 and all(alive(p) for p in first)
    assert sum(len(b[1]) for b in loader) == len(ds)
    assert _pids(loader) == first  # the same processes served the second epoch
    wait_gone(first, 1.0 + 5.0)  # idle past IDLE_WORKERS_SECONDS: they exit
    assert sum(len(b[1]) for b in loader) == len(ds)  # a third epoch forks new ones
    assert set(_pids(loader)).isdisjoint(first)
    loader.close()


def test_kept_workers_give_the_batches_fresh_ones_give(small_folder, monkeypatch):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    runs = {}
    for keep in (True, False):
        if not keep:
            monkeypatch.setattr(loader_module.Engine, "_keep_idle", lambda self, pool: False)
        loader = jpegloader.DataLoader(ds, batch_size=5, shuffle=True, num_workers=2,
                                       generator=torch.Generator().manual_seed(3))
        runs[keep], pids = zip(*(_epoch(loader) for _ in range(3)), strict=True)
        assert (pids[0] == pids[1] == pids[2]) is keep, pids
        loader.close()
    for kept, fresh in zip(runs[True], runs[False], strict=True):
        for a, b in zip(kept, fresh, strict=True):
            assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def _count_init(counter, worker_id):
    with counter.get_lock():
        counter.value += 1


class _Marker:
    """A transform of the user's: it runs in the workers (a hybrid pipeline)."""

    def __call__(self, img):
        return img


@pytest.mark.parametrize("users_code", ["worker_init_fn", "transform"])
def test_workers_running_users_code_are_fresh_every_epoch(small_folder, users_code):
    counter = multiprocessing.Value("i", 0)
    transform = train_transform()
    extra = {}
    if users_code == "worker_init_fn":
        import functools
        extra["worker_init_fn"] = functools.partial(_count_init, counter)
    else:
        transform = T.Compose([T.RandomResizedCrop(32), _Marker(), T.ToTensor()])
    ds = datasets.ImageFolder(str(small_folder), transform)
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, **extra)
    assert loader.eligibility.accelerated
    pids = []
    for _ in range(2):
        assert sum(len(b[1]) for b in loader) == len(ds)
        pids.append(_pids(loader))
    assert set(pids[0]).isdisjoint(pids[1])
    if users_code == "worker_init_fn":
        assert counter.value == 4  # as torch: each epoch's workers run it
    loader.close()
    wait_gone(pids[0] + pids[1], 5)


def test_kept_workers_leave_when_the_transform_changes(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    assert next(iter(loader))[0].shape[-1] == 224
    for _ in loader:  # a whole epoch: the workers are kept
        pass
    first = _pids(loader)
    ds.transform = T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()])
    shapes = {b[0].shape[-1] for b in loader}
    assert shapes == {32}
    assert set(_pids(loader)).isdisjoint(first)
    wait_gone(first, 5)
    loader.close()


def test_close_and_drop_stop_kept_workers_at_once(small_folder, monkeypatch):
    # Kept workers would wait an hour: gone within _wait_gone's guard means at once.
    monkeypatch.setattr(loader_module, "IDLE_WORKERS_SECONDS", 3600.0)
    before = shm_entries()
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    for how in ("close", "del"):
        loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
        assert sum(len(b[1]) for b in loader) == len(ds)
        pids = _pids(loader)
        assert pids and all(alive(p) for p in pids)
        if how == "close":
            loader.close()
        else:
            del loader
        wait_gone(pids, 5)
    assert shm_entries() <= before


def _torch_pids(loader) -> list[int]:
    return [w.pid for w in loader._iterator._workers] if loader._iterator is not None else []


@pytest.mark.parametrize("cls", [torch.utils.data.DataLoader, jpegloader.DataLoader],
                         ids=["torch", "jpegloader"])
def test_persistent_workers_outlive_abandoned_epochs(small_folder, cls):
    """persistent_workers=True: the workers that start with the first epoch serve every
    later one, whether the first is abandoned mid-way (``it = iter(loader); next(it);
    del it``), a later one is, or one runs to its end, as torch's loader keeps them."""
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = cls(ds, batch_size=2, num_workers=2, persistent_workers=True)
    pids = _pids if cls is jpegloader.DataLoader else _torch_pids
    it = iter(loader)
    next(it)
    first = pids(loader)
    assert len(first) == 2
    del it  # the first epoch abandoned
    seen = []
    for abandon in (True, False, True, False):
        it = iter(loader)
        if abandon:
            next(it)
        else:
            assert sum(len(b[1]) for b in it) == len(ds)
        seen.append(pids(loader))
        del it
    assert all(p == first for p in seen), (first, seen)
    assert all(alive(p) for p in first)
    if cls is jpegloader.DataLoader:
        loader.close()
