"""A resume on the fallback (a dataset of no state of its own, run on torch's loader)
replays what the state promises: the rest of the epoch (or the next epoch) the saved
run gave, the state taken right after iter(), mid-epoch or at the epoch's end, loaded
into the same loader or a new one, with and without persistent workers and a
generator, for every kind of sampler.  torchdata's StatefulDataLoader runs the same
cases beside it: where it keeps that promise, so must we (it does in every case but
the end of an epoch with a generator at 0 workers, torchdata 0.11); the orders
themselves are torch's loader's, which torchdata's are not."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DistributedSampler, Sampler, SequentialSampler

import jpegloader

try:
    from torchdata.stateful_dataloader import StatefulDataLoader
except ImportError:  # the cases still run on jpegloader alone
    StatefulDataLoader = None


class Plain(torch.utils.data.Dataset):
    """Numbers, no state of their own: the fallback runs them on torch's loader."""

    def __len__(self):
        return 20

    def __getitem__(self, i):
        return i


class EveryOtherFirst(Sampler):
    """A user's sampler: the even indices, then the odd ones."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        return iter([*range(0, self.n, 2), *range(1, self.n, 2)])


def _batches(it, count=None) -> list[list[int]]:
    out = []
    for batch in it:
        out.append(batch.tolist())
        if count is not None and len(out) == count:
            break
    return out


def _resumed(cls, moment: str, same_loader: bool, workers: int, persistent: bool,
             generator: bool, sampler=None, context=None) -> tuple[list, list]:
    """The batches after the state (the rest of the epoch, or the next epoch at its
    end), and those a resume from the state gives."""
    def make():
        gen = torch.Generator().manual_seed(3) if generator else None
        return cls(Plain(), batch_size=2, shuffle=sampler is None, sampler=sampler,
                   num_workers=workers, persistent_workers=persistent, generator=gen,
                   multiprocessing_context=context if workers else None)
    torch.manual_seed(7)
    loader = make()
    it = iter(loader)
    taken = {"after iter()": 0, "mid-epoch": 3, "at the end": 10}[moment]
    _batches(it, taken) if taken else None
    if moment == "at the end":
        assert next(it, None) is None
    state = loader.state_dict()
    rng = torch.get_rng_state()
    want = _batches(it) if moment != "at the end" else _batches(iter(loader))
    if not same_loader:
        loader = make()
    torch.set_rng_state(rng)
    loader.load_state_dict(state)
    return want, _batches(iter(loader))


CASES = [(0, False), (1, False), (2, False), (1, True), (2, True)]


@pytest.mark.parametrize("moment", ["after iter()", "mid-epoch", "at the end"])
@pytest.mark.parametrize("workers,persistent", CASES)
@pytest.mark.parametrize("generator", [False, True])
def test_a_fallback_resume_replays_torchdatas_order(moment, workers, persistent, generator):
    if StatefulDataLoader is not None:
        want, got = _resumed(StatefulDataLoader, moment, True, workers, persistent,
                             generator)
        torchdata_gap = moment == "at the end" and generator and workers == 0
        assert (got == want) != torchdata_gap  # the oracle, as measured
    for same_loader in (True, False):
        want, got = _resumed(jpegloader.DataLoader, moment, same_loader, workers,
                             persistent, generator)
        assert got == want, same_loader


@pytest.mark.parametrize("kind", ["sequential", "yours", "distributed"])
def test_a_fallback_resume_with_persistent_workers_follows_any_sampler(kind):
    sampler = {"sequential": SequentialSampler(Plain()), "yours": EveryOtherFirst(20),
               "distributed": DistributedSampler(Plain(), num_replicas=2, rank=1, seed=4)}[kind]
    for moment in ("after iter()", "mid-epoch"):
        if StatefulDataLoader is not None:
            want, got = _resumed(StatefulDataLoader, moment, True, 2, True, False, sampler)
            assert got == want, ("torchdata", moment)
        want, got = _resumed(jpegloader.DataLoader, moment, True, 2, True, False, sampler)
        assert got == want, moment


def test_a_fallback_resume_with_spawned_persistent_workers():
    # the case (state right after iter()), with spawned workers
    for same_loader in (True, False):
        want, got = _resumed(jpegloader.DataLoader, "after iter()", same_loader, 2, True,
                             True, context="spawn")
        assert got == want, same_loader
