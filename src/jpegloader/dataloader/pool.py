"""Worker processes, their queues and the ring: the multi-process worker pool.

One pool serves one epoch, or every epoch with persistent_workers.  Batches
go to the workers round-robin with at most ``prefetch_factor`` outstanding per
worker, as torch does, or, when no user code runs in the workers, round-robin
unless a worker falls behind (NOTE [ Batches to the least loaded worker ] in
assign.py).  Results are re-ordered so batches come out in the sampler's
order, and results from an abandoned epoch are drained and their slots reused.

NOTE [ The last batches spread out ]
Round-robin leaves an epoch's end uneven: one worker still decodes while the
other idles.  When the decoder allows it (``BatchDecoder.splittable``: no user
code in the workers), the epoch's last ``num_workers`` batches are each cut into
parts, one per worker, sized so that the workers finish together (a worker's
backlog counted in seconds: its queued samples times its pace, less what it
has done of its current task), each part decoded into its own rows of the one
slot.  It counts against one worker's quota (``Assignment.owner``), so no more
slots are taken; the batch is handed over when all its parts are in, and the
draws do not change (each sample's come from its own index's stream).
Measured: docs/experiments.md.

NOTE [ Pool shutdown ]
``shutdown`` is idempotent and registered with weakref.finalize: it runs when the
pool is dropped and at interpreter exit.  It asks workers to stop, waits
briefly, then terminates and finally kills stragglers: no worker outlives its
pool.  At an epoch's end ``stop`` runs it on a reaper thread, so the workers'
teardown does not delay the training loop.  When the loader's timeout passes,
``abandon`` kills the workers at once and reaps them on that thread, so the
error comes when the user asked for it.  A pool kept between epochs stops
itself after ``retire_after``'s seconds unless ``reclaim`` takes it back.
"""
from __future__ import annotations

import dataclasses
import queue
import signal
import threading
import time
import weakref

from ..pipelines.contract import BatchDecoder, BatchReport
from .assign import Assignment, spread
from .delivery import Stopped
from .ring import BatchRing, Slot
from .workers import Result, Task, worker_loop

POLL_SECONDS = 1.0  # how often a waiting main process checks that workers live
STOP_POLL = 0.05  # how often the pin thread, waiting for a batch, checks it may go on


class WorkerDied(RuntimeError):
    pass


@dataclasses.dataclass
class _Flight:
    """A batch being decoded: its slot, the worker whose quota it counts against,
    and its parts (worker, first row, samples)."""

    slot: Slot
    owner: int
    parts: list[tuple[int, int, int]]
    results: dict[int, Result] = dataclasses.field(default_factory=dict)  # worker -> part's


def _joined(flight: _Flight) -> Result:
    """One result for a batch decoded in parts: a failed part's error, or the parts'
    reports summed, with samples a part dropped (on_error="skip") closed up.  The
    parts are in row order, as submit made them."""
    results = [flight.results[w] for w, _, _ in flight.parts]
    first = results[0]
    failed = next((r for r in results if not isinstance(r.report, BatchReport)), None)
    if failed is not None:
        return dataclasses.replace(failed, worker_id=flight.owner)
    report = BatchReport()
    for r, (_, start, _) in zip(results, flight.parts):
        part = r.report
        if part.count and report.count != start:
            for t in flight.slot.tensors:
                t[report.count:report.count + part.count] = t[start:start + part.count].clone()
        report.count += part.count
        report.add(part)
    return dataclasses.replace(first, report=report, worker_id=flight.owner)


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
            return f"killed by signal {sig.name} ({signal.strsignal(sig)})"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _shutdown(workers, task_queues, result_queue) -> None:
    for q in task_queues:
        try:
            q.put(None)
        except Exception:
            pass
    deadline = time.monotonic() + 5.0
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=2.0)
        if w.is_alive():
            w.kill()
            w.join()
    for q in (*task_queues, result_queue):
        q.cancel_join_thread()
        q.close()


class WorkerPool:
    def __init__(self, decoder: BatchDecoder, ring: BatchRing, *,
                 num_workers: int, prefetch_factor: int, context, base_seed: int,
                 worker_init_fn, dataset):
        self.decoder = decoder  # what the workers run, forked with them
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        # One ring for all workers, of as many slots as torch keeps batches in flight
        # (BatchRing.slots_for).  It outlives the pool: its pages stay allocated from
        # epoch to epoch.
        self.ring = ring
        # which worker gets each batch: NOTE [ Batches to the least loaded worker ]
        self.assign = Assignment(num_workers, prefetch_factor,
                                 balanced=num_workers > 1 and not decoder.runs_user_code)
        self._seen: list[dict[int, int]] = [{} for _ in range(num_workers)]  # slot -> generation
        self._in_flight: dict[tuple[int, int], _Flight] = {}
        self._next_check = 0.0  # when receive() next checks that the workers live
        self.result_queue = context.Queue()
        self.task_queues = [context.Queue() for _ in range(num_workers)]
        self.workers = []
        # The slots go with the workers' start arguments (inherited for free under
        # fork) rather than one by one through their queues, which costs a descriptor
        # hand-over per tensor at every epoch start.
        slots = ring.preallocate()
        initial = {slot.id: (slot.generation, slot.tensors) for slot in slots}
        for wid in range(num_workers):
            self._seen[wid] = {slot.id: slot.generation for slot in slots}
            w = context.Process(
                target=worker_loop, name=f"jpegloader-worker-{wid}", daemon=True,
                args=(wid, num_workers, decoder, self.task_queues[wid], self.result_queue,
                      base_seed + wid, worker_init_fn, dataset, initial))
            w.start()
            self.workers.append(w)
        self._reaper: threading.Thread | None = None
        self._finalizer = weakref.finalize(self, _shutdown, self.workers, self.task_queues,
                                           self.result_queue)
        self._idle_lock = threading.Lock()
        self._idle_timer: threading.Timer | None = None

    @property
    def alive(self) -> bool:
        return self._finalizer.alive

    def stop(self) -> None:
        """Shuts the workers down on a background thread (see NOTE [ Pool
        shutdown ]): the end of an epoch need not wait for processes to tear down.
        ``shutdown`` waits for that thread."""
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._finalizer, daemon=True,
                                            name="jpegloader-reaper")
            self._reaper.start()

    def retire_after(self, seconds: float) -> None:
        """Idle now: stop the workers in ``seconds`` unless ``reclaim`` comes first."""
        with self._idle_lock:
            timer = threading.Timer(seconds, self._retire)
            timer.daemon = True
            timer.name = "jpegloader-idle-workers"
            self._idle_timer = timer
            timer.start()

    def _retire(self) -> None:
        with self._idle_lock:
            if self._idle_timer is None:  # reclaimed meanwhile
                return
            self._idle_timer = None
        self.stop()

    def _cancel_retirement(self) -> bool:
        """Stops a pending retire_after; True when one was pending."""
        with self._idle_lock:
            timer, self._idle_timer = self._idle_timer, None
        if timer is None:
            return False
        timer.cancel()
        return True

    def reclaim(self) -> bool:
        """Takes an idle pool back for a new epoch: True when it has not retired
        and every worker still runs (else it is shut down)."""
        if not self._cancel_retirement():
            return False
        if self.alive and all(w.is_alive() for w in self.workers):
            return True
        self.shutdown()
        return False

    def shutdown(self) -> None:
        self._cancel_retirement()
        self._finalizer()
        if self._reaper is not None and self._reaper is not threading.current_thread():
            self._reaper.join()
        self._forget_in_flight()

    def abandon(self) -> None:
        """A worker is stuck (the loader's timeout passed): every worker is killed now
        (SIGKILL: a stopped process ignores shutdown's polite requests) and reaped in
        the background (NOTE [ Pool shutdown ])."""
        self._cancel_retirement()
        for w in self.workers:
            if w.is_alive():
                w.kill()
        self.stop()
        self._forget_in_flight()

    def _forget_in_flight(self) -> None:
        # Slots a dead worker may have been writing are not trusted again.
        for flight in self._in_flight.values():
            self.ring.discard(flight.slot)
        self._in_flight.clear()
        self.assign.forget_queues()

    def release(self, slot: Slot) -> None:
        """The slot's contents were copied out (or dropped): reusable at once."""
        self.ring.release(slot)

    def lend(self, slot: Slot, count: int):
        """The slot's first ``count`` samples as tensors for the user, zero-copy."""
        return self.ring.lend(slot, count)

    @property
    def idle(self) -> bool:
        """No batch is being worked on."""
        return not self._in_flight

    def has_room(self) -> bool:
        """Room for another batch: within the quota, or past it by the batch the user
        holds when the ring has a slot spare (NOTE [ The held batch let off ])."""
        return self.assign.has_room() or (self.assign.has_room(spare_slot=True)
                                          and self.ring.has_spare())

    def submit(self, epoch: int, batch_no: int, indices: list[int], seed: int,
               spread_out: bool = False, pinned: bool = False, earlier=None) -> None:
        """Sends a batch to a worker (``Assignment.owner``), or, with ``spread_out`` and a
        decoder that allows it, in parts to the workers (NOTE [ The last batches
        spread out ]); ``pinned``: the pin thread pins it (Task.pinned); ``earlier``:
        the samples before it that it reads (Task.earlier)."""
        owner = self.assign.owner(len(indices), spare_slot=not self.assign.has_room())
        shares = []
        if spread_out and self.num_workers > 1 and self.decoder.splittable and earlier is None:
            parts = spread(len(indices), *self.assign.backlog())
            shares = [(w, n) for w, n in enumerate(parts) if n]
        shares = shares or [(owner, len(indices))]  # an empty batch still gets its report
        slot = self.ring.acquire(len(indices))
        # The batch counts against its owner's quota alone, however many share it:
        # as many slots as before are ever taken.
        self.assign.counted(owner)
        flight = _Flight(slot, owner, [])
        start = 0
        for wid, n in shares:
            fresh = self._seen[wid].get(slot.id) != slot.generation
            self._seen[wid][slot.id] = slot.generation
            self.task_queues[wid].put(Task(epoch, batch_no, slot.id, slot.generation,
                                           list(indices[start:start + n]), seed,
                                           slot.tensors if fresh else None, start,
                                           pinned, earlier))
            self.assign.sent(wid, n)
            flight.parts.append((wid, start, n))
            start += n
        self._in_flight[(epoch, batch_no)] = flight

    def receive(self, timeout: float, stop=None) -> tuple[Result, Slot | None]:
        """The next batch's result from any worker (a batch in parts when its last
        part is in).  Raises TimeoutError after ``timeout`` seconds (0 waits
        forever), WorkerDied when a worker exits, and delivery.Stopped once the
        event ``stop`` is set (checked every STOP_POLL seconds)."""
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while True:
            if stop is not None and stop.is_set():
                raise Stopped
            # Every POLL_SECONDS, results arriving or not: while the other workers
            # deliver, a crashed one's batch would otherwise be noticed only once they
            # have filled their quotas and the queue runs dry.  (A worker that returned
            # sent its reason first, an init failure: the queue says it.)
            now = time.monotonic()
            if now >= self._next_check:
                self._next_check = now + POLL_SECONDS
                self._check_workers(crashed_only=True)
            wait = POLL_SECONDS if deadline is None else \
                min(POLL_SECONDS, max(0.0, deadline - now))
            if stop is not None:
                wait = min(wait, STOP_POLL)
            try:
                result: Result = self.result_queue.get(timeout=wait)
            except queue.Empty:
                now = time.monotonic()
                if stop is not None and now < self._next_check and \
                        (deadline is None or now < deadline):
                    continue  # a short wait for the stop event: no reason to look yet
                self._check_workers()
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"DataLoader timed out after {timeout} seconds") from None
                continue
            key = (result.epoch, result.batch_no)
            flight = self._in_flight.get(key)
            if flight is None:  # a failed init, or a batch given up on
                return result, None
            flight.results[result.worker_id] = result
            self.assign.returned(result.worker_id,
                                 next(n for w, _, n in flight.parts if w == result.worker_id),
                                 result.seconds)
            if len(flight.results) < len(flight.parts):
                continue
            del self._in_flight[key]
            if len(flight.parts) == 1:
                return dataclasses.replace(result, worker_id=flight.owner), flight.slot
            return _joined(flight), flight.slot

    def finished(self, result: Result) -> None:
        """The batch has been handed over (or dropped): its worker may get another.
        Counting until then, not until it arrives, bounds what waits for
        re-ordering, as torch's loader does."""
        if result.epoch >= 0:
            self.assign.finished(result.worker_id)

    def holding(self, result: Result | None) -> None:
        """The user now holds this batch (None: no batch), still counted against its
        worker until finished (NOTE [ The held batch let off ])."""
        self.assign.held = result.worker_id if result is not None and result.epoch >= 0 \
            else None

    def _check_workers(self, crashed_only: bool = False) -> None:
        dead = [w for w in self.workers if not w.is_alive()
                and not (crashed_only and w.exitcode == 0)]
        if dead:
            # torch's wording first, so code matching torch's message keeps working.
            pids = ", ".join(str(w.pid) for w in dead)
            how = "; ".join(f"{w.name} (pid {w.pid}) {_how_it_ended(w.exitcode)}" for w in dead)
            hint = ""
            if any(w.exitcode == -signal.SIGKILL for w in dead):
                hint = (" SIGKILL often comes from the out-of-memory killer (see dmesg): "
                        "lower num_workers, batch_size or prefetch_factor.")
            self.shutdown()
            raise WorkerDied(f"DataLoader worker (pid(s) {pids}) exited unexpectedly: "
                             f"{how}.{hint}")
