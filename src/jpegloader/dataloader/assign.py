"""Which worker decodes which batch: the quota of batches outstanding, the
samples queued at each worker and each worker's pace.  No processes here; the
pool (pool.py) asks and reports.

NOTE [ Batches to the least loaded worker ]
Round-robin with a quota per worker runs at the pace of the slowest worker:
once a fast worker has finished its ``prefetch_factor`` batches it waits,
since its quota is freed only as batches are handed over in order.  Workers
are not always equally fast.  One sharing its core with another program, or
running on a busier core of a shared machine, was measured taking 0.91 CPU-ms
per image while the other took 0.69; the faster one then sat idle for 0.43 s
of a 1.8 s epoch.

So when nothing of the user's runs in the workers
(``BatchDecoder.runs_user_code``), and which worker decodes a batch therefore
cannot change it, the quota is shared (``balanced``): as many batches are
outstanding as before (``prefetch_factor`` times ``num_workers``, the ring's
slots), and each batch goes to the next worker in turn unless another is
expected to finish it sooner by more than half a batch (``TURN_MARGIN``).
The expectation is the worker's queued samples plus the batch, times its
pace: its recent seconds per sample, a moving average of what the workers
report.  A slow worker then gets fewer batches instead of holding the others
back.

The margin matters.  Without it ("whoever finishes first"), two equally fast
workers' paces differ by noise, one of them gets two batches in a row, the
other finishes its own out of order and waits for a slot: 6-7% slower,
measured (workers busy 89-95% of the time against 98%).  A simulation of the
pool (two workers, batch times +-15%) put round-robin at 99% of the ideal
with equal workers, 86% with one at 3/4 speed and 67% at 1/2; with the margin
the same 99%, 95% and 99.5%.  Measured by alternating epochs
(``benchmarks/worker_balance.py live``, eval, 2,000 files), with a busy loop
at nice 5 on one worker's core: 1,056 -> 1,174 img/s (pairs 1.05-1.13); with
none, 0.995 (0.965-1.010), noise.  ``worker_balance.py model`` runs the model
on this class.

An idle worker that is passed over learns nothing new of its speed, so its
pace drifts back towards the fastest and it is tried again: a slow spell is
not held against it for good.  With user code in the workers, batch k goes to
worker k mod ``num_workers`` as in torch, since that code may depend on which
worker runs it (``get_worker_info``, per-worker seeds).

NOTE [ The held batch let off ]
The batch the user holds counts against its worker's quota until the next one
is yielded (NOTE [ A worker's quota includes the batch the user holds ] in
epoch.py), so that ``prefetch_factor`` x ``num_workers`` + 1 slots always do.
But torch does not count it: it keeps ``prefetch_factor`` x ``num_workers``
batches in flight besides the one the user holds, and counting it left one
fewer decoding.  The batches in flight are handed over in order, so a worker
that finished its last one sat idle until the oldest, at another worker, came
in (seen as 10-45 ms gaps in a 950 ms epoch).  With ``prefetch_factor=1``
only one worker at a time had a batch.  So the held batch is let off its
quota whenever the ring has a slot spare for the next batch (the user has
dropped the previous one, as training loops do): as many batches in flight as
torch keeps, in no more slots than before.  The epoch looks for such a slot
when ``next`` is called and whenever a result comes in.  Measured by
alternating epochs (``benchmarks/worker_balance.py live --compare held``,
eval, 2,000 files, two workers): ``prefetch_factor=1`` 778 -> 1,424 img/s;
with the default 2, 1.016 on the original-encoding files (pairs 1.000-1.035),
1.018 with a busy loop on one worker's core (0.974-1.080), and 1.001 on
imagenet-sample (0.974-1.022, noise).
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
        per sample): NOTE [ The last batches shared out ] in pool.py.  Before any pace
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
    split can (NOTE [ The last batches shared out ] in pool.py)."""
    parts = [0] * len(ready)
    for _ in range(size):
        w = min(range(len(ready)), key=lambda w: (ready[w] + (parts[w] + 1) * pace[w], w))
        parts[w] += 1
    return parts
