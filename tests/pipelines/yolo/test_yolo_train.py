"""Ultralytics' training loaders (``yolo train``: YOLODataset with Mosaic,
RandomPerspective, MixUp, CopyPaste, RandomHSV, flips and Format) through the YOLO
pipeline: each batch equals Ultralytics' own transforms replayed with the same
draws, bit for bit (NOTE [ YOLO training samples ] in pipelines/yolo/augment.py:
the same seeds, the batch's photos read by the dataset's own load_image and left
in its buffer); batches are the same for any num_workers.  Ultralytics is a test
dependency only: the oracle."""
from __future__ import annotations

import copy
import random
from importlib import util
from pathlib import Path

import numpy as np
import pytest
import torch

import jpegloader
from jpegloader.pipelines.random_stream import epoch_seed, generators_kept, seed_generators
from jpegloader.pipelines.yolo import YOLO
from jpegloader.pipelines.yolo.train import sample_seeds
from tests.pipelines.yolo.test_yolo_val import (assert_a_broken_photo_is_named,
                                               assert_equals_ultralytics, assert_same_batches,
                                               loader)
from tests.pipelines.yolo.yolo_sets import (coco_yolo_set, generated_yolo_set, train_dataset,
                                            val_dataset)

# Not imported while collecting: importing Ultralytics patches PIL and torch process-wide
# (tests/conftest.py puts them back after each test).
pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for the YOLO pipeline")


def ultralytics_batch(ds, indices: list[int], seed: int, batch_no: int,
                      earlier=()) -> dict:
    """Ultralytics' own code on one batch: its load_image reads the ``earlier`` photos
    and the batch's (OpenCV) and leaves them cached, its buffer is those, and each
    ``ds[i]`` runs with the generators seeded as the loader seeds that sample."""
    for i in (*earlier, *indices):
        ds.load_image(i)
    ds.buffer = [*earlier, *indices]
    samples = []
    with generators_kept():
        for i, s in zip(indices, sample_seeds(seed, batch_no, len(indices))):
            seed_generators(s)
            samples.append(ds[i])
    if ds.cache != "ram":  # a RAM cache keeps every photo
        for i in set(ds.buffer) | set(indices):
            ds.ims[i] = ds.im_hw0[i] = ds.im_hw[i] = None
    ds.buffer = []
    return ds.collate_fn(samples)


def decoded_batch(ds, indices: list[int], seed: int, batch_no: int, earlier=None):
    """One batch as a worker decodes it (``earlier``: the samples before it it reads),
    assembled as the main process does."""
    lowering = YOLO.lower(ds, {"collate_fn": ds.collate_fn})
    assert lowering.ok, lowering.checks
    decoder = YOLO.decoder(lowering, jpegloader.pipelines.contract.DecodeOptions())
    arrays = tuple(np.zeros((len(indices), *shape), np.uint8) for shape, _ in decoder.layout)
    report = decoder.decode(indices, seed, arrays, "in the test", batch_no, earlier=earlier)
    return decoder.assemble([torch.from_numpy(a) for a in arrays], report.extras), report


def assert_replays_ultralytics(ds, batches: list[list[int]], seed: int = epoch_seed(3, 0)):
    for b, indices in enumerate(batches):
        ours, _ = decoded_batch(ds, indices, seed, b)
        assert_same_batches([ours], [ultralytics_batch(ds, indices, seed, b)])


def test_coco_train_batches_replay_ultralytics_default_augmentation(tmp_path):
    # Ultralytics' default hyperparameters: Mosaic 1.0, translate 0.1, scale 0.5,
    # HSV, fliplr 0.5; imgsz 640 on coco-sample's real photos
    ds = train_dataset(coco_yolo_set(tmp_path), batch=8)
    assert_replays_ultralytics(ds, [list(range(8)), [40, 3, 77, 12, 12, 60, 5, 31]])


def test_rotation_shear_mixup_and_cutmix_replay_ultralytics(tmp_path):
    # a rotated and sheared warp; MixUp partners from anywhere in the set (read by
    # the dataset's own load_image, warped by the user's own pre_transform)
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8, degrees=10.0, shear=5.0,
                       mixup=0.5, cutmix=0.5)
    assert_replays_ultralytics(ds, [[1, 2, 3, 4, 70, 71, 72, 73]])


def test_segment_train_with_copy_paste_replays_ultralytics(tmp_path):
    ds = train_dataset(coco_yolo_set(tmp_path, segments=True), imgsz=320, batch=8,
                       task="segment", copy_paste=0.5)
    assert ds.use_segments
    assert_replays_ultralytics(ds, [list(range(10, 18))])


def test_a_photos_segments_are_resampled_once_a_batch(tmp_path):
    # NOTE [ A photo's labels read once a batch ]: Mosaic takes each photo of the
    # batch as a partner about three times; its labels are computed once (the batch
    # still replays Ultralytics, which computes them every time: the tests above)
    ds = train_dataset(coco_yolo_set(tmp_path, segments=True), imgsz=320, batch=8,
                       task="segment")
    calls = []
    update = ds.update_labels_info
    ds.update_labels_info = lambda label: calls.append(label["im_file"]) or update(label)
    indices = [10, 11, 12, 13, 14, 15, 16, 12]
    decoded_batch(ds, indices, epoch_seed(3, 0), 0)
    assert sorted(calls) == sorted({ds.im_files[i] for i in indices})
    assert "get_image_and_label" not in vars(ds)  # the batch's reading is put back
    del ds.update_labels_info
    assert_replays_ultralytics(ds, [indices])
    # without a step that takes partners (close_mosaic), each photo is read once anyway
    from jpegloader.pipelines.yolo.steps import planned_steps
    from jpegloader.pipelines.yolo.train import _labels_read_once
    assert _labels_read_once(ds, planned_steps(ds.transforms))
    closed = train_dataset(coco_yolo_set(tmp_path / "closed", segments=True), imgsz=320,
                           batch=8, task="segment", mosaic=0.0)
    assert not _labels_read_once(closed, planned_steps(closed.transforms))


def _with_c_copies(monkeypatch, warp, hsv_block=32):
    """The self-check's answer as if the installed OpenCV were one whose warp the C
    core has (``warp`` an arithmetic) or has not (None)."""
    from jpegloader.pipelines.yolo import steps
    from jpegloader.pipelines.yolo.opencv import OpenCVMatch
    match = OpenCVMatch("test", warp, hsv_block)
    monkeypatch.setattr(steps, "opencv_match", lambda: match)
    monkeypatch.setattr("jpegloader.pipelines.yolo.lower.opencv_match", lambda: match)


def test_the_mosaic_canvas_is_left_unbuilt_only_where_the_warp_alone_reads_it(
        tmp_path, monkeypatch):
    # NOTE [ A Mosaic never built ]: with Ultralytics' defaults nothing reads Mosaic's
    # canvas before the warp; a CopyPaste that may paste, or a step of yours, between
    # them gets the canvas built by Mosaic itself.  Built on demand, it is Mosaic's.
    import copy
    import random

    from jpegloader.pipelines.yolo import augment, steps
    from jpegloader.pipelines.yolo.opencv import WARP_FLOAT
    _with_c_copies(monkeypatch, WARP_FLOAT)
    yaml = coco_yolo_set(tmp_path)

    def kinds(ds):
        return [k for t, k in steps.planned_steps(ds.transforms)
                if type(t).__name__ == "Mosaic"]

    ds = train_dataset(yaml, imgsz=320, batch=8)
    assert kinds(ds) == [steps.UnbuiltMosaic]
    assert "Mosaic image (drawn only where the warp reads it)" in \
        jpegloader.explain(ds, batch_size=8, collate_fn=ds.collate_fn).split_text()
    assert kinds(train_dataset(yaml, imgsz=320, batch=8, copy_paste=0.5)) == [None]
    mosaic = next(t for t, k in steps.planned_steps(ds.transforms) if k is steps.UnbuiltMosaic)
    ds.transforms.transforms[0].transforms.insert(1, lambda labels: labels)
    assert kinds(ds) == [None]
    for seed in range(3):
        ds.buffer = list(range(8))
        random.seed(seed)
        labels = ds.get_image_and_label(seed)
        params = mosaic.get_params(labels)
        ours = augment._mosaic(mosaic, dict(labels), params)["img"]
        theirs = mosaic.apply_image(dict(labels), params)["img"]
        assert isinstance(ours, augment.MosaicCanvas) and ours.built is None
        assert ours.shape == theirs.shape
        # a step that copies its labels gets the canvas too
        copies = copy.copy(ours), copy.deepcopy(ours)
        np.testing.assert_array_equal(np.asarray(ours), theirs)
        for copied in copies:
            np.testing.assert_array_equal(np.asarray(copied), theirs)
        assert ours.sum() == theirs.sum() and ours[5:9, 3].tolist() == theirs[5:9, 3].tolist()
        # the whole step as the planned steps run it: Mosaic's own draws and labels,
        # its canvas left unbuilt (the buffer's photos cached, so neither call changes it)
        for i in range(8):
            ds.load_image(i)
        ds.buffer = list(range(8))
        random.seed(seed)
        applied = steps.UnbuiltMosaic.apply(mosaic, copy.deepcopy(labels), None)
        random.seed(seed)
        called = mosaic(copy.deepcopy(labels))
        assert ds.buffer == list(range(8))
        assert isinstance(applied["img"], augment.MosaicCanvas)
        np.testing.assert_array_equal(np.asarray(applied["img"]), called["img"])
        np.testing.assert_array_equal(applied["instances"].bboxes, called["instances"].bboxes)


def test_opencvs_warp_reads_a_mosaic_canvas_only_where_it_is_drawn(tmp_path, monkeypatch):
    # NOTE [ A Mosaic never built ]: with the warp on cv2 (the C core lacking the
    # installed OpenCV's), Mosaic's canvas is drawn only within read_rectangle; noise
    # everywhere else leaves cv2.warpAffine's output unchanged, for RandomPerspective's
    # own draws and for extreme scales, turns, shears and shifts
    import cv2

    from jpegloader.pipelines.yolo import augment, steps
    _with_c_copies(monkeypatch, None, None)
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8)
    planned = steps.planned_steps(ds.transforms)
    assert [k for _, k in planned if k in (steps.UnbuiltMosaic, steps.CvWarp)] == \
        [steps.UnbuiltMosaic, steps.CvWarp]
    mosaic, perspective = (t for t, k in planned if k in (steps.UnbuiltMosaic, steps.CvWarp))
    rng = np.random.default_rng(0)
    turned = cv2.getRotationMatrix2D((320.0, 320.0), 33.0, 0.4)
    extreme = [np.vstack((turned, (0, 0, 1))),
               np.array(((2.9, 0.7, -900.5), (-0.3, 2.2, -700.25), (0, 0, 1))),
               np.array(((1.0, 0, 5000.0), (0, 1.0, 0), (0, 0, 1)))]
    partial = 0
    for seed in range(12):
        ds.buffer = list(range(8))
        random.seed(seed)
        labels = ds.get_image_and_label(seed % 8)
        canvas = augment._mosaic(mosaic, dict(labels), mosaic.get_params(labels))["img"]
        whole = augment.MosaicCanvas(canvas.shape[0], canvas.tiles).build()
        random.seed(seed)
        params = perspective.get_params({"img": canvas})
        for m in [params["M"], *(extreme if seed < 2 else ())]:
            m = np.asarray(m, np.float32)
            x0, y0, x1, y1 = canvas.read_rectangle(m, params["size"])
            partial += (x1 - x0) * (y1 - y0) < whole.shape[0] * whole.shape[1]
            noisy = rng.integers(0, 256, whole.shape, np.uint8)
            noisy[y0:y1, x0:x1] = whole[y0:y1, x0:x1]
            expected = cv2.warpAffine(whole, m[:2], dsize=params["size"], borderValue=(114,) * 4)
            np.testing.assert_array_equal(
                cv2.warpAffine(noisy, m[:2], dsize=params["size"], borderValue=(114,) * 4),
                expected)
        # the step as planned: its own draws and apply_image, the same image
        random.seed(seed), np.random.seed(seed)
        ours = steps.CvWarp.apply(perspective, {**copy.deepcopy(labels), "img": canvas}, None)
        random.seed(seed), np.random.seed(seed)
        theirs = perspective({**copy.deepcopy(labels), "img": whole.copy()})
        np.testing.assert_array_equal(ours["img"], theirs["img"])
        np.testing.assert_array_equal(ours["instances"].bboxes, theirs["instances"].bboxes)
    assert partial >= 8


def test_each_step_in_c_runs_the_users_object_but_its_pixels(tmp_path, monkeypatch):
    # steps.IN_C: each class's apply is the step's own call, apply_image aside: the
    # same draws and labels as the user's object; the pixels are the C copy's (the
    # warp's as a float copy here, whatever OpenCV is installed: within 1 level)
    from jpegloader.pipelines.yolo import augment, recognise, steps
    from jpegloader.pipelines.yolo.opencv import WARP_FLOAT, OpenCVMatch
    match = OpenCVMatch("test", WARP_FLOAT, 32)
    for module in (steps, augment):
        monkeypatch.setattr(module, "opencv_match", lambda: match)
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8, mosaic=0.0)
    flat = recognise.flat_steps(ds.transforms.transforms)
    claimed = {kind: t for t in flat for kind in steps.IN_C if kind.claims(t)}
    assert set(claimed) == set(steps.IN_C)
    for kind in (steps.Warp, steps.Hsv):
        step = claimed[kind]
        labels = ds.get_image_and_label(3)
        labels["img"] = np.ascontiguousarray(labels["img"])
        random.seed(7), np.random.seed(7)
        ours = kind.apply(step, copy.deepcopy(labels), None)
        random.seed(7), np.random.seed(7)
        theirs = step(copy.deepcopy(labels))
        assert ours["img"].shape == theirs["img"].shape, kind
        assert np.abs(ours["img"].astype(int) - theirs["img"]).max() <= 1, kind
        np.testing.assert_array_equal(ours["instances"].bboxes, theirs["instances"].bboxes)


def test_an_opencv_whose_warp_the_c_core_lacks_keeps_the_warp_on_cv2(tmp_path, monkeypatch):
    # NOTE [ OpenCV's arithmetic, version by version ]: the warp and RandomHSV stay
    # the user's objects (Mosaic's canvas drawn where that warp reads it), and the
    # verdict says why
    from jpegloader.pipelines.yolo import steps
    _with_c_copies(monkeypatch, None, None)
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8)
    assert [k for _, k in steps.planned_steps(ds.transforms)
            if k in (steps.UnbuiltMosaic, steps.Warp, steps.Hsv, steps.CvWarp)] == \
        [steps.UnbuiltMosaic, steps.CvWarp]
    verdict = jpegloader.explain(ds, batch_size=8, collate_fn=ds.collate_fn)
    report = verdict.report()
    assert verdict.accelerated
    assert "RandomPerspective warp and RandomHSV run on your cv2" in report, report
    assert "RandomPerspective warp" not in verdict.split_text().split("yours")[0]


@pytest.mark.parametrize("task", ["segment", "pose", "obb"])
def test_every_task_replays_ultralytics(tmp_path, task):
    ds = train_dataset(generated_yolo_set(tmp_path, task=task), imgsz=64, batch=4, task=task)
    assert_replays_ultralytics(ds, [[0, 1, 2, 3], [4, 5, 6, 7]])


def test_turned_png_and_resized_photos_take_the_datasets_own_reading(tmp_path):
    # the EXIF-turned photo and the PNG are read by the dataset's load_image
    ds = train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    names = [Path(f).name for f in ds.im_files]
    batch = [names.index("turned3.jpg"), names.index("large5.jpg"), names.index("png7.png"),
             names.index("photo0.jpg")]
    ours, report = decoded_batch(ds, batch, epoch_seed(1, 0), 0)
    assert report.python_path == 2
    assert_same_batches([ours], [ultralytics_batch(ds, batch, epoch_seed(1, 0), 0)])


def test_a_dataset_cached_in_ram_replays_ultralytics(tmp_path):
    # cache="ram": the dataset holds every photo decoded; nothing is decoded here and
    # Mosaic draws its partners from the whole set, as it does with a RAM cache
    ds = train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4, cache="ram")
    assert ds.cache == "ram"
    ours, report = decoded_batch(ds, [0, 1, 2, 3], epoch_seed(6, 0), 0)
    assert report.seconds.get("decode", 0.0) == 0.0
    assert_same_batches([ours], [ultralytics_batch(ds, [0, 1, 2, 3], epoch_seed(6, 0), 0)])


def test_deterministic_steps_equal_ultralytics_own_loader(tmp_path):
    # every augmentation off but fliplr=1.0: no draw changes a pixel, so the batches
    # equal those of Ultralytics' own loading through torch's DataLoader
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8, mosaic=0.0, translate=0.0,
                       scale=0.0, hsv_h=0.0, hsv_s=0.0, hsv_v=0.0, fliplr=1.0)
    ours = loader(ds, 2, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility.report()
    assert_same_batches(list(ours), list(loader(ds, 0, cls=torch.utils.data.DataLoader)))


def test_batches_are_the_same_for_any_num_workers_and_new_each_pass(tmp_path):
    ds = train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    runs = []
    for workers in (0, 2):
        dl = jpegloader.DataLoader(ds, batch_size=4, shuffle=True, num_workers=workers,
                                   collate_fn=ds.collate_fn,
                                   generator=torch.Generator().manual_seed(8))
        assert dl.eligibility.accelerated, dl.eligibility.report()
        runs.append(list(dl))
    assert_same_batches(runs[0], runs[1])
    # a loader that never starts a new epoch (Ultralytics' InfiniteDataLoader) still
    # draws anew for every batch: the batch number is in each sample's seed
    seed = epoch_seed(2, 0)
    first, _ = decoded_batch(ds, [0, 1, 2, 3], seed, 0)
    again, _ = decoded_batch(ds, [0, 1, 2, 3], seed, 1)
    assert not torch.equal(first["img"], again["img"])


def test_close_mosaic_is_followed(tmp_path):
    # Ultralytics' trainer calls dataset.close_mosaic(hyp) for the last epochs: the next
    # epoch's verdict sees the new transforms.  Closed here with every augmentation
    # off, the batches then equal Ultralytics' own loading through torch's loader
    from ultralytics.cfg import get_cfg
    ds = train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    dl = loader(ds, 2)
    reference = loader(ds, 0, cls=torch.utils.data.DataLoader)
    assert dl.eligibility.accelerated, dl.eligibility.report()
    with pytest.raises(AssertionError):
        assert_same_batches(list(dl), list(reference))  # Mosaic, warps, HSV, flips
    ds.close_mosaic(hyp=get_cfg(overrides={"imgsz": 64, "scale": 0.0, "translate": 0.0,
                                           "hsv_h": 0.0, "hsv_s": 0.0, "hsv_v": 0.0,
                                           "fliplr": 0.0}))
    assert_same_batches(list(dl), list(reference))
    assert dl.eligibility.accelerated


def test_rect_training_batches_replay_ultralytics_each_of_its_batch_shape(tmp_path):
    # rect=True: Ultralytics turns Mosaic, MixUp and CutMix off and warps each photo to
    # its batch's shape (the set sorted by aspect ratio); batches of different shapes
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8, rect=True,
                       degrees=5.0)
    verdict = loader(ds, 0).eligibility
    assert verdict.accelerated, verdict.report()
    shapes = {tuple(int(v) for v in s) for s in ds.batch_shapes}
    assert len(shapes) > 1 and max(shapes) <= (320, 320)
    batches = [list(range(b * 8, b * 8 + 8)) for b in (0, len(ds) // 8 - 1)]
    assert_replays_ultralytics(ds, batches)
    ours, _ = decoded_batch(ds, batches[0], epoch_seed(3, 0), 0)
    assert tuple(ours["img"].shape[2:]) == tuple(ds.batch_shapes[0])
    # a batch whose samples have different rect shapes fails as Ultralytics' collate_fn
    # would, naming nothing silently dropped
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        decoded_batch(ds, [0, len(ds) - 1], epoch_seed(3, 0), 0)


def test_rect_training_with_its_unshuffled_loader_equals_ultralytics_own(tmp_path):
    # every augmentation off but fliplr=1.0: no draw changes a pixel, so the loader's
    # rect batches equal Ultralytics' own loading through torch's DataLoader
    ds = train_dataset(coco_yolo_set(tmp_path), imgsz=320, batch=8, rect=True, translate=0.0,
                       scale=0.0, hsv_h=0.0, hsv_s=0.0, hsv_v=0.0, fliplr=1.0)
    ours = loader(ds, 2, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility.report()
    batches = list(ours)
    assert len({tuple(b["img"].shape) for b in batches}) > 1
    assert_same_batches(batches, list(loader(ds, 0, cls=torch.utils.data.DataLoader)))


@pytest.mark.parametrize("workers", [0, 2])
def test_a_photo_broken_after_the_cache_names_the_file(tmp_path, workers):
    assert_a_broken_photo_is_named(
        train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4), workers)


def test_a_broken_photo_is_skipped_and_never_a_partner(tmp_path):
    # on_error="skip": the broken photo's sample is dropped and listed, and Mosaic draws
    # its partners from the batch's readable photos only, so no other sample fails
    ds = train_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    broken = next(k for k, f in enumerate(ds.im_files) if f.endswith(".jpg"))
    Path(ds.im_files[broken]).unlink()
    Path(ds.im_files[broken]).write_bytes(b"\xff\xd8 not a photo any more")
    dl = loader(ds, 2, on_error="skip")
    assert sum(len(b["im_file"]) for b in dl) == len(ds) - 1
    assert [index for index, *_ in dl.skipped_samples] == [broken]


def test_an_empty_label_file_and_a_class_beyond_the_names_go_as_ultralytics_takes_them(
        tmp_path):
    # Ultralytics decides while it indexes the set: a photo with an empty label file is
    # kept without objects; one labelled with a class beyond `names` is left out (its
    # cache calls it corrupt).  Both loaders read the dataset's labels: the same batches.
    yaml = generated_yolo_set(tmp_path)
    labels = sorted((yaml.parent / "labels" / "val").glob("*.txt"))
    labels[0].write_text("")
    labels[1].write_text("7 0.5 0.5 0.2 0.2\n")  # names are 0, 1, 2
    val = val_dataset(yaml, imgsz=64, batch=4, rect=False)
    kept = [Path(f).stem for f in val.im_files]
    assert labels[0].stem in kept and labels[1].stem not in kept
    assert len(val.labels[kept.index(labels[0].stem)]["cls"]) == 0
    assert_equals_ultralytics(val, 2)
    train = train_dataset(yaml, imgsz=64, batch=4)
    assert [Path(f).stem for f in train.im_files] == kept
    assert_replays_ultralytics(train, [list(range(k, min(k + 4, len(train))))
                                       for k in range(0, len(train), 4)])


@pytest.mark.integration  # `yolo train` and `yolo val` in subprocesses
def test_yolo_train_runs_accelerated_and_yolo_val_of_its_checkpoint_gives_the_same_table(
        tmp_path):
    # `yolo train` under python -m jpegloader run: both of its loaders (training, with
    # close_mosaic's reset(), and validation) are accelerated; training completes.  Then
    # `yolo val` of the checkpoint it wrote, with and without jpegloader (exact): the
    # same metrics table and the same predictions, box for box.
    import json
    import re
    import shutil
    import subprocess
    import sys
    yolo = shutil.which("yolo", path=str(Path(sys.executable).parent))
    if yolo is None:
        pytest.skip("Ultralytics' yolo command is not beside this Python")
    yaml = generated_yolo_set(tmp_path / "set", count=16)
    out = subprocess.run(
        [sys.executable, "-m", "jpegloader", "run", yolo, "train", "model=yolo11n.yaml",
         f"data={yaml}", "imgsz=64", "batch=4", "workers=2", "epochs=2", "close_mosaic=1",
         "plots=False", "device=cpu", "amp=False", f"project={tmp_path / 'runs'}",
         "name=train"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert text.count("over YOLODataset(16 samples): accelerated (yolo pipeline") == 2, text
    from jpegloader.pipelines.yolo.opencv import opencv_match
    # native where the self-check found a C copy for the installed OpenCV's warp
    assert ("RandomPerspective warp" in text) == (opencv_match().warp is not None), text
    assert "2 epochs completed" in text

    checkpoint = tmp_path / "runs" / "train" / "weights" / "last.pt"
    tables, predictions = {}, {}
    for name, prefix in (("ultralytics", []), ("jpegloader", ["-m", "jpegloader", "run",
                                                                "--decode", "exact"])):
        out = subprocess.run(
            [sys.executable, *prefix, yolo, "val", f"model={checkpoint}", f"data={yaml}",
             "imgsz=64", "batch=4", "workers=2", "save_json=True", "plots=False",
             "device=cpu", f"project={tmp_path / 'runs'}", f"name={name}"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path)
        text = out.stdout + out.stderr
        assert out.returncode == 0, text[-3000:]
        accelerated = "over YOLODataset(16 samples): accelerated (yolo pipeline" in text
        assert accelerated == (name == "jpegloader"), text[-3000:]
        # the table's rows: "all" and each class's (images, instances, P, R, mAPs)
        tables[name] = [line.split() for line in text.splitlines()
                        if re.match(r"\s+(all|[abc])\s+\d", line)]
        predictions[name] = json.loads(
            (tmp_path / "runs" / name / "predictions.json").read_text())
    # a two-epoch checkpoint on noise finds nothing (a table of zeros) but scores boxes
    assert len(tables["ultralytics"]) == 4 and len(predictions["ultralytics"]) > 100
    assert tables["jpegloader"] == tables["ultralytics"]
    assert predictions["jpegloader"] == predictions["ultralytics"]


def test_a_npy_beside_a_photo_is_trained_on_where_ultralytics_reads_it(tmp_path):
    # the batch's photos with a .npy as new as the photo (other pixels), one older
    # than its photo (ignored) and under cache="disk" (read whatever its age): each
    # replays Ultralytics, whose load_image reads them
    from tests.pipelines.yolo.yolo_sets import npy_beside
    for cache, reads_old in ((False, False), ("disk", True)):
        root = tmp_path / str(cache)
        ds = train_dataset(generated_yolo_set(root), imgsz=64, batch=4, cache=cache)
        for npy in root.rglob("*.npy"):  # cache="disk" wrote every photo's: start clean
            npy.unlink()
        names = [Path(f).name for f in ds.im_files]
        batch = [names.index(n) for n in ("photo0.jpg", "photo1.jpg", "photo2.jpg", "photo4.jpg")]
        npy_beside(ds, "photo0.jpg", lambda im: 255 - im)
        npy_beside(ds, "photo1.jpg", lambda im: 255 - im, age_s=60)
        ours, report = decoded_batch(ds, batch, epoch_seed(2, 0), 0)
        assert report.python_path == 2
        want = ultralytics_batch(ds, batch, epoch_seed(2, 0), 0)
        assert_same_batches([ours], [want])
        plain = train_dataset(generated_yolo_set(tmp_path / f"plain-{cache}"), imgsz=64, batch=4)
        for npy in (tmp_path / f"plain-{cache}").rglob("*.npy"):
            npy.unlink()
        photos = ultralytics_batch(plain, batch, epoch_seed(2, 0), 0)
        assert not torch.equal(want["img"], photos["img"])  # the .npy's pixels were used
        assert reads_old == (ds.load_image(batch[1])[0][0, 0, 0] !=
                             plain.load_image(batch[1])[0][0, 0, 0])
