"""Which worker decodes which batch: the quota of batches outstanding, the
samples queued at each worker and each worker's pace.  No processes here; the
pool (pool.py) asks and reports.

NOTE [ Batches to the least loaded worker ]
Round-robin with a quota per worker runs at the slowest worker's pace.  When
nothing of the user's runs in the workers (``balanced``: which worker decodes a
batch cannot change it), the quota is shared and each batch goes to the next
worker in turn unless another is expected to finish it sooner by more than
``TURN_MARGIN`` batches: its queued samples plus the batch, times its pace (a
moving average of its seconds per sample).  Without the margin, noise reorders
equal workers' batches and costs more than it saves.  A worker passed over
drifts back towards the fastest pace and is tried again.  With user code in
the workers, batch k goes to worker k mod ``num_workers``, as in torch.
Measured: docs/experiments.md (``benchmarks/worker_balance.py``).

NOTE [ The held batch let off ]
The batch the user holds counts against its worker's quota until the next one
is yielded (NOTE [ A worker's quota includes the batch the user holds ] in
epoch.py), so ``prefetch_factor`` x ``num_workers`` + 1 slots always do.  But
torch keeps ``prefetch_factor`` x ``num_workers`` batches in flight besides the
held one, so the held batch is let off its quota whenever the ring has a slot
spare (the user dropped the previous batch, as training loops do): as many
batches in flight as torch keeps, in no more slots.  The epoch looks for such
a slot at ``next`` and whenever a result comes in.  Measured:
docs/experiments.md.
"""
from __future__ import annotations

import collections
import time

PACE_WEIGHT = 0.25  # of a worker's latest task in its pace
TURN_MARGIN = 0.5   # batches (at the fastest pace) another worker must gain to skip a turn


class Assignment:
    """The workers' quota, queues and paces; picks each batch's worker."""

    def __init__(self, num_workers: int, prefetch_factor: int, balanced: bool,
                 clock=time.monotonic):
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.balanced = balanced  # the quota shared, turns skipped for a slow worker
        self.outstanding = [0] * num_workers  # batches counted against each worker
        self.pace = [0.0] * num_workers       # seconds per sample lately (0: not known)
        self._turn = 0                        # the worker asked first for the next batch
        self.held: int | None = None          # the worker whose batch the user holds
        # each worker's tasks sent and not yet back (samples), in the order it works
        # through them, and when it began the first: NOTE [ The last batches shared
        # out ] in pool.py
        self._tasks = [collections.deque() for _ in range(num_workers)]
        self._began = [0.0] * num_workers
        self._clock = clock

    @property
    def queued(self) -> list[int]:
        """Samples sent to each worker and not yet back."""
        return [sum(tasks) for tasks in self._tasks]

    def _paces(self) -> tuple[float, list[float]]:
        """(the fastest known pace, each worker's pace with the fastest standing in for
        one not known yet); 1.0 when none is known."""
        fastest = min((p for p in self.pace if p > 0), default=1.0)
        return fastest, [p or fastest for p in self.pace]

    def _counts(self, spare_slot: bool) -> list[int]:
        """Batches counted against each worker: the one the user holds not, when a
        slot is spare for the next (NOTE [ The held batch let off ])."""
        counts = list(self.outstanding)
        if spare_slot and self.held is not None:
            counts[self.held] -= 1
        return counts

    def has_room(self, spare_slot: bool = False) -> bool:
        counts = self._counts(spare_slot)
        if self.balanced:
            return sum(counts) < self.prefetch_factor * self.num_workers
        return min(counts) < self.prefetch_factor

    def owner(self, size: int, spare_slot: bool = False) -> int:
        """The worker the next batch (of ``size`` samples) counts against: the next
        in turn with room or, balanced, the next in turn unless another is expected
        to finish the batch sooner by more than TURN_MARGIN batches.  ``spare_slot``
        as has_room was told."""
        order = [(self._turn + i) % self.num_workers for i in range(self.num_workers)]
        if self.balanced:
            fastest, pace = self._paces()
            queued = self.queued
            finish = {w: (queued[w] + size) * pace[w] for w in order}
            owner, sooner = order[0], min(order, key=finish.__getitem__)
            if finish[owner] - finish[sooner] > TURN_MARGIN * size * fastest:
                owner = sooner
            # An idle worker passed over learns nothing new about its speed: its pace
            # drifts back towards the fastest, so a slow spell is not held against it
            # for good.
            for w in order:
                if w != owner and not queued[w] and self.pace[w]:
                    self.pace[w] += PACE_WEIGHT * (fastest - self.pace[w])
        else:
            counts = self._counts(spare_slot)
            owner = next((w for w in order if counts[w] < self.prefetch_factor), -1)
            if owner < 0:
                raise RuntimeError("a batch was sent with every worker busy")
        self._turn = (owner + 1) % self.num_workers
        return owner

    def counted(self, worker: int) -> None:
        """A batch now counts against ``worker``'s quota."""
        self.outstanding[worker] += 1

    def finished(self, worker: int) -> None:
        """A batch counted against ``worker`` no longer does."""
        self.outstanding[worker] -= 1

    def sent(self, worker: int, samples: int) -> None:
        if not self._tasks[worker]:
            self._began[worker] = self._clock()
        self._tasks[worker].append(samples)

    def returned(self, worker: int, samples: int, seconds: float) -> None:
        """``worker`` finished ``samples`` in ``seconds``; folded into its pace as a
        moving average (a worker's speed changes as the machine's load does)."""
        if self._tasks[worker]:  # a worker works through its queue in order
            self._tasks[worker].popleft()
        self._began[worker] = self._clock()  # and begins the next task now
        if samples and seconds > 0:
            pace, old = seconds / samples, self.pace[worker]
            self.pace[worker] = pace if old == 0 else old + PACE_WEIGHT * (pace - old)

    def forget_queues(self) -> None:
        """The workers are gone: nothing of theirs is queued any more."""
        self._tasks = [collections.deque() for _ in range(self.num_workers)]

    def backlog(self) -> tuple[list[float], list[float]]:
        """(seconds until each worker is through what it has been sent, its seconds
        per sample): NOTE [ The last batches spread out ] in pool.py.  Before any pace
        is known, samples stand for seconds."""
        if not any(self.pace):
            return [float(q) for q in self.queued], [1.0] * self.num_workers
        _, pace = self._paces()
        now = self._clock()
        ready = []
        for w, tasks in enumerate(self._tasks):
            if not tasks:
                ready.append(0.0)
                continue
            current = max(0.0, tasks[0] * pace[w] - (now - self._began[w]))
            ready.append(current + (sum(tasks) - tasks[0]) * pace[w])
        return ready, pace


def spread(size: int, ready: list[float], pace: list[float]) -> list[int]:
    """Samples per worker for a batch of ``size``, worker w being through its queue
    in ready[w] seconds and taking pace[w] seconds per sample: each sample to the
    worker that would finish it first, which makes the last finish as early as any
    split can (NOTE [ The last batches spread out ] in pool.py)."""
    parts = [0] * len(ready)
    for _ in range(size):
        w = min(range(len(ready)), key=lambda w: (ready[w] + (parts[w] + 1) * pace[w], w))
        parts[w] += 1
    return parts
