"""One rank of the multi-rank test (test_distributed.py), started by

    python -m torch.distributed.run --standalone --nproc_per_node=2 \\
        -m tests.dataloader.ddp_child ROOT OUT_DIR

Per rank, over an ImageFolder with DistributedSampler (gloo, CPU): the eval
pipeline's batches against torch's loader for this rank (pixels), the train
pipeline's indices and structure over two epochs with set_epoch, and a checkpoint
of this rank resumed by a new loader.  Writes OUT_DIR/rank<N>.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import DistributedSampler
from torchvision import datasets
from torchvision import transforms as T

import jpegloader

MEAN, STD = [0.5] * 3, [0.25] * 3


def _loader(cls, ds, sampler, **kwargs):
    return cls(ds, batch_size=4, sampler=sampler, num_workers=1, **kwargs)


def main(root: str, out: Path) -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {"rank": rank, "world": world}

    eval_ds = datasets.ImageFolder(root, T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor(),
                                                    T.Normalize(MEAN, STD)]))
    ours = list(_loader(jpegloader.DataLoader, eval_ds, DistributedSampler(eval_ds, shuffle=False),
                        decode="exact"))
    native = list(_loader(TorchDataLoader, eval_ds, DistributedSampler(eval_ds, shuffle=False)))
    result["eval_labels_equal"] = all(torch.equal(a[1], b[1]) for a, b in zip(ours, native,
                                                                              strict=True))
    result["eval_max_mean_abs_diff"] = max((a[0] - b[0]).abs().mean().item() * 255 * STD[0]
                                           for a, b in zip(ours, native, strict=True))

    train_ds = datasets.ImageFolder(root, T.Compose([T.RandomResizedCrop(32),
                                                     T.RandomHorizontalFlip(), T.ToTensor()]))
    # The loader's own generator: the native loader iterated alongside draws from the
    # global RNG, which the resumed run below does not.
    sampler = DistributedSampler(train_ds, shuffle=True, seed=5)
    loader = _loader(jpegloader.DataLoader, train_ds, sampler,
                     generator=torch.Generator().manual_seed(7))
    native_sampler = DistributedSampler(train_ds, shuffle=True, seed=5)
    native_loader = _loader(TorchDataLoader, train_ds, native_sampler)
    result["indices"], result["train_labels_equal"], result["shapes_equal"] = [], True, True
    uninterrupted = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        native_sampler.set_epoch(epoch)
        result["indices"].append(list(sampler))
        ours = [[t.clone() for t in b] for b in loader]
        uninterrupted += ours
        for a, b in zip(ours, native_loader, strict=True):
            result["train_labels_equal"] &= torch.equal(a[1], b[1])
            result["shapes_equal"] &= a[0].shape == b[0].shape and a[0].dtype == b[0].dtype

    # This rank's checkpoint after 2 batches of epoch 0, resumed by a new loader.
    sampler = DistributedSampler(train_ds, shuffle=True, seed=5)
    loader = _loader(jpegloader.DataLoader, train_ds, sampler,
                     generator=torch.Generator().manual_seed(7))
    sampler.set_epoch(0)
    seen = []
    for batch in loader:
        seen.append([t.clone() for t in batch])
        if len(seen) == 2:
            state = json.loads(json.dumps(loader.state_dict()))
            break
    torch.manual_seed(1234 + rank)
    resumed_sampler = DistributedSampler(train_ds, shuffle=True, seed=5)
    resumed = _loader(jpegloader.DataLoader, train_ds, resumed_sampler,
                      generator=torch.Generator())
    resumed.load_state_dict(state)
    for epoch in range(state["epoch"], 2):
        resumed_sampler.set_epoch(epoch)
        seen += [[t.clone() for t in b] for b in resumed]
    result["resumed_equal"] = len(seen) == len(uninterrupted) and all(
        torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
        for a, b in zip(seen, uninterrupted, strict=True))

    dist.barrier()
    (out / f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
