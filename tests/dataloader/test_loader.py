"""jpegloader.DataLoader end to end: parity with torch's loader, determinism,
fallback, compatibility, errors and clean shutdown."""
from __future__ import annotations

import gc
import logging
import os

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets
from torchvision import transforms as T

import habana_dataloader
import jpegloader
from tests.conftest import (
    eval_transform,
    shared,
    shm_entries,
    to_255,
    train_transform,
    variants,
    worker_pids,
    write_image_folder,
)


def _batches(loader):
    return [[t.clone() for t in b] for b in loader]


# -- parity with the native loader ------------------------------------------------------
def test_eval_pipeline_matches_native_on_imagenet_sample():
    ds = datasets.ImageFolder(str(shared("imagenet-sample")), eval_transform())
    ours = jpegloader.DataLoader(ds, batch_size=50, num_workers=2)
    assert ours.eligibility.accelerated
    native = TorchDataLoader(ds, batch_size=50, num_workers=2)
    diffs = []
    for (a, la), (b, lb) in zip(ours, native, strict=True):
        assert torch.equal(la, lb)
        diffs += (to_255(a) - to_255(b)).abs().mean(dim=(1, 2, 3)).tolist()
    assert len(diffs) == len(ds)
    assert np.median(diffs) <= 1.0 and max(diffs) <= 3.0, (np.median(diffs), max(diffs))


def test_sample_order_matches_native_under_one_seed(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    torch.manual_seed(5)
    ours = [b[1] for b in jpegloader.DataLoader(ds, batch_size=5, shuffle=True)]
    torch.manual_seed(5)
    native = [b[1] for b in TorchDataLoader(ds, batch_size=5, shuffle=True)]
    assert all(torch.equal(a, b) for a, b in zip(ours, native, strict=True))


def test_batches_identical_for_any_num_workers(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    runs = []
    for workers in (0, 1, 2):
        g = torch.Generator().manual_seed(11)
        runs.append(_batches(jpegloader.DataLoader(ds, batch_size=5, shuffle=True,
                                                   num_workers=workers, generator=g)))
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for a, b in zip(runs[0], other, strict=True):
            assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_epochs_differ_and_default_collate_structure(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=8, shuffle=False, num_workers=2,
                                   persistent_workers=True)
    first, second = _batches(loader), _batches(loader)
    native = next(iter(TorchDataLoader(ds, batch_size=8)))
    assert isinstance(first[0], list) and len(first[0]) == len(native)
    assert first[0][0].dtype == native[0].dtype and first[0][0].shape == native[0].shape
    assert first[0][1].dtype == native[1].dtype
    assert not torch.equal(first[0][0], second[0][0])  # new random crops each epoch
    loader.close()


def test_yielded_batches_are_never_overwritten(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2)
    kept = list(loader)  # every batch held while the ring comes round many times
    fresh = _batches(jpegloader.DataLoader(ds, batch_size=2, num_workers=0))
    for a, b in zip(kept, fresh, strict=True):
        assert torch.equal(a[0], b[0])


def test_break_then_new_epoch_and_persistent_workers(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    for persistent in (False, True):
        loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2,
                                       persistent_workers=persistent)
        for i, _ in enumerate(loader):
            if i == 1:
                break
        assert sum(len(b[1]) for b in loader) == len(ds)
        loader.close()


# -- real-world files --------------------------------------------------------------------
def test_edge_cases_behave_as_native():
    root = shared("edge-cases")
    ds = datasets.ImageFolder(str(root), eval_transform())
    for index, (path, _) in enumerate(ds.samples):
        loader = jpegloader.DataLoader(ds, batch_size=1, sampler=[index])
        try:
            expected = ds[index][0]
        except Exception as native_error:
            with pytest.raises(type(native_error)) as info:
                next(iter(loader))
            assert path in str(info.value) and f"sample {index}" in str(info.value)
            continue
        got = next(iter(loader))[0][0]
        diff = (to_255(got) - to_255(expected)).abs().mean().item()
        assert diff <= 3.0, f"{os.path.relpath(path, root)}: mean abs diff {diff:.3f}"


def test_corrupt_file_error_names_path_index_and_worker(tmp_path):
    root = write_image_folder(tmp_path / "d", 6)
    bad = sorted(root.glob("c0/*.jpg"))[1]
    bad.write_bytes(bad.read_bytes()[:300])
    ds = datasets.ImageFolder(str(root), eval_transform())
    bad_index = [p for p, _ in ds.samples].index(str(bad))
    loader = jpegloader.DataLoader(ds, batch_size=3, num_workers=2)
    with pytest.raises(OSError) as info:
        list(loader)
    text = str(info.value)
    assert str(bad) in text and f"sample {bad_index}" in text and "worker process" in text
    assert not worker_pids()


def test_on_error_skip_drops_and_counts(tmp_path):
    root = write_image_folder(tmp_path / "d", 6)
    bad = sorted(root.glob("c1/*.jpg"))[0]
    bad.write_bytes(b"garbage")
    ds = datasets.ImageFolder(str(root), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, on_error="skip")
    total = sum(len(b[1]) for b in loader)
    assert total == len(ds) - 1
    assert [p for _, p, _ in loader.skipped_samples] == [str(bad)]


def test_missing_file_after_dataset_built(tmp_path):
    root = write_image_folder(tmp_path / "d", 4)
    ds = datasets.ImageFolder(str(root), eval_transform())
    os.remove(ds.samples[2][0])
    with pytest.raises(FileNotFoundError, match="sample 2"):
        list(jpegloader.DataLoader(ds, batch_size=4))


def test_worker_init_fn_error_reaches_user(small_folder):
    def init(worker_id):
        raise KeyError(f"bad init {worker_id}")
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    with pytest.raises(KeyError, match="bad init"):
        list(jpegloader.DataLoader(ds, batch_size=4, num_workers=2, worker_init_fn=init))
    assert not worker_pids()


def test_no_worker_or_shared_memory_outlives_the_loader(small_folder):
    before = shm_entries()
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    it = iter(loader)
    next(it)
    assert worker_pids()
    del it, loader
    gc.collect()
    assert not worker_pids()
    assert shm_entries() <= before


# -- eligibility and fallback --------------------------------------------------------------
class _OverridingFolder(datasets.ImageFolder):
    def __getitem__(self, index):
        return super().__getitem__(index)


def _collate_of_real_images(batch):
    if all(not image.any() for image, _ in batch):
        raise ValueError("a batch of blank images")
    return torch.utils.data.default_collate(batch)


def _fallback_cases(root):
    # an augmentation before any crop or resize: only the decode would be native
    blur = T.Compose([T.GaussianBlur(3), T.RandomResizedCrop(64), T.ToTensor()])
    plain = eval_transform()
    tensors = torch.utils.data.TensorDataset(torch.arange(8.0))
    return {
        "dataset.transform": (datasets.ImageFolder(root, blur), {}),
        "dataset.target_transform": (datasets.ImageFolder(root, plain,
                                                          target_transform=lambda t: t + 1), {}),
        # a collate_fn that fails on the loader's stand-in batch (blank images)
        "loader.collate_fn": (datasets.ImageFolder(root, plain),
                              {"collate_fn": _collate_of_real_images}),
        "dataset.getitem": (_OverridingFolder(root, plain), {}),
        "dataset.loader": (datasets.ImageFolder(root, plain,
                                                loader=lambda p: datasets.folder.pil_loader(p)),
                           {}),
        "dataset.type": (tensors, {}),
    }


@pytest.mark.parametrize("rule", ["dataset.transform", "dataset.target_transform",
                                  "loader.collate_fn", "dataset.getitem", "dataset.loader",
                                  "dataset.type"])
def test_each_fallback_reason_is_named_and_batches_equal_native(small_folder, caplog, rule):
    ds, kwargs = _fallback_cases(str(small_folder))[rule]
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        loader = jpegloader.DataLoader(ds, batch_size=4, **kwargs)
    assert not loader.eligibility.accelerated
    assert rule in [r.rule for r in loader.eligibility.reasons]
    assert all(r.hint for r in loader.eligibility.reasons)
    records = [r for r in caplog.records if r.name == "jpegloader"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    lines = records[0].getMessage().splitlines()
    assert lines[0].startswith("Failed to initialize Habana Dataloader, error: ")
    assert rule in lines[0]
    assert lines[1] == "Running with PyTorch Dataloader"
    torch.manual_seed(3)
    ours = list(loader)
    torch.manual_seed(3)
    native = list(TorchDataLoader(ds, batch_size=4, **kwargs))
    assert len(ours) == len(native)
    for a, b in zip(ours, native, strict=True):
        for x, y in zip(a, b, strict=True):
            assert torch.equal(x, y)


def test_disable_switch_is_a_real_boolean(small_folder, monkeypatch):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    monkeypatch.setenv("JPEGLOADER_DISABLE", "yes")
    verdict = jpegloader.explain(ds, batch_size=4)
    assert not verdict.accelerated and verdict.reasons[0].rule == "env.disable"
    monkeypatch.setenv("JPEGLOADER_DISABLE", "0")
    assert jpegloader.explain(ds, batch_size=4).accelerated
    monkeypatch.setenv("JPEGLOADER_DISABLE", "maybe")
    with pytest.raises(ValueError, match="JPEGLOADER_DISABLE"):
        jpegloader.explain(ds, batch_size=4)


def test_all_failed_rules_are_listed_and_report_shows_every_rule(small_folder):
    ds = datasets.ImageFolder(str(small_folder), T.Compose([T.Grayscale(), T.ToTensor()]),
                              target_transform=str)
    verdict = jpegloader.explain(ds, batch_size=4, collate_fn=lambda b: b)
    # Grayscale() gives one channel: only the decode would be native
    assert {r.rule for r in verdict.reasons} == {"dataset.transform",
                                                 "dataset.target_transform"}
    report = verdict.report()
    assert report.count("PASS") + report.count("FAIL") == len(verdict.checks)
    assert "Grayscale" in report


def test_torch_argument_errors_and_isinstance(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    assert isinstance(jpegloader.DataLoader(ds), torch.utils.data.DataLoader)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        jpegloader.DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="on_error"):
        jpegloader.DataLoader(ds, on_error="ignore")


def test_habana_compat_with_model_references_arguments(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=2, rank=0,
                                                              shuffle=True, seed=0)
    sampler.set_epoch(3)
    with pytest.warns(UserWarning, match="no accelerator"):
        loader = habana_dataloader.HabanaDataLoader(
            ds, batch_size=4, sampler=sampler, num_workers=8, pin_memory=True,
            pin_memory_device="hpu", drop_last=True)
        batches = list(loader)
    assert loader.eligibility.accelerated
    assert isinstance(loader, jpegloader.DataLoader)
    assert sum(len(b[1]) for b in batches) == len(list(sampler)) // 4 * 4


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_pinned_and_device_feed(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    pinned = next(iter(jpegloader.DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)))
    assert pinned[0].is_pinned() and pinned[1].is_pinned()
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True,
                                   device="cuda")
    on_device = list(loader)
    reference = list(jpegloader.DataLoader(ds, batch_size=4, num_workers=0))
    for a, b in zip(on_device, reference, strict=True):
        assert a[0].is_cuda and torch.equal(a[0].cpu(), b[0])


def test_spawn_context_gives_the_same_batches(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    runs = []
    for context in ("spawn", None):
        g = torch.Generator().manual_seed(2)
        runs.append(_batches(jpegloader.DataLoader(ds, batch_size=6, shuffle=True,
                                                   num_workers=2, generator=g,
                                                   multiprocessing_context=context)))
    for a, b in zip(*runs, strict=True):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


@pytest.mark.parametrize("context", variants(["forkserver", "spawn"], keep=["spawn"]))
def test_workers_a_forkserver_or_spawn_started_outlive_a_pause(small_folder, context):
    """A worker started by forkserver is the forkserver's child: the watchdog that ends
    workers whose main process is gone must not take that for the main process gone
    while the user pauses (longer than the watchdog's period) mid-epoch."""
    import time

    from jpegloader.dataloader.workers import WATCHDOG_SECONDS
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=1,
                                   multiprocessing_context=context)
    it = iter(loader)
    first = [next(it)]
    time.sleep(WATCHDOG_SECONDS * 2.5)
    got = first + list(it)
    want = list(jpegloader.DataLoader(ds, batch_size=2))
    assert len(got) == len(want) == 12
    assert all(torch.equal(a[0], b[0]) for a, b in zip(got, want, strict=True))


def _kill_self(worker_id):
    os.kill(os.getpid(), 9)


def _sleep(worker_id):
    import time
    time.sleep(3)


def test_killed_worker_is_reported_with_its_pid(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, worker_init_fn=_kill_self)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+.*exited unexpectedly"):
        list(loader)
    assert not worker_pids()


def test_timeout_is_honoured(small_folder):
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=1, timeout=1,
                                   worker_init_fn=_sleep)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(loader)
    assert not worker_pids()


def test_stage_seconds_cover_worker_and_main_process_stages(small_folder):
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    assert sum(len(b[1]) for b in loader) == len(ds)
    stages = loader.stage_seconds
    assert {"read", "decode", "augment", "python_path", "wait", "assembly"} <= set(stages)
    assert all(isinstance(v, float) and v >= 0 for v in stages.values())
    assert stages["decode"] > 0 and stages["augment"] > 0


def test_sample_order_matches_native_over_epochs_with_persistent_workers(small_folder):
    # torch draws a persistent iterator's base seed once: later epochs' shuffles must
    # come from the same global RNG stream as torch's.
    ds = datasets.ImageFolder(str(small_folder), train_transform())
    orders = []
    for cls in (jpegloader.DataLoader, TorchDataLoader):
        torch.manual_seed(21)
        loader = cls(ds, batch_size=5, shuffle=True, num_workers=2, persistent_workers=True)
        orders.append([torch.cat([b[1] for b in loader]) for _ in range(3)])
        del loader
    for a, b in zip(*orders, strict=True):
        assert torch.equal(a, b)
