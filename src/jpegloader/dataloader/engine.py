"""The worker side of an accelerated loader, across its epochs.

NOTE [ One owner per job ]
The loader holds configuration and the verdict and starts epochs; it never runs
anything itself.  An ``Engine`` exists for one verdict's decoder (a new pipeline
is a new engine) and owns what lasts from epoch to epoch: the decoder, the
shared-memory ring (its pages stay allocated), the persistent pool, the pool
kept idle between epochs, and every epoch's statistics.  The engine alone
decides a pool's fate: once per epoch (the persistent pool, the idle one
reclaimed, or a new one) it hands the ``Epoch`` (epoch.py) a ``PoolLease``
carrying that decision, and the lease, not the epoch, carries it out when the
epoch ends, however it ends (run through, closed, or garbage collected).  The
epoch never calls back: the engine reads its statistics.  Nothing here points
back to the loader, so dropping the loader drops the engine and its workers
(NOTE [ No cycle through the loader ] in resume.py).

NOTE [ Workers kept between epochs ]
With persistent_workers=False torch starts fresh workers every epoch: each
runs worker_init_fn and gets a new copy of the dataset for the user's code.
When none of the user's code runs in the workers (no worker_init_fn; the
transform, the unreadable-file path and the collate are all native), a fresh
worker and an old one do the same thing, since each task carries its epoch's
seed and a changed dataset is a new engine.  So the workers of an epoch that
ran to its end are kept for the next one (saving the fork, the ring's mapping
and the warm-up: docs/experiments.md), for at most IDLE_WORKERS_SECONDS of
waiting; then they exit.  ``shutdown`` stops them at once.
"""
from __future__ import annotations

import dataclasses
import logging
import weakref
from dataclasses import dataclass

import torch

from ..pipelines import BatchDecoder, Check
from ..pipelines.contract import HEADER_WIDTH, Tally, Workspace
from .eligibility import Eligibility, fallback_message
from .epoch import Epoch, EpochSettings, PoolLease
from .pool import WorkerPool
from .ring import MIB, BatchRing, layout_bytes, shared_empty, shared_memory_free
from .shared_budget import SharedBudget, workspace_bytes

_LG = logging.getLogger("jpegloader")
#: NOTE [ Workers kept between epochs ]: how long idle workers wait for the next epoch
IDLE_WORKERS_SECONDS = 30.0


@dataclass(frozen=True)
class WorkerConfig:
    """What the workers are made of: the loader's arguments that concern them."""

    num_workers: int
    batch_size: int
    prefetch_factor: int
    persistent: bool
    timeout: float
    worker_init_fn: object
    multiprocessing_context: object
    dataset: object


class _Pools:
    """The pools an engine keeps between epochs, apart from the engine so that its
    finalizer can stop them: a pool kept idle is alive on its own retirement timer."""

    def __init__(self):
        self.persistent: WorkerPool | None = None  # persistent_workers' pool
        self.idle: WorkerPool | None = None        # NOTE [ Workers kept between epochs ]

    def shutdown(self) -> None:
        for pool in (self.persistent, self.idle):
            if pool is not None:
                pool.shutdown()
        self.persistent = self.idle = None


class Admission:
    """Whether an engine may start for a pipeline, within the shared-memory budget
    (NOTE [ One shared-memory budget ] in shared_budget.py); a refusal stands, and the
    pipeline's decoder is not built again, until it changes or more is free."""

    def __init__(self):
        self.budget = SharedBudget()

    def refusal(self, key) -> Check | None:
        return self.budget.refusal(key)

    def start(self, decoder: BatchDecoder, key, config: WorkerConfig) -> Engine | Check:
        """An engine for ``decoder``, its tables moved into shared memory; or the
        failed check to fall back with."""
        refused = self.budget.admit(decoder, key, config.num_workers, config.batch_size,
                                    config.prefetch_factor)
        return refused if refused is not None else Engine(decoder, key, config, self.budget)


class CurrentEngine:
    """The engine of the verdict in force (NOTE [ The pipeline follows the dataset ] in
    loader.py): kept while the verdict's lowering key holds, replaced when it changes,
    dropped for the fallback, whose warning is said once per reason; what the engines
    dropped did stays in ``past``."""

    def __init__(self):
        self.engine: Engine | None = None
        self.admission = Admission()  # NOTE [ One shared-memory budget ]
        self.past = Tally()
        self._warned = None  # the checks of the fallback last warned of

    def stats(self) -> Tally:
        return self.past if self.engine is None else self.past.merged(self.engine.stats)

    def drop(self) -> None:
        if self.engine is not None:
            self.engine.shutdown()
            self.past = self.past.merged(self.engine.stats)
            self.engine = None

    def adopt(self, verdict: Eligibility, parts, first: bool = False) -> Eligibility:
        """The verdict in force after ``verdict``: itself, with an engine for it (the
        current one when nothing it was built from changed; ``parts(verdict)`` gives a
        new one's decoder and WorkerConfig), or the fallback's, warned of."""
        if not verdict.accelerated:
            if verdict.checks != self._warned:
                self._warned = verdict.checks
                _LG.warning(fallback_message(verdict))
            self.drop()
            return verdict
        if self.engine is not None and verdict.lowering.key == self.engine.key:
            self._warned = None
            return verdict
        self.drop()
        # The verdict is renewed every epoch: a pipeline that did not fit /dev/shm is not
        # built again (its tables cover every sample) until more is free.
        refused = self.admission.refusal(verdict.lowering.key)
        if refused is None:
            decoder, config = parts(verdict)
            started = self.admission.start(decoder, verdict.lowering.key, config)
            if isinstance(started, Engine):
                self._warned = None
                if not first:
                    _LG.info("jpegloader: the dataset changed since the last epoch (its "
                             "transform or samples); running the new pipeline: %s",
                             verdict.report().splitlines()[0])
                self.engine = started
                return verdict
            refused = started
        return self.adopt(Eligibility(False, None, (*verdict.checks, refused)), parts)


class Engine:
    def __init__(self, decoder: BatchDecoder, key: object, config: WorkerConfig,
                 budget: SharedBudget):
        self.decoder = decoder
        self.budget = budget
        self.key = key  # the lowering's key: equal keys, the same program on the same samples
        self.config = config
        self._epoch_stats: list[Tally] = []  # each epoch's, read when asked
        self._ring: BatchRing | None = None
        self._workspace: Workspace | None = None  # BatchDecoder.workspace_size's
        self._prefetch = 0  # the ring's prefetch factor, fitted to /dev/shm
        self._pools = _Pools()
        # An engine that nothing holds (the loader dropped, its last epoch over) stops
        # the pools it kept.
        self._finalizer = weakref.finalize(self, _Pools.shutdown, self._pools)
        self._epoch_ref = None  # the running Epoch, weakly

    # -- epochs ------------------------------------------------------------------------
    def start_epoch(self, sampler_iter, base_seed: int, index: int, seed: int, length: int,
                    yielded: int, pin: bool, device, threads: int, skipped=None) -> Epoch:
        """An epoch over ``sampler_iter``, on the pool ``_lease`` decides; ``skipped``
        gives a resumed epoch's batches handed over before it (for a decoder's window)."""
        c = self.config
        settings = EpochSettings(self.decoder, c.num_workers, c.timeout, pin, device, threads,
                                 c.batch_size)
        epoch = Epoch(settings, self._lease(base_seed), sampler_iter, index, seed, length,
                      yielded=yielded, skipped=skipped)
        self._epoch_stats.append(epoch.stats)
        self._epoch_ref = weakref.ref(epoch)
        return epoch

    def _lease(self, base_seed: int) -> PoolLease:
        """The one decision about an epoch's workers: the persistent pool (kept by the
        engine whatever the epoch does), the pool kept idle since the last epoch
        (reclaimed: the epoch's to end or offer back), or a new pool (persistent,
        or the epoch's)."""
        c = self.config
        if c.num_workers == 0:
            return PoolLease(None, owned=False)
        persistent = self._pools.persistent
        if persistent is not None and persistent.alive:
            return PoolLease(persistent, owned=False)
        kept, self._pools.idle = self._pools.idle, None
        if kept is not None and kept.reclaim():
            return PoolLease(kept, owned=True, keep_idle=self._keep_idle)
        pool = self.new_pool(base_seed)
        if c.persistent:
            self._pools.persistent = pool
            return PoolLease(pool, owned=False)
        return PoolLease(pool, owned=True, keep_idle=self._keep_idle)

    def running_epoch(self) -> Epoch | None:
        epoch = self._epoch_ref() if self._epoch_ref is not None else None
        return epoch if epoch is not None and not epoch.ended else None

    @property
    def stats(self) -> Tally:
        """Every epoch's statistics, the running one's so far included."""
        total = Tally()
        for stats in self._epoch_stats:
            total = total.merged(stats)
        return total

    # -- pools -------------------------------------------------------------------------
    def new_pool(self, base_seed: int) -> WorkerPool:
        """Worker processes for an epoch (or, persistent, for all); worker seeds are
        base_seed + worker id, as in torch."""
        c = self.config
        if self._ring is None:
            self._prefetch = self._fit_ring_to_shared_memory()
            self._ring = BatchRing(BatchRing.slots_for(self._prefetch, c.num_workers),
                                   self.decoder.layout, c.batch_size,
                                   sparse=self.decoder.sparse_slots)
        context = c.multiprocessing_context or torch.multiprocessing
        self._share_workspace(context)
        return WorkerPool(self.decoder, self._ring, num_workers=c.num_workers,
                          prefetch_factor=self._prefetch,
                          context=context,
                          base_seed=base_seed, worker_init_fn=c.worker_init_fn,
                          dataset=c.dataset)

    def _share_workspace(self, context) -> None:
        """The decoder's Workspace (BatchDecoder.workspace_size), made once; its lock is
        new with each pool, as a worker killed while holding one would keep it held."""
        size = self.decoder.workspace_size(self._ring.size, self.config.batch_size) \
            if self._workspace is None else None
        if size is not None:
            what = "store of decoded data the workers share"
            self._workspace = Workspace(
                shared_empty((size[0],), torch.uint8, what,
                             pages=not self.decoder.sparse_workspace),
                shared_empty((size[1], HEADER_WIDTH), torch.int64, what).zero_(), None)
        if self._workspace is not None:
            self._workspace = dataclasses.replace(self._workspace, lock=context.Lock())
            self.decoder.attach(self._workspace)

    def _fit_ring_to_shared_memory(self) -> int:
        """The prefetch factor the ring can have in the free /dev/shm; warns when it is
        below the one asked for (NOTE [ When /dev/shm is small ] in ring.py)."""
        c = self.config
        slot_bytes = layout_bytes(self.decoder.layout, c.batch_size)
        free = shared_memory_free()
        fitted = self.budget.fit_prefetch(
            c.prefetch_factor, c.num_workers, slot_bytes, free,
            lambda slots: workspace_bytes(self.decoder, slots, c.batch_size))
        if fitted < c.prefetch_factor:
            _LG.warning(
                "/dev/shm has %.0f MiB free, too little for prefetch_factor=%d (a ring of "
                "%d slots of %.1f MiB); running with prefetch_factor=%d. Give the machine "
                "more shared memory (Docker: --shm-size=2g) to prefetch fully.",
                free / MIB, c.prefetch_factor, BatchRing.slots_for(c.prefetch_factor,
                                                                    c.num_workers),
                slot_bytes / MIB, fitted)
        return fitted

    def _keep_idle(self, pool: WorkerPool) -> bool:
        """An epoch that ran to its end offers its idle pool (through its lease): True
        when it is kept for the next epoch (NOTE [ Workers kept between epochs ])."""
        if (self.config.persistent or self.config.worker_init_fn is not None
                or self.decoder.runs_user_code or pool.decoder is not self.decoder
                or not pool.alive):
            return False
        if self._pools.idle is not None:
            self._pools.idle.shutdown()
        self._pools.idle = pool
        pool.retire_after(IDLE_WORKERS_SECONDS)
        return True

    @property
    def persistent_alive(self) -> bool:
        return self._pools.persistent is not None and self._pools.persistent.alive

    def workers(self) -> list:
        """The worker processes running now (the running epoch's, the persistent pool's
        or those kept between epochs)."""
        running = self.running_epoch()
        pool = running.pool if running is not None and running.pool is not None else (
            self._pools.persistent or self._pools.idle)
        return list(pool.workers) if pool is not None else []

    def shutdown(self) -> None:
        last = self._epoch_ref() if self._epoch_ref is not None else None
        if last is not None:
            last.close()
            if last.pool is not None:  # also waits for the reaper of an ended epoch
                last.pool.shutdown()
        self._pools.shutdown()
