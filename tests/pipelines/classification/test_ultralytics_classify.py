"""Ultralytics' ClassificationDataset (``yolo classify``) through the classification
pipeline: each photo read as its own ``imread`` (OpenCV) reads it, the C core for the
photos OpenCV decodes alike and the dataset's own reading for the others (an EXIF
turn, a PNG); its ``torch_transforms`` lowered as any torchvision Compose; batches the
``{"img", "cls"}`` dicts default_collate makes of its samples.  Ultralytics is the
oracle (a test dependency only)."""
from __future__ import annotations

import io
from importlib import util
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import jpegloader
from jpegloader.pipelines import CLASSIFICATION, DecodeOptions
from jpegloader.pipelines.opencv_reading import OpenCVReading
from jpegloader.pipelines.random_stream import epoch_seed
from tests.conftest import noisy_jpeg, shared
from tests.pipelines.classification.test_hybrid import assert_replayed

pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for its ClassificationDataset")


def _turned(seed: int) -> bytes:
    image = Image.open(io.BytesIO(noisy_jpeg(96, 64, seed)))
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees: OpenCV turns it, Pillow does not
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif)
    return out.getvalue()


def classify_folder(root: Path) -> Path:
    """imagenet-sample's real photos in three class folders, with an EXIF-turned
    JPEG, a grayscale JPEG and a PNG."""
    photos = sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:21]
    for k, photo in enumerate(photos):
        folder = root / f"class{k % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / photo.name).symlink_to(photo.resolve())
    (root / "class0" / "turned.jpg").write_bytes(_turned(1))
    gray = io.BytesIO()
    Image.open(io.BytesIO(noisy_jpeg(80, 60, 2))).convert("L").save(gray, "JPEG")
    (root / "class1" / "gray.jpg").write_bytes(gray.getvalue())
    png = io.BytesIO()
    Image.open(io.BytesIO(noisy_jpeg(70, 90, 3))).save(png, "PNG")
    (root / "class2" / "drawn.png").write_bytes(png.getvalue())
    return root


def classification_dataset(root: Path, augment: bool, **overrides):
    from ultralytics.cfg import get_cfg
    from ultralytics.data.dataset import ClassificationDataset
    args = get_cfg(overrides={"imgsz": 64, **overrides})
    return ClassificationDataset(str(root), args=args, augment=augment,
                                 prefix="train" if augment else "val")


def test_validation_batches_equal_ultralytics_own_loader(tmp_path):
    ds = classification_dataset(classify_folder(tmp_path), augment=False)
    want = list(torch.utils.data.DataLoader(ds, batch_size=8, num_workers=0))
    for workers in (0, 2):
        ours = jpegloader.DataLoader(ds, batch_size=8, num_workers=workers, decode="exact")
        assert ours.eligibility.accelerated, ours.eligibility.report()
        got = list(ours)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert list(a) == ["img", "cls"]
            assert a["cls"].dtype == b["cls"].dtype and torch.equal(a["cls"], b["cls"])
            assert a["img"].dtype == b["img"].dtype and a["img"].shape == b["img"].shape
            assert torch.equal(a["img"], b["img"])
    # the turned photo and the PNG read as the dataset reads them; the grayscale JPEG in C
    assert ours.python_path_samples == 2


def test_training_samples_equal_ultralytics_transforms_replayed_with_the_same_draws(tmp_path):
    # the default hyperparameters: RandomResizedCrop, a flip, RandAugment and
    # RandomErasing (yours, seeded per sample), ToTensor and Normalize
    ds = classification_dataset(classify_folder(tmp_path), augment=True)
    lowering = CLASSIFICATION.lower(ds, {"batch_size": len(ds)})
    assert lowering.ok, lowering.checks
    assert "RandAugment" in lowering.split["yours"]
    decoder = CLASSIFICATION.decoder(lowering, DecodeOptions(dct_scaling=False))
    n = len(ds)
    arrays = tuple(np.zeros((n, *shape), dtype=torch.empty((), dtype=dt).numpy().dtype)
                   for shape, dt in decoder.layout)
    seed, indices = epoch_seed(7, 0), list(range(n))
    report = decoder.decode(indices, seed, arrays, "in the test")
    assert report.python_path == 2
    read = OpenCVReading(type(ds))
    images = [read(ds.samples[i][0]) for i in indices]
    assert_replayed(decoder.program, arrays[0], images, seed, indices)
    assert np.array_equal(arrays[1][:n], [ds.samples[i][1] for i in indices])


def test_a_cached_dataset_falls_back_saying_why(tmp_path):
    ds = classification_dataset(classify_folder(tmp_path), augment=False, cache="ram")
    loader = jpegloader.DataLoader(ds, batch_size=8)
    assert not loader.eligibility.accelerated
    assert "cache=False" in loader.eligibility.report()


@pytest.mark.parametrize("workers", [0, 2])
def test_a_photo_broken_after_the_dataset_was_built_is_skipped_and_named(tmp_path, workers):
    ds = classification_dataset(classify_folder(tmp_path), augment=False)
    broken = Path(ds.samples[3][0])
    broken.unlink()  # a link to the corpus: replaced, not written through
    broken.write_bytes(b"\xff\xd8 not a photo any more")
    loader = jpegloader.DataLoader(ds, batch_size=8, num_workers=workers, on_error="skip")
    batches = list(loader)
    assert sum(len(b["cls"]) for b in batches) == len(ds) - 1
    assert [index for index, *_ in loader.skipped_samples] == [3]
    with pytest.raises(Exception, match=str(broken)):
        list(jpegloader.DataLoader(ds, batch_size=8, num_workers=workers))
