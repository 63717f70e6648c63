"""Checkpoint and resume: where a loader stands (``Progress``), its state as a typed
value (``LoaderState``), and the sampler wrappers that replay an epoch's start.

NOTE [ Resuming bit-identically ]
An accelerated epoch's batches depend only on the sampler's order and the
epoch's base seed (draws are keyed by (seed, epoch, index)), and both come from
the loader's random source (its ``generator``, or torch's global RNG) at the
epoch's start.  So the state holds that source's state at the epoch's start,
the sampler's own state then, the epoch, the base seed and the batches handed
over.  Resuming replays the epoch's start, skips the yielded batches as
indices (nothing read or decoded), then puts the source where it stood at the
checkpoint.  Prefetched batches not handed over are neither lost nor repeated.
On the fallback the order and seed are restored the same way; augmentations run
in torch's workers are not (their draws depend on each worker's history).
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import itertools
import logging
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import torch

VERSION = 1
_LG = logging.getLogger("jpegloader")


@dataclass(frozen=True)
class LoaderState:
    """``DataLoader.state_dict()``: where the loader stands, as a small JSON dict.

    ``version`` names the layout; ``from_dict`` reads every version written so far
    (today only 1), so a checkpoint stays readable when fields are added."""

    epoch: int                      # the epoch in progress, or the next one
    batches_yielded: int            # of it, handed to the user
    base_seed: int | None           # the epoch's base seed (or persistent workers')
    base_seed_drawn: bool           # drawn at this epoch's start (not kept from before)
    base_seed_kept: bool            # persistent workers keep one base seed for all epochs
    sampler_started: bool           # the sampler had made its lazy draws at the checkpoint
    rng_source: str                 # "generator" (the loader's own) or "global"
    rng_at_epoch_start: str | None  # the random source at the epoch's start (None: between)
    rng_now: str                    # ... and at the checkpoint
    sampler: dict | None            # sampler_state()
    accelerated: bool
    version: int = VERSION

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, state) -> LoaderState:
        """The state, checked: a clear error for anything that is not ours."""
        if not isinstance(state, dict) or state.get("version") != VERSION:
            raise ValueError(f"not a jpegloader DataLoader state (version {VERSION} expected): "
                             f"{type(state).__name__} with version "
                             f"{state.get('version') if isinstance(state, dict) else None!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        missing = names - set(state)
        if missing:
            raise ValueError(f"the DataLoader state lacks {', '.join(sorted(missing))}")
        if not isinstance(state["batches_yielded"], int) or state["batches_yielded"] < 0:
            raise ValueError(f"batches_yielded={state['batches_yielded']!r} is not a count")
        return cls(**{k: state[k] for k in names})


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
    an epoch: its lazy random draws are made by then.  ``set_before`` (once) puts the
    random source back before those draws (NOTE [ A persistent iterator draws no base
    seed ])."""

    def __init__(self, sampler, on_started, set_before=None):
        self.sampler = sampler
        self.on_started = on_started
        self.set_before = set_before

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator:
        set_before, self.set_before = self.set_before, None
        if set_before is not None:
            set_before()
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

    def __init__(self, sampler, on_started, skip: int, set_now, drawn_at_checkpoint: bool,
                 set_before=None):
        super().__init__(sampler, on_started, set_before)
        self.skip = skip
        #: the batches skipped, once the epoch has started (a decoder's window reads them)
        self.skipped: list = []
        self.set_now = set_now
        self.drawn_at_checkpoint = drawn_at_checkpoint

    def __iter__(self) -> Iterator:
        # Once only: torch's persistent iterators keep this object for later epochs.
        skip, set_now, self.skip, self.set_now = self.skip, self.set_now, 0, None
        set_before, self.set_before = self.set_before, None
        if set_before is not None:
            set_before()
        if set_now is not None and not self.drawn_at_checkpoint:
            set_now()
        it = super().__iter__()
        head = list(itertools.islice(it, skip + 1))  # makes the sampler's lazy draws
        self.skipped = head[:skip]
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


@dataclass(frozen=True)
class LoaderView:
    """What ``Progress`` reads of a loader, taken when it is called: the random source,
    the sampler whose state decides the order, and three facts."""

    generator: torch.Generator | None
    sampler: object
    iterable: bool          # an IterableDataset: a stream without indices to skip
    accelerated: bool
    keeps_workers: bool     # persistent_workers with workers: they keep their base seed

    @classmethod
    def of(cls, loader) -> LoaderView:
        return cls(loader.generator, real_sampler(loader),
                   isinstance(loader.dataset, torch.utils.data.IterableDataset),
                   loader.eligibility.accelerated,
                   bool(loader.persistent_workers and loader.num_workers > 0))


class Progress:
    """Where a loader stands: the epochs counted, the base seed persistent workers
    keep, what ``state_dict()`` needs of the epoch in progress, and a loaded state
    waiting for the next epoch (NOTE [ Resuming bit-identically ]).  The loader
    passes itself to each call; nothing here holds it."""

    def __init__(self):
        self.epochs = 0
        self._loaded: LoaderState | None = None  # applied at the next epoch's start
        self._start: dict | None = None  # of the epoch in progress
        self._in_epoch = False
        self._fallback_yielded = 0
        self._persistent_base_seed: int | None = None  # torch draws it once for such workers
        self._keep_base_seed = False  # a resumed run keeps it as the run it resumes did
        self._replay_seed: int | None = None
        self.resuming: ResumingSampler | None = None
        self._set_before = None  # NOTE [ A persistent iterator draws no base seed ]
        #: (batches, set_now) for a resumed IterableDataset: its stream is fast-forwarded
        self.fast_forward = None

    # -- an epoch's start --------------------------------------------------------------
    def begin(self, loader: LoaderView, torch_index_sampler) -> int:
        """Applies a loaded state (if any) and records what state_dict() needs of the
        epoch starting now; returns the batches to skip."""
        loaded, self._loaded = self._loaded, None
        skip = 0
        self._replay_seed = None
        if loaded is not None:
            skip = self._apply(loaded, loader, torch_index_sampler)
        self._start = {"epoch": self.epochs, "rng": rng_state(loader.generator),
                       "sampler": sampler_state(loader.sampler, loader.generator),
                       "base_seed": None, "base_seed_drawn": False,
                       "sampler_started": False, "accelerated": False}
        # NOTE [ A persistent iterator draws no base seed ]
        # On torch's path, persistent workers keep one iterator: from the second epoch on
        # it is reset without drawing a base seed, and the sampler draws straight from
        # the random source.  A resumed loader's first iterator is a new one (and one
        # without persistent workers makes one every epoch), drawing a base seed first;
        # so, where the run being continued kept its workers, the source is put back at
        # the sampler's first draw where the epoch started (a no-op where nothing drew).
        self._set_before = None
        if not loader.accelerated and not loader.iterable and self.epochs > 0 and \
                self.keeps_base_seed(loader):
            self._set_before = functools.partial(set_rng_state, loader.generator,
                                                 self._start["rng"])
        if self.resuming is not None:
            self.resuming.set_before = self._set_before
        self._in_epoch = True
        self._fallback_yielded = skip
        return skip

    def _apply(self, state: LoaderState, loader: LoaderView, torch_index_sampler) -> int:
        mid_epoch = state.rng_at_epoch_start is not None
        set_rng_state(loader.generator, state.rng_at_epoch_start if mid_epoch
                      else state.rng_now)
        restore_sampler(loader.sampler, state.sampler)
        self.epochs = state.epoch
        # Persistent workers draw their base seed once: the resumed run does as the run
        # it resumes did, whatever its own num_workers.
        self._keep_base_seed = state.base_seed_kept
        self._persistent_base_seed = None
        if state.base_seed_kept and state.base_seed is not None and \
                not (mid_epoch and state.base_seed_drawn):
            self._persistent_base_seed = state.base_seed  # drawn before, not again
        skip = 0
        if mid_epoch:
            skip = state.batches_yielded
            # A generator is the loader's own: replaying the epoch from its start
            # advances it exactly as the saved run did.  torch's global RNG is shared
            # with the training step, so it is put where the checkpoint found it.
            now = state.rng_now
            set_now = None if loader.generator is not None else \
                (lambda: set_rng_state(None, now))
            if loader.iterable:
                self.fast_forward = (skip, set_now)  # no indices to skip
            else:
                self.resuming = ResumingSampler(torch_index_sampler,
                                                WeakCall(self, "sampler_started"), skip,
                                                set_now, state.sampler_started)
            if state.base_seed_drawn:
                self._replay_seed = state.base_seed
        if not loader.accelerated:
            _LG.warning("jpegloader: resuming on torch's DataLoader: the sample order and "
                        "the epoch's seed are restored; random augmentations run in "
                        "torch's workers are not (their draws depend on each worker's "
                        "history)")
        return skip

    def index_sampler(self, torch_index_sampler):
        """What torch's iterators (and an accelerated epoch) read batches of indices
        from: the epoch being resumed, or the sampler watched for its first batch."""
        if self.resuming is not None:
            return self.resuming
        return WatchedSampler(torch_index_sampler, WeakCall(self, "sampler_started"),
                              self._set_before)

    def sampler_started(self) -> None:
        if self._start is not None:
            self._start["sampler_started"] = True

    def base_seed(self, loader: LoaderView) -> int:
        """The accelerated epoch's base seed: drawn from the loader's random source
        after the sampler started (torch's order), or the one persistent workers keep."""
        if self._persistent_base_seed is not None:
            base_seed, drawn = self._persistent_base_seed, False
        else:
            base_seed = torch.empty((), dtype=torch.int64).random_(
                generator=loader.generator).item()
            drawn = True
            if self.keeps_base_seed(loader):
                self._persistent_base_seed = base_seed
        expected, self._replay_seed = self._replay_seed, None
        if expected is not None and expected != base_seed:
            raise ValueError(
                "load_state_dict: replaying the saved epoch's start drew another base seed "
                f"({base_seed} instead of {expected}): the loader's sampler, generator or "
                "shuffle differ from the run that saved the state")
        self._start.update(base_seed=base_seed, base_seed_drawn=drawn, accelerated=True)
        return base_seed

    def keeps_base_seed(self, loader: LoaderView) -> bool:
        return loader.keeps_workers or self._keep_base_seed

    def epoch_started(self) -> int:
        """An epoch's iterator has taken its sampler: the epoch is counted (its index
        returned) and a resumed epoch's skipping sampler is no longer handed out."""
        self.resuming = None
        self.epochs += 1
        return self.epochs - 1

    def skip_in_stream(self, it) -> None:
        """A resumed IterableDataset: its stream has no indices to skip, so the batches
        the saved run had handed over are pulled again and dropped (as torchdata's
        StatefulDataLoader does for a dataset without a state_dict of its own)."""
        if self.fast_forward is None:
            return
        (skip, set_now), self.fast_forward = self.fast_forward, None
        for _ in range(skip):
            if next(it, None) is None:
                break
        if set_now is not None:
            set_now()
        _LG.info("jpegloader: resumed an IterableDataset by reading and dropping the %d "
                 "batches the saved run had handed over", skip)

    # -- the fallback's batches --------------------------------------------------------
    def fallback_batch(self) -> None:
        self._fallback_yielded += 1

    def fallback_ended(self) -> None:
        self._in_epoch = False

    # -- state -------------------------------------------------------------------------
    def state(self, loader: LoaderView, running_epoch) -> LoaderState:
        if self._loaded is not None:  # loaded and not yet iterated: still that position
            return self._loaded
        source = "generator" if loader.generator is not None else "global"
        start = self._start if self._in_epoch else None
        if start is not None and start["accelerated"] and running_epoch is None:
            start = None  # the accelerated epoch ended (or was dropped)
        if start is not None:
            yielded = running_epoch.yielded if start["accelerated"] else \
                self._fallback_yielded
            return LoaderState(start["epoch"], yielded, start["base_seed"],
                               start["base_seed_drawn"], self.keeps_base_seed(loader),
                               start["sampler_started"], source, start["rng"],
                               rng_state(loader.generator), start["sampler"],
                               start["accelerated"])
        return LoaderState(self.epochs, 0, self._persistent_base_seed, False,
                           self.keeps_base_seed(loader), False, source, None,
                           rng_state(loader.generator),
                           sampler_state(loader.sampler, loader.generator, with_epoch=False),
                           loader.accelerated)

    def load(self, state: dict, loader: LoaderView) -> None:
        loaded = LoaderState.from_dict(state)
        source = "generator" if loader.generator is not None else "global"
        if loaded.rng_source != source:
            raise ValueError(f"the state was saved by a loader drawing from the "
                             f"{loaded.rng_source} RNG; this one draws from the {source} "
                             "one (pass the same generator= argument)")
        self._in_epoch = False
        self._loaded = loaded
