"""The user's own transforms and collate_fn, run in the workers after the native part.

NOTE [ Hybrid pipelines ]
The transform is split at its first step that does not lower: the native part
runs in C for the whole batch; then, per sample in the worker, the user's
objects run on what they expect: an RGB PIL image wrapping the native output
(``yours_pil``), or the sample's tensor in the slot (``yours_tensor``), with a
lowered tensor conversion between them run natively (``native_tail``).
Python's ``random``, numpy's and torch's generators are seeded first from the
(seed, epoch, index) stream, so the user's draws keep their distributions and
are the same for any num_workers.  A custom ``collate_fn`` runs in the worker
on (sample, target) pairs, seeded per batch; its result goes into the ring when
it has a fixed tensor layout, else through the result queue.  With
num_workers=0 the user's generators are put back after each batch.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from PIL import Image
from torch._utils import ExceptionWrapper

from ...decoders import hwc_to_chw
from ..contract import Layout, SampleFailure
from ..random_stream import (COLLATE_STREAM, PIL_STREAM, TENSOR_STREAM, generators_kept,
                             seed_generators, seeds)
from .dry_run import sample_of
from .pil_enhance import as_image
from .program import ClassificationProgram, Sample
from .yours_in_c import bytes_steps, yours_in_c



def _torch_dtype(sample: Sample) -> torch.dtype:
    if sample.kind == "tensor":
        return sample.torch_dtype
    return torch.from_numpy(np.zeros(0, dtype=np.dtype(sample.dtype))).dtype


def sample_layout(sample: Sample) -> Layout:
    """default_collate's batch of (sample, int target) pairs."""
    return ((sample.shape, _torch_dtype(sample)), ((), torch.int64))


def _user_error(what: str, index: int, where: str):
    raise SampleFailure(ExceptionWrapper(
        sys.exc_info(), where=f"in your {what} for sample {index} {where}")) from None


def _mode_and_size(x) -> tuple[str, tuple[int, int]]:
    """A PIL-stage result's mode and (width, height): an image's, or RGB bytes'."""
    return ("RGB", (x.shape[1], x.shape[0])) if isinstance(x, np.ndarray) else (x.mode, x.size)


class Yours:
    """Runs a program's user part for a batch (see the module's NOTE)."""

    def __init__(self, program: ClassificationProgram):
        self.program = program
        self.lut = program.lut_array
        self._buffers: dict[str, np.ndarray] = {}

    def buffer(self, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
        """A worker-private array of at least ``shape`` (grown, kept between batches)."""
        a = self._buffers.get(name)
        if a is None or a.dtype != np.dtype(dtype) or a.shape[1:] != shape[1:] \
                or a.shape[0] < shape[0]:
            a = np.empty(shape, dtype=dtype)
            self._buffers[name] = a
        return a[:shape[0]]

    def run(self, native: np.ndarray, indices, seed: int, final: np.ndarray | None,
            where: str, in_main: bool) -> list | None:
        """``native``: the C core's output for these samples (uint8[n, H, W, 3] for a PIL
        handover, else the tensor stage's [n, 3, H, W]).  Writes each finished sample into
        ``final`` (n samples of the program's Sample) or, without one, returns them."""
        p = self.program
        n = len(indices)
        with generators_kept(in_main):
            if p.handover == "pil":
                xs = self._pil_part(native, indices, seed, where)
                if p.native_tail:  # straight into `final`: yours_tensor then works there
                    xs = self._native_tail(xs, indices, final)
            else:
                xs = [torch.from_numpy(native[k]) for k in range(n)]
            if p.yours_tensor:
                for k, s in enumerate(seeds(seed, indices, TENSOR_STREAM)):
                    seed_generators(s)
                    try:
                        for t in p.yours_tensor:
                            xs[k] = t(xs[k])
                    except Exception:
                        _user_error(f"{type(t).__name__}", int(indices[k]), where)
        if final is None:
            return xs
        for k, x in enumerate(xs):
            self._store(final, k, x, int(indices[k]))
        return None

    def _pil_part(self, native: np.ndarray, indices, seed: int, where: str) -> list:
        """Your PIL-stage objects on each sample: an RGB image of its bytes, or the bytes
        themselves for a first augmentation policy that takes them (yours_in_c.py's
        bytes_steps), whose result stays bytes where the native tail takes it next."""
        h, w = native.shape[1:3]
        objects = self.program.yours_pil
        as_bytes = bytes_steps(objects[0]) if objects else None
        out = []
        with yours_in_c(objects):  # NOTE [ Your objects' work in C ]
            for k, s in enumerate(seeds(seed, indices, PIL_STREAM)):
                seed_generators(s)
                t = objects[0] if objects else None
                try:
                    if as_bytes:
                        x = as_bytes(pixels=native[k])
                    else:
                        x = Image.frombuffer("RGB", (w, h), native[k], "raw", "RGB", 0, 1)
                    for t in objects[1 if as_bytes else 0:]:
                        x = t(as_image(x))
                except Exception:
                    _user_error(f"{type(t).__name__}", int(indices[k]), where)
                out.append(x if self.program.native_tail else as_image(x))
        return out

    def _native_tail(self, images: list, indices, final: np.ndarray | None) -> list:
        """The tensor conversion after the user's PIL-stage objects, natively, for the
        whole batch (into the slot itself when nothing follows it)."""
        n = len(images)
        w, h = _mode_and_size(images[0])[1]
        pixels = self.buffer("tail_hwc", (n, h, w, 3), np.uint8)
        for k, image in enumerate(images):
            mode, size = _mode_and_size(image)
            if mode != "RGB" or size != (w, h):
                raise RuntimeError(
                    f"your PIL-stage transforms gave sample {int(indices[k])} a {mode} "
                    f"image of {size[0]}x{size[1]}, the first one's was RGB "
                    f"{w}x{h}: the batch cannot be stacked (torch's default_collate would "
                    "fail on it too)")
            pixels[k] = np.asarray(image)
        out = final if final is not None else self.buffer(
            "tail_chw", (n, 3, h, w), self.program.output_dtype)
        hwc_to_chw(pixels, out[:n], self.lut)
        return [torch.from_numpy(out[k]) for k in range(n)]

    def _store(self, final: np.ndarray, k: int, x, index: int) -> None:
        target = final[k]
        if isinstance(x, torch.Tensor):
            if x.data_ptr() == target.ctypes.data and tuple(x.shape) == target.shape:
                return  # already written in place
            x = x.as_subclass(torch.Tensor).numpy() if x.device.type == "cpu" else \
                x.cpu().numpy()
        elif isinstance(x, Image.Image):
            x = np.asarray(x)
        x = np.asarray(x)
        if x.shape != target.shape or x.dtype != target.dtype:
            raise RuntimeError(
                f"your transforms gave sample {index} a {x.dtype} {x.shape} result where the "
                f"batch holds {target.dtype} {target.shape} (the first sample's, found when "
                "the loader was built): samples of a batch must match, as default_collate "
                "needs")
        target[...] = x


@dataclass(frozen=True)
class CollatePlan:
    """A custom collate_fn, run in the workers (NOTE [ Hybrid pipelines ])."""

    fn: Callable = field(compare=False)
    name: str
    ring: bool                       # its result is written into the ring
    layout: Layout | None = None     # the ring fields (each's per-sample shape, dtype)
    structure: type = tuple          # tuple or list, as the collate_fn returns it
    key: str = ""
    #: A fast_collate verified to stack the uint8 images and int64 targets, as the C
    #: core writes them anyway: done natively, without calling it (NOTE [ fast_collate ]).
    native_stack: bool = False

    def run(self, samples: list, batch_no: int, seed: int, in_main: bool):
        with generators_kept(in_main):
            seed_generators(seeds(seed, [batch_no], COLLATE_STREAM)[0])
            return self.fn(samples)


def fake_samples(sample: Sample, count: int) -> list:
    """Stand-ins for ``count`` (sample, target) pairs, for a collate_fn's dry run."""
    if sample.kind == "pil":
        return [(Image.new("RGB", (sample.shape[1], sample.shape[0])), 0)] * count
    if sample.kind == "ndarray":
        return [(np.zeros(sample.shape, dtype=np.dtype(sample.dtype)), 0)] * count
    return [(torch.zeros(sample.shape, dtype=sample.torch_dtype), 0)] * count


def collate_name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or getattr(getattr(fn, "func", None),
                                                       "__qualname__", type(fn).__name__)


def _random_samples(sample: Sample, count: int, rng) -> list:
    pixels = rng.integers(0, 256, size=(count, 3, *sample.shape[-2:]), dtype=np.uint8)
    targets = [int(t) for t in rng.integers(0, 1000, size=count)]
    if sample.kind == "pil":
        return [(Image.fromarray(p.transpose(1, 2, 0), "RGB"), t) for p, t in
                zip(pixels, targets, strict=True)]
    if sample.kind == "ndarray":
        return list(zip(pixels, targets, strict=True))
    return [(torch.from_numpy(p), t) for p, t in zip(pixels, targets, strict=True)]


def stacks_natively(fn: Callable, sample: Sample) -> bool:
    """NOTE [ fast_collate ]
    timm's and NVIDIA's fast_collate stack uint8 images into a contiguous
    uint8[B, 3, H, W] and the targets into int64[B]: what the C core writes into
    the ring anyway.  A collate_fn named fast_collate whose result equals that on
    two batches of random pixels and targets is done natively, without calling it
    per batch (a channels_last one, whose strides differ, is called)."""
    if not collate_name(fn).endswith("fast_collate") or sample.kind not in \
            ("pil", "tensor", "ndarray") or tuple(sample.shape[-3:-2]) not in ((3,), ()):
        return False
    if sample.kind != "pil" and (sample.dtype != "uint8" or sample.shape[0] != 3):
        return False
    rng = np.random.default_rng(0)
    with generators_kept(True):
        for count in (3, 2):
            samples = _random_samples(sample, count, rng)
            try:
                result = fn(samples)
            except Exception:  # noqa: BLE001 - not a stacking collate, then
                return False
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                return False
            images, targets = result
            expected = torch.stack([torch.from_numpy(np.array(x)).permute(2, 0, 1)
                                    if isinstance(x, Image.Image) else torch.as_tensor(x)
                                    for x, _ in samples])
            if not (isinstance(images, torch.Tensor) and images.dtype == torch.uint8
                    and images.is_contiguous() and torch.equal(images, expected)
                    and isinstance(targets, torch.Tensor) and targets.dtype == torch.int64
                    and targets.tolist() == [t for _, t in samples]):
                return False
    return True


def plan_collate(fn: Callable, sample: Sample, batch_size: int) -> CollatePlan:
    """Runs ``fn`` once on stand-in samples (generators kept) to learn what its batches
    are: a fixed layout of tensors goes through the ring."""
    name = collate_name(fn)
    if stacks_natively(fn, sample):
        shape = (3, *sample.shape[-2:]) if sample.kind == "pil" else sample.shape
        structure = type(fn(fake_samples(sample, 1)))
        return CollatePlan(fn, name, True, ((shape, torch.uint8), ((), torch.int64)),
                           structure, repr(fn), native_stack=True)
    with generators_kept(True):
        result = fn(fake_samples(sample, batch_size))
    fields = list(result) if isinstance(result, (tuple, list)) else None
    # The ring holds contiguous tensors: another memory format (channels_last) goes
    # through the queue, as torch sends it, strides and all.
    if fields and all(isinstance(t, torch.Tensor) and t.dim() >= 1 and t.shape[0] == batch_size
                      and t.is_contiguous() for t in fields):
        layout = tuple((tuple(t.shape[1:]), t.dtype) for t in fields)
        return CollatePlan(fn, name, True, layout, type(result), repr(fn))
    return CollatePlan(fn, name, False, None, tuple, repr(fn))


def as_collate_input(x, kind: str):
    """A sample as the collate_fn receives it (as the dataset would give it)."""
    if kind == "ndarray" and isinstance(x, torch.Tensor):
        return x.numpy()
    return x


__all__ = ["CollatePlan", "Yours", "plan_collate", "sample_layout", "sample_of"]
