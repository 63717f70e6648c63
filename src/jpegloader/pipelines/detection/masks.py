"""Instance masks painted in C, straight into the batch's slot.

NOTE [ Masks painted into the slot ]
Made by the v2 wrapper, a sample's masks are copied four times (pycocotools'
column-major decode, torch.stack, the flip, a fresh shared-memory file).  Where
the native geometry is flips alone, the target is built without them, with a
stand-in Mask (N, 1, 1) holding each instance's number, which the target steps
(Sanitize, ToPureTensor) index and convert as they would the masks; what
survives says which instances to paint and in which class.  pycocotools turns
each instance into one RLE as the wrapper has it do (its rasterising rule), and
the C core paints the RLEs row-major, mirrored when flipped, into the sample's
row of the slot's mask field, where the main process views them.  Masks larger
than the row go into a shared tensor of their own; an RLE of another size than
the image, or a resize or crop, keeps the wrapper's path.
"""
from __future__ import annotations

import numpy as np
import torch
from torchvision import tv_tensors

from ._masks import paint
from .lower import DetectionProgram

KEY = "masks"
#: Each sample's row of the mask field holds the masks of this share of the
#: dataset's images at their own size; the masks of the others travel apart.
ROW_QUANTILE = 0.9


def painted(source, program: DetectionProgram) -> bool:
    """Whether the program's masks are painted into the slot (NOTE [ Masks painted
    into the slot ]): the v2 wrapper asked for masks, and flips are the only native
    geometry."""
    return KEY in source.target_keys and \
        all(s.kind in ("flip", "tensor", "target") for s in program.steps)


def row_bytes(source, rows) -> int:
    """The bytes of a sample's row of the mask field: the masks of ROW_QUANTILE of
    the images, at their annotated size."""
    coco = source.coco_dataset.coco
    ids = source.coco_dataset.ids
    need = []
    for i in rows:
        image_id = ids[int(i)]
        h, w = source.json_size(int(i))
        need.append(len(coco.getAnnIds(imgIds=image_id, iscrowd=None)) * h * w)
    return max(int(np.quantile(need, ROW_QUANTILE, method="higher")) if need else 0, 1)


def stand_in(count: int) -> tv_tensors.Mask:
    """The masks' stand-in: instance ``i`` at position ``i``."""
    return tv_tensors.Mask(torch.arange(count).view(count, 1, 1))


def with_stand_in(target: dict, count: int) -> dict:
    """``target`` (the wrapper's, made without masks) with the stand-in where the
    wrapper puts the masks: after the boxes, or the image id, or first."""
    if count == 0:  # the wrapper gives no masks for an image without annotations
        return target
    anchor = next((k for k in ("boxes", "image_id") if k in target), None)
    out = {} if anchor is not None else {KEY: stand_in(count)}
    for k, v in target.items():
        out[k] = v
        if k == anchor:
            out[KEY] = stand_in(count)
    return out


def rles(segmentations, size: tuple[int, int]) -> list[bytes] | None:
    """Each instance's compressed RLE counts, as the wrapper's segmentation_to_mask
    makes them for a canvas of ``size``; None where one's own size is not the
    canvas (the wrapper's path then)."""
    from pycocotools import mask
    h, w = size
    out = []
    for seg in segmentations:
        if isinstance(seg, dict):
            rle = seg if isinstance(seg["counts"], str) else mask.frPyObjects(seg, h, w)
        elif isinstance(seg, list):
            rle = mask.merge(mask.frPyObjects(seg, h, w))
        else:
            raise ValueError(f"COCO segmentation expected to be a dict or a list, got "
                             f"{type(seg)}")
        if [int(v) for v in rle["size"]] != [h, w]:
            return None
        counts = rle["counts"]
        out.append(counts.encode() if isinstance(counts, str) else bytes(counts))
    return out


class Painted:
    """A sample's masks in the slot: which instances, their class, and, where they did
    not fit the row, the tensor that holds them."""

    __slots__ = ("count", "cls", "apart")

    def __init__(self, count: int, cls: type, apart: torch.Tensor | None):
        self.count, self.cls, self.apart = count, cls, apart

    def __getstate__(self):
        return self.count, self.cls, self.apart

    def __setstate__(self, state):
        self.count, self.cls, self.apart = state

    def view(self, row: torch.Tensor, h: int, w: int) -> torch.Tensor:
        """The masks as the user gets them, from the sample's row of the slot."""
        t = self.apart if self.apart is not None else \
            row[:self.count * h * w].view(self.count, h, w)
        return t.as_subclass(self.cls) if self.cls is not torch.Tensor else t


def paint_survivors(target: dict, counts: list[bytes], size: tuple[int, int], flip: bool,
                    row: np.ndarray, empty) -> dict:
    """Paints the instances that survived the target steps into ``row`` (or into
    ``empty(shape)``, a shared tensor, when they do not fit) and puts a Painted in
    the stand-in's place."""
    survivors = target[KEY]
    kept = survivors.as_subclass(torch.Tensor).reshape(-1).tolist()
    h, w = size
    need = len(kept) * h * w
    apart = None
    if need <= row.size:
        out = row[:need]
    else:
        apart = empty((len(kept), h, w))
        out = apart.numpy()
    paint(tuple(counts[i] for i in kept), h, w, flip, out)
    return {**target, KEY: Painted(len(kept), type(survivors), apart)}


__all__ = ["KEY", "Painted", "paint_survivors", "painted", "rles", "row_bytes",
           "with_stand_in"]
