"""NOTE [ Batches to the least loaded worker ] (dataloader/assign.py): without user
code in the workers a slow worker gets fewer batches and the batches stay what
one process makes; with user code batch k goes to worker k mod num_workers.

The rules themselves are tested without processes or a wall clock in
test_assignment_model.py; the live tests here whose outcome depends on how fast
real workers run are marked slow."""
from __future__ import annotations

import collections
import time

import pytest
import torch
import torchvision.transforms as T
from torchvision import datasets

import jpegloader
from jpegloader.dataloader import pool as pool_module
from jpegloader.dataloader import ring as ring_module
from jpegloader.dataloader.assign import PACE_WEIGHT, Assignment
from jpegloader.pipelines.classification.decode import ClassificationBatchDecoder
from tests.conftest import eval_transform, train_transform, worker_pids, write_image_folder

SLOW_SECONDS = 0.08


@pytest.fixture
def owners(monkeypatch):
    """batch_no -> the worker each batch counted against, as the pool chose it."""
    seen = {}
    submit = pool_module.WorkerPool.submit

    def recording(self, epoch, batch_no, indices, seed, **how):
        submit(self, epoch, batch_no, indices, seed, **how)
        seen[batch_no] = self._in_flight[(epoch, batch_no)].owner

    monkeypatch.setattr(pool_module.WorkerPool, "submit", recording)
    return seen


@pytest.fixture
def worker_0_slow(monkeypatch):
    """Worker 0 takes SLOW_SECONDS longer over every batch (inherited by the forked
    workers)."""
    decode = ClassificationBatchDecoder.decode

    def slow(self, indices, seed, arrays, where, *args, **kwargs):
        if "worker process 0 " in getattr(where, "text", where):  # a str in workers
            time.sleep(SLOW_SECONDS)
        return decode(self, indices, seed, arrays, where, *args, **kwargs)

    monkeypatch.setattr(ClassificationBatchDecoder, "decode", slow)


def _batches(loader):
    return [[t.clone() for t in b] for b in loader]


@pytest.mark.slow  # timing-dependent: test_assignment_model.py runs the rule
def test_a_slow_worker_gets_fewer_batches(tmp_path, owners, worker_0_slow):
    root = write_image_folder(tmp_path / "d", 48)
    ds = datasets.ImageFolder(str(root), train_transform())
    runs = []
    for n in (0, 2):
        g = torch.Generator().manual_seed(5)
        runs.append(_batches(jpegloader.DataLoader(ds, batch_size=2, shuffle=True,
                                                   num_workers=n, generator=g)))
    for a, b in zip(*runs, strict=True):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    count = collections.Counter(owners.values())
    assert sum(count.values()) == 24
    # round-robin would give each 12; worker 1 decodes a batch in a few ms
    assert count[1] >= 2 * count[0], count
    assert not worker_pids()


@pytest.fixture
def in_flight(monkeypatch):
    """After each submit: batches sent and not yet handed to the user."""
    seen = []
    submit = pool_module.WorkerPool.submit

    def counting(self, *args, **kwargs):
        submit(self, *args, **kwargs)
        seen.append(sum(self.assign.outstanding) - (self.assign.held is not None))

    monkeypatch.setattr(pool_module.WorkerPool, "submit", counting)
    return seen


@pytest.fixture
def slots_made(monkeypatch):
    """Every slot the ring allocates: (slot id, capacity)."""
    made = []
    allocate = ring_module.BatchRing._allocate

    def recording(self, slot_id, capacity):
        made.append((slot_id, capacity))
        return allocate(self, slot_id, capacity)

    monkeypatch.setattr(ring_module.BatchRing, "_allocate", recording)
    return made


@pytest.mark.slow  # timing-dependent: test_assignment_model.py runs the rule
def test_the_quota_is_shared(tmp_path, owners, worker_0_slow, in_flight, slots_made):
    """As many batches in flight as torch keeps (besides the one the user holds),
    never more, however they fall on the workers, in the ring's slots alone."""
    root = write_image_folder(tmp_path / "d", 40)
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=3)
    assert sum(len(b[1]) for b in loader) == 40
    assert max(in_flight) == 6
    assert max(collections.Counter(owners.values()).values()) > 10  # not 10 each
    assert len(slots_made) == 7  # prefetch_factor x num_workers + 1, made once


@pytest.mark.slow  # timing-dependent: test_assignment_model.py runs the rule
@pytest.mark.parametrize("user_code", [False, True])
def test_one_batch_per_worker_decodes_while_the_user_holds_one(
        tmp_path, owners, in_flight, slots_made, user_code, monkeypatch):
    """NOTE [ The held batch let off ]: with prefetch_factor=1 both workers have a
    batch while the user holds a third, in three slots."""
    decode = ClassificationBatchDecoder.decode

    def slow(self, indices, seed, arrays, where, *args, **kwargs):
        time.sleep(SLOW_SECONDS)  # in both workers: every batch is waited for
        return decode(self, indices, seed, arrays, where, *args, **kwargs)

    monkeypatch.setattr(ClassificationBatchDecoder, "decode", slow)
    root = write_image_folder(tmp_path / "d", 24)
    transform = eval_transform()
    if user_code:
        transform = T.Compose([*transform.transforms, T.Lambda(lambda x: x + 0)])
    ds = datasets.ImageFolder(str(root), transform)
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=1)
    assert loader.eligibility.accelerated
    assert sum(len(b[1]) for b in loader) == 24
    assert max(in_flight) == 2 and in_flight.count(2) >= 8, in_flight
    assert len(slots_made) == 3
    if user_code:
        assert owners == {k: k % 2 for k in range(12)}


def test_a_batch_the_user_keeps_is_not_let_off(tmp_path, in_flight, slots_made):
    """No spare slot while the user keeps every batch: the held one counts, and a
    slot is only made anew when the next batch needs one (as before)."""
    root = write_image_folder(tmp_path / "d", 16)
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=1)
    kept = list(loader)
    assert sum(len(b[1]) for b in kept) == 16
    assert max(in_flight) <= 2
    # the ring's three slots take the first three batches; every later batch gets a
    # fresh slot, the kept one retired
    assert len(slots_made) == 3 + (8 - 3)


def test_user_code_keeps_round_robin(tmp_path, owners, worker_0_slow):
    root = write_image_folder(tmp_path / "d", 24)
    transform = T.Compose([*eval_transform().transforms, T.Lambda(lambda x: x + 0)])
    ds = datasets.ImageFolder(str(root), transform)
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2)
    assert loader.eligibility.accelerated
    assert sum(len(b[1]) for b in loader) == 24
    assert owners == {k: k % 2 for k in range(12)}


# -- the rule alone (dataloader/assign.py) ---------------------------------------------

def _send(a: Assignment, size: int = 64) -> int:
    w = a.owner(size)
    a.counted(w)
    a.sent(w, size)
    return w


def test_equal_workers_take_turns():
    a = Assignment(2, 2, balanced=True)
    a.pace = [1.00, 0.97]  # noise: within the margin
    assert [_send(a) for _ in range(4)] == [0, 1, 0, 1]
    assert not a.has_room()
    a.returned(0, 64, 64.0)
    a.finished(0)
    assert a.has_room() and _send(a) == 0  # its turn, and the quota shared


def test_a_worker_behind_by_more_than_the_margin_is_skipped():
    a = Assignment(2, 2, balanced=True)
    a.pace = [1.0, 1.0]
    a.sent(0, 128)  # worker 0 a batch behind: finishing 192 against 128
    a.sent(1, 64)
    assert a.owner(64) == 1
    a = Assignment(2, 2, balanced=True)
    a.pace = [1.2, 1.0]  # 20% slower, queues even: 1.2 * 128 against 128, within 0.5 batch
    a.sent(0, 64)
    a.sent(1, 64)
    assert a.owner(64) == 0
    a.pace = [1.6, 1.0]
    assert a.owner(64) == 1


def test_a_slow_spell_is_forgiven():
    a = Assignment(2, 2, balanced=True)
    a.pace = [8.0, 1.0]
    a.sent(1, 64)
    owners = []
    for _ in range(12):  # worker 1 keeps one batch queued; worker 0 sits idle
        owners.append(a.owner(64))
        a._turn = 0
    assert owners[0] == 1 and 0 in owners, owners
    assert a.pace[0] < 2.5  # tried again once within half a batch of worker 1


def test_pace_is_a_moving_average():
    a = Assignment(2, 2, balanced=True)
    a.sent(1, 10)
    a.returned(1, 10, 1.0)
    assert a.pace[1] == pytest.approx(0.1) and a.queued[1] == 0
    a.sent(1, 10)
    a.returned(1, 10, 2.0)
    assert a.pace[1] == pytest.approx(0.1 + PACE_WEIGHT * 0.1)


def test_the_held_batch_is_let_off_only_for_a_spare_slot():
    for balanced in (True, False):
        a = Assignment(2, 1, balanced=balanced)
        assert [_send(a) for _ in range(2)] == [0, 1]
        a.returned(0, 64, 64.0)
        a.held = 0  # the user holds worker 0's batch: it still counts
        assert not a.has_room()
        assert a.has_room(spare_slot=True)
        assert a.owner(64, spare_slot=True) == 0
        a.held = None
        assert not a.has_room(spare_slot=True)


def test_round_robin_keeps_a_quota_per_worker():
    a = Assignment(2, 1, balanced=False)
    a.pace = [9.0, 1.0]  # not looked at
    assert [_send(a) for _ in range(2)] == [0, 1]
    assert not a.has_room()
    with pytest.raises(RuntimeError):
        a.owner(64)
    a.finished(1)
    assert a.has_room() and _send(a) == 1
