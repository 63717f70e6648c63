"""What a checkpoint costs: the state's size, state_dict()'s time, and the time to
the first batch after load_state_dict() against a fresh epoch's, on an ImageFolder.

    python benchmarks/checkpoint_resume.py DIR [--files 2000] [--workers 2]
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from jpegloader.bench import corpora as bd


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("data", type=Path)
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = bd.replicate_folder(args.data, args.files, Path(tmp) / "d")
        ds = datasets.ImageFolder(str(root), T.Compose([
            T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]))
        fresh, resumed, saves, sizes = [], [], [], []
        for _ in range(args.repeat):
            loader = jpegloader.DataLoader(ds, batch_size=64, shuffle=True,
                                           num_workers=args.workers)
            start = time.perf_counter()
            it = iter(loader)
            next(it)
            fresh.append(time.perf_counter() - start)
            for _, _batch in zip(range(len(loader) // 2), it, strict=False):
                pass
            start = time.perf_counter()
            state = loader.state_dict()
            saves.append(time.perf_counter() - start)
            sizes.append(len(json.dumps(state)))
            loader.close()  # its workers gone before the resumed loader is timed
            del it, loader
            other = jpegloader.DataLoader(ds, batch_size=64, shuffle=True,
                                          num_workers=args.workers)
            torch.manual_seed(1)
            start = time.perf_counter()
            other.load_state_dict(json.loads(json.dumps(state)))
            resumed_it = iter(other)  # kept: dropping it would time the workers' teardown
            next(resumed_it)
            resumed.append(time.perf_counter() - start)
            print(f"trial: fresh {fresh[-1]:.3f} s, resumed {resumed[-1]:.3f} s", flush=True)
            other.close()
            del resumed_it, other
        print(json.dumps({
            "files": args.files, "workers": args.workers, "batches_skipped": state[
                "batches_yielded"],
            "state_json_bytes": statistics.median(sizes),
            "state_dict_ms": round(1000 * statistics.median(saves), 3),
            "first_batch_fresh_s": round(statistics.median(fresh), 3),
            "first_batch_after_resume_s": round(statistics.median(resumed), 3)}, indent=1))


if __name__ == "__main__":
    main()
