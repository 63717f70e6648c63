"""jpegloader.DataLoader: torch's DataLoader, accelerated when it can be.

The loader is configuration, the verdict (renewed at every epoch start) and
``__iter__``; the workers, the ring and the statistics belong to an ``Engine``
(engine.py, NOTE [ One owner per job ]), the checkpoint state to ``Progress``
(resume.py), one pass to an ``Epoch`` (epoch.py).
"""
from __future__ import annotations

import inspect
import logging
import warnings
from typing import TypeVar

import torch
import torch.utils.data

from ..decoders import DEFAULT_MAX_PIXELS
from ..pipelines import DecodeOptions, pipeline_for
from ..pipelines.random_stream import epoch_seed
from .delivery import accelerator_available, to_device
from .eligibility import Eligibility, evaluate
from .engine import IDLE_WORKERS_SECONDS, CurrentEngine, Engine, WorkerConfig
from .options import LoaderOptions
from .origin import call_site
from .resume import CountingIterator, LoaderView, Progress
from .stateful_fallback import (TORCH_ARGUMENTS, declares_state, keeps_state, load_into,
                                stateful_loader, stateful_loader_class, warn_unsaved)
from .stateful_fallback import unwrap as unwrap_torchdata
from .stateful_fallback import wrap as wrap_torchdata
from .trainers import remember, watch

_LG = logging.getLogger("jpegloader")
# NOTE [ The global swap ]
# Users replace ``torch.utils.data.DataLoader`` with ours to accelerate a script they
# do not edit (``python -m jpegloader run``, ``jpegloader.patch()``, or by hand), so
# nothing in the package names torch's class through that module attribute: this
# reference is taken when the module is imported, and the class's own members are
# reached through ``super()``.
TorchDataLoader = torch.utils.data.dataloader.DataLoader
_TORCH_HAS_IN_ORDER = "in_order" in inspect.signature(TorchDataLoader.__init__).parameters
T_co = TypeVar("T_co", covariant=True)
#: called with every jpegloader.DataLoader once it is built, whatever built it (the
#: user's code by name, a patched torch name, a trainer's rebuild): ``patching.Patch``
#: says in one line whether each accelerates
BUILT_HOOKS: list = []


class DataLoader(TorchDataLoader[T_co]):
    """A drop-in ``torch.utils.data.DataLoader``.

    Takes torch's arguments, in torch's order, with torch's defaults and
    errors.  When ``eligibility.accelerated`` (a dataset and transforms that
    one of the pipelines recognises: docs/eligibility.md lists them), batches
    are decoded by the libjpeg-turbo pipeline; otherwise this is
    exactly torch's loader, and one WARNING on the ``jpegloader`` logger says
    why.  The verdict is renewed at each epoch start (NOTE [ The pipeline
    follows the dataset ]).  With persistent_workers=False, the workers of an
    epoch that ran to its end serve the next one when nothing of the user's runs
    in them, for up to IDLE_WORKERS_SECONDS of waiting (NOTE [ Workers kept
    between epochs ]); ``close()`` stops them at once.

    Keyword-only extras:
        device: copy each batch to this device ahead of use, on a side stream.
        on_error: "raise" raises for an unreadable sample, naming the file, the
            index and the worker; "skip" drops it, logs it and counts it in
            ``skipped_samples``.  Default: JPEGLOADER_ON_ERROR, else "raise".
        decode: "auto" allows DCT-domain downscaling of large images (a small,
            measured change in pixels); "exact" disables it.  Default:
            JPEGLOADER_DECODE, else "auto".
        max_pixels: images whose header claims more pixels are handed to PIL,
            which refuses decompression bombs.
        decode_threads: with num_workers=0, the threads the main process decodes
            each batch with (the C core runs without the GIL, as torch's intra-op
            threads do); default torch.get_num_threads().  Workers decode with one
            thread each.
        snapshot_every_n_steps: accepted as torchdata's StatefulDataLoader takes
            it; the state is always current, so it changes nothing.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True, snapshot_every_n_steps=1, device=None, on_error=None,
                 decode=None, max_pixels=DEFAULT_MAX_PIXELS, decode_threads=None):
        # torch's arguments as given: NOTE [ A dataset's own state on the fallback ]
        self._torch_args = {k: v for k, v in locals().items() if k in TORCH_ARGUMENTS}
        extra = {"in_order": in_order} if _TORCH_HAS_IN_ORDER else {}
        # By keyword: trainers that capture a loader's arguments to build it again
        # (Lightning wraps every DataLoader subclass's __init__) map them by name.
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                         batch_sampler=batch_sampler, num_workers=num_workers,
                         collate_fn=collate_fn, pin_memory=pin_memory, drop_last=drop_last,
                         timeout=timeout, worker_init_fn=worker_init_fn,
                         multiprocessing_context=multiprocessing_context,
                         generator=generator, prefetch_factor=prefetch_factor,
                         persistent_workers=persistent_workers,
                         pin_memory_device=pin_memory_device, **extra)
        # NOTE [ A trainer's rebuild keeps the user's options ]
        options = LoaderOptions.resolve(
            dataset, device=device, on_error=on_error, decode=decode,
            decode_threads=decode_threads, max_pixels=max_pixels,
            snapshot_every_n_steps=snapshot_every_n_steps)
        self.snapshot_every_n_steps = options.snapshot_every_n_steps
        self.decode_threads = options.decode_threads
        self.device = options.device
        self.on_error = options.on_error
        self.decode = options.decode
        self.max_pixels = options.max_pixels
        self._options = DecodeOptions.from_loader(self.decode, self.on_error, self.max_pixels)
        self._loader_args = {"batch_size": batch_size, "batch_sampler": batch_sampler,
                             "collate_fn": collate_fn, "in_order": in_order}
        self._delegate = None
        self._unsaved_said = False
        # NOTE [ A loader a trainer threw away ]
        self._use = watch(self, TorchDataLoader, call_site())
        remember(self, options.given)
        self._current = CurrentEngine()  # NOTE [ One owner per job ] (engine.py)
        self._progress = Progress()
        self._pin_note_given = False
        self._torch_iterating = False  # NOTE [ An iterator asked for by a subclass ]
        self.eligibility: Eligibility = evaluate(dataset, **self._loader_args)
        self._adopt(self.eligibility, first=True)
        for hook in list(BUILT_HOOKS):
            hook(self)

    # -- statistics ------------------------------------------------------------------------
    @property
    def stage_seconds(self) -> dict[str, float]:
        """NOTE [ Stage times ]
        Seconds per stage since the loader was built.  Worker stages (read,
        decode, augment, python_path, yours) are summed over all workers, so with
        several workers they can exceed the wall time; main process stages are:
        wait (the consumer blocked for the next batch), assembly (handing the batch
        over) and pin_copy (copies into pinned memory and to the device)."""
        return dict(self._current.stats().seconds)

    @property
    def skipped_samples(self) -> list[tuple[int, str, str]]:
        """(index, path, why) of every sample dropped with on_error="skip"."""
        return list(self._current.stats().skipped)

    @property
    def python_path_samples(self) -> int:
        """Samples the C core handed to the dataset's own Python reading."""
        return self._current.stats().python_path

    # -- the verdict ---------------------------------------------------------------------
    def _adopt(self, verdict: Eligibility, first: bool = False) -> None:
        """Makes ``verdict`` the current one: an engine for it, or the fallback."""
        self.eligibility = self._current.adopt(verdict, self._engine_parts, first)

    def _engine_parts(self, verdict: Eligibility) -> tuple:
        """A new engine's decoder for ``verdict`` and its workers' configuration."""
        decoder = pipeline_for(self.dataset).decoder(verdict.lowering, self._options)
        return decoder, WorkerConfig(self.num_workers, self.batch_size or 1,
                                     self.prefetch_factor or 2, self.persistent_workers,
                                     self.timeout, self.worker_init_fn,
                                     self.multiprocessing_context, self.dataset)

    @property
    def _engine(self) -> Engine | None:
        return self._current.engine

    def _renew_verdict(self) -> None:
        """NOTE [ The pipeline follows the dataset ]
        torch reads ``dataset.transform`` (and samples, loader, ...) at every sample,
        so a transform replaced between epochs (DeiT III does; progressive resizing
        changes the crop size every epoch) changes the batches.  Each epoch start
        re-runs the verdict and re-lowers, or falls back, when anything changed.
        Persistent workers are the exception, as in torch: NOTE [ Persistent workers
        and changed samples ]."""
        verdict = evaluate(self.dataset, **self._loader_args)
        persistent_running = self.persistent_workers and self.num_workers > 0 and (
            (self._engine is not None and self._engine.persistent_alive)
            or getattr(self, "_iterator", None) is not None)
        key = self._engine.key if self._engine is not None else None
        if persistent_running and (verdict.accelerated != self.eligibility.accelerated or (
                verdict.accelerated and verdict.lowering.key != key)):
            if _samples_changed(self.eligibility, verdict):
                _LG.info("jpegloader: the dataset's samples changed since the persistent "
                         "workers started (a file or shard rewritten, an index read again); "
                         "starting them again so they read the new samples and targets")
                self._adopt(verdict)
                return
            _LG.warning("jpegloader: the dataset's transform or options changed, but "
                        "persistent_workers=True: the workers keep the copy of the dataset "
                        "they started with, its transform objects included, as torch's "
                        "persistent workers do; rebuild the DataLoader to use the change")
            return
        self._adopt(verdict)

    # -- iteration -----------------------------------------------------------------------
    @property
    def _index_sampler(self):
        # torch's iterators read the index sampler here too: a resumed epoch's skips
        # reach the fallback path the same way.
        return self._progress.index_sampler(super()._index_sampler)

    def __iter__(self):
        running = self._engine.running_epoch() if self._engine is not None else None
        if running is not None:
            running.close()  # abandoned mid-epoch
        self._use.iterated = True
        self._renew_verdict()
        progress = self._progress
        skip = progress.begin(LoaderView.of(self), super()._index_sampler)
        if not self.eligibility.accelerated:
            # NOTE [ A dataset's own state on the fallback ]
            delegate = self._stateful_delegate()
            if delegate is not None:
                it = iter(delegate)
            else:
                self._torch_iterating = True
                try:
                    it = super().__iter__()
                finally:
                    self._torch_iterating = False
            progress.epoch_started()
            if delegate is None:  # torchdata's own loader resumes its stream itself
                progress.skip_in_stream(it)
            return CountingIterator(self._to_device(it), progress.fallback_batch,
                                    progress.fallback_ended)
        pin = self.pin_memory and accelerator_available()
        if self.pin_memory and not pin and not self._pin_note_given:
            self._pin_note_given = True
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        # The same order of random draws as torch's iterator: the sampler is started
        # first, then the epoch's base seed is drawn from the loader's generator (or
        # the global RNG), so sample order matches torch's.
        index_sampler = self._index_sampler
        sampler_iter = iter(index_sampler)
        index = progress.epoch_started()
        base_seed = progress.base_seed(LoaderView.of(self))
        return self._engine.start_epoch(
            sampler_iter, base_seed, index, epoch_seed(base_seed, index), len(self), skip,
            pin, self.device, self.decode_threads or torch.get_num_threads(),
            skipped=lambda: list(getattr(index_sampler, "skipped", ())))

    def _get_iterator(self):
        """torch's iterator for the fallback, always in the sampler's order; this
        loader's own iterator for a subclass that asks for one here.

        NOTE [ An iterator asked for by a subclass ]
        torch's ``__iter__`` takes its iterator from ``_get_iterator``, and so do
        subclasses that keep one iterator for their whole life (Ultralytics'
        InfiniteDataLoader, over a batch sampler that never ends).  Asked from
        anywhere but the fallback inside ``__iter__``, it is this class's
        ``__iter__``: accelerated, or falling back, as the verdict says.

        NOTE [ Batches in order ]
        ``in_order=False`` lets torch hand batches over as workers finish them; a
        checkpoint then cannot say which samples were delivered (the first n
        batches were not).  torch's documentation allows in-order delivery either
        way ("will not enforce"), and checkpoints must be exact, so both paths
        deliver in order; ``loader.in_order`` keeps the value given.  (torchdata
        0.11's StatefulDataLoader delivers out of order, but a checkpoint of a
        shuffled epoch then resumes with samples lost or repeated.)"""
        if not self._torch_iterating:
            return DataLoader.__iter__(self)  # not a subclass's, which may call here
        asked = getattr(self, "in_order", True)
        self.in_order = True
        try:
            return super()._get_iterator()
        finally:
            self.in_order = asked

    def _to_device(self, it):
        if self.device is None:
            return it
        return (to_device(b, self.device) for b in it)

    # -- checkpoints --------------------------------------------------------------------
    def _stateful_delegate(self):
        """torchdata's StatefulDataLoader over the same arguments, where the fallback
        hands it a dataset that keeps its own state; else None (NOTE [ A dataset's own
        state on the fallback ] in stateful_fallback.py)."""
        if self.eligibility.accelerated or not keeps_state(self.dataset):
            return None
        if self._delegate is None:
            self._delegate = stateful_loader(stateful_loader_class(DataLoader),
                                             self._torch_args)
        return self._delegate

    def state_dict(self) -> dict:
        """Where the loader stands, as a small JSON-serialisable dict (torchdata's
        StatefulDataLoader names; resume.LoaderState): the epoch in progress (or the
        next one), the batches of it already handed over, its base seed, the random
        source's state at the epoch's start and now, and the sampler's state.  See
        NOTE [ Resuming bit-identically ] (dataloader/resume.py)."""
        delegate = self._stateful_delegate()
        if delegate is not None:
            return wrap_torchdata(delegate.state_dict())
        if not self.eligibility.accelerated and declares_state(self.dataset) and \
                not self._unsaved_said:
            self._unsaved_said = True
            warn_unsaved(self.dataset)
        running = self._engine.running_epoch() if self._engine is not None else None
        return self._progress.state(LoaderView.of(self), running).to_dict()

    def load_state_dict(self, state: dict) -> None:
        """Resume from ``state_dict()``'s result: the next ``iter(loader)`` continues
        the saved epoch after the batches already handed over (or starts the saved
        next epoch), and the loader's random source (its generator, or torch's global
        RNG) is set to where it stood when the state was saved."""
        inner = unwrap_torchdata(state)
        if inner is not None:
            load_into(self._stateful_delegate(), inner, self.dataset,
                      self.eligibility.accelerated)
            return
        self._progress.load(state, LoaderView.of(self))
        running = self._engine.running_epoch() if self._engine is not None else None
        if running is not None:
            running.close()
        # torch's persistent iterator on the fallback would go on with its own
        # workers and draw no base seed: the resumed epoch starts a new one, as a
        # new loader given this state does (NOTE [ Resuming bit-identically ])
        kept = getattr(self, "_iterator", None)
        if kept is not None:
            self._iterator = None
            kept._shutdown_workers()

    # -- the workers -------------------------------------------------------------------
    def _workers(self) -> list:
        """The worker processes running now (the running epoch's, the persistent pool's
        or those kept between epochs)."""
        return self._engine.workers() if self._engine is not None else []

    def close(self) -> None:
        """Stops the worker processes now (they also stop when the loader is freed)."""
        if getattr(self, "_engine", None) is not None:
            self._engine.shutdown()

    def __del__(self):
        # An epoch still iterated (``for b in DataLoader(...)``) keeps the engine and its
        # workers until it ends, as torch's iterator keeps its own.
        engine = getattr(self, "_engine", None)
        if engine is not None and engine.running_epoch() is None:
            engine.shutdown()


def _samples_changed(was: Eligibility, now: Eligibility) -> bool:
    """NOTE [ Persistent workers and changed samples ]
    torch's persistent workers keep their copy of the dataset, so a transform the
    main process replaces is not seen there; but the samples each index reads are
    the files' or shards' own (a WebDataset's ``dataset[i]`` re-indexes a rewritten
    shard in the worker), so torch's workers see a rewrite.  Ours read from the
    index the engine was built with, so a change in what the samples are (the
    lowering's ``samples``) starts the workers again (with the transform as it is
    now, if that changed too), and a change in the transform alone keeps them, as
    torch's do."""
    return was.accelerated and now.accelerated and \
        was.lowering.samples != now.lowering.samples


__all__ = ["BUILT_HOOKS", "IDLE_WORKERS_SECONDS", "DataLoader", "TorchDataLoader"]
