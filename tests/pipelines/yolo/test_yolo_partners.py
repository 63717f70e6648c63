"""Mosaic's partners (NOTE [ Mosaic's partners across workers ] in
pipelines/yolo/partners.py): drawn from the photos at the epoch's last
``max_buffer_length`` positions up to the batch's end, whichever worker decoded
them; as varied as Ultralytics' own loader's, uniform over that pool, the same for
any num_workers and after a resume.  Ultralytics is the oracle."""
from __future__ import annotations

import os
import random
from importlib import util
from pathlib import Path

import numpy as np
import pytest
import torch

import jpegloader
from jpegloader import _shared_pages
from jpegloader.pipelines.contract import DecodeOptions, EarlierSamples
from jpegloader.pipelines.random_stream import epoch_seed
from jpegloader.pipelines.yolo import YOLO
from tests.pipelines.yolo.test_yolo_train import decoded_batch, ultralytics_batch
from tests.pipelines.yolo.test_yolo_val import assert_same_batches
from tests.pipelines.yolo.yolo_sets import _write_set, generated_yolo_set, train_dataset
from tests.conftest import shared, variants
from tests.dataloader.test_slot_pages import _huge_shmem

pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for the YOLO pipeline")


def own_class_set(root: Path) -> Path:
    """coco-sample's photos, each labelled with one box over the whole photo of a class
    of its own: the classes in a sample are the photos it was made of."""
    photos = sorted((shared("coco-sample") / "val2017").glob("*.jpg"))
    return _write_set(root, [(p.name, p, [f"{k} 0.5 0.5 1.0 1.0"]) for k, p in enumerate(photos)],
                      {k: f"photo{k}" for k in range(len(photos))})


def distinct_photos(batches: list[dict]) -> tuple[float, float]:
    """Mean distinct photos (classes) per sample and per batch."""
    per_sample, per_batch = [], []
    for b in batches:
        cls, owner = b["cls"].view(-1).long(), b["batch_idx"].long()
        per_batch.append(len(set(cls.tolist())))
        per_sample += [len(set(cls[owner == s].tolist())) for s in range(len(b["im_file"]))]
    return float(np.mean(per_sample)), float(np.mean(per_batch))


def shuffled(ds, workers: int, cls=jpegloader.DataLoader, seed: int = 0, **kw):
    return cls(ds, batch_size=ds.batch_size, shuffle=True, num_workers=workers,
               collate_fn=ds.collate_fn, generator=torch.Generator().manual_seed(seed), **kw)


@pytest.mark.parametrize("batch", variants([2, 4, 16], keep=[2]))
def test_as_many_photos_per_sample_and_batch_as_ultralytics_own_loader(tmp_path, batch):
    # two epochs of coco-sample at imgsz 320, 2 workers each; Ultralytics' own loader
    # draws from each worker's buffer, this one from the epoch's last photos
    ds = train_dataset(own_class_set(tmp_path), imgsz=320, batch=batch)
    theirs = shuffled(ds, 2, torch.utils.data.DataLoader)
    ours = shuffled(ds, 2)
    assert ours.eligibility.accelerated, ours.eligibility.report()
    want = distinct_photos(list(theirs) + list(theirs))
    got = distinct_photos(list(ours) + list(ours))
    assert got[0] >= want[0] and got[1] >= want[1], (got, want)


class _Draws:
    """Every Mosaic draw of this process: the buffer it drew from and what it drew."""

    def __init__(self, monkeypatch, mosaic_type):
        self.seen: list[tuple[list[int], list[int]]] = []
        draw = mosaic_type.get_indexes

        def get_indexes(step, *args):
            drawn = draw(step, *args)
            self.seen.append((list(step.dataset.buffer), list(drawn)))
            return drawn
        monkeypatch.setattr(mosaic_type, "get_indexes", get_indexes)


def test_partners_are_drawn_uniformly_from_the_epochs_last_photos(tmp_path, monkeypatch):
    from ultralytics.data.augment import Mosaic
    ds = train_dataset(generated_yolo_set(tmp_path, count=40), imgsz=64, batch=2)
    window = ds.max_buffer_length
    assert window == 16
    draws = _Draws(monkeypatch, Mosaic)
    loader = shuffled(ds, 0)
    files = {f: k for k, f in enumerate(ds.im_files)}
    counts = np.zeros(window, np.int64)
    for _ in range(2):
        seen = len(draws.seen)
        order = [files[f] for b in loader for f in b["im_file"]]  # the epoch's order
        assert len(draws.seen) - seen == len(order)
        for k, (pool, drawn) in enumerate(draws.seen[seen:]):
            end = (k // 2 + 1) * 2  # the sample's batch's end
            assert pool == order[max(0, end - window):end]  # the last photos, oldest first
            if len(pool) == window:
                for index in drawn:
                    counts[pool.index(index)] += 1
    # the draws uniform over the pool (samples with a full window): chi-square at 0.1%
    expected = counts.sum() / window
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert counts.sum() >= 150 and chi2 < 37.7, (counts, chi2)  # 15 degrees of freedom


def test_a_batch_with_earlier_photos_replays_ultralytics_with_that_buffer(tmp_path):
    # the pool as Ultralytics' own objects take it: its buffer the earlier photos and
    # the batch's, every one read by load_image (default hyperparameters, coco-sample);
    # the earlier ones, not decoded in this run, decoded by the batch itself
    ds = train_dataset(own_class_set(tmp_path), batch=4)
    earlier = (17, 3, 60, 41, 8, 22)
    indices = [5, 77, 12, 30]
    seed = epoch_seed(4, 0)
    ours, _ = decoded_batch(ds, indices, seed, 2, EarlierSamples(2, earlier, 8))
    assert_same_batches([ours], [ultralytics_batch(ds, indices, seed, 2, earlier)])


def test_the_same_batches_for_any_num_workers_over_epochs_and_after_a_resume(tmp_path):
    ds = train_dataset(generated_yolo_set(tmp_path, count=30), imgsz=64, batch=3)
    assert ds.max_buffer_length == 24  # eight batches: the window spans workers' batches
    runs = []
    for workers in (0, 1, 3):
        loader = shuffled(ds, workers, seed=5)
        runs.append(list(loader) + list(loader))
    assert_same_batches(runs[1], runs[0])
    assert_same_batches(runs[2], runs[0])
    # resumed after 4 of the second epoch's 10 batches: the photos before the checkpoint
    # are read again where the batches after it draw from them
    loader = shuffled(ds, 2, seed=5)
    list(loader)
    it = iter(loader)
    for _ in range(4):
        next(it)
    state = loader.state_dict()
    resumed = shuffled(ds, 2, seed=99)
    resumed.load_state_dict(state)
    assert_same_batches(list(resumed), runs[0][10 + 4:])


def test_an_epoch_left_early_with_persistent_workers_leaves_the_next_one_as_it_was(tmp_path):
    # the batches the first epoch left in flight are waited for before the next epoch's
    # are sent: they would write the photos' slots the next epoch reads
    ds = train_dataset(generated_yolo_set(tmp_path, count=30), imgsz=64, batch=3)
    runs = []
    for workers in (1, 2):
        loader = shuffled(ds, workers, seed=7, persistent_workers=True, timeout=30)
        next(iter(loader))  # the rest of the epoch left
        runs.append(list(loader))
    assert_same_batches(runs[1], runs[0])


def test_a_broken_photo_is_never_a_partner_of_later_batches(tmp_path):
    ds = train_dataset(generated_yolo_set(tmp_path, count=30), imgsz=64, batch=3)
    broken = next(k for k, f in enumerate(ds.im_files) if f.endswith(".jpg"))
    Path(ds.im_files[broken]).write_bytes(b"\xff\xd8 not a photo any more")
    runs = [list(shuffled(ds, workers, seed=3, on_error="skip")) for workers in (0, 2)]
    assert sum(len(b["im_file"]) for b in runs[1]) == len(ds) - 1
    assert_same_batches(runs[1], runs[0])


def test_a_photos_segments_are_resampled_once_while_it_is_in_the_pool(tmp_path):
    # NOTE [ A photo's labels read once a batch ]: a worker keeps each photo's labels
    # from batch to batch while Mosaic may take it; the batches still replay Ultralytics
    from tests.pipelines.yolo.yolo_sets import coco_yolo_set
    ds = train_dataset(coco_yolo_set(tmp_path, segments=True), imgsz=320, batch=4,
                       task="segment")
    lowering = YOLO.lower(ds, {"collate_fn": ds.collate_fn})
    decoder = YOLO.decoder(lowering, DecodeOptions())
    calls = []
    update = ds.update_labels_info
    ds.update_labels_info = lambda label: calls.append(label["im_file"]) or update(label)
    seed, batches = epoch_seed(5, 0), [[3, 9, 14, 20], [31, 2, 47, 8]]
    got = []
    for b, indices in enumerate(batches):
        arrays = tuple(np.zeros((4, *shape), np.uint8) for shape, _ in decoder.layout)
        report = decoder.decode(indices, seed, arrays, "in the test", b,
                                earlier=EarlierSamples(0, tuple(batches[0][:4 * b]), 0))
        got.append(decoder.assemble([torch.from_numpy(a) for a in arrays], report.extras))
    assert len(calls) == len(set(calls)) and len(set(calls)) > 4
    del ds.update_labels_info
    assert_same_batches(got, [ultralytics_batch(ds, batches[0], seed, 0),
                              ultralytics_batch(ds, batches[1], seed, 1, batches[0])])


@pytest.mark.integration  # the dead worker is noticed in seconds
def test_a_worker_killed_while_others_wait_for_its_photos_is_named_and_nothing_hangs(tmp_path):
    import os
    import signal
    import time
    ds = train_dataset(generated_yolo_set(tmp_path, count=30), imgsz=64, batch=3)
    want = shuffled(ds, 2, seed=4)
    next(iter(want))
    want = list(want)  # the next epoch, after one left early
    loader = shuffled(ds, 2, seed=4)
    it = iter(loader)
    next(it)
    victim = loader._workers()[0].pid
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=f"pid\\(s\\) {victim}\\) exited unexpectedly"):
        list(it)
    assert time.monotonic() - start < 10
    # new workers, the same shared photo slots: the next epoch is as it would be
    assert_same_batches(list(loader), want)


@pytest.mark.skipif(not _shared_pages.can_reserve(),
                    reason="this kernel cannot reserve shared pages on request "
                           "(MADV_POPULATE_WRITE, Linux 5.14+): the store keeps every page")
def test_the_photo_store_holds_the_pages_of_the_photos_in_it_not_of_its_slots(tmp_path):
    """NOTE [ A stored photo holds its own pages ]: after two epochs over photos of
    several shapes, 2 workers, the store's shared-memory file holds the pages of the
    photos its slots hold (as their header rows say), not of imgsz x imgsz slots; and
    the batches are those of the same loader at num_workers=0."""
    ds = train_dataset(generated_yolo_set(tmp_path, count=30), imgsz=320, batch=3)
    loader = shuffled(ds, 2, seed=6)
    got = [list(loader) for _ in range(2)]
    store = loader._engine.decoder.store
    assert store.sparse
    fd = loader._engine._workspace.data.untyped_storage()._share_fd_cpu_()[0]
    allocated = os.fstat(fd).st_blocks * 512
    header = loader._engine._workspace.header.numpy()
    photos = [int(h) * int(w) * 3 for state, h, w in header[:, [2, 5, 6]] if state == 1]
    page = os.sysconf("SC_PAGE_SIZE")
    assert len(photos) > 20  # most slots hold a photo of the last epoch
    # each photo's pages, and at most the page each slot shares with the next
    assert sum(photos) <= allocated <= sum(-(-n // page) * page for n in photos) + \
        page * store.slots + (2 << 20) * _huge_shmem(), (allocated, sum(photos))
    assert allocated < 0.85 * store.slots * store.capacity
    alone = shuffled(ds, 0, seed=6)
    for epoch in got:
        assert_same_batches(epoch, list(alone))
