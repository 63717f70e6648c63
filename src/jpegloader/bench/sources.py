"""Where the benchmark's images are kept (``--source``): loose files in an ImageFolder,
WebDataset tar shards, or a Hugging Face Arrow dataset, all made from the same files,
and for each what users run on torch's DataLoader today."""
from __future__ import annotations

import argparse
import io
import tarfile
from pathlib import Path

import torch
from torchvision import datasets

SOURCES = ("folder", "webdataset", "hf")
SHARD_SAMPLES = 1000  # samples per shard
SHUFFLE_BUFFER = 1000  # webdataset's documentation suggests a buffer of about this size


def write_shards(root: Path, out: Path) -> str:
    """The ImageFolder's files as WebDataset shards (``key.jpg`` + ``key.cls``, in the
    folder's order); returns the shards' brace pattern."""
    samples = datasets.ImageFolder(str(root)).samples
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for start in range(0, len(samples), SHARD_SAMPLES):
        with tarfile.open(out / f"shard-{count:06d}.tar", "w") as tar:
            for k, (path, target) in enumerate(samples[start:start + SHARD_SAMPLES]):
                key = f"{start + k:08d}"
                for name, payload in ((f"{key}.jpg", Path(path).read_bytes()),
                                      (f"{key}.cls", str(target).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        count += 1
    return str(out / f"shard-{{000000..{count - 1:06d}}}.tar")


def write_arrow(root: Path, out: Path):
    """The ImageFolder's files as a Hugging Face dataset with an Image column, saved to
    disk and loaded back memory-mapped (as load_from_disk gives it)."""
    import datasets as hf
    samples = datasets.ImageFolder(str(root)).samples
    rows = {"image": [{"bytes": Path(p).read_bytes(), "path": None} for p, _ in samples],
            "label": [t for _, t in samples]}
    hf.Dataset.from_dict(rows).cast_column("image", hf.Image()).save_to_disk(str(out))
    return hf.load_from_disk(str(out))


class _HFTransform:
    """``ds.with_transform``'s function as users write it: decode with datasets' PIL
    path, convert to RGB, apply the transform."""

    def __init__(self, transform):
        self.transform = transform

    def __call__(self, batch: dict) -> dict:
        return {"image": [self.transform(im.convert("RGB")) for im in batch["image"]],
                "label": batch["label"]}


def collate_rows(rows: list[dict]) -> list[torch.Tensor]:
    """Rows of ``{"image", "label"}`` into default_collate's [images, labels]."""
    return [torch.stack([r["image"] for r in rows]),
            torch.tensor([r["label"] for r in rows], dtype=torch.int64)]


def datasets_for(source: str, root: Path, transform, work: Path) -> tuple:
    """(the dataset jpegloader reads, torch's dataset as users build it for this source,
    torch DataLoader keyword arguments it needs)."""
    import jpegloader.datasets as ours
    if source == "folder":
        ds = datasets.ImageFolder(str(root), transform)
        return ds, ds, {"shuffle": True}
    if source == "webdataset":
        import webdataset as wds
        pattern = write_shards(root, work / "shards")
        mine = ours.WebDataset(pattern, transform, cache_dir=work / "cache")
        shards = len(mine.urls)
        native = (wds.WebDataset(pattern, shardshuffle=shards, empty_check=False)
                  .shuffle(SHUFFLE_BUFFER).decode("pil").to_tuple("jpg", "cls")
                  .map_tuple(transform, int).with_length(len(mine)))
        return mine, native, {}  # an IterableDataset: it shuffles itself
    if source == "hf":
        arrow = write_arrow(root, work / "arrow")
        return (ours.HuggingFaceImages(arrow, transform), arrow.with_transform(
            _HFTransform(transform)), {"shuffle": True, "collate_fn": collate_rows})
    raise ValueError(f"unknown source {source!r}; one of {SOURCES}")


def script_arguments(doc: str) -> argparse.Namespace:
    """The options of the benchmarks/ scripts that compare sources."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("data", type=Path, help="an ImageFolder of JPEGs")
    p.add_argument("--files", type=int, default=2000, help="copied to exactly this many")
    p.add_argument("--recipe", "--pipeline", dest="pipeline", default="train",
                   choices=("train", "eval"))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5, help="measured epochs after one warm-up")
    return p.parse_args()
