"""NOTE [ The last batches spread out ] (dataloader/pool.py): an epoch's last
batches are decoded in parts by several workers, and come out as if one process
had decoded them."""
from __future__ import annotations

import itertools
import random

import pytest
import torch
from torchvision import datasets

import jpegloader
from jpegloader.dataloader import pool as pool_module
from jpegloader.dataloader.assign import Assignment, spread
from tests.conftest import eval_transform, train_transform, worker_pids, write_image_folder


def _batches(loader):
    return [[t.clone() for t in b] for b in loader]


def _best_max(size: int, ready: list[float], pace: list[float]) -> float:
    """The earliest last finish any split of ``size`` can give (brute force)."""
    best = None
    for parts in itertools.product(range(size + 1), repeat=len(ready)):
        if sum(parts) == size:
            top = max(r + p * n for r, p, n in zip(ready, pace, parts) if n) if size else 0
            best = top if best is None else min(best, top)
    return best


def test_spread_evens_out_the_queues():
    rng = random.Random(3)
    for _ in range(300):
        workers = rng.randint(1, 4)
        queued = [rng.choice((0, 8, 64, rng.randint(0, 40))) for _ in range(workers)]
        size = rng.randint(1, 12 if workers > 3 else 20)
        parts = spread(size, [float(q) for q in queued], [1.0] * workers)
        assert sum(parts) == size and min(parts) >= 0, (size, queued, parts)
        ends = [q + p for q, p in zip(queued, parts)]
        assert max(e for e, p in zip(ends, parts) if p) == \
            _best_max(size, queued, [1.0] * workers), (size, queued, parts)
        # only the emptiest queues get samples, and those end within one sample
        filled = [e for e, p in zip(ends, parts) if p]
        assert max(filled) - min(filled) <= 1, (size, queued, parts)


def test_spread_makes_the_last_finish_earliest():
    """Workers of different speeds, part-way through their queues: the split no other
    split beats."""
    rng = random.Random(7)
    for _ in range(300):
        workers = rng.randint(1, 3)
        pace = [rng.uniform(0.5, 2.0) for _ in range(workers)]
        ready = [rng.choice((0.0, rng.uniform(0, 30))) for _ in range(workers)]
        size = rng.randint(1, 16)
        parts = spread(size, ready, pace)
        assert sum(parts) == size and min(parts) >= 0
        last = max(r + p * n for r, p, n in zip(ready, pace, parts) if n)
        assert last == pytest.approx(_best_max(size, ready, pace)), (size, ready, pace, parts)


def test_spread_gives_a_full_queue_nothing():
    assert spread(64, [128.0, 64.0], [1.0, 1.0]) == [0, 64]
    assert spread(16, [0.0, 0.0], [1.0, 1.0]) == [8, 8]
    assert spread(5, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]) == [2, 2, 1]
    assert spread(3, [100.0, 0.0], [1.0, 1.0]) == [0, 3]
    assert spread(12, [0.0, 0.0], [2.0, 1.0]) == [4, 8]  # twice as fast: twice as many


def test_backlog_counts_what_a_worker_has_done_of_its_task():
    now = [0.0]
    a = Assignment(2, 2, balanced=True, clock=lambda: now[0])
    assert a.backlog() == ([0.0, 0.0], [1.0, 1.0])  # no pace yet: samples
    for w in (0, 1):
        a.sent(w, 10)
        a.returned(w, 10, 10 * (0.01 if w == 0 else 0.02))
    a.sent(0, 10)  # worker 0 begins at t = 0
    a.sent(0, 10)
    a.sent(1, 10)
    now[0] = 0.04  # 4 of worker 0's first 10, 2 of worker 1's
    ready, pace = a.backlog()
    assert pace == pytest.approx([0.01, 0.02])
    assert ready == pytest.approx([0.06 + 0.1, 0.16])
    a.returned(0, 10, 0.1)  # at 0.04, early: its next task begins now
    now[0] = 0.05
    assert a.backlog()[0] == pytest.approx([0.09, 0.15])
    now[0] = 9.0  # overdue: the current task is taken as about to end, no less
    assert a.backlog()[0] == pytest.approx([0.0, 0.0])


@pytest.fixture
def parts_seen(monkeypatch):
    """Every batch's parts as the pool sent them: (batch_no, [(worker, start, n)])."""
    seen = []
    submit = pool_module.WorkerPool.submit

    def recording(self, epoch, batch_no, indices, seed, **how):
        submit(self, epoch, batch_no, indices, seed, **how)
        seen.append((batch_no, list(self._in_flight[(epoch, batch_no)].parts)))

    monkeypatch.setattr(pool_module.WorkerPool, "submit", recording)
    return seen


@pytest.mark.parametrize("workers", [2, 3])
def test_last_batches_in_parts_equal_one_process(tmp_path, parts_seen, workers):
    root = write_image_folder(tmp_path / "d", 23)
    ds = datasets.ImageFolder(str(root), train_transform())
    runs = []
    for n in (0, workers):
        g = torch.Generator().manual_seed(4)
        # all six batches sent at the start, so the queues the last ones are spread
        # over are known (later ones depend on which results are in)
        extra = {"prefetch_factor": 6 // n} if n else {}
        runs.append(_batches(jpegloader.DataLoader(ds, batch_size=4, shuffle=True,
                                                   num_workers=n, generator=g, **extra)))
    one, many = runs
    assert len(one) == len(many) == 6
    for a, b in zip(one, many, strict=True):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    split = {b: parts for b, parts in parts_seen if len(parts) > 1}
    assert split and set(split) <= set(range(6 - workers, 6)), parts_seen
    for parts in split.values():  # parts tile the batch's rows, one per worker
        assert len({w for w, _, _ in parts}) == len(parts)
        starts = list(itertools.accumulate([0] + [n for *_, n in parts]))[:-1]
        assert [s for _, s, _ in parts] == starts
    assert not worker_pids()


def test_skipped_sample_in_a_part_is_closed_up(tmp_path, parts_seen):
    root = write_image_folder(tmp_path / "d", 8, classes=1)
    ds = datasets.ImageFolder(str(root), eval_transform())
    bad = ds.samples[5][0]  # batch 1 (samples 4-7), in its first part
    with open(bad, "wb") as f:
        f.write(b"garbage")
    runs = []
    for n in (0, 2):
        loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=n, on_error="skip")
        runs.append(_batches(loader))
        assert [p for _, p, _ in loader.skipped_samples] == [bad]
    one, many = runs
    assert [len(b[1]) for b in many] == [4, 3]
    for a, b in zip(one, many, strict=True):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert dict(parts_seen)[1] == [(0, 0, 2), (1, 2, 2)]


def test_error_in_a_part_names_the_file(tmp_path, parts_seen):
    root = write_image_folder(tmp_path / "d", 8, classes=1)
    ds = datasets.ImageFolder(str(root), eval_transform())
    bad = ds.samples[6][0]  # batch 1's second part
    with open(bad, "wb") as f:
        f.write(b"garbage")
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    with pytest.raises(Exception) as info:
        list(loader)
    assert bad in str(info.value) and "sample 6" in str(info.value)
    assert len(dict(parts_seen)[1]) == 2
    assert not worker_pids()


def test_user_code_in_workers_keeps_batches_whole(tmp_path, parts_seen):
    root = write_image_folder(tmp_path / "d", 8)
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2,
                                   collate_fn=lambda batch: len(batch))
    assert loader.eligibility.accelerated
    assert list(loader) == [4, 4]
    assert all(len(parts) == 1 for _, parts in parts_seen)


def test_kept_workers_are_idle_after_an_epoch_in_parts(tmp_path, parts_seen):
    root = write_image_folder(tmp_path / "d", 10)
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    for _ in range(3):
        assert sum(len(b[1]) for b in loader) == 10
    pool = loader._engine._pools.persistent
    assert pool.idle and pool.assign.outstanding == [0, 0] and pool.assign.queued == [0, 0]
    assert any(len(parts) > 1 for _, parts in parts_seen)
    loader.close()


def test_a_batch_in_parts_takes_one_quota_place(tmp_path, parts_seen):
    # With prefetch_factor=1 a held batch charged to every worker that decoded a
    # part of it would leave none with room: the epoch would wait forever.  Four
    # batches over three workers: the last three are spread, and the first two of
    # those go out with the epoch's first fill, over queues known then (4, 0, 0
    # and 4, 2, 2 samples), so they are split; the fourth goes out while the user
    # holds a batch.
    root = write_image_folder(tmp_path / "d", 15)
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=3, prefetch_factor=1,
                                   timeout=30)
    for _ in range(2):
        assert [len(b[1]) for b in loader] == [4, 4, 4, 3]
    split = [b for b, parts in parts_seen if len(parts) > 1]
    assert split.count(1) == split.count(2) == 2, parts_seen
    loader.close()
