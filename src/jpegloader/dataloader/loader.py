"""jpegloader.DataLoader: torch's DataLoader, accelerated when it can be."""
from __future__ import annotations

import inspect
import logging
import warnings
import weakref
from typing import TypeVar

import torch
import torch.multiprocessing
import torch.utils.data

from .._env import DECODE_ENV, ON_ERROR_ENV, env_choice
from ..decoders import DEFAULT_MAX_PIXELS
from ..pipelines import DECODE_CHOICES, ON_ERROR_CHOICES, DecodeOptions, pipeline_for
from ..pipelines.random_stream import epoch_seed
from .delivery import accelerator_available, map_tensors
from .eligibility import Eligibility, evaluate, fallback_message
from .epoch import Epoch, EpochSettings, EpochStats
from .pool import WorkerPool
from .resume import (
    VERSION,
    CountingIterator,
    ResumingSampler,
    WatchedSampler,
    WeakCall,
    real_sampler,
    restore_sampler,
    rng_state,
    sampler_state,
    set_rng_state,
    validate,
)
from .ring import MIB, BatchRing, fit_prefetch, layout_bytes, shared_memory_free
from .shared_budget import share_tables

_LG = logging.getLogger("jpegloader")
#: NOTE [ Workers kept between epochs ]: how long idle workers wait for the next epoch
IDLE_WORKERS_SECONDS = 30.0
#: torch's own class, taken when this module is imported.  NOTE [ The global swap ]:
#: users replace ``torch.utils.data.DataLoader`` with ours to accelerate a script they
#: do not edit, so nothing here names torch's class through that module attribute.
TorchDataLoader = torch.utils.data.dataloader.DataLoader
_TORCH_HAS_IN_ORDER = "in_order" in inspect.signature(TorchDataLoader.__init__).parameters
T_co = TypeVar("T_co", covariant=True)


class DataLoader(TorchDataLoader[T_co]):
    """A drop-in ``torch.utils.data.DataLoader``.

    Takes torch's arguments, in torch's order, with torch's defaults and
    errors.  When ``eligibility.accelerated`` (an image folder with the
    supported transforms, or a COCODetection with the SSD-300 transform),
    batches are decoded by the libjpeg-turbo pipeline; otherwise this is
    exactly torch's loader, and one WARNING on the ``jpegloader`` logger says
    why.  The verdict is renewed at each epoch start (NOTE [ The pipeline
    follows the dataset ]).  With persistent_workers=False, the workers of an
    epoch that ran to its end serve the next one when nothing of the user's runs
    in them, for up to IDLE_WORKERS_SECONDS of waiting (NOTE [ Workers kept
    between epochs ]); ``close()`` stops them at once.

    Keyword-only extras:
        device: copy each batch to this device ahead of use, on a side stream.
        on_error: "raise" (default) raises for an unreadable sample, naming the
            file, the index and the worker; "skip" drops it, logs it and counts
            it in ``skipped_samples``.  Default: JPEGLOADER_ON_ERROR, else "raise".
        decode: "auto" allows DCT-domain downscaling of large images (a small,
            measured change in pixels); "exact" disables it.  Default:
            JPEGLOADER_DECODE, else "auto".
        max_pixels: images whose header claims more pixels are handed to PIL,
            which refuses decompression bombs.
        decode_threads: with num_workers=0, the threads the main process decodes
            each batch with (the C core runs without the GIL, as torch's intra-op
            threads do); default torch.get_num_threads().  Workers decode with one
            thread each.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True, snapshot_every_n_steps=1, device=None, on_error=None,
                 decode=None, max_pixels=DEFAULT_MAX_PIXELS, decode_threads=None):
        extra = {"in_order": in_order} if _TORCH_HAS_IN_ORDER else {}
        super().__init__(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                         collate_fn, pin_memory, drop_last, timeout, worker_init_fn,
                         multiprocessing_context, generator, prefetch_factor=prefetch_factor,
                         persistent_workers=persistent_workers,
                         pin_memory_device=pin_memory_device, **extra)
        if not isinstance(snapshot_every_n_steps, int) or snapshot_every_n_steps < 1:
            raise ValueError("snapshot_every_n_steps should be a positive integer, got "
                             f"{snapshot_every_n_steps!r}")
        #: accepted as torchdata's StatefulDataLoader takes it; our state is always
        #: current (NOTE [ Resuming bit-identically ]), so it changes nothing
        self.snapshot_every_n_steps = snapshot_every_n_steps
        on_error = env_choice(ON_ERROR_ENV, ON_ERROR_CHOICES) if on_error is None else on_error
        decode = env_choice(DECODE_ENV, DECODE_CHOICES) if decode is None else decode
        if on_error not in ON_ERROR_CHOICES:
            raise ValueError(f"on_error should be one of {ON_ERROR_CHOICES}, got {on_error!r}")
        if decode not in DECODE_CHOICES:
            raise ValueError(f"decode should be one of {DECODE_CHOICES}, got {decode!r}")
        if decode_threads is not None and (not isinstance(decode_threads, int)
                                           or decode_threads < 1):
            raise ValueError(f"decode_threads should be a positive integer or None, got "
                             f"{decode_threads!r}")
        self.decode_threads = decode_threads
        self.device = torch.device(device) if device is not None else None
        self.on_error = on_error
        self.decode = decode
        self.max_pixels = max_pixels
        self._options = DecodeOptions(decode, on_error, max_pixels)
        self._loader_args = {"batch_size": batch_size, "batch_sampler": batch_sampler,
                             "collate_fn": collate_fn}
        self._finished = EpochStats()          # statistics of the epochs that ended
        self._epochs = 0
        self._epoch_ref = None                 # weakref to the running Epoch
        self._pool: WorkerPool | None = None   # persistent_workers' pool
        self._idle_pool: WorkerPool | None = None  # NOTE [ Workers kept between epochs ]
        self._ring: BatchRing | None = None
        self._ring_layout = None
        self._ring_prefetch = 0  # set with the rings, to what /dev/shm holds
        self._decoder = None
        self._decoder_key = None
        self._pin_note_given = False
        self._logged_key = None
        # checkpoints (see resume.py's NOTE [ Resuming bit-identically ])
        self._resume: dict | None = None         # a loaded state, applied at the next epoch
        self._resuming: ResumingSampler | None = None
        self._epoch_start: dict | None = None    # what state_dict() needs of this epoch
        self._in_epoch = False
        self._fallback_yielded = 0
        self._persistent_base_seed: int | None = None  # torch draws it once for such workers
        self._keep_base_seed = False  # a resumed run keeps it as the run it resumes did
        self._replay_seed: int | None = None
        self._fast_forward = None  # (batches, set_now) for a resumed IterableDataset
        self.eligibility: Eligibility = evaluate(dataset, **self._loader_args)
        self._adopt(self.eligibility, first=True)

    # -- statistics ------------------------------------------------------------------------
    def _epoch_ended(self, stats: EpochStats) -> None:
        self._finished = self._finished.merged(stats)
        self._in_epoch = False

    def _running_epoch(self) -> Epoch | None:
        epoch = self._epoch_ref() if self._epoch_ref is not None else None
        return epoch if epoch is not None and not epoch.ended else None

    def _stats(self) -> EpochStats:
        running = self._running_epoch()
        return self._finished if running is None else self._finished.merged(running.stats)

    @property
    def stage_seconds(self) -> dict[str, float]:
        """NOTE [ Stage times ]
        Seconds per stage since the loader was built.  Worker stages (read,
        decode, augment, python_path) are summed over all workers, so with several
        workers they can exceed the wall time; main process stages are: wait (the
        consumer blocked for the next batch), assembly (handing the batch over) and
        pin_copy (copies into pinned memory and to the device)."""
        return dict(self._stats().seconds)

    @property
    def skipped_samples(self) -> list[tuple[int, str, str]]:
        """(index, path, why) of every sample dropped with on_error="skip"."""
        return list(self._stats().skipped)

    @property
    def python_path_samples(self) -> int:
        """Samples the C core handed to the dataset's own Python reading."""
        return self._stats().python_path

    # -- the verdict ---------------------------------------------------------------------
    def _adopt(self, verdict: Eligibility, first: bool = False) -> None:
        """Makes ``verdict`` the current one: a decoder for it (kept when nothing it
        was built from changed), or the fallback warning."""
        self.eligibility = verdict
        if not verdict.accelerated:
            key = verdict.checks
            if key != self._logged_key:
                self._logged_key = key
                _LG.warning(fallback_message(verdict))
            self._drop_decoder()
            return
        if self._decoder is not None and verdict.lowering.key == self._decoder_key:
            self._logged_key = None
            return
        self._drop_decoder()
        decoder = pipeline_for(self.dataset).decoder(verdict.lowering, self._options)
        # NOTE [ One shared-memory budget ] (shared_budget.py)
        refused = share_tables(decoder, self.num_workers, self.batch_size or 1,
                               self.prefetch_factor or 2)
        if refused is not None:
            self._adopt(Eligibility(False, None, (*verdict.checks, refused)))
            return
        self._logged_key = None
        if not first:
            _LG.info("jpegloader: the dataset changed since the last epoch (its transform or "
                     "samples); running the new pipeline: %s", verdict.report().splitlines()[0])
        self._decoder = decoder
        self._decoder_key = verdict.lowering.key

    def _drop_decoder(self) -> None:
        if self._decoder is None:
            return
        self._shutdown()
        self._ring = None  # the next decoder may lay its batches out differently
        self._decoder = None
        self._decoder_key = None

    def _renew_verdict(self) -> None:
        """NOTE [ The pipeline follows the dataset ]
        torch reads ``dataset.transform`` (and samples, loader, ...) at every
        sample, so a transform replaced between epochs (DeiT III does; progressive
        resizing changes the crop size every epoch) changes the batches.  Each
        epoch start re-runs the verdict (a few ms; hashing the sample list takes
        about 60 ms per million samples) and re-lowers, or falls back, when
        anything changed.  One exception, as in torch: persistent workers keep the
        dataset they started with, so once they run, changes are not seen (a
        warning says so)."""
        verdict = evaluate(self.dataset, **self._loader_args)
        persistent_running = self.persistent_workers and self.num_workers > 0 and (
            (self._pool is not None and self._pool.alive) or self._torch_workers_running())
        if persistent_running and (verdict.accelerated != self.eligibility.accelerated or (
                verdict.accelerated and verdict.lowering.key != self._decoder_key)):
            _LG.warning("jpegloader: the dataset changed, but persistent_workers=True keeps "
                        "the dataset the workers started with (as torch's loader does); "
                        "rebuild the DataLoader to use the change")
            return
        self._adopt(verdict)

    def _torch_workers_running(self) -> bool:
        return getattr(self, "_iterator", None) is not None

    # -- iteration -----------------------------------------------------------------------
    @property
    def _index_sampler(self):
        # torch's iterators read the index sampler here too: a resumed epoch's skips
        # reach the fallback path the same way.
        if self._resuming is not None:
            return self._resuming
        # A weak call: torch's persistent iterator keeps this wrapper, and the loader
        # keeps that iterator (NOTE [ No cycle through the loader ] in resume.py).
        return WatchedSampler(super()._index_sampler, WeakCall(self, "_sampler_started"))

    def _sampler_started(self) -> None:
        if self._epoch_start is not None:
            self._epoch_start["sampler_started"] = True

    def __iter__(self):
        running = self._running_epoch()
        if running is not None:
            running.close()  # abandoned mid-epoch
        self._renew_verdict()
        skip = self._start_epoch_state()
        if not self.eligibility.accelerated:
            self._fallback_yielded = skip
            self._epochs += 1
            it = super().__iter__()
            self._resuming = None
            self._skip_in_stream(it)
            return CountingIterator(self._to_device(it), self._fallback_batch,
                                    self._fallback_ended)
        pin = self.pin_memory and accelerator_available()
        if self.pin_memory and not pin and not self._pin_note_given:
            self._pin_note_given = True
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        # The same order of random draws as torch's iterator: the sampler is
        # started first, then the epoch seed is drawn from the loader's
        # generator (or the global RNG), so sample order matches native.  Like
        # torch's, persistent workers draw their base seed once.
        sampler_iter = iter(self._index_sampler)
        self._resuming = None
        if self._persistent_base_seed is not None:
            base_seed, drawn = self._persistent_base_seed, False
        else:
            base_seed = torch.empty((), dtype=torch.int64).random_(generator=self.generator).item()
            drawn = True
            if self._keeps_base_seed():
                self._persistent_base_seed = base_seed
        self._check_replayed_seed(base_seed)
        self._epoch_start.update(base_seed=base_seed, base_seed_drawn=drawn, accelerated=True)
        index = self._epochs
        self._epochs += 1
        pool = self._pool if (self._pool is not None and self._pool.alive) else None
        kept, self._idle_pool = self._idle_pool, None
        reclaimed = pool is None and kept is not None and kept.reclaim()
        if reclaimed:  # the epoch owns it, and offers it back at its end
            pool = kept
        threads = self.decode_threads or torch.get_num_threads()
        settings = EpochSettings(self._decoder, self.batch_size or 1, self.num_workers,
                                 self.persistent_workers, self.timeout, pin, self.device,
                                 self._new_pool, threads, self._keep_idle_pool)
        epoch = Epoch(settings, sampler_iter, base_seed, index, epoch_seed(base_seed, index),
                      pool, len(self), self._epoch_ended, yielded=skip,
                      owns_pool=reclaimed)
        if self.persistent_workers and epoch.owns_pool:
            epoch.owns_pool = False  # the loader keeps it for the next epochs
            self._pool = epoch.pool
        self._epoch_ref = weakref.ref(epoch)
        return epoch

    def _skip_in_stream(self, it) -> None:
        """A resumed IterableDataset: its stream has no indices to skip, so the batches
        the saved run had handed over are pulled again and dropped (as torchdata's
        StatefulDataLoader does for a dataset without a state_dict of its own)."""
        if self._fast_forward is None:
            return
        (skip, set_now), self._fast_forward = self._fast_forward, None
        for _ in range(skip):
            if next(it, None) is None:
                break
        if set_now is not None:
            set_now()
        _LG.info("jpegloader: resumed an IterableDataset by reading and dropping the %d "
                 "batches the saved run had handed over", skip)

    def _get_iterator(self):
        """torch's iterator for the fallback, always in the sampler's order.

        NOTE [ Batches in order ]
        ``in_order=False`` lets torch hand batches over as workers finish them; a
        checkpoint then cannot say which samples were delivered (the first n
        batches were not).  torch's documentation allows in-order delivery either
        way ("will not enforce"), and checkpoints must be exact, so both paths
        deliver in order; ``loader.in_order`` keeps the value given."""
        asked = getattr(self, "in_order", True)
        self.in_order = True
        try:
            return super()._get_iterator()
        finally:
            self.in_order = asked

    def _keep_idle_pool(self, pool: WorkerPool) -> bool:
        """NOTE [ Workers kept between epochs ]
        With persistent_workers=False torch starts fresh workers every epoch: each
        one runs worker_init_fn and gets a new copy of the dataset for the user's
        code.  When none of the user's code runs in the workers (no worker_init_fn;
        the transform, the unreadable-file path and the collate are all native), a
        fresh worker and an old one do the same thing, since each task carries the
        epoch's seed and a changed dataset is a new decoder (and new workers).  So
        the workers of an epoch that ran to its end are kept for the next one:
        forking, mapping the ring's slots in and warming the heap again cost 5% of
        an epoch on ImageNet-sized files (measured, 2 workers: 1.055x train and
        1.048x eval with the workers kept).  Kept workers wait at most
        IDLE_WORKERS_SECONDS (a checkpoint or a short validation between epochs),
        then exit, so a long pause holds no processes; close() or dropping the
        loader stops them at once."""
        if (self.persistent_workers or self.worker_init_fn is not None or self._decoder is None
                or self._decoder.runs_user_code or pool.decoder is not self._decoder
                or not pool.alive):
            return False
        if self._idle_pool is not None:
            self._idle_pool.shutdown()
        self._idle_pool = pool
        pool.retire_after(IDLE_WORKERS_SECONDS)
        return True

    def _keeps_base_seed(self) -> bool:
        return (self.persistent_workers and self.num_workers > 0) or self._keep_base_seed

    def _fallback_batch(self) -> None:
        self._fallback_yielded += 1

    def _fallback_ended(self) -> None:
        self._in_epoch = False

    # -- checkpoints --------------------------------------------------------------------
    def _start_epoch_state(self) -> int:
        """Applies a loaded state (if any) and records what state_dict() needs of the
        epoch starting now; returns the batches to skip."""
        resume, self._resume = self._resume, None
        skip = 0
        self._replay_seed = None
        if resume is not None:
            mid_epoch = resume["rng_at_epoch_start"] is not None
            set_rng_state(self.generator, resume["rng_at_epoch_start"] if mid_epoch
                          else resume["rng_now"])
            restore_sampler(real_sampler(self), resume["sampler"])
            self._epochs = resume["epoch"]
            # Persistent workers draw their base seed once: the resumed run does as the
            # run it resumes did, whatever its own num_workers.
            self._keep_base_seed = bool(resume["base_seed_kept"])
            self._persistent_base_seed = None
            if resume["base_seed_kept"] and resume["base_seed"] is not None and \
                    not (mid_epoch and resume["base_seed_drawn"]):
                self._persistent_base_seed = resume["base_seed"]  # drawn before, not again
            if mid_epoch:
                skip = resume["batches_yielded"]
                # A generator is the loader's own: replaying the epoch from its start
                # advances it exactly as the saved run did.  torch's global RNG is shared
                # with the training step, so it is put where the checkpoint found it.
                now = resume["rng_now"]
                set_now = None if self.generator is not None else \
                    (lambda: set_rng_state(None, now))
                if isinstance(self.dataset, torch.utils.data.IterableDataset):
                    # no indices to skip: the stream is fast-forwarded (__iter__)
                    self._fast_forward = (skip, set_now)
                else:
                    self._resuming = ResumingSampler(
                        super()._index_sampler, WeakCall(self, "_sampler_started"), skip,
                        set_now, resume["sampler_started"])
                if resume["base_seed_drawn"]:
                    self._replay_seed = resume["base_seed"]
            if not self.eligibility.accelerated:
                _LG.warning("jpegloader: resuming on torch's DataLoader: the sample order and "
                            "the epoch's seed are restored; random augmentations run in "
                            "torch's workers are not (their draws depend on each worker's "
                            "history)")
        self._epoch_start = {"epoch": self._epochs, "rng": rng_state(self.generator),
                             "sampler": sampler_state(real_sampler(self), self.generator), "base_seed": None,
                             "base_seed_drawn": False, "sampler_started": False,
                             "accelerated": False}
        self._in_epoch = True
        return skip

    def _check_replayed_seed(self, base_seed: int) -> None:
        expected, self._replay_seed = self._replay_seed, None
        if expected is not None and expected != base_seed:
            raise ValueError(
                "load_state_dict: replaying the saved epoch's start drew another base seed "
                f"({base_seed} instead of {expected}): the loader's sampler, generator or "
                "shuffle differ from the run that saved the state")

    def state_dict(self) -> dict:
        """Where the loader stands, as a small JSON-serialisable dict (torchdata's
        StatefulDataLoader names): the epoch in progress (or the next one), the batches
        of it already handed over, its base seed, the random source's state at the
        epoch's start and now, and the sampler's state.  See NOTE [ Resuming
        bit-identically ] (dataloader/resume.py)."""
        if self._resume is not None:  # loaded and not yet iterated: still that position
            return dict(self._resume)
        start = self._epoch_start if self._in_epoch else None
        if start is not None:
            running = self._running_epoch()
            yielded = running.yielded if start["accelerated"] and running is not None else (
                self._fallback_yielded if not start["accelerated"] else 0)
            return {"version": VERSION, "epoch": start["epoch"], "batches_yielded": yielded,
                    "base_seed": start["base_seed"],
                    "base_seed_drawn": start["base_seed_drawn"],
                    "base_seed_kept": self._keeps_base_seed(),
                    "sampler_started": start["sampler_started"],
                    "rng_source": "generator" if self.generator is not None else "global",
                    "rng_at_epoch_start": start["rng"], "rng_now": rng_state(self.generator),
                    "sampler": start["sampler"], "accelerated": start["accelerated"]}
        return {"version": VERSION, "epoch": self._epochs, "batches_yielded": 0,
                "base_seed": self._persistent_base_seed, "base_seed_drawn": False,
                "base_seed_kept": self._keeps_base_seed(), "sampler_started": False,
                "rng_source": "generator" if self.generator is not None else "global",
                "rng_at_epoch_start": None, "rng_now": rng_state(self.generator),
                "sampler": sampler_state(real_sampler(self), self.generator, with_epoch=False),
                "accelerated": self.eligibility.accelerated}

    def load_state_dict(self, state: dict) -> None:
        """Resume from ``state_dict()``'s result: the next ``iter(loader)`` continues
        the saved epoch after the batches already handed over (or starts the saved
        next epoch), and the loader's random source (its generator, or torch's global
        RNG) is set to where it stood when the state was saved."""
        state = validate(state)
        source = "generator" if self.generator is not None else "global"
        if state["rng_source"] != source:
            raise ValueError(f"the state was saved by a loader drawing from the "
                             f"{state['rng_source']} RNG; this one draws from the {source} "
                             "one (pass the same generator= argument)")
        running = self._running_epoch()
        if running is not None:
            running.close()
        self._in_epoch = False
        self._resume = state

    def _new_pool(self, base_seed: int) -> WorkerPool:
        """Worker processes for an epoch (or, persistent, for all); worker seeds are
        base_seed + worker id, as in torch."""
        context = self.multiprocessing_context or torch.multiprocessing
        if self._ring is None:
            self._ring_prefetch = self._fit_ring_to_shared_memory()
            self._ring_layout = self._decoder.layout
            self._ring = BatchRing(BatchRing.slots_for(self._ring_prefetch, self.num_workers),
                                   self._decoder.layout, self.batch_size or 1)
        return WorkerPool(self._decoder, self._ring, num_workers=self.num_workers,
                          prefetch_factor=self._ring_prefetch, context=context,
                          base_seed=base_seed, worker_init_fn=self.worker_init_fn,
                          dataset=self.dataset)

    def _fit_ring_to_shared_memory(self) -> int:
        """The prefetch factor the ring can have in the free /dev/shm; warns when
        it is below the one asked for (see ring.py's NOTE [ When /dev/shm is small ])."""
        asked = self.prefetch_factor or 2
        slot_bytes = layout_bytes(self._decoder.layout, self.batch_size or 1)
        free = shared_memory_free()
        fitted = fit_prefetch(asked, self.num_workers, slot_bytes, free)
        if fitted < asked:
            _LG.warning(
                "/dev/shm has %.0f MiB free, too little for prefetch_factor=%d (a ring of "
                "%d slots of %.1f MiB); running with prefetch_factor=%d. Give the machine "
                "more shared memory (Docker: --shm-size=2g) to prefetch fully.",
                free / MIB, asked, BatchRing.slots_for(asked, self.num_workers),
                slot_bytes / MIB, fitted)
        return fitted

    def _workers(self) -> list:
        """The worker processes running now (the running epoch's, the persistent pool's
        or those kept between epochs)."""
        running = self._running_epoch()
        pool = running.pool if running is not None and running.pool is not None else (
            self._pool or self._idle_pool)
        return list(pool.workers) if pool is not None else []

    def _to_device(self, it):
        if self.device is None:
            return it
        return (map_tensors(b, lambda t: t.to(self.device, non_blocking=True)) for b in it)

    def _shutdown(self) -> None:
        last = self._epoch_ref() if self._epoch_ref is not None else None
        if last is not None:
            last.close()
            if last.pool is not None:  # also waits for the reaper of an ended epoch
                last.pool.shutdown()
        for pool in (self._pool, self._idle_pool):
            if pool is not None:
                pool.shutdown()
        self._pool = self._idle_pool = None

    def close(self) -> None:
        """Stops the worker processes now (they also stop when the loader is freed)."""
        self._shutdown()

    def __del__(self):
        if getattr(self, "_pool", None) is not None or getattr(self, "_idle_pool", None) \
                is not None or getattr(self, "_epoch_ref", None):
            self._shutdown()
