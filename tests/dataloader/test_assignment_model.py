"""The worker-assignment rules (dataloader/assign.py) run in a discrete-event model of
the pool: workers of injected paces, a fake clock, batches handed over in order to a
consumer that takes each at once.  No processes and no wall clock, so the outcome is
the same on any machine (the live versions are marked slow)."""
from __future__ import annotations

import collections

import pytest

from jpegloader.dataloader.assign import Assignment, spread


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_model(paces: list[float], batches: int, prefetch: int, balanced: bool,
              let_off: bool = True, size: int = 4) -> dict:
    """Runs ``batches`` batches of ``size`` samples through workers taking paces[w]
    seconds per sample.  Returns each batch's owner and the batches in flight (sent,
    not handed over; the held one not counted) after every send."""
    n = len(paces)
    clock = FakeClock()
    assign = Assignment(n, prefetch, balanced, clock=clock)
    slots = prefetch * n + 1  # BatchRing.slots_for
    queues: list[collections.deque] = [collections.deque() for _ in range(n)]
    running: list[int | None] = [None] * n
    busy_until = [0.0] * n
    owner, finished, in_flight = {}, set(), []
    sent = handed = 0
    held = None
    while handed < batches:
        while sent < batches:
            spare = let_off and (sent - handed) + (held is not None) < slots
            if not assign.has_room(spare_slot=spare):
                break
            w = assign.owner(size, spare_slot=spare and not assign.has_room())
            owner[sent] = w
            assign.counted(w)
            assign.sent(w, size)
            queues[w].append(sent)
            sent += 1
            in_flight.append(sent - handed)
        for w in range(n):
            if running[w] is None and queues[w]:
                running[w] = queues[w].popleft()
                busy_until[w] = max(busy_until[w], clock.now) + size * paces[w]
        w = min((w for w in range(n) if running[w] is not None), key=busy_until.__getitem__)
        clock.now, b, running[w] = busy_until[w], running[w], None
        finished.add(b)
        assign.returned(w, size, size * paces[w])
        while handed in finished:  # in order; the previous batch is let go
            if held is not None:
                assign.finished(owner[held])
            held, handed = handed, handed + 1
            assign.held = owner[held]
    return {"owner": owner, "in_flight": in_flight, "seconds": clock.now}


def test_a_slow_worker_gets_fewer_batches():
    r = run_model([3.0, 1.0], batches=60, prefetch=2, balanced=True)
    count = collections.Counter(r["owner"].values())
    assert count[1] >= 2 * count[0], count
    # and the epoch takes less than round-robin's, which runs at the slow worker's pace
    rr = run_model([3.0, 1.0], batches=60, prefetch=2, balanced=False)
    assert collections.Counter(rr["owner"].values()) == {0: 30, 1: 30}
    assert r["seconds"] < 0.8 * rr["seconds"]


def test_equal_workers_take_turns():
    r = run_model([1.0, 1.0], batches=40, prefetch=2, balanced=True)
    assert [r["owner"][k] for k in range(40)] == [k % 2 for k in range(40)]


@pytest.mark.parametrize("paces", [[1.0, 1.0], [3.0, 1.0], [1.0, 2.0, 1.5, 1.0]])
@pytest.mark.parametrize("prefetch", [1, 2, 3])
def test_the_quota_is_shared_and_never_exceeded(paces, prefetch):
    """As many batches in flight as torch keeps (prefetch x workers, besides the one the
    user holds), never more, however they fall on the workers."""
    r = run_model(paces, batches=60, prefetch=prefetch, balanced=True)
    assert max(r["in_flight"]) == prefetch * len(paces), r["in_flight"]


def test_the_held_batch_let_off_keeps_both_workers_busy():
    """NOTE [ The held batch let off ]: with prefetch_factor=1 both workers have a batch
    while the user holds a third; counted against its worker, only one would."""
    for balanced in (True, False):
        off = run_model([1.0, 1.0], batches=24, prefetch=1, balanced=balanced)
        held = run_model([1.0, 1.0], batches=24, prefetch=1, balanced=balanced,
                         let_off=False)
        assert off["in_flight"].count(2) >= 20, off["in_flight"]
        assert held["seconds"] > 1.3 * off["seconds"]


def test_round_robin_with_user_code_whatever_the_paces():
    r = run_model([3.0, 1.0], batches=24, prefetch=2, balanced=False)
    assert r["owner"] == {k: k % 2 for k in range(24)}


def test_the_last_batch_is_spread_so_the_workers_finish_together():
    """NOTE [ The last batches spread out ]: the backlog in seconds, from the fake clock
    and what each worker has done of its current task."""
    clock = FakeClock()
    a = Assignment(2, 2, balanced=True, clock=clock)
    a.pace = [2.0, 1.0]
    a.sent(0, 10)        # worker 0 began 10 samples at t=0: 20 s of work
    clock.now = 5.0      # 15 s left for it; worker 1 is idle
    ready, pace = a.backlog()
    assert ready == [15.0, 0.0] and pace == [2.0, 1.0]
    parts = spread(30, ready, pace)
    finish = [ready[w] + parts[w] * pace[w] for w in range(2)]
    assert sum(parts) == 30 and abs(finish[0] - finish[1]) <= max(pace)
