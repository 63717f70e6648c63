"""jpegloader.bench.memory: each shared-memory file counted once, at most at its
size, however the processes are read (NOTE [ A shared file counted once ])."""
from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys

import pytest
import torch

from jpegloader.bench import memory as bench_memory

MIB = 1024  # KiB

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc/PID/smaps (Linux)")


def test_a_shared_files_pss_is_capped_at_its_size():
    # A 36.75 MiB slot seen at 45.8 MiB summed over processes read one by one.
    shared = {"slot": (46_888, 37_632), "label": (4, 4), "unknown size": (100, None)}
    assert bench_memory.combine(1_000, shared) == 1_000 + 37_632 + 4 + 100
    assert bench_memory.combine(1_000, {"slot": (20_000, 37_632)}) == 21_000


@pytest.mark.skipif(not os.access("/proc/self/map_files", os.R_OK),
                    reason="/proc/PID/map_files unreadable here: shared files' sizes unknown")
def test_a_shared_tensor_is_counted_once_however_often_it_is_read():
    assert bench_memory.measure([]) == (0, 0)

    def listed_twice_less_twice_once():
        # The process's own memory moves between two reads (the allocator returning
        # pages, an earlier test's threads: 8 MiB once in a full run), which counts
        # twice here: the median of five pairs of reads.
        gc.collect()
        runs = []
        for _ in range(5):
            once = bench_memory.measure([os.getpid()])
            twice = bench_memory.measure([os.getpid()] * 2)
            runs.append([b - 2 * a for a, b in zip(once, twice)])
        return [statistics.median(column) for column in zip(*runs)], once

    # Shared memory the process held before (an earlier test's) is counted once too:
    # the slot's share is the change.
    before, _ = listed_twice_less_twice_once()
    slot = torch.empty(16 << 20, dtype=torch.float32).share_memory_()  # 64 MiB
    slot.fill_(1.0)  # every page resident and mapped here
    after, once = listed_twice_less_twice_once()
    # Listed twice, everything else is counted twice but the slot once: as if a
    # second process had mapped it between two reads.
    for a, b in zip(after, before):
        assert a - b == pytest.approx(-64 * MIB, abs=8 * MIB)
    assert min(once) >= 64 * MIB
    del slot


@pytest.mark.skipif(not os.access("/proc/self/map_files", os.R_OK),
                    reason="/proc/PID/map_files unreadable here: shared files' sizes unknown")
def test_the_held_memory_is_told_by_where_it_is():
    # a worker's own pages, the main process's, and a shared file: each in its part
    child = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                              "pages = bytearray(64 << 20)\n"
                              "for k in range(0, len(pages), 4096): pages[k] = 1\n"
                              "print('ready', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        before: dict = {}
        bench_memory.measure([os.getpid()], before)
        slot = torch.empty(16 << 20, dtype=torch.float32).share_memory_()  # 64 MiB
        slot.fill_(1.0)
        parts: dict = {}
        _, held = bench_memory.measure([os.getpid(), child.pid], parts)
        assert parts["main"] + parts["workers"] + parts["shared"] == held
        assert parts["workers"] >= 64 * MIB
        assert parts["shared"] - before["shared"] == pytest.approx(64 * MIB, abs=MIB)
        assert before["workers"] == 0
        del slot
    finally:
        child.kill()
        child.wait()


def test_a_loaders_figures_say_where_its_memory_is():
    m = {"main_mib": 520.4, "workers_mib": 220, "shared_mib": 448, "before_mib": 760,
         "shmem_mib": 452}
    assert bench_memory.where_held(m) == ("main 520, workers 220, shared memory 448, less 760 "
                                          "held before the loader; /dev/shm reserved 452 MiB")
