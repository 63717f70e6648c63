"""One epoch of an accelerated loader: batches in the sampler's order.

NOTE [ One object owns an epoch ]
An ``Epoch`` holds everything of one pass: the sampler's iterator, the epoch
seed, the lease on its workers (NOTE [ One owner per job ] in engine.py), the
batches in flight, the batch the user still holds and the statistics, which
the engine reads.  It ends when the sampler is exhausted, when ``close`` is
called (a new epoch starts while this one is unfinished) or when it is garbage
collected; then its lease ends, as the engine decided when it made it.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch._utils import ExceptionWrapper

from ..pipelines.contract import IN_MAIN, BatchDecoder, EarlierSamples, SampleFailure, Tally
from .delivery import DeviceFeed, PinThread, host_copy, pin_batch
from .pool import WorkerPool
from .ring import ZERO_COPY_SUPPORTED


@dataclass(frozen=True)
class EpochSettings:
    """What an epoch is run with."""

    decoder: BatchDecoder
    num_workers: int
    timeout: float
    pin: bool
    device: torch.device | None
    inline_threads: int = 1  # num_workers=0: threads a batch's C work is shared over
    batch_size: int = 1  # the loader's (its workspace holds batches of up to this many)


class History:
    """The samples before each batch that a decoder with a ``window`` reads: the
    epoch's last indices, by position (EarlierSamples)."""

    def __init__(self, window: int, batch_size: int):
        self.window = window
        self.batch_size = batch_size
        self.recent: deque[int] = deque(maxlen=window)
        self.position = 0  # the next sample's, in the epoch's order
        self.written_from = 0

    def skipped(self, batches) -> None:
        """A resumed epoch's batches handed over before the checkpoint: not decoded in
        this run, but read by the batches after them."""
        for indices in batches:
            self.recent.extend(int(i) for i in indices)
            self.position += len(indices)
        self.written_from = self.position

    def before(self, indices) -> EarlierSamples | None:
        """What the batch of ``indices`` reads before its own samples (None: nothing);
        then the batch is history.  A batch larger than the workspace's (a batch
        sampler's) reads only its own, and those after it nothing before it."""
        n = len(indices)
        if n > self.batch_size:
            self.recent.clear()
            self.position += n
            self.written_from = self.position
            return None
        take = min(max(self.window - n, 0), len(self.recent))
        earlier = EarlierSamples(self.position - take,
                                 tuple(self.recent)[len(self.recent) - take:],
                                 self.written_from)
        self.recent.extend(int(i) for i in indices)
        self.position += n
        return earlier


@dataclass(frozen=True)
class PoolLease:
    """An epoch's workers and what becomes of them when it ends, as the engine
    decided: ``owned`` pools are stopped, or offered to ``keep_idle`` when the
    epoch ran to its end with them idle (NOTE [ Workers kept between epochs ] in
    engine.py); others (persistent) stay as they are, whatever the epoch did."""

    pool: WorkerPool | None
    owned: bool
    keep_idle: Callable[[WorkerPool], bool] | None = None

    def end(self, completed: bool) -> None:
        """The epoch is over: ``completed`` when it ran to its end (its workers are
        idle then); otherwise its workers may be busy and are stopped now."""
        pool = self.pool
        if pool is None or not self.owned:
            return
        if not completed:
            pool.shutdown()
        elif not (pool.idle and self.keep_idle is not None and self.keep_idle(pool)):
            pool.stop()  # reaped in the background


class _Handover:
    """Batches an epoch received and has not handed over (by batch number, with their
    slots), and the result of the batch the user holds: all counted against their
    workers until the epoch gives them back, which it must however it ends, since a
    persistent pool goes on to the next epoch."""

    def __init__(self):
        self.ready: dict[int, tuple] = {}
        self.holding = None

    def hold(self, pool: WorkerPool, result) -> None:
        """The user holds ``result``'s batch now; the one held before is finished."""
        if self.holding is not None:
            pool.finished(self.holding)
        self.holding = result
        pool.holding(result)

    def give_back(self, pool: WorkerPool | None) -> None:
        if pool is None:
            return
        for result, slot in self.ready.values():
            pool.finished(result)
            if slot is not None:
                pool.release(slot)
        self.ready.clear()
        if self.holding is not None:
            pool.finished(self.holding)
            self.holding = None
            pool.holding(None)


def _abandoned(lease: PoolLease, handover: _Handover, stop: threading.Event) -> None:
    """An epoch garbage collected before its end (its pin thread, if any, holds it
    only while it makes a batch, and stops: NOTE [ Pinned in a thread of its own ])."""
    stop.set()
    handover.give_back(lease.pool)
    lease.end(False)


class Epoch:
    """Yields batches with default_collate's structure (the decoder's ``assemble``)."""

    def __init__(self, settings: EpochSettings, lease: PoolLease, sampler_iter, epoch: int,
                 seed: int, length: int, yielded: int = 0, skipped=None):
        self.settings = settings
        self.index = epoch
        #: batches handed to the user in this epoch (a resumed epoch starts at its count)
        self.yielded = yielded
        self._sampler_iter = sampler_iter
        self._seed = seed
        self._decoder = settings.decoder
        self._length = length
        self.stats = Tally()
        self._lease = lease
        self.pool = lease.pool
        self._feed = DeviceFeed(settings.device) if settings.device is not None else None
        self._staged = None
        # batch numbers continue a resumed epoch's (a collate_fn is seeded by them)
        self._sent = self._received = yielded
        self._sampler_done = False
        self._handover = _Handover()  # received batches not handed over, the one held
        self._inline_batch = yielded  # num_workers=0: the batch number (collate_fn seeds)
        self._ended = False
        self._stop = threading.Event()  # the pin thread's
        # garbage collected mid-epoch: no worker may go on writing a slot, and a pool
        # that lives on gets back what the epoch had received
        self._finalizer = weakref.finalize(self, _abandoned, lease, self._handover, self._stop)
        self._pin_thread = None
        window = settings.decoder.window
        self._history = History(window, settings.batch_size) if window else None
        self._skipped = skipped  # () -> a resumed epoch's skipped batches
        #: batches are pinned in a thread of their own (set before it starts, which may
        #: pin a batch before the PinThread is assigned)
        self._pins_in_thread = self.pool is not None and settings.pin and settings.device is None
        if self.pool is not None:
            if self._history is not None:
                self._drain()
            self._fill()
            if self._pins_in_thread:
                # NOTE [ Pinned in a thread of its own ] (delivery.py)
                self._pin_thread = PinThread(self, Epoch._next_from_workers, self._stop)

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return self._length

    # -- the end -----------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        return self._ended

    def _end(self, completed: bool) -> None:
        if self._ended:
            return
        self._ended = True
        self._finalizer.detach()
        if self._pin_thread is not None:  # it alone touches the pool while it runs
            self._pin_thread.close()
        self._handover.give_back(self.pool)
        self._lease.end(completed)

    def close(self) -> None:
        """Ends the epoch now (a new one is starting): its own workers are stopped
        and waited for if busy, so none still writes a slot; a persistent pool is
        kept, its stale results are drained by the next epoch."""
        self._end(completed=self.pool is not None and self.pool.idle)

    # -- producing batches -----------------------------------------------------------------
    def _drain(self) -> None:
        """Waits for the batches an abandoned epoch left with a persistent pool: with a
        window, its workers write the decoder's Workspace, which this epoch reuses."""
        while not self.pool.idle:
            try:
                result, slot = self.pool.receive(self.settings.timeout)
            except TimeoutError as e:
                self.pool.abandon()
                raise RuntimeError(str(e)) from None
            self._discard(result, slot)

    def _discard(self, result, slot) -> None:
        """A result not of this epoch (an abandoned epoch's: its slot given back), or a
        worker's failed init (raised)."""
        self.pool.finished(result)
        if slot is not None:
            self.pool.release(slot)
        if result.epoch < 0:
            self.pool.shutdown()
            result.report.reraise()

    def _earlier(self, indices) -> EarlierSamples | None:
        history = self._history
        if history is None:
            return None
        if self._skipped is not None:  # the sampler has skipped them by now
            history.skipped(self._skipped())
            self._skipped = None
        return history.before(indices)

    def _fill(self) -> None:
        pool = self.pool
        while not self._sampler_done and pool.has_room():
            try:
                indices = next(self._sampler_iter)
            except StopIteration:
                self._sampler_done = True
                return
            # NOTE [ The last batches spread out ] (pool.py)
            last = self._sent >= self._length - self.settings.num_workers
            pool.submit(self.index, self._sent, indices, self._seed, spread_out=last,
                        pinned=self._pins_in_thread, earlier=self._earlier(indices))
            self._sent += 1

    def _next_inline(self):
        """num_workers=0: decode in this process, straight into the output."""
        while True:
            indices = next(self._sampler_iter)
            n = len(indices)
            tensors = [torch.empty((n, *shape), dtype=dtype, pin_memory=self.settings.pin)
                       for shape, dtype in self._decoder.inline_layout]
            try:
                report = self._decoder.decode(indices, self._seed,
                                              tuple(t.numpy() for t in tensors),
                                              IN_MAIN, self._inline_batch,
                                              self.settings.inline_threads,
                                              earlier=self._earlier(indices))
            except SampleFailure as failure:
                failure.wrapper.reraise()
            self._inline_batch += 1
            self.stats.add(report)
            if report.payload is not None:  # a collate_fn's batch: pinned as torch pins it
                # (its tensors may be the dataset's own: left as they are)
                return pin_batch(report.payload, own=False) if self.settings.pin else \
                    report.payload
            if report.count:
                return self._decoder.assemble([t[:report.count] for t in tensors],
                                              report.extras)

    def _next_from_workers(self, stop: threading.Event | None = None):
        """The next batch in the sampler's order, pinned where asked; run by the pin
        thread when there is one (``stop`` its event)."""
        pool = self.pool
        # The previous batch's slot may be free by now: NOTE [ The held batch let off ]
        self._fill()
        while True:
            if self._received in self._handover.ready:
                result, slot = self._handover.ready.pop(self._received)
                self._received += 1
                batch = self._take(result, slot)
                # NOTE [ A worker's quota includes the batch the user holds ]
                # A batch counts against its worker's prefetch quota until the next
                # one is yielded: its slot is still in the user's hands until then,
                # so a worker's prefetch_factor slots are always enough.  It is let
                # off when a slot is spare (NOTE [ The held batch let off ]).
                if batch is None:  # every sample skipped: nothing handed over
                    pool.finished(result)
                else:
                    self._handover.hold(pool, result)
                self._fill()
                if batch is not None:
                    return batch
                continue
            if self._sampler_done and self._received >= self._sent:
                raise StopIteration
            waiting = time.perf_counter()
            try:
                result, slot = pool.receive(self.settings.timeout, stop)
            except TimeoutError as e:
                pool.abandon()
                raise RuntimeError(str(e)) from None
            finally:
                self.stats.add_seconds({"wait": time.perf_counter() - waiting})
            if result.epoch != self.index:  # from an abandoned epoch or a failed init
                self._discard(result, slot)
                self._fill()
                continue
            if hasattr(result.report, "reraise"):
                pool.release(slot)
                pool.shutdown()
                result.report.reraise()
            self._handover.ready[result.batch_no] = (result, slot)
            self._fill()  # its worker may be idle now: NOTE [ The held batch let off ]

    def _take(self, result, slot):
        report = result.report
        self.stats.add(report)
        if report.payload is not None:  # a collate_fn's batch, sent as torch sends it
            self.pool.release(slot)
            return self._pinning(pin_batch, report.payload) if self.settings.pin else \
                report.payload
        if report.count == 0:
            self.pool.release(slot)
            return None
        start = time.perf_counter()
        pin, feed = self.settings.pin, self._feed
        # NOTE [ From the slot to the device ]
        # With device="cuda", the batch is lent and the device copy reads it from the
        # slot itself: from pageable memory CUDA has read the source when the copy
        # returns, and the slot is reused once the views are gone.  That is one host
        # copy fewer than pinning first, in this process, where torch's loader pins in
        # a thread of its own.  Pinned without a device, a batch whose samples fill
        # part of their rows is assembled first, so only what they fill is copied, and
        # a collate_fn's batch is pinned as torch pins it (``pins_assembled``).
        direct = feed is not None and feed.reads_host_at_once
        pin_after = pin and not direct and self._decoder.pins_assembled(report.extras)
        if ZERO_COPY_SUPPORTED and (direct or pin_after or not (pin or feed is not None)):
            tensors = self.pool.lend(slot, report.count)
            stage = "pin_copy" if pin_after else "assembly"
        else:
            tensors = self._pinning(lambda: [host_copy(t[:report.count], pin)
                                             for t in slot.tensors])
            self.pool.release(slot)
            stage = "pin_copy" if pin or feed is not None else "assembly"
        batch = self._decoder.assemble(tensors, report.extras)
        if pin_after:
            batch = self._pinning(pin_batch, batch)
        self.stats.add_seconds({stage: time.perf_counter() - start})
        return batch

    def _pinning(self, fn, *args):
        """fn(*args), a copy into pinned memory; in the pin thread, what it raises is
        wrapped as torch's loader wraps it (the batch, "in pin memory thread")."""
        try:
            return fn(*args)
        except Exception:
            if not self._pins_in_thread:
                raise
            ExceptionWrapper(
                where=f"in pin memory thread for batch {self._received - 1}").reraise()

    def _next_batch(self):
        try:
            if self.pool is None:
                return self._next_inline()
            if self._pin_thread is not None:
                return self._pin_thread.take()
            return self._next_from_workers()
        except StopIteration:
            self._end(completed=True)
            raise

    # -- delivering them ---------------------------------------------------------------
    def __next__(self):
        batch = self._deliver()
        self.yielded += 1
        return batch

    def _deliver(self):
        if self._feed is None:
            return self._next_batch()
        if self._staged is None:
            self._staged = self._start_copy(self._next_batch())
        current = self._staged
        try:
            self._staged = self._start_copy(self._next_batch())
        except StopIteration:
            self._staged = None
        start = time.perf_counter()
        batch = self._feed.finish(current)
        self.stats.add_seconds({"pin_copy": time.perf_counter() - start})
        return batch

    def _start_copy(self, batch):
        start = time.perf_counter()
        moved = self._feed.start(batch)
        self.stats.add_seconds({"pin_copy": time.perf_counter() - start})
        return moved

