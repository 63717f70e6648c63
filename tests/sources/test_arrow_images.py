"""Hugging Face datasets read from their Arrow files (sources/arrow_images.py): the
dataset as torch's loader reads it, accelerated with the ImageFolder path's batches on
the same images, through select/shuffle, and the clear refusals.  The datasets are
real Arrow datasets written with ``datasets`` from the real-image corpus."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets as tv_datasets

import jpegloader
from jpegloader.datasets import HuggingFaceImages
from tests.conftest import (
    assert_resumes_bit_identically,
    eval_transform,
    shared,
    to_255,
    train_transform,
    write_image_folder,
)

hf = pytest.importorskip("datasets", reason="Hugging Face datasets is a test dependency "
                                            "(the [test] extra)")
TOLERANCE = 3.0  # mean absolute difference on 0-255 against torch's loader (decode="auto")


def _arrow(samples, out):
    """A datasets.Dataset of the files' bytes with an Image feature, saved and reloaded
    (memory-mapped Arrow files, as load_dataset gives)."""
    rows = {"image": [{"bytes": open(p, "rb").read(), "path": None} for p, _ in samples],
            "label": [t for _, t in samples]}
    ds = hf.Dataset.from_dict(rows).cast_column("image", hf.Image())
    ds.save_to_disk(str(out), max_shard_size="20MB")
    return hf.load_from_disk(str(out))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = shared("imagenet-sample")
    folder = tv_datasets.ImageFolder(str(root))
    return root, _arrow(folder.samples, tmp_path_factory.mktemp("hf") / "ds")


@pytest.mark.parametrize("pipeline", ["eval", "train"])
def test_accelerated_arrow_images_equal_the_image_folder_path(real, pipeline):
    root, arrow = real
    assert len(arrow.cache_files) > 1  # several Arrow files
    transform = eval_transform if pipeline == "eval" else train_transform
    ds = HuggingFaceImages(arrow, transform())
    folder = tv_datasets.ImageFolder(str(root), transform())

    def batches(d):
        return list(jpegloader.DataLoader(d, batch_size=32, shuffle=True, num_workers=2,
                                          generator=torch.Generator().manual_seed(9)))
    assert jpegloader.DataLoader(ds, batch_size=32).eligibility.accelerated
    for (a, la), (b, lb) in zip(batches(ds), batches(folder), strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)
    if pipeline == "eval":
        for (a, la), (b, lb) in zip(jpegloader.DataLoader(ds, batch_size=64),
                                    TorchDataLoader(ds, batch_size=64), strict=True):
            assert torch.equal(la, lb)
            diff = (to_255(a) - to_255(b)).abs().mean(dim=(1, 2, 3))
            assert diff.median() <= 1.0 and diff.max() <= TOLERANCE


@pytest.mark.parametrize("rows", ["shuffled", "head", "second-file"])
def test_selected_and_shuffled_rows_map_to_their_bytes(real, rows):
    """select and shuffle: an indices mapping (shuffle), or a slice of the memory-mapped
    table (a contiguous select), also one inside the second Arrow file."""
    _, arrow = real
    picked = {"shuffled": lambda: arrow.shuffle(seed=3).select(range(40)),
              "head": lambda: arrow.select(range(96)),
              "second-file": lambda: arrow.select(range(len(arrow) - 50, len(arrow)))}[rows]()
    ds = HuggingFaceImages(picked, eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=8, decode="exact")
    assert loader.eligibility.accelerated, loader.eligibility.report()
    ours = torch.cat([b[0] for b in loader])
    labels = torch.cat([b[1] for b in jpegloader.DataLoader(ds, batch_size=8)])
    assert labels.tolist() == picked["label"]
    for k in (0, len(picked) // 2, len(picked) - 1):
        assert (to_255(ours[k]) - to_255(ds[k][0])).abs().mean() <= 0.5


def test_in_memory_and_non_image_columns(tmp_path):
    root = write_image_folder(tmp_path / "d", 6)
    samples = tv_datasets.ImageFolder(str(root)).samples
    rows = {"image": [{"bytes": open(p, "rb").read(), "path": None} for p, _ in samples],
            "label": [t for _, t in samples]}
    in_memory = hf.Dataset.from_dict(rows).cast_column("image", hf.Image())
    ds = HuggingFaceImages(in_memory, eval_transform())
    verdict = jpegloader.explain(ds, batch_size=2)
    assert not verdict.accelerated and "dataset.storage" in verdict.summary()
    assert len(list(jpegloader.DataLoader(ds, batch_size=2))) == 3  # torch's loader runs it
    plain = hf.Dataset.from_dict({"image": ["a", "b"], "label": [0, 1]})
    with pytest.raises(ValueError, match="column 'image' .* not an Image feature"):
        HuggingFaceImages(plain)
    with pytest.raises(ValueError, match="no column 'target'"):
        HuggingFaceImages(in_memory, label_column="target")


def test_a_datasets_dataset_is_pointed_at_the_wrapper(tmp_path):
    plain = hf.Dataset.from_dict({"image": ["a"], "label": [0]})
    verdict = jpegloader.explain(plain, batch_size=1)
    (reason,) = [c for c in verdict.reasons if c.rule == "dataset.type"]
    assert "jpegloader.datasets.HuggingFaceImages(ds, transform" in reason.hint


def test_timm_hfds_reader_is_read_from_its_arrow_files(tmp_path):
    """timm's ImageDataset with its hfds reader (create_dataset("hfds/...")), over a local
    dataset that datasets loads into Arrow files: accelerated, with the batches of the
    same images in an ImageFolder."""
    timm_data = pytest.importorskip("timm.data", reason="timm is a test dependency")
    root = write_image_folder(tmp_path / "d", 12)
    folder = tv_datasets.ImageFolder(str(root), eval_transform())
    rows = {"image": [{"bytes": open(p, "rb").read(), "path": None} for p, _ in folder.samples],
            "label": [t for _, t in folder.samples]}
    data = hf.Dataset.from_dict(rows).cast_column("image", hf.Image()).cast_column(
        "label", hf.ClassLabel(names=folder.classes))
    data.to_parquet(str(tmp_path / "hub" / "data" / "train-00000.parquet"))
    ds = timm_data.create_dataset(f"hfds/{tmp_path / 'hub'}", root=str(tmp_path / "cache"),
                                  split="train", transform=eval_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    assert loader.eligibility.accelerated, loader.eligibility.report()
    for (a, la), (b, lb) in zip(loader, jpegloader.DataLoader(folder, batch_size=4),
                                strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)


def test_arrow_images_resume_and_spawned_workers(real):
    """A mid-epoch checkpoint resumes bit for bit (another num_workers, spawned workers),
    as on an ImageFolder."""
    _, arrow = real
    ds = HuggingFaceImages(arrow.select(range(96)), train_transform())
    assert jpegloader.explain(ds, batch_size=16).accelerated

    assert_resumes_bit_identically(ds, stop=2, context="spawn")


@pytest.mark.parametrize("workers", [0, 2])
def test_an_empty_image_cell_is_named_and_follows_on_error(tmp_path, workers):
    """A None image cell: the dataset still accelerates; the sample is an error that
    says it has no image (on_error="raise"), or is left out and listed ("skip")."""
    root = write_image_folder(tmp_path / "d", 8)
    samples = tv_datasets.ImageFolder(str(root)).samples
    rows = {"image": [None if k == 3 else {"bytes": open(p, "rb").read(), "path": None}
                      for k, (p, _) in enumerate(samples)],
            "label": [t for _, t in samples]}
    hf.Dataset.from_dict(rows).cast_column("image", hf.Image()).save_to_disk(
        str(tmp_path / "ds"))
    ds = HuggingFaceImages(hf.load_from_disk(str(tmp_path / "ds")), eval_transform())
    with pytest.raises(ValueError, match=r"sample 3: its 'image' cell is empty \(None\)"):
        ds[3]
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=workers)
    assert loader.eligibility.accelerated, loader.eligibility.report()
    with pytest.raises(ValueError, match=r"(?s)loading sample 3 .*has no image: its image "
                                         r"cell is empty"):
        list(loader)
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=workers, on_error="skip")
    labels = torch.cat([b[1] for b in loader]).tolist()
    assert labels == [t for k, (_, t) in enumerate(samples) if k != 3]
    assert [index for index, _, _ in loader.skipped_samples] == [3]
