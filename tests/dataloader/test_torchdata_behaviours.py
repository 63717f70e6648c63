"""The behaviours torchdata's own StatefulDataLoader suite checks
(test/stateful_dataloader/test_state_dict.py, torchdata 0.11), in CI-sized form, with
jpegloader's DataLoader swapped in, and torchdata's class run beside it as the
oracle: every case must pass for both.  The datasets are written out here in that
suite's style: iterable and map datasets, some with a state of their own (a
position, torch's RNG state), a sampler with a stateful iterator, and generators.
None of them is an image dataset, so jpegloader runs them on its fallback (NOTE [ A
dataset's own state on the fallback ]).  Deliberate differences are tested as such
at the end."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import torch

import jpegloader

stateful = pytest.importorskip("torchdata.stateful_dataloader",
                               reason="torchdata's StatefulDataLoader is the oracle")
LOADERS = {"jpegloader": jpegloader.DataLoader, "torchdata": stateful.StatefulDataLoader}


# -- datasets in the style of torchdata's suite ------------------------------------------
class CountingIterator(Iterator):
    """A worker's stream: its samples in order, or drawn with torch.randint; its
    state is its position (and torch's RNG state)."""

    def __init__(self, samples, shuffle, with_rng=True):
        self.samples, self.shuffle, self.with_rng, self.i = samples, shuffle, with_rng, 0

    def __next__(self):
        if self.i >= len(self.samples):
            raise StopIteration
        k = int(torch.randint(len(self.samples), (1,))) if self.shuffle else self.i
        self.i += 1
        return self.samples[k]

    def state_dict(self):
        return {"i": self.i, **({"g": torch.get_rng_state()} if self.with_rng else {})}

    def load_state_dict(self, state):
        self.i = state["i"]
        if self.with_rng:
            torch.set_rng_state(state["g"])


class ShardedIterable(torch.utils.data.IterableDataset):
    """Worker w streams its own share (sizes per worker; one worker may have none)."""

    def __init__(self, sizes, shuffle=False, with_rng=True):
        self.sizes, self.shuffle, self.with_rng = sizes, shuffle, with_rng

    def _share(self):
        info = torch.utils.data.get_worker_info()
        sizes = self.sizes if info else [sum(self.sizes)]
        w = info.id if info else 0
        start = sum(sizes[:w])
        return range(start, start + sizes[w])

    def __iter__(self):
        return CountingIterator(list(self._share()), self.shuffle, self.with_rng)


class GeneratorIterable(ShardedIterable):
    """A generator whose dataset keeps the position: load_state_dict makes the next
    __iter__ start there."""

    def __init__(self, sizes):
        super().__init__(sizes)
        self.i, self.resume = 0, None

    def __iter__(self):
        share = self._share()
        self.i, self.resume = (self.resume or 0), None
        for x in share[self.i:]:
            self.i += 1
            yield x

    def state_dict(self):
        return {"i": self.i}

    def load_state_dict(self, state):
        self.resume = state["i"]


class PlainGenerator(ShardedIterable):
    def __iter__(self):
        yield from self._share()


class RecordsMap(torch.utils.data.Dataset):
    """Records of several types; with ``shuffle`` each item is drawn with torch.randint
    (the dataset's state is torch's RNG state)."""

    def __init__(self, size, shuffle=False, with_rng=True):
        self.size, self.shuffle, self.with_rng = size, shuffle, with_rng
        self.data = [{"id": i, "text": f"row_{i}", "list": [i, i + 1]} for i in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        if self.shuffle:
            i = int(torch.randint(self.size, (1,)))
        return self.data[i]

    def state_dict(self):
        return {"g": torch.get_rng_state()} if self.with_rng else {}

    def load_state_dict(self, state):
        if self.with_rng:
            torch.set_rng_state(state["g"])


class StepSampler(torch.utils.data.Sampler):
    """A sampler whose iterator is stateful (its position)."""

    class It(Iterator):
        def __init__(self, n):
            self.n, self.i = n, 0

        def __next__(self):
            if self.i >= self.n:
                raise StopIteration
            self.i += 1
            return self.i - 1

        def state_dict(self):
            return {"i": self.i}

        def load_state_dict(self, state):
            self.i = state["i"]

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return StepSampler.It(self.n)

    def __len__(self):
        return self.n


def identity(x):
    return x


def build(cls, dataset, num_workers, pw=False, **kw):
    return cls(dataset, num_workers=num_workers, collate_fn=identity,
               persistent_workers=pw and num_workers > 0, **kw)


def checkpoint_and_resume(cls, make, num_workers, interrupt, pw=False, **kw):
    """Takes a state after ``interrupt`` batches; a new loader loaded with it gives the
    rest of the epoch the first one gave."""
    dl = build(cls, make(), num_workers, pw, **kw)
    it = iter(dl)
    for _ in range(interrupt):
        next(it)
    state = dl.state_dict()
    want = list(it)
    dl = build(cls, make(), num_workers, pw, **kw)
    dl.load_state_dict(state)
    assert list(dl) == want


def seeded_sampler(dataset, seed=13):
    return torch.utils.data.RandomSampler(dataset, generator=torch.Generator().manual_seed(seed))


SIZES = [0, 100, 37]


# -- the cases -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("num_workers,pw,interrupt,shuffle,every", [
    (0, False, 0, False, 1), (0, False, 10, False, 1), (3, False, 1, False, 1),
    (3, False, 10, False, 1), (3, True, 10, False, 1), (3, True, 10, False, 5),
    (0, False, 10, True, 1), (3, False, 10, True, 1)])
def test_iterable_datasets_resume(name, num_workers, pw, interrupt, shuffle, every):
    checkpoint_and_resume(LOADERS[name], lambda: ShardedIterable(SIZES, shuffle), num_workers,
                          interrupt, pw, snapshot_every_n_steps=every)


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("pw,interrupt,shuffle,batch_size", [
    (False, 0, False, None), (False, 10, True, 7), (True, 1, False, 7), (True, 10, True, None)])
def test_map_datasets_with_their_own_rng_resume(name, pw, interrupt, shuffle, batch_size):
    cls, ds = LOADERS[name], RecordsMap(100, shuffle)

    def loader():  # a sampler seeded afresh, as a restarted run builds it
        return build(cls, ds, 3, pw, batch_size=batch_size, sampler=seeded_sampler(ds))
    dl = loader()
    it = iter(dl)
    for _ in range(interrupt):
        next(it)
    state = dl.state_dict()
    want = list(it)
    dl = loader()
    dl.load_state_dict(state)
    assert list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("num_workers,interrupt", [(0, 10), (3, 1), (3, 10)])
def test_a_sampler_with_a_stateful_iterator_resumes(name, num_workers, interrupt):
    checkpoint_and_resume(LOADERS[name], lambda: RecordsMap(100), num_workers, interrupt,
                          batch_size=7, sampler=StepSampler(100))


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("dataset", [GeneratorIterable, PlainGenerator])
@pytest.mark.parametrize("num_workers,pw,interrupt", [(0, False, 10), (3, False, 1),
                                                      (3, True, 10)])
def test_generators_resume_whether_they_keep_state_or_not(name, dataset, num_workers, pw,
                                                          interrupt):
    cls = LOADERS[name]
    want = list(build(cls, dataset(SIZES), num_workers, pw))
    dl = build(cls, dataset(SIZES), num_workers, pw)
    it = iter(dl)
    got = [next(it) for _ in range(interrupt)]
    state = dl.state_dict()
    dl = build(cls, dataset(SIZES), num_workers, pw)
    dl.load_state_dict(state)
    assert got + list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("case", ["generator", "iterable", "map", "map_loader_shuffle"])
@pytest.mark.parametrize("pw", [False, True])
def test_a_state_taken_right_after_iter_replays_the_epoch(name, case, pw):
    cls = LOADERS[name]
    dataset, kw = {"generator": (GeneratorIterable(SIZES), {}),
                   "iterable": (ShardedIterable(SIZES, shuffle=True), {}),
                   "map": (RecordsMap(100, shuffle=True), {}),
                   "map_loader_shuffle": (RecordsMap(100), {"shuffle": True})}[case]
    dl = build(cls, dataset, 3, pw, snapshot_every_n_steps=10, **kw)
    it = iter(dl)
    state = dl.state_dict()
    want = list(it)
    dl.load_state_dict(state)
    assert list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("num_workers,pw,every", [(0, False, 1), (2, False, 15),
                                                  (2, True, 1)])
def test_an_interrupted_shuffled_epoch_replays_from_either_state(name, num_workers, pw, every):
    dl = build(LOADERS[name], RecordsMap(10, shuffle=True), num_workers, pw, shuffle=True,
               snapshot_every_n_steps=every)
    it = iter(dl)
    state0 = dl.state_dict()
    want = [next(it) for _ in range(4)]
    state1 = dl.state_dict()
    dl.load_state_dict(state1)
    want += list(dl)
    dl.load_state_dict(state0)
    assert list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("pw,batch_size", [(False, None), (True, 4)])
def test_a_state_at_the_epochs_end_starts_the_next_epoch(name, pw, batch_size):
    cls = LOADERS[name]
    for dataset in (GeneratorIterable, PlainGenerator):
        dl = build(cls, dataset(SIZES), 3, pw, batch_size=batch_size)
        want = list(dl)
        end = dl.state_dict()
        assert list(dl) == want  # a plain restart
        dl = build(cls, dataset(SIZES), 3, pw, batch_size=batch_size)
        it = iter(dl)
        next(it), next(it)
        dl.load_state_dict(end)
        assert list(dl) == want
    # shuffled: the state at the end gives the same next epoch as the run that went on
    for make, seeded in ((lambda: ShardedIterable(SIZES, shuffle=True), "generator"),
                         (lambda: RecordsMap(100, shuffle=True), "generator"),
                         (lambda: RecordsMap(100), "shuffle")):
        g = torch.Generator().manual_seed(4)
        kw = {"generator": g} if seeded == "generator" else {"shuffle": True}
        dl = build(cls, make(), 3, pw, batch_size=batch_size, **kw)
        list(dl)
        end = dl.state_dict()
        want = list(dl)
        g.manual_seed(4)
        dl = build(cls, make(), 3, pw, batch_size=batch_size, **kw)
        dl.load_state_dict(end)
        assert list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("every,interrupt", [(0, 11), (17, 19)])
def test_a_state_asked_for_soon_after_a_resume_is_whole(name, every, interrupt):
    cls = LOADERS[name]
    ds = ShardedIterable([25, 25, 25, 25], shuffle=True)
    dl = build(cls, ds, 4, True, batch_size=4, snapshot_every_n_steps=every)
    it = iter(dl)
    for _ in range(interrupt):
        next(it)
    state = dl.state_dict()
    next(it), next(it)
    want = list(it)
    dl.load_state_dict(state)
    it = iter(dl)
    next(it), next(it)
    state2 = dl.state_dict()
    dl = build(cls, ds, 4, True, batch_size=4)
    dl.load_state_dict(state2)
    assert list(dl) == want


@pytest.mark.parametrize("name", LOADERS)
@pytest.mark.parametrize("num_workers", [0, 3])
@pytest.mark.parametrize("kind", ["iterable", "map"])
def test_states_survive_json(name, num_workers, kind):
    cls = LOADERS[name]

    def make():
        return ShardedIterable(SIZES, with_rng=False) if kind == "iterable" else \
            RecordsMap(100, with_rng=False)
    kw = {} if kind == "iterable" else {"batch_size": 5}
    dl = build(cls, make(), num_workers, **kw)
    list(dl)
    it = iter(dl)
    for _ in range(4):
        next(it)
    state = json.loads(json.dumps(dl.state_dict()))
    want = list(it)
    dl.load_state_dict(state)
    assert list(dl) == want


# -- deliberate differences ----------------------------------------------------------------
def test_another_num_workers_may_resume_a_dataset_without_state_of_its_own():
    # torchdata refuses (AssertionError); jpegloader resumes by the sampler's order
    class Plain(torch.utils.data.Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            return i
    for before, after in ((0, 3), (3, 0)):
        g = torch.Generator().manual_seed(1)
        dl = build(jpegloader.DataLoader, Plain(), before, batch_size=4, shuffle=True,
                   generator=g)
        it = iter(dl)
        for _ in range(3):
            next(it)
        state = dl.state_dict()
        want = list(it)
        dl = build(jpegloader.DataLoader, Plain(), after, batch_size=4, shuffle=True,
                   generator=torch.Generator().manual_seed(1))
        dl.load_state_dict(state)
        assert list(dl) == want



def test_a_delegated_loader_keeps_batches_in_order_under_in_order_false():
    # NOTE [ Batches in order ]: the StatefulDataLoader the fallback hands a dataset with
    # its own state to delivers in order too, so a checkpoint says which were delivered
    class Slow(RecordsMap):
        def __getitem__(self, i):
            if i % 7 == 0:
                import time
                time.sleep(0.02)
            return super().__getitem__(i)
    dl = build(jpegloader.DataLoader, Slow(40), 3, batch_size=2, in_order=False)
    assert [b[0]["id"] for b in dl] == list(range(0, 40, 2))
    assert dl._delegate is not None and dl.in_order is False


@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_delegated_state_is_torchdatas_and_either_loader_loads_the_others(num_workers):
    # NOTE [ torchdata's state, as it is ]: the keys torchdata's state has, plus two;
    # a state saved by StatefulDataLoader itself resumes jpegloader's loader, and back
    def make():
        return ShardedIterable([13, 9][:max(num_workers, 1)], shuffle=True)
    torch.manual_seed(5)
    theirs = build(stateful.StatefulDataLoader, make(), num_workers, batch_size=2)
    it = iter(theirs)
    for _ in range(3):
        next(it)
    saved_by_torchdata = theirs.state_dict()
    want = list(it)

    ours = build(jpegloader.DataLoader, make(), num_workers, batch_size=2)
    ours.load_state_dict(saved_by_torchdata)
    it = iter(ours)
    assert next(it) == want[0]
    saved_by_us = ours.state_dict()
    assert set(saved_by_us) == set(saved_by_torchdata) | {"version", "fallback"}
    assert list(it) == want[1:]

    again = build(stateful.StatefulDataLoader, make(), num_workers, batch_size=2)
    again.load_state_dict({k: v for k, v in saved_by_us.items()
                           if k not in ("version", "fallback")})
    assert list(again) == want[1:]


def test_a_delegated_state_nested_as_before_still_loads():
    torch.manual_seed(5)
    dl = build(jpegloader.DataLoader, ShardedIterable([20]), 0, batch_size=2)
    it = iter(dl)
    next(it)
    state = dl.state_dict()
    want = list(it)
    inner = {k: v for k, v in state.items() if k not in ("version", "fallback")}
    nested = {"version": state["version"], "fallback": state["fallback"], "state": inner}
    resumed = build(jpegloader.DataLoader, ShardedIterable([20]), 0, batch_size=2)
    resumed.load_state_dict(nested)
    assert list(resumed) == want
