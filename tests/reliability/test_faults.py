"""Fault injection: killed workers, interrupts, a killed parent, files changing
under the loader, hostile files, a small /dev/shm, errors in user code and
on_error="skip".

Every scenario ends with the checks in ``_clean``: no hang (each test is
bounded), no worker left alive, no /dev/shm segment left behind.  Scenarios
that need a whole training process run ``tests/reliability/child.py`` in a
subprocess of its own session, so signals and exits hit only it.
"""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import UnidentifiedImageError
from torchvision import datasets

import jpegloader
from jpegloader._shared_pages import can_reserve
from jpegloader.dataloader.ring import SharedMemoryError
from jpegloader.dataloader.shared_budget import SharedBudget
from jpegloader.pipelines import CLASSIFICATION, DecodeOptions
from tests.conftest import (
    REPO,
    alive,
    can_mount_private_shm,
    eval_transform,
    shm_entries,
    to_255,
    train_transform,
    wait_gone,
    worker_pids,
)
from tests.hostile_jpegs import (
    byte_flips,
    photo_like,
    truncations,
    with_app_segments,
    with_dimensions,
    with_repeated_last_scan,
)


@pytest.fixture
def clean():
    """Checks, after the test, that no worker and no /dev/shm segment is left."""
    before = shm_entries()
    yield
    gc.collect()
    deadline = time.monotonic() + 10
    while worker_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not worker_pids(), "a worker outlived the scenario"
    assert shm_entries() <= before, f"leaked /dev/shm segments: {shm_entries() - before}"


def _child(mode: str, root: Path, *args: str, wrap: list[str] = ()) -> subprocess.Popen:
    return subprocess.Popen([*wrap, sys.executable, "-m", "tests.reliability.child", mode,
                             str(root), *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# -- 1. a worker killed mid-epoch ----------------------------------------------------------
@pytest.mark.parametrize("timeout", [0, 30])
def test_worker_killed_mid_epoch_is_named_with_its_pid(small_folder, clean, timeout):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, timeout=timeout)
    it = iter(loader)
    next(it)
    victim = loader._workers()[1].pid
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        for _ in it:
            pass
    elapsed = time.monotonic() - start
    assert f"DataLoader worker (pid(s) {victim}) exited unexpectedly" in str(info.value)
    assert "SIGKILL" in str(info.value)
    assert elapsed < 5, f"took {elapsed:.1f} s to notice"


@pytest.mark.parametrize("persistent", [False, True])
def test_timeout_fires_on_time_when_a_worker_is_stopped(small_folder, clean, persistent):
    """A stopped worker (SIGSTOP; a hung network read looks the same) ignores the
    polite shutdown: the timeout error still comes when asked for, and the workers
    are reaped after it (the clean fixture checks none is left)."""
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, timeout=2,
                                   persistent_workers=persistent)
    it = iter(loader)
    next(it)
    victims = [w.pid for w in loader._workers()]
    for pid in victims:
        os.kill(pid, signal.SIGSTOP)
    start = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match="DataLoader timed out after 2 seconds"):
            for _ in it:
                pass
        elapsed = time.monotonic() - start
    finally:
        for pid in victims:
            if alive(pid):
                os.kill(pid, signal.SIGCONT)
    assert elapsed < 2.5, f"the timeout of 2 s fired after {elapsed:.2f} s"
    wait_gone(victims, 5)
    loader.close()


# -- 2. interrupts, break, deletion, exit ------------------------------------------------
def test_keyboard_interrupt_then_new_epoch_then_exit(small_folder, clean):
    child = _child("interrupt", small_folder)
    out, err = child.communicate(timeout=120)
    events = _events(out)
    assert {"interrupted": 1} in events, err
    assert {"count": 24} in events, err  # the epoch after the interrupt is whole
    assert child.returncode in (-signal.SIGINT, 130), err
    assert "KeyboardInterrupt" in err
    wait_gone([p for e in events for p in e.get("workers", [])], 5)


def test_break_then_new_epoch(small_folder, clean):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 1:
            break
    first_workers = [w.pid for w in loader._workers()]
    assert sum(len(b[1]) for b in loader) == len(ds)
    wait_gone(first_workers, 5)
    del loader


def test_loader_deleted_mid_epoch(small_folder, clean):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    it = iter(loader)
    next(it)
    del loader  # the iterator keeps what it needs, as torch's does
    assert sum(len(b[1]) for b in it) == len(ds) - 4
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    it = iter(loader)
    next(it)
    pids = [w.pid for w in loader._workers()]
    del loader, it  # both dropped mid-epoch
    gc.collect()
    wait_gone(pids, 5)


def test_process_exiting_with_an_iteratoralive(small_folder, clean):
    child = _child("exit", small_folder)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    wait_gone(_events(out)[0]["workers"], 5)
    assert "Traceback" not in err, err


# -- 3. the parent killed -----------------------------------------------------------------
def test_workers_exit_when_the_parent_is_killed(small_folder, clean):
    child = _child("hold", small_folder)
    line = child.stdout.readline()
    pids = json.loads(line)["workers"]
    assert len(pids) == 2 and all(alive(p) for p in pids)
    child.kill()
    child.wait(timeout=10)
    took = wait_gone(pids, 5)
    assert took < 5


# -- 4. files changing under the loader ----------------------------------------------------
def _unreadable(path: Path) -> None:
    if os.geteuid() == 0:  # root reads any mode: a symlink loop is unreadable for all
        path.unlink()
        path.symlink_to(path.name)
    else:
        path.chmod(0)


CHANGES = {
    "deleted": lambda p: p.unlink(),
    "unreadable": _unreadable,
    "empty": lambda p: p.write_bytes(b""),
    "directory": lambda p: (p.unlink(), p.mkdir()),
    "rewritten-larger": lambda p: p.write_bytes(photo_like(300, 200, seed=9)),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_file_changed_after_the_dataset_was_built(tmp_path, clean, change):
    from tests.conftest import write_image_folder
    root = write_image_folder(tmp_path / "d", 12)
    ds = datasets.ImageFolder(str(root), eval_transform())
    index = 5
    path = Path(ds.samples[index][0])
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    assert sum(len(b[1]) for b in loader) == 12  # sizes now cached in the shared table
    CHANGES[change](path)
    try:
        expected = ds[index][0]
    except Exception as native:
        with pytest.raises(type(native)) as info:
            list(loader)
        text = str(info.value)
        assert str(path) in text and f"sample {index}" in text and "worker process" in text
        skipping = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, on_error="skip")
        assert sum(len(b[1]) for b in skipping) == 11
        assert [p for _, p, _ in skipping.skipped_samples] == [str(path)]
    else:  # still a valid image: the same loader decodes it as native does, whatever
        # its new size (NOTE [ A plan fits one image size ])
        images = torch.cat([b[0] for b in loader])
        diff = (to_255(images[index]) - to_255(expected)).abs().mean().item()
        assert diff <= 1.0
    finally:
        loader.close()


# -- 5. hostile files through the whole loader ---------------------------------------------
def _hostile_folder(root: Path) -> Path:
    good = photo_like(160, 120, seed=1)
    progressive = photo_like(160, 120, seed=2, progressive=True)
    files = {f"trunc{k}": data for k, (_, data) in enumerate(truncations(good))}
    files |= {f"flip{s}": byte_flips(good, s) for s in range(20)}
    files["bomb"] = with_dimensions(good, 65500, 65500)
    files["scans"] = with_repeated_last_scan(progressive, 1500)
    files["exif"] = with_app_segments(good, 0xE1, 30, b"Exif\0\0")
    files["good"] = good
    (root / "c").mkdir(parents=True)
    for name, data in files.items():
        (root / "c" / f"{name}.jpg").write_bytes(data)
    return root


def test_hostile_files_behave_as_native(tmp_path, clean):
    """Skipped exactly where native raises (with native's exception type); the
    rest decoded as native does."""
    ds = datasets.ImageFolder(str(_hostile_folder(tmp_path / "h")), eval_transform())
    native_errors, native_images = {}, {}
    for i in range(len(ds)):
        try:
            native_images[i] = ds[i][0]
        except Exception as e:
            native_errors[i] = type(e).__name__
    assert native_errors and native_images
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, on_error="skip")
    images = torch.cat([b[0] for b in loader])
    assert {i: why.split(":")[0] for i, _, why in loader.skipped_samples} == native_errors
    for k, (i, expected) in enumerate(sorted(native_images.items())):
        diff = (to_255(images[k]) - to_255(expected)).abs().mean().item()
        assert diff <= 3.0, f"{Path(ds.samples[i][0]).name}: mean abs diff {diff:.3f}"


def test_skipped_hostile_files_leave_no_stale_pixels(tmp_path):
    """Slots poisoned with NaN: every kept sample is fully written and equals
    native; skipped ones are compacted away."""
    ds = datasets.ImageFolder(str(_hostile_folder(tmp_path / "h")), eval_transform())
    decoder = CLASSIFICATION.decoder(CLASSIFICATION.lower(ds), DecodeOptions(on_error="skip"))
    n = len(ds)
    images = np.full((n, 3, 224, 224), np.nan, np.float32)
    labels = np.full(n, -1, np.int64)
    report = decoder.decode(list(range(n)), 0, (images, labels), "in the test")
    native_ok = []
    for i in range(n):
        try:
            native_ok.append((i, ds[i][0]))
        except Exception:
            pass
    assert report.count == len(native_ok) == n - len(report.skipped)
    assert not np.isnan(images[:report.count]).any()
    for k, (i, expected) in enumerate(native_ok):
        diff = (to_255(torch.from_numpy(images[k])) - to_255(expected)).abs().mean().item()
        assert diff <= 3.0, f"{ds.samples[i][0]}: {diff:.3f}"


# -- 6. /dev/shm too small ----------------------------------------------------------------
def test_ring_shrinks_or_refuses_to_fit_free_shared_memory():
    slot = 10 << 20
    assert SharedBudget().fit_prefetch(2, 2, slot, None) == 2
    assert SharedBudget().fit_prefetch(2, 2, slot, 1 << 30) == 2
    # One ring for all workers: prefetch x workers slots and the one the user holds.
    assert SharedBudget().fit_prefetch(4, 2, slot, 50 << 20) == 1  # 45 MiB usable: 3 slots, not 5
    assert SharedBudget().fit_prefetch(4, 2, slot, 60 << 20) == 2  # 54 MiB usable: 5 slots
    with pytest.raises(SharedMemoryError, match=r"needs at least 30 MiB \(3 slots.*--shm-size"):
        SharedBudget().fit_prefetch(2, 2, slot, 30 << 20)


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private /dev/shm")
@pytest.mark.parametrize("size, fits", [("6M", False), ("12M", True)])
def test_small_dev_shm_gives_a_clear_error_or_a_smaller_ring(small_folder, size, fits):
    # A slot of 4 samples of 3x224x224 float32 is 2.3 MiB.  2 workers x 3 slots
    # (prefetch_factor 2) need 13.8 MiB, 2 x 2 slots 9.2 MiB: 6M holds neither,
    # 12M (90% usable) only the second.
    wrap = ["unshare", "-m", "sh", "-c",
            f'mount -t tmpfs -o size={size} tmpfs /dev/shm && exec "$@"', "sh"]
    child = _child("epoch", small_folder, wrap=wrap)
    out, err = child.communicate(timeout=120)
    assert child.returncode != -signal.SIGBUS, "bus error"
    if fits:
        assert child.returncode == 0, err
        assert {"count": 24} in _events(out)
        assert "running with prefetch_factor=1" in err
    else:
        assert child.returncode == 1
        assert "SharedMemoryError" in err and "--shm-size" in err


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private /dev/shm")
@pytest.mark.parametrize("batch_size, outcome", [(4, "fallback"), (16, "error")])
def test_tables_count_in_the_shared_memory_budget(small_folder, batch_size, outcome):
    """NOTE [ One shared-memory budget ]: 200,000 samples' tables (about 25 MB) and the
    ring do not fit a 16 MB /dev/shm.  torch's loader fits with batches of 4 (2 workers x
    2 batches of 2.3 MiB): a fallback naming the reason.  With batches of 16 it does
    not: a clear error.  Neither leaves a file behind in /dev/shm."""
    wrap = ["unshare", "-m", "sh", "-c",
            'mount -t tmpfs -o size=16M tmpfs /dev/shm && exec "$@"', "sh"]
    child = _child("big-table", small_folder, str(batch_size), wrap=wrap)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    events = _events(out)
    assert events[-1] == {"shm": []}, events
    if outcome == "fallback":
        assert events[0] == {"accelerated": False, "reasons": ["loader.shared_memory"],
                             "count": 2 * batch_size}, events
        assert "Running with PyTorch Dataloader" in err and "--shm-size" in err
    else:
        assert events[0]["error"] == "SharedMemoryError", events
        assert "MiB of tables" in events[0]["message"] and "--shm-size" in events[0]["message"]


def _shm_taken_after_the_start(mode: str, root: Path) -> str:
    """Runs the child's ``mode`` (its workers take all of /dev/shm left as they start) in a
    private 256 MiB /dev/shm; checks it was accelerated, then failed with a
    SharedMemoryError saying what to do, leaving only the taker's files; its message."""
    wrap = ["unshare", "-m", "sh", "-c",
            'mount -t tmpfs -o size=256M tmpfs /dev/shm && exec "$@"', "sh"]
    child = _child(mode, root, wrap=wrap)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    events = _events(out)
    assert events[0] == {"accelerated": True}, events
    assert events[1]["error"] == "SharedMemoryError", events
    assert "--shm-size" in events[1]["message"], events
    assert events[-1] == {"shm": ["taken-0", "taken-1"]}, events
    return events[1]["message"]


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private /dev/shm")
@pytest.mark.skipif(not can_reserve(), reason="slots keep every page on this kernel (Linux "
                    "5.14+ reserves them as written): nothing to take after the start")
def test_dev_shm_taken_after_the_start_is_a_clear_error_naming_the_batch(small_folder):
    """NOTE [ A slot holds what its batch takes ]: a detection slot's pages are reserved
    as its batch is written.  When another program has taken /dev/shm since the loader
    started, the worker's reservation fails: SharedMemoryError naming the batch, the
    worker and what to do; no bus error, no hang, nothing of the loader's left behind."""
    message = _shm_taken_after_the_start("shm-taken", small_folder)
    assert re.search(r"could not (reserve .* MiB of /dev/shm for batch \d+'s (images|masks)|"
                     r"allocate a .* MiB (image|masks) beside batch \d+) in DataLoader worker "
                     r"process \d", message), message


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private /dev/shm")
@pytest.mark.skipif(not can_reserve(), reason="the photo store keeps every page on this "
                    "kernel (Linux 5.14+ reserves them as written): nothing to take")
@pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None,
                    reason="Ultralytics' YOLO dataset is the scenario")
def test_dev_shm_taken_after_the_start_is_a_clear_error_naming_the_stored_photo(tmp_path):
    """NOTE [ A stored photo holds its own pages ]: Mosaic's photo store reserves each
    photo's pages as the photo is decoded.  When another program has taken /dev/shm since
    the loader started: SharedMemoryError naming the photo, the worker and what to do; no
    bus error, no hang, nothing of the loader's left behind."""
    message = _shm_taken_after_the_start("shm-taken-yolo", tmp_path)
    assert re.search(r"could not reserve .* MiB of /dev/shm for the decoded photo of index "
                     r"\d+ \(Mosaic's partners\) in DataLoader worker process \d", message), \
        message


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private /dev/shm")
def test_a_shared_tensor_that_does_not_fit_is_a_clear_error_and_no_file_left():
    """torch leaves behind the /dev/shm file of a shared tensor it could not allocate;
    shared_empty (ring slots, tensors beside a batch) removes it."""
    code = ("import os, torch\n"
            "from jpegloader._shared_pages import SharedMemoryError, shared_empty\n"
            "try:\n"
            "    shared_empty((8 << 20,), torch.uint8, 'test tensor')\n"
            "except SharedMemoryError as e:\n"
            "    print('test tensor in /dev/shm' in str(e), '--shm-size' in str(e))\n"
            "print(os.listdir('/dev/shm'))\n")
    done = subprocess.run(["unshare", "-m", "sh", "-c",
                           'mount -t tmpfs -o size=1M tmpfs /dev/shm && exec "$@"', "sh",
                           sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.split("\n")[:2] == ["True True", "[]"], done.stdout + done.stderr


def test_a_pipeline_refused_for_shared_memory_is_not_rebuilt_every_epoch(small_folder,
                                                                         monkeypatch):
    """The verdict is renewed at every epoch start; the decoder whose tables did not fit
    is built again only once more /dev/shm is free."""
    from jpegloader.dataloader import ring, shared_budget
    from jpegloader.pipelines import Check
    built, free = [], [100 << 20]
    refuse = Check("loader.shared_memory", False, "too little /dev/shm (test)", "more")
    monkeypatch.setattr(shared_budget, "_share_tables", lambda budget, decoder, *a:
                        built.append(1) or refuse)
    monkeypatch.setattr(ring, "shared_memory_free", lambda: free[0])
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    for _ in range(3):
        assert sum(len(b[1]) for b in loader) == 24
        assert [c.rule for c in loader.eligibility.reasons] == ["loader.shared_memory"]
    assert len(built) == 1
    free[0] = 200 << 20  # more room now: tried again
    assert sum(len(b[1]) for b in loader) == 24
    assert len(built) == 2


# -- 7. errors in user code reach the user ------------------------------------------------
class _InitError(Exception):
    pass


def _failing_init(worker_id):
    raise _InitError(f"no licence for worker {worker_id}")


def test_worker_init_fn_exception_keeps_type_and_message(small_folder, clean):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    with pytest.raises(_InitError, match="no licence for worker") as info:
        list(jpegloader.DataLoader(ds, batch_size=4, num_workers=2,
                                   worker_init_fn=_failing_init))
    assert "in DataLoader worker process" in str(info.value)


def test_python_path_exception_keeps_type_and_where(tmp_path, clean):
    from tests.conftest import write_image_folder
    root = write_image_folder(tmp_path / "d", 6)
    bad = sorted(root.glob("c2/*.jpg"))[0]
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))  # a broken PNG named .jpg
    ds = datasets.ImageFolder(str(root), eval_transform())
    index = [p for p, _ in ds.samples].index(str(bad))
    with pytest.raises(UnidentifiedImageError) as info:
        list(jpegloader.DataLoader(ds, batch_size=2, num_workers=2))
    text = str(info.value)
    assert str(bad) in text and f"sample {index}" in text
    assert "in DataLoader worker process" in text and "pid" in text


class _UserDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        if index == 5:
            raise LookupError(f"record {index} is missing from the index")
        return torch.tensor(index)


def test_fallback_loader_worker_exception_keeps_type(clean):
    loader = jpegloader.DataLoader(_UserDataset(), batch_size=2, num_workers=2)
    assert not loader.eligibility.accelerated
    with pytest.raises(LookupError, match="record 5 is missing") as info:
        list(loader)
    assert "in DataLoader worker process" in str(info.value)


# -- 8. on_error="skip" -------------------------------------------------------------------
def test_skip_keeps_the_rest_of_the_batch_and_ends_the_epoch(tmp_path, clean):
    from tests.conftest import write_image_folder
    root = write_image_folder(tmp_path / "d", 12, classes=2)
    ds = datasets.ImageFolder(str(root), eval_transform())
    bad = {2, 3, 4, 5, 9}  # half of batches 0 and 1, one of batch 2
    for i in bad:
        Path(ds.samples[i][0]).write_bytes(b"not a jpeg")
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, on_error="skip")
    batches = list(loader)
    kept = [i for i in range(12) if i not in bad]
    images = torch.cat([b[0] for b in batches])
    labels = torch.cat([b[1] for b in batches])
    assert [len(b[1]) for b in batches] == [2, 2, 3]
    assert labels.tolist() == [ds.samples[i][1] for i in kept]
    for k, i in enumerate(kept):
        assert (to_255(images[k]) - to_255(ds[i][0])).abs().mean() <= 1.0
    assert sorted(i for i, _, _ in loader.skipped_samples) == sorted(bad)
    assert all("UnidentifiedImageError" in why for _, _, why in loader.skipped_samples)
    # A batch with nothing left is left out, and the next epoch runs normally.
    for i in (6, 7):
        Path(ds.samples[i][0]).write_bytes(b"")
    assert [len(b[1]) for b in loader] == [2, 3]
