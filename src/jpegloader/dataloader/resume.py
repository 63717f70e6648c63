"""Checkpoint and resume: ``DataLoader.state_dict()`` / ``load_state_dict()``.

NOTE [ Resuming bit-identically ]
An accelerated epoch's batches depend only on the sampler's order and the epoch
seed (draws are keyed by (seed, epoch, index)), so a resumed run equals one that
never stopped when it sees the same order and seed.  Both come from the loader's
random source (its ``generator``, or torch's global RNG) at the epoch's start:
the sampler draws its permutation there and the epoch's base seed is drawn
there.  So the state holds that source's state at the epoch start, the sampler's
own state then (``set_epoch``'s epoch, or a stateful sampler's ``state_dict``),
the epoch number, the base seed and the batches already handed to the user.
Resuming replays the epoch's start from those, skips the batches already
yielded (indices only: nothing is read or decoded) and then puts the random
source where it stood when ``state_dict()`` was called, so later epochs draw
what an uninterrupted run would.  Batches prefetched but not yet handed over
are neither lost nor repeated: only yielded batches count.

On the fallback (torch's loader) the order and the base seed are restored the
same way; random augmentations run by torch's workers are not (their draws
depend on each worker's history), which the log says when it applies.
"""
from __future__ import annotations

import base64
import itertools
import weakref
from collections.abc import Iterator

import torch

VERSION = 1
_KEYS = {"version", "epoch", "batches_yielded", "base_seed", "base_seed_drawn", "base_seed_kept",
         "sampler_started", "rng_source", "rng_at_epoch_start", "rng_now", "sampler",
         "accelerated"}


def _encode(state: torch.Tensor) -> str:
    return base64.b64encode(state.numpy().tobytes()).decode("ascii")


def _decode(text: str) -> torch.Tensor:
    return torch.frombuffer(bytearray(base64.b64decode(text)), dtype=torch.uint8).clone()


def rng_state(generator: torch.Generator | None) -> str:
    """The loader's random source's state, as text."""
    return _encode(generator.get_state() if generator is not None else torch.get_rng_state())


def set_rng_state(generator: torch.Generator | None, text: str) -> None:
    state = _decode(text)
    if generator is not None:
        generator.set_state(state)
    else:
        torch.set_rng_state(state)


def real_sampler(loader):
    """The sampler whose state decides an epoch's order (inside a user batch_sampler too)."""
    if loader.batch_sampler is not None and getattr(loader.batch_sampler, "sampler", None) \
            is not None:
        return loader.batch_sampler.sampler
    return loader.sampler


def sampler_state(sampler, loader_generator, with_epoch: bool = True) -> dict | None:
    """What the sampler needs to replay an epoch: a stateful sampler's own state_dict,
    DistributedSampler-style ``epoch`` (not between epochs: the training loop sets the
    next one), the state of a generator of its own."""
    if hasattr(sampler, "state_dict") and hasattr(sampler, "load_state_dict"):
        return {"state_dict": sampler.state_dict()}
    state = {}
    if with_epoch and hasattr(sampler, "set_epoch") and hasattr(sampler, "epoch"):
        state["epoch"] = int(sampler.epoch)
    generator = getattr(sampler, "generator", None)
    if isinstance(generator, torch.Generator) and generator is not loader_generator:
        state["generator"] = _encode(generator.get_state())
    return state or None


def restore_sampler(sampler, state: dict | None) -> None:
    if not state:
        return
    if "state_dict" in state:
        sampler.load_state_dict(state["state_dict"])
        return
    if "epoch" in state:
        sampler.set_epoch(state["epoch"])
    if "generator" in state:
        sampler.generator.set_state(_decode(state["generator"]))


def validate(state) -> dict:
    """The state, checked: a clear error for anything that is not ours."""
    if not isinstance(state, dict) or state.get("version") != VERSION:
        raise ValueError(f"not a jpegloader DataLoader state (version {VERSION} expected): "
                         f"{type(state).__name__} with version "
                         f"{state.get('version') if isinstance(state, dict) else None!r}")
    missing = _KEYS - set(state)
    if missing:
        raise ValueError(f"the DataLoader state lacks {', '.join(sorted(missing))}")
    if not isinstance(state["batches_yielded"], int) or state["batches_yielded"] < 0:
        raise ValueError(f"batches_yielded={state['batches_yielded']!r} is not a count")
    return state


class WeakCall:
    """Calls ``owner.method()`` while the owner lives, without keeping it alive.

    NOTE [ No cycle through the loader ]
    torch's persistent iterator keeps the index sampler it was given (our
    wrapper), and the loader keeps that iterator; a wrapper holding the loader's
    bound method would close a cycle, so the loader, its iterator and the
    iterator's workers would outlive the user's last reference until the cyclic
    collector ran, and that collector then waits for the workers to be joined.
    Whatever the engine hands to objects the loader keeps points back weakly."""

    def __init__(self, owner, method: str):
        self._owner = weakref.ref(owner)
        self._method = method

    def __call__(self) -> None:
        owner = self._owner()
        if owner is not None:
            getattr(owner, self._method)()


class WatchedSampler:
    """The index sampler, passed through, telling when it yields its first batch of
    an epoch: its lazy random draws are made by then."""

    def __init__(self, sampler, on_started):
        self.sampler = sampler
        self.on_started = on_started

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator:
        started = False
        for batch in self.sampler:
            if not started:
                started = True
                self.on_started()
            yield batch


class ResumingSampler(WatchedSampler):
    """The index sampler for the epoch being resumed: the sampler's own order with
    the yielded batches skipped.  The random source is put where the checkpoint left
    it, after the sampler's lazy draws if they had been made by then, before them if
    not (NOTE [ Resuming bit-identically ])."""

    def __init__(self, sampler, on_started, skip: int, set_now, drawn_at_checkpoint: bool):
        super().__init__(sampler, on_started)
        self.skip = skip
        self.set_now = set_now
        self.drawn_at_checkpoint = drawn_at_checkpoint

    def __iter__(self) -> Iterator:
        # Once only: torch's persistent iterators keep this object for later epochs.
        skip, set_now, self.skip, self.set_now = self.skip, self.set_now, 0, None
        if set_now is not None and not self.drawn_at_checkpoint:
            set_now()
        it = super().__iter__()
        head = list(itertools.islice(it, skip + 1))  # makes the sampler's lazy draws
        if set_now is not None and self.drawn_at_checkpoint:
            set_now()
        yield from head[skip:]
        yield from it


class CountingIterator:
    """torch's iterator, counting the batches it hands over (for state_dict on the
    fallback path)."""

    def __init__(self, it, on_batch, on_end):
        self._it = it
        self._on_batch = on_batch
        self._on_end = on_end

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._it)

    def __next__(self):
        try:
            batch = next(self._it)
        except StopIteration:
            self._on_end()
            raise
        self._on_batch()
        return batch

    def __getattr__(self, name):
        return getattr(self._it, name)
