"""How batches are shared out over the workers (NOTE [ Batches to the least loaded
worker ] and NOTE [ The held batch let off ] in dataloader/assign.py).

``model``: a discrete-event model of the pool (workers of given speeds, batch times
+-15%, the quota counting the batch the user holds, batches handed over in order, a
consumer that takes each at once), run with torch's round-robin, with the pool's
rule, and with the rule and the held batch let off; prints each as a fraction of the
ideal (all workers busy all the time).

``live``: jpegloader on a real ImageFolder, epochs alternating between the pool's rule
and round-robin (``--compare balance``), between the held batch let off its quota
and counted (``--compare held``, NOTE [ The held batch let off ]), or between the
epoch's last batches spread out by the workers' backlogs in seconds and by their
queued samples (``--compare spread``, NOTE [ The last batches spread out ] in
pool.py), the same loader settings otherwise; ``--hog`` runs a busy loop at nice 5 on
CPU 0 and pins worker k to CPU k, so that worker 0 is slower.

    python benchmarks/worker_balance.py model
    python benchmarks/worker_balance.py live --data DIR [--recipe eval] [--pairs 6]
        [--compare balance|held|spread] [--prefetch-factor 2] [--hog]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

from jpegloader.dataloader import pool as pool_module
from jpegloader.dataloader.assign import Assignment


def simulate(balanced: bool, speeds: list[float], batches: int = 400, prefetch: int = 2,
             noise: float = 0.15, seed: int = 0, let_off: bool = False) -> float:
    """Fraction of the ideal throughput one run of the model reaches; ``let_off``:
    NOTE [ The held batch let off ] (the consumer drops each batch as it takes the
    next, so a slot is spare whenever fewer than the ring's are in use)."""
    rng = random.Random(seed)
    n = len(speeds)
    cost = [1 + rng.uniform(-noise, noise) for _ in range(batches)]
    assign = Assignment(n, prefetch, balanced)  # the pool's own rule
    slots = prefetch * n + 1  # BatchRing.slots_for
    queues: list[list[int]] = [[] for _ in range(n)]
    running: list[int | None] = [None] * n
    busy_until = [0.0] * n
    owner, finished = {}, {}
    now, sent, handed, held = 0.0, 0, 0, None
    while handed < batches:
        while sent < batches:
            spare = let_off and (sent - handed) + (held is not None) < slots
            if not assign.has_room(spare_slot=spare):
                break
            w = assign.owner(1, spare_slot=spare and not assign.has_room())
            owner[sent] = w
            assign.counted(w)
            assign.sent(w, 1)
            queues[w].append(sent)
            sent += 1
        for w in range(n):
            if running[w] is None and queues[w]:
                running[w] = queues[w].pop(0)
                busy_until[w] = max(busy_until[w], now) + cost[running[w]] / speeds[w]
        w = min((w for w in range(n) if running[w] is not None), key=busy_until.__getitem__)
        now, b, running[w] = busy_until[w], running[w], None
        finished[b] = now
        assign.returned(w, 1, cost[b] / speeds[w] * (1 + rng.uniform(-0.05, 0.05)))
        while handed in finished:  # handed over in order; the one held is released
            if held is not None:
                assign.finished(owner[held])
            held, handed = handed, handed + 1
            assign.held = owner[held]
    return sum(cost) / sum(speeds) / now


def model(_args) -> None:
    print("fraction of the ideal, mean of 30 runs: round-robin -> the pool's rule -> "
          "the rule with the held batch let off")
    for speeds in ([1, 1], [0.9, 1], [0.75, 1], [0.5, 1], [1, 1, 1, 1], [0.75, 1, 1, 1]):
        for prefetch in (1, 2, 4):
            rr, bal, off = (statistics.mean(simulate(b, speeds, prefetch=prefetch, seed=s,
                                                     let_off=o) for s in range(30))
                            for b, o in ((False, False), (True, False), (True, True)))
            print(f"  speeds {speeds!s:18} prefetch_factor {prefetch}: {rr:.3f} -> {bal:.3f}"
                  f" -> {off:.3f}")


def live(args) -> None:
    import torchvision.transforms as T
    from torchvision import datasets

    import jpegloader

    norm = [T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]
    transform = (T.Compose([T.Resize(256), T.CenterCrop(224), *norm])
                 if args.pipeline == "eval" else
                 T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), *norm]))
    dataset = datasets.ImageFolder(args.data, transform)
    rules = RULES[args.compare]
    loaders = {rule: jpegloader.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                           num_workers=args.workers,
                                           prefetch_factor=args.prefetch_factor,
                                           worker_init_fn=_pin if args.hog else None)
               for rule in rules}
    make_pool = pool_module.WorkerPool.__init__

    def epoch(rule: str) -> float:
        def init(self, *a, **k):
            make_pool(self, *a, **k)
            self.assign.balanced = self.assign.balanced and rule != "round-robin"
            if rule == "held counted":
                self.has_room = self.assign.has_room  # never let off
            if rule == "spread by samples":
                a = self.assign
                a.backlog = lambda: ([float(q) for q in a.queued], [1.0] * a.num_workers)
        pool_module.WorkerPool.__init__ = init
        start, n = time.perf_counter(), 0
        for _, labels in loaders[rule]:
            n += len(labels)
        return n / (time.perf_counter() - start)

    hog = subprocess.Popen(["taskset", "-c", "0", "nice", "-n", "5", sys.executable, "-c",
                            "while True: pass"]) if args.hog else None
    try:
        for rule in loaders:  # warm-up
            epoch(rule)
        speed = {rule: [] for rule in loaders}
        for p in range(args.pairs):
            for rule in (list(loaders) if p % 2 == 0 else list(loaders)[::-1]):
                speed[rule].append(epoch(rule))
            print(f"pair {p}: " + ", ".join(f"{r} {v[-1]:.0f} img/s" for r, v in speed.items()),
                  flush=True)
    finally:
        pool_module.WorkerPool.__init__ = make_pool
        if hog is not None:
            hog.kill()
    new, old = rules
    ratios = [a / b for a, b in zip(speed[new], speed[old])]
    print(f"median: {new} {statistics.median(speed[new]):.0f}, {old} "
          f"{statistics.median(speed[old]):.0f} img/s; ratio of pairs "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")


#: What ``live --compare`` alternates: the pool's way, then the one it replaced.
RULES = {"balance": ("balanced", "round-robin"),     # NOTE [ Batches to the least loaded worker ]
         "held": ("held let off", "held counted"),  # NOTE [ The held batch let off ]
         # NOTE [ The last batches spread out ] (pool.py)
         "spread": ("spread by time", "spread by samples")}


def _pin(worker_id: int) -> None:
    os.sched_setaffinity(0, {worker_id % os.cpu_count()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("model").set_defaults(run=model)
    p = sub.add_parser("live")
    p.add_argument("--data", required=True)
    p.add_argument("--recipe", "--pipeline", dest="pipeline", choices=("eval", "train"),
                   default="eval")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--prefetch-factor", type=int, default=2)
    p.add_argument("--compare", choices=tuple(RULES), default="balance")
    p.add_argument("--hog", action="store_true")
    p.set_defaults(run=live)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
