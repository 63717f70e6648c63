"""Collate functions whose batch a worker writes straight into the slot, recognised on
stand-in samples: DETR's padding.

NOTE [ A collate_fn's batch made in the slot ]
Run in a worker, a collate_fn makes its batch in the heap (DETR's: zeroed, then each
image copied in; RT-DETR's: stacked, then resized), and the packer copies it again
into the slot: the heap keeps the batch's pages too.  Where a collate_fn gives, on
stand-in samples, exactly what a kind here gives (``Padding.of``: DETR's), a worker
writes the batch's images straight into the slot, each image once, and builds the
rest as the collate_fn does (DETR's ``NestedTensor``: the user's own class).  The
heap then holds only the images.  Samples a kind cannot take (not plain 3-D CPU
tensors of the recognised dtype, a batch that does not fit) go to the user's
collate_fn as before.  (RT-DETR's stack and batch resize made so measured no faster
and no smaller: it is not a kind.)
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

_ALIGN = 64
#: reserve(view): the slot's pages ``view`` spans reserved before they are written
Reserve = Callable[[np.ndarray], None]


def _images(samples: list, dtype: torch.dtype) -> list[torch.Tensor] | None:
    """The samples' images, where each sample is (image, ...) of one width and every
    image a plain 3-D CPU tensor of ``dtype``; else None."""
    if not samples or not all(isinstance(s, (tuple, list)) for s in samples):
        return None
    width = len(samples[0])
    if width < 1 or any(len(s) != width for s in samples):
        return None
    images = [s[0] for s in samples]
    if not all(type(img) is torch.Tensor and img.ndim == 3 and img.dtype == dtype and
               img.device.type == "cpu" and not img.requires_grad and
               img.layout == torch.strided for img in images):
        return None
    return images


def _in_arena(arena: np.ndarray, at: int, shape: tuple, dtype: torch.dtype,
              reserve: Reserve) -> torch.Tensor:
    nbytes = int(np.prod(shape)) * torch.empty((), dtype=dtype).element_size()
    reserve(arena[at:at + nbytes])
    return torch.from_numpy(arena[at:at + nbytes]).view(dtype).view(shape)


def _stand_ins(shapes, dtype: torch.dtype) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [(torch.rand(shape, generator=generator) * 200 + 1).to(dtype) for shape in shapes]


def _same(got, want: torch.Tensor) -> bool:
    return type(got) is torch.Tensor and got.dtype == want.dtype and \
        got.shape == want.shape and torch.equal(got, want)


# -- DETR: util.misc.collate_fn ---------------------------------------------------------
class Padding:
    """DETR's: the images padded with zeros to the largest of each dimension, a bool
    mask True on the padding, ``(NestedTensor(tensors, mask), targets, ...)``."""

    #: the verdict's words
    describes = "DETR's padding"

    def __init__(self, dtype: torch.dtype, nested: type):
        self.dtype = dtype
        self.nested = nested

    @staticmethod
    def shape(images) -> tuple[int, int, int, int]:
        c, h, w = (max(int(img.shape[d]) for img in images) for d in range(3))
        return len(images), c, h, w

    @staticmethod
    def fill(images, tensors: torch.Tensor, mask: torch.Tensor) -> None:
        """Each image in its corner, zeros around it, the mask True outside it.  Only
        the padding is zeroed: the slot's bytes hold an earlier batch."""
        for img, out, m in zip(images, tensors, mask):
            c, h, w = img.shape
            out[:c, :h, :w].copy_(img)
            out[:c, :h, w:].zero_()
            out[:c, h:].zero_()
            out[c:].zero_()
            m[:h, :w] = False
            m[:h, w:] = True
            m[h:] = True

    @classmethod
    def of(cls, fn, dtype: torch.dtype) -> Padding | None:
        """Padding with the collate_fn's own NestedTensor class where ``fn`` gives, on
        stand-ins of unequal channels, heights and widths, exactly this padding, the
        very targets, and an object whose state is those two tensors."""
        images = _stand_ins(((3, 2, 5), (3, 4, 3), (1, 3, 2)), dtype)
        targets = [object() for _ in images]
        try:
            got = fn(list(zip(images, targets)))
        except Exception:  # noqa: BLE001 - not this kind, then
            return None
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], tuple) and
                len(got[1]) == len(targets) and all(a is b for a, b in zip(got[1], targets))):
            return None
        b, c, h, w = cls.shape(images)
        tensors, mask = torch.empty((b, c, h, w), dtype=dtype), torch.empty((b, h, w),
                                                                             dtype=torch.bool)
        cls.fill(images, tensors, mask)
        nested = type(got[0])
        if getattr(got[0], "__dict__", None) is None or set(vars(got[0])) != {"tensors", "mask"} \
                or not (_same(got[0].tensors, tensors) and _same(got[0].mask, mask)):
            return None
        try:
            made = nested(tensors, mask)
        except Exception:  # noqa: BLE001 - a class not built as the collate_fn builds it
            return None
        if getattr(made, "__dict__", None) != {"tensors": tensors, "mask": mask} or \
                made.tensors is not tensors or made.mask is not mask:
            return None
        return cls(dtype, nested)

    def collate(self, samples: list, arena: np.ndarray,
                reserve: Reserve) -> tuple[object, int] | None:
        """The batch, its images written into ``arena`` (the slot's bytes, flat uint8)
        after ``reserve`` is called with each one's place, and the bytes written; None
        where the samples are not plain 3-D CPU tensors of the dtype, or do not fit."""
        images = _images(samples, self.dtype)
        if images is None:
            return None
        b, c, h, w = self.shape(images)
        mask_at = -(-b * c * h * w * images[0].element_size() // _ALIGN) * _ALIGN
        if mask_at + b * h * w > arena.size:
            return None
        tensors = _in_arena(arena, 0, (b, c, h, w), self.dtype, reserve)
        mask = _in_arena(arena, mask_at, (b, h, w), torch.bool, reserve)
        self.fill(images, tensors, mask)
        columns = list(zip(*samples))
        columns[0] = self.nested(tensors, mask)
        return tuple(columns), mask_at + b * h * w


__all__ = ["Padding"]
