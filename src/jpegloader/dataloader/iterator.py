"""Iterating an accelerated loader: one epoch of batches in the sampler's order."""
from __future__ import annotations

import time

import torch

from ..transforms.random_stream import epoch_seed
from .batch_decoder import SampleFailure
from .delivery import DeviceFeed, accelerator_available
from .engine import Engine
from .ring import ZERO_COPY_SUPPORTED


class AcceleratedIterator:
    """Yields batches with default_collate's structure (the decoder's ``assemble``)."""

    def __init__(self, loader):
        # The same order of random draws as torch's iterator: the sampler is
        # started first, then the epoch seed is drawn from the loader's
        # generator (or the global RNG), so sample order matches native.
        self._sampler_iter = iter(loader._index_sampler)
        base_seed = torch.empty((), dtype=torch.int64).random_(generator=loader.generator).item()
        self._epoch = loader._next_epoch()
        self._seed = epoch_seed(base_seed, self._epoch)
        self._loader = loader
        self._decoder = loader._batch_decoder
        self._engine: Engine | None = loader._engine_for_epoch(base_seed)
        self._pin = loader.pin_memory and accelerator_available()
        self._feed = DeviceFeed(loader.device) if loader.device is not None else None
        self._staged = None
        self._sent = self._received = 0
        self._sampler_done = False
        self._ready: dict[int, tuple] = {}
        self._holding = None  # the result whose batch the user has now
        if self._engine is not None:
            self._fill()

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    # -- producing batches -------------------------------------------------
    def _fill(self) -> None:
        while not self._sampler_done and self._engine.has_room():
            try:
                indices = next(self._sampler_iter)
            except StopIteration:
                self._sampler_done = True
                return
            self._engine.submit(self._epoch, self._sent, indices, self._seed)
            self._sent += 1

    def _next_inline(self):
        """num_workers=0: decode in this process, straight into the output."""
        while True:
            indices = next(self._sampler_iter)
            n = len(indices)
            tensors = [torch.empty((n, *shape), dtype=dtype, pin_memory=self._pin)
                       for shape, dtype in self._decoder.layout]
            try:
                report = self._decoder.decode(indices, self._seed,
                                              tuple(t.numpy() for t in tensors),
                                              "in the main process")
            except SampleFailure as failure:
                failure.wrapper.reraise()
            self._loader._note_report(report)
            if report.count:
                return self._decoder.assemble([t[:report.count] for t in tensors])

    def _next_from_workers(self):
        engine = self._engine
        while True:
            if self._received in self._ready:
                result, slot = self._ready.pop(self._received)
                self._received += 1
                batch = self._take(result, slot)
                # NOTE [ A worker's quota includes the batch the user holds ]
                # A batch counts against its worker's prefetch quota until the next
                # one is yielded: its slot is still in the user's hands until then,
                # so a worker's prefetch_factor slots are always enough.
                if batch is None:  # every sample skipped: nothing handed over
                    engine.finished(result)
                else:
                    if self._holding is not None:
                        engine.finished(self._holding)
                    self._holding = result
                self._fill()
                if batch is not None:
                    return batch
                continue
            if self._sampler_done and self._received >= self._sent:
                if self._holding is not None:
                    engine.finished(self._holding)
                    self._holding = None
                raise StopIteration
            waiting = time.perf_counter()
            try:
                result, slot = engine.receive(self._loader.timeout)
            except TimeoutError as e:
                engine.shutdown()
                raise RuntimeError(str(e)) from None
            finally:
                self._loader._note_seconds({"wait": time.perf_counter() - waiting})
            if result.epoch != self._epoch:  # from an abandoned epoch or a failed init
                engine.finished(result)
                if slot is not None:
                    engine.release(slot)
                if result.epoch < 0:
                    engine.shutdown()
                    result.report.reraise()
                self._fill()
                continue
            if hasattr(result.report, "reraise"):
                engine.release(slot)
                engine.shutdown()
                result.report.reraise()
            self._ready[result.batch_no] = (result, slot)

    def _take(self, result, slot):
        report = result.report
        self._loader._note_report(report)
        if report.count == 0:
            self._engine.release(slot)
            return None
        start = time.perf_counter()
        if self._pin or self._feed is not None or not ZERO_COPY_SUPPORTED:
            tensors = [_copy(t[:report.count], self._pin) for t in slot.tensors]
            self._engine.release(slot)
            stage = "pin_copy" if self._pin or self._feed is not None else "assembly"
        else:
            tensors = self._engine.lend(slot, report.count)
            stage = "assembly"
        batch = self._decoder.assemble(tensors)
        self._loader._note_seconds({stage: time.perf_counter() - start})
        return batch

    def _next_batch(self):
        if self._engine is None:
            return self._next_inline()
        try:
            return self._next_from_workers()
        except StopIteration:
            if not self._loader.persistent_workers:
                self._engine.stop()
            raise

    # -- delivering them ---------------------------------------------------
    def __next__(self):
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
        self._loader._note_seconds({"pin_copy": time.perf_counter() - start})
        return batch

    def _start_copy(self, batch):
        start = time.perf_counter()
        moved = self._feed.start(batch)
        self._loader._note_seconds({"pin_copy": time.perf_counter() - start})
        return moved


def _copy(t: torch.Tensor, pinned: bool) -> torch.Tensor:
    out = torch.empty(t.shape, dtype=t.dtype, pin_memory=pinned)
    return out.copy_(t)
