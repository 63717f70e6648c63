"""Loader configurations for the checkpoint/resume tests, shared by the test module
and the child process that resumes in a fresh interpreter."""
from __future__ import annotations

import torch
from torch.utils.data import BatchSampler, DistributedSampler, RandomSampler
from torchvision import datasets
from torchvision import transforms as T

import jpegloader

EPOCHS = 3


def transform():
    return T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize([0.5] * 3, [0.25] * 3)])


def _plus_one(target: int) -> int:
    return target + 1


def build(case: str, root: str, workers: int, fallback: bool = False):
    """(loader, distributed sampler or None) for a named configuration."""
    # fallback: a target_transform is not reproduced natively (and the eval transform
    # draws nothing, so the batches themselves can be compared)
    if fallback:
        ds = datasets.ImageFolder(root, T.Compose([T.Resize(36), T.CenterCrop(32), T.ToTensor()]),
                                  target_transform=_plus_one)
    else:
        ds = datasets.ImageFolder(root, transform())
    common = dict(num_workers=workers)
    sampler = None
    if case == "shuffle":
        loader = jpegloader.DataLoader(ds, batch_size=5, shuffle=True, **common)
    elif case == "generator":
        loader = jpegloader.DataLoader(ds, batch_size=5, shuffle=True,
                                       generator=torch.Generator().manual_seed(17), **common)
    elif case == "sampler":
        loader = jpegloader.DataLoader(ds, batch_size=4, sampler=RandomSampler(
            ds, replacement=True, num_samples=30), **common)
    elif case == "batch_sampler":
        loader = jpegloader.DataLoader(ds, batch_sampler=BatchSampler(
            RandomSampler(ds), 5, drop_last=True), **common)
    elif case == "distributed":
        sampler = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=True, seed=3)
        loader = jpegloader.DataLoader(ds, batch_size=3, sampler=sampler, **common)
    elif case == "persistent":
        loader = jpegloader.DataLoader(ds, batch_size=5, shuffle=True,
                                       persistent_workers=workers > 0, **common)
    else:
        raise ValueError(case)
    return loader, sampler


def epoch_batches(loader, sampler, epoch: int, stop: int | None = None):
    """One epoch's batches as the training loop sees them; with ``stop``, the loop
    breaks after receiving that many and returns the loader's state too."""
    if sampler is not None:
        sampler.set_epoch(epoch)
    out, state = [], None
    it = iter(loader)
    if stop == 0:
        state = loader.state_dict()
        return out, state
    for batch in it:
        out.append([t.clone() for t in batch])
        if stop is not None and len(out) == stop:
            state = loader.state_dict()
            break
    if stop is not None and state is None:  # the epoch was shorter: saved after its end
        state = loader.state_dict()
    return out, state


def resume_and_run(case: str, root: str, workers: int, state: dict, fallback=False):
    """A new loader resumes from ``state`` and runs to the end of EPOCHS."""
    torch.manual_seed(987654)  # a global RNG unlike the original process's
    loader, sampler = build(case, root, workers, fallback)
    loader.load_state_dict(state)
    out = []
    for epoch in range(state["epoch"], EPOCHS):
        out += epoch_batches(loader, sampler, epoch)[0]
    return out
