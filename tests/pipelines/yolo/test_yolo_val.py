"""Ultralytics' validation loaders (``yolo val``: YOLODataset with LetterBox and Format,
rect batches or square) equal Ultralytics' own loading batch for batch, with
decode="exact": images bit-identical, labels, boxes, masks and shapes exact (training
loaders: test_yolo_train.py).  Ultralytics is a test dependency only: the oracle."""
from __future__ import annotations

from importlib import util
from pathlib import Path

import numpy as np
import pytest
import torch

import jpegloader
from tests.conftest import variants
from tests.pipelines.yolo.yolo_sets import coco_yolo_set, generated_yolo_set, val_dataset

# Not imported while collecting: importing Ultralytics patches PIL and torch process-wide
# (tests/conftest.py puts them back after each test).
pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for the YOLO pipeline")


def loader(ds, workers: int, cls=jpegloader.DataLoader, **kw):
    return cls(ds, batch_size=ds.batch_size, shuffle=False, num_workers=workers,
               collate_fn=ds.collate_fn, **kw)


def assert_same_batches(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for b, (a, w) in enumerate(zip(got, want)):
        assert list(a) == list(w), f"batch {b}: keys {list(a)} != {list(w)}"
        for key in a:
            x, y = a[key], w[key]
            if isinstance(x, torch.Tensor):
                assert x.dtype == y.dtype and x.shape == y.shape, (b, key, x.shape, y.shape)
                assert torch.equal(x, y), f"batch {b}: {key} differs"
            else:
                assert repr(x) == repr(y), f"batch {b}: {key} {x!r} != {y!r}"


def assert_equals_ultralytics(ds, workers: int) -> jpegloader.DataLoader:
    ours = loader(ds, workers, decode="exact")
    assert ours.eligibility.accelerated, ours.eligibility.report()
    assert_same_batches(list(ours), list(loader(ds, 0, cls=torch.utils.data.DataLoader)))
    return ours


@pytest.mark.parametrize("rect", [True, False])
@pytest.mark.parametrize("workers", [0, 2])
def test_generated_val_batches_equal_ultralytics(tmp_path, rect, workers):
    # imgsz 64: photos letterboxed as they are, one larger resized by OpenCV's
    # arithmetic in C; the EXIF-turned one and the PNG take Ultralytics' own reading
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4, rect=rect)
    ours = assert_equals_ultralytics(ds, workers)
    assert ours.python_path_samples == 2


@pytest.mark.parametrize("threads", variants([1, 3], keep=[3]))
def test_val_batches_equal_ultralytics_for_any_decode_threads(tmp_path, threads):
    # num_workers=0: the batch's photos (and the two Ultralytics reads itself) split
    # over the threads in one C call, each into its own letterbox
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4, rect=False)
    ours = loader(ds, 0, decode="exact", decode_threads=threads)
    assert ours.eligibility.accelerated, ours.eligibility.report()
    assert_same_batches(list(ours), list(loader(ds, 0, cls=torch.utils.data.DataLoader)))
    assert ours.python_path_samples == 2


@pytest.mark.parametrize("workers", [0, 2])
def test_coco_val_batches_equal_ultralytics(tmp_path, workers):
    ds = val_dataset(coco_yolo_set(tmp_path))
    ours = assert_equals_ultralytics(ds, workers)
    assert ours.python_path_samples == 0


def test_coco_segment_val_masks_equal_ultralytics(tmp_path):
    ds = val_dataset(coco_yolo_set(tmp_path, segments=True), task="segment", imgsz=320,
                     batch=8)
    assert ds.use_segments
    ours = assert_equals_ultralytics(ds, 2)
    assert "masks" in next(iter(ours))


@pytest.mark.parametrize("task", ["detect", "segment", "pose", "obb"])
def test_every_task_equals_ultralytics(tmp_path, monkeypatch, task):
    from jpegloader.pipelines.yolo import instances
    computed = {"letterbox": 0, "format": 0}  # samples whose labels were computed here
    for name, check in (("letterbox", instances._letterboxable),
                        ("format", instances._formattable)):
        def counted(*args, _name=name, _check=check):
            computed[_name] += bool(_check(*args))
            return _check(*args)
        monkeypatch.setattr(instances, check.__name__, counted)
    ds = val_dataset(generated_yolo_set(tmp_path, task=task), imgsz=64, batch=4, task=task)
    ours = assert_equals_ultralytics(ds, 0)
    # the two photos Ultralytics reads itself go through your objects
    assert computed["letterbox"] == len(ds) - 2
    assert computed["format"] == len(ds) - 2
    key = {"detect": "bboxes", "segment": "masks", "pose": "keypoints", "obb": "bboxes"}[task]
    assert key in next(iter(ours))
    native = ours.eligibility.split_text().split("collate")[0].split("yours")[0]
    assert "LetterBox labels" in native and "Format labels" in native


def test_auto_decode_gives_the_same_batches(tmp_path):
    # no resize happens in the C core, so no DCT scale is ever taken
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    assert_same_batches(list(loader(ds, 0)), list(loader(ds, 0, cls=torch.utils.data.DataLoader)))


def assert_a_broken_photo_is_named(ds, workers: int) -> None:
    """Ultralytics checked the photos when it cached the labels; one broken since fails in
    the C core, then in the dataset's own reading, which raises as Ultralytics' loader
    does: the error names the file and the index."""
    broken = next(k for k, f in enumerate(ds.im_files) if f.endswith(".jpg"))
    path = Path(ds.im_files[broken])
    path.unlink()
    path.write_bytes(b"\xff\xd8 not a photo any more")
    with pytest.raises(FileNotFoundError, match=f"sample {broken} .*{path.name}"):
        list(loader(ds, workers))
    with pytest.raises(FileNotFoundError):
        list(loader(ds, 0, cls=torch.utils.data.DataLoader))


@pytest.mark.parametrize("workers", [0, 2])
def test_a_photo_broken_after_the_cache_names_the_file(tmp_path, workers):
    assert_a_broken_photo_is_named(val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4),
                                   workers)


def test_another_collate_fn_falls_back(tmp_path):
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    verdict = jpegloader.DataLoader(ds, batch_size=4, collate_fn=lambda b: b).eligibility
    assert not verdict.accelerated
    assert "not the dataset's own collate_fn" in verdict.report()


def test_rect_batches_need_the_datasets_batch_size(tmp_path):
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    verdict = jpegloader.DataLoader(ds, batch_size=3, collate_fn=ds.collate_fn).eligibility
    assert not verdict.accelerated and "rect batches of 4" in verdict.report()


def test_ultralytics_build_dataloader_is_accelerated_when_patched(tmp_path):
    # InfiniteDataLoader's base is resolved when Ultralytics is imported: with
    # `python -m jpegloader run` it is jpegloader's DataLoader; its _RepeatSampler
    # and single persistent iterator, taken from _get_iterator, are this loader's
    # own (not torch's under an accelerated verdict), and reset() starts a new one
    import subprocess
    import sys
    yaml = generated_yolo_set(tmp_path)
    script = tmp_path / "val.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\n"
        "from tests.pipelines.yolo.yolo_sets import val_dataset\n"
        "from ultralytics.data import build_dataloader\n"
        "ds = val_dataset(%r, imgsz=64, batch=4)\n"
        "dl = build_dataloader(ds, 4, 2, shuffle=False)\n"
        "print('ELIGIBLE', dl.eligibility.accelerated)\n"
        "for epoch in range(2):\n"
        "    n = sum(len(b['im_file']) for b in dl)\n"
        "    print('EPOCH', epoch, n, type(dl.iterator).__name__)\n"
        "dl.reset()\n"
        "print('RESET', sum(len(b['im_file']) for b in dl), type(dl.iterator).__name__)\n"
        % (str(Path.cwd()), str(yaml)))
    out = subprocess.run([sys.executable, "-m", "jpegloader", "run", str(script)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ELIGIBLE True" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "EPOCH 0 12 Epoch" in out.stdout and "EPOCH 1 12 Epoch" in out.stdout, out.stdout
    assert "RESET 12 Epoch" in out.stdout, out.stdout


@pytest.mark.parametrize("workers", [0, 2])
def test_a_npy_beside_a_photo_is_read_where_ultralytics_reads_it(tmp_path, workers, caplog):
    # cache="disk"'s files: a .npy as new as its photo is what Ultralytics trains on
    # (other pixels here), one older than its photo is not; one of another size is
    # read too, and named in a WARNING
    from tests.pipelines.yolo.yolo_sets import npy_beside
    ds = val_dataset(generated_yolo_set(tmp_path), imgsz=64, batch=4)
    npy_beside(ds, "photo0.jpg", lambda im: 255 - im)
    npy_beside(ds, "photo1.jpg", lambda im: 255 - im, age_s=60)
    resized = npy_beside(ds, "photo2.jpg", lambda im: np.ascontiguousarray(im[:-8]))
    with caplog.at_level("WARNING", logger="jpegloader"):
        ours = assert_equals_ultralytics(ds, workers)
    assert ours.python_path_samples == 2 + 3
    if workers == 0:  # a worker's log goes to its own stderr
        named = [r.getMessage() for r in caplog.records if str(resized) in r.getMessage()]
        assert len(named) == 1 and "photo2.jpg" in named[0], caplog.text
