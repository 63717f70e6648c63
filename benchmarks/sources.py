"""jpegloader on the same images kept three ways, side by side: loose files
(ImageFolder), WebDataset tar shards (jpegloader.datasets.WebDataset) and a Hugging
Face Arrow dataset (HuggingFaceImages), epochs alternating; prints each one's median
img/s and its ratio to the ImageFolder's.  The shard index's build rate (from the page
cache) and its size per sample are printed too.

    python benchmarks/sources.py DATA_DIR [--files 2000] [--recipe train|eval]
        [--workers 2] [--epochs 5]
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from torchvision import datasets

import jpegloader
from jpegloader.bench import corpora, sources
from jpegloader.bench.measure import alternate_epochs
from jpegloader.bench.recipes import PIPELINES
from jpegloader.sources.shards import ShardIndex, shard_list


def main() -> int:
    args = sources.script_arguments(__doc__)
    transform = PIPELINES[args.pipeline][1]()
    with tempfile.TemporaryDirectory(prefix="jpegloader-sources-") as tmp:
        tmp = Path(tmp)
        root = corpora.replicate_folder(args.data, args.files, tmp / "folder")
        pattern = sources.write_shards(root, tmp / "shards")
        shards = shard_list(pattern)
        size = sum(Path(s).stat().st_size for s in shards)
        for s in shards:  # in the page cache, as after a first epoch
            Path(s).read_bytes()
        start = time.perf_counter()
        indexes = [ShardIndex.build(s, "cls", ("jpg",)) for s in shards]
        took = time.perf_counter() - start
        ds = jpegloader.datasets.WebDataset(pattern, transform, cache_dir=None)
        dataset_bytes = sum(a.nbytes for a in (ds.shard_of, ds.offsets, ds.sizes, ds.targets,
                                               ds._keys, ds._key_offsets)) / len(ds)
        table = jpegloader.DataLoader(ds, batch_size=2)._engine.decoder.table
        table_bytes = sum(t.untyped_storage().nbytes() for t in table.tensors()[2:]) / len(ds)
        print(f"index: {size / took / 1e9:.2f} GB/s of shard bytes from the page cache "
              f"({len(shards)} shards, {size / 1e6:.0f} MB, {took * 1000:.0f} ms, "
              f"{len(indexes)} indexes); per sample {dataset_bytes:.0f} bytes in the dataset "
              f"and {table_bytes:.0f} in the loader's shared table: for ImageNet's 1,281,167 "
              f"samples {1_281_167 * dataset_bytes / 2**20:.0f} MiB and "
              f"{1_281_167 * table_bytes / 2**20:.0f} MiB")
        made = {
            "folder": datasets.ImageFolder(str(root), transform),
            "webdataset": jpegloader.datasets.WebDataset(pattern, transform,
                                                         cache_dir=tmp / "cache"),
            "hf": jpegloader.datasets.HuggingFaceImages(sources.write_arrow(root, tmp / "hf"),
                                                        transform),
        }
        loaders = {name: jpegloader.DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                                               num_workers=args.workers)
                   for name, ds in made.items()}
        rates = alternate_epochs(loaders, args.epochs)
        folder = statistics.median(rates["folder"])
        print(f"{args.pipeline}, {args.files} files, {args.workers} workers, batch "
              f"{args.batch_size}, {args.epochs} epochs each, alternating:")
        for name, rs in rates.items():
            pairs = [r / f for r, f in zip(rs, rates["folder"])]
            print(f"  {name:10s} {statistics.median(rs):7.0f} img/s  "
                  f"{statistics.median(rs) / folder:.3f} of the folder's "
                  f"(epoch pairs {min(pairs):.3f}-{max(pairs):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
