"""Instance masks painted in C, straight into the batch's slot.

NOTE [ Masks painted into the slot ]
Made by the v2 wrapper, masks are copied four times (pycocotools' column-major
decode, torch.stack, the flip, a fresh shared-memory file).  Instead the target
is built without them (native geometry: crops, flips, resizes), with a stand-in
Mask (N, 1, 1) of instance numbers that the target steps (Sanitize, ToPureTensor)
index and convert as they would the masks: what survives says which instances
to paint, and in which class.  pycocotools makes each RLE as the wrapper has it
(its rasterising rule); C paints them through index maps (crops, flips, torch's
nearest resize: states.nearest; -1 pads) into the slot's mask field, each sample's
after the last (the field holds a row per sample: row_bytes), viewed by the main
process; masks that no longer fit travel in a tensor of their own.  An
RLE of another size keeps the wrapper's path; v1's converter is rebuilt here
where it matches the user's on sample images (v1_builds_alike).
"""
from __future__ import annotations

import functools

import numpy as np
import torch
from torchvision import tv_tensors

from ._masks import paint, paint_mapped
from .draw import ROW_ROOM
from .lower import DetectionProgram

KEY = "masks"
#: Each sample's row of the mask field holds the masks of this share of the
#: dataset's images at their own size; the masks of the others travel apart.
ROW_QUANTILE = 0.9
#: How many of the dataset's annotated images v1_builds_alike compares on.
PROBES = 3


def painted(source, program: DetectionProgram) -> bool:
    """Whether the program's masks are painted into the slot (NOTE [ Masks painted
    into the slot ]): every native step is one the maps follow, and the v2 wrapper
    asked for masks, or the v1 ConvertCocoPolysToMask builds them as v1_target does."""
    # each step's moves_masks (steps.py): the references' v1 RandomZoomOut and
    # RandomIoUCrop leave the masks as they are, and the maps are left alone too; their
    # FixedSizeCrop's window and padding are followed where it moves masks as theirs does
    if not all(s.moves_masks for s in program.steps):
        return False
    return source.v1_builds_alike if source.converts else KEY in source.target_keys


def row_bytes(source, largest_pixels, rows) -> int:
    """The bytes of a sample's row of the mask field: the masks of ROW_QUANTILE of
    the images, at the largest size the steps give their annotated size
    (``largest_pixels(h, w)``), and at most ROW_ROOM times the median image's."""
    coco = source.base.coco
    ids = source.base.ids
    pixels = functools.lru_cache(maxsize=None)(largest_pixels)
    need = []
    for i in rows:
        image_id = ids[int(i)]
        need.append(len(coco.getAnnIds(imgIds=image_id, iscrowd=None)) *
                    pixels(*source.json_size(int(i))))
    some = [n for n in need if n > 0]
    if not some:
        return 1
    return max(min(int(np.quantile(need, ROW_QUANTILE, method="higher")),
                   ROW_ROOM * int(np.median(some))), 1)


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


def v1_target(size: tuple[int, int], image_id, annotations) -> tuple[dict, list]:
    """What the references' ConvertCocoPolysToMask makes for an image of ``size``,
    with the masks' stand-in (a plain tensor, as their masks are) in the masks'
    place, and the segmentations of the instances it keeps: crowds left out, boxes
    from xywh to clamped xyxy, the degenerate ones dropped with their labels, masks
    and keypoints (area and iscrowd kept whole, as theirs are)."""
    h, w = size
    anno = [obj for obj in annotations if obj["iscrowd"] == 0]
    boxes = torch.as_tensor([obj["bbox"] for obj in anno], dtype=torch.float32).reshape(-1, 4)
    boxes[:, 2:] += boxes[:, :2]
    boxes[:, 0::2].clamp_(min=0, max=w)
    boxes[:, 1::2].clamp_(min=0, max=h)
    labels = torch.tensor([obj["category_id"] for obj in anno], dtype=torch.int64)
    keypoints = None
    if anno and "keypoints" in anno[0]:
        keypoints = torch.as_tensor([obj["keypoints"] for obj in anno], dtype=torch.float32)
        if keypoints.shape[0]:
            keypoints = keypoints.view(keypoints.shape[0], -1, 3)
    keep = (boxes[:, 3] > boxes[:, 1]) & (boxes[:, 2] > boxes[:, 0])
    target = {"boxes": boxes[keep], "labels": labels[keep],
              KEY: torch.arange(len(anno)).view(len(anno), 1, 1)[keep], "image_id": image_id}
    if keypoints is not None:
        target["keypoints"] = keypoints[keep]
    target["area"] = torch.tensor([obj["area"] for obj in anno])
    target["iscrowd"] = torch.tensor([obj["iscrowd"] for obj in anno])
    return target, [obj["segmentation"] for obj in anno]


def v1_builds_alike(source) -> bool:
    """Whether the user's ConvertCocoPolysToMask gives what v1_target and painting
    give, on the first PROBES annotated images at their annotated size: the same
    keys in the same order, classes, dtypes and values, masks included."""
    ds = source.base
    compared = 0
    for row in range(len(ds.ids)):
        annotations = ds._load_target(ds.ids[row])
        if not annotations:
            continue
        size = source.json_size(row)
        try:
            theirs = source.target(row, size)
            ours, segmentations = v1_target(size, ds.ids[row], annotations)
            counts = rles(segmentations, size, polygons_only=True)
        except Exception:  # noqa: BLE001 - theirs (or ours) fails here: theirs is used
            return False
        if counts is None:
            continue
        ours = paint_survivors(ours, counts, size, False, None, np.empty(0, np.uint8), 0,
                               lambda shape: torch.empty(shape, dtype=torch.uint8))
        ours[KEY] = ours[KEY].view(torch.empty(0, dtype=torch.uint8))
        if not _alike(ours, theirs):
            return False
        compared += 1
        if compared == PROBES:
            break
    return compared > 0


def _alike(ours, theirs) -> bool:
    if not isinstance(theirs, dict) or list(ours) != list(theirs):
        return False
    for k, v in theirs.items():
        got = ours[k]
        if type(got) is not type(v):
            return False
        if isinstance(v, torch.Tensor):
            if got.dtype != v.dtype or got.shape != v.shape or not torch.equal(got, v):
                return False
        elif got != v:
            return False
    return True


def rles(segmentations, size: tuple[int, int], polygons_only: bool = False
         ) -> list[bytes] | None:
    """Each instance's compressed RLE counts, as the wrapper's segmentation_to_mask
    makes them for a canvas of ``size`` (for polygons, the union v1's
    convert_coco_poly_to_mask makes); None where one's own size is not the canvas,
    or, with ``polygons_only``, where one is an RLE (the user's path then)."""
    from pycocotools import mask
    h, w = size
    out = []
    for seg in segmentations:
        if isinstance(seg, dict) and polygons_only:
            return None
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
    """A sample's masks in the slot: how many, their size (the image's, or the photo's
    where the references' v1 steps leave them as they are), their class, and their
    place in the slot's mask field or, where they did not fit, the tensor that holds
    them."""

    __slots__ = ("count", "size", "cls", "at", "apart")

    def __init__(self, count: int, size: tuple[int, int], cls: type, at: int,
                 apart: torch.Tensor | None):
        self.count, self.size, self.cls, self.at, self.apart = count, size, cls, at, apart

    def __getstate__(self):
        return self.count, self.size, self.cls, self.at, self.apart

    def __setstate__(self, state):
        self.count, self.size, self.cls, self.at, self.apart = state

    @property
    def nbytes(self) -> int:
        return self.count * self.size[0] * self.size[1]

    def view(self, field: torch.Tensor) -> torch.Tensor:
        """The masks as the user gets them, from the slot's mask field (flat)."""
        t = self.apart if self.apart is not None else \
            field[self.at:self.at + self.nbytes].view(self.count, *self.size)
        return t.as_subclass(self.cls) if self.cls is not torch.Tensor else t


def paint_survivors(target: dict, counts: list[bytes], size: tuple[int, int], flip: bool,
                    maps, field: np.ndarray, at: int, empty,
                    reserve=lambda view: None) -> dict:
    """Paints the instances that survived the target steps, from masks of ``size``,
    mirrored when ``flip``, or through ``maps`` (draw.run_steps's: the row and column
    each output pixel takes) where the steps cropped or resized, into ``field`` (the
    slot's mask field, flat) from ``at`` (that part ``reserve``d first) or into
    ``empty(shape)``, a shared tensor, when they do not fit, and puts a Painted in the
    stand-in's place."""
    survivors = target[KEY]
    kept = tuple(counts[i] for i in survivors.as_subclass(torch.Tensor).reshape(-1).tolist())
    h, w = size
    out_h, out_w = (h, w) if maps is None else (len(maps[0]), len(maps[1]))
    need = len(kept) * out_h * out_w
    apart = None
    if at + need <= field.size:
        out = field[at:at + need]
        reserve(out)
    else:
        apart = empty((len(kept), out_h, out_w))
        out = apart.numpy()
    if maps is None:
        paint(kept, h, w, flip, out)
    else:
        paint_mapped(kept, h, w, np.ascontiguousarray(maps[0]), np.ascontiguousarray(maps[1]),
                     out)
    return {**target, KEY: Painted(len(kept), (out_h, out_w), type(survivors), at, apart)}


__all__ = ["KEY", "Painted", "paint_survivors", "painted", "rles", "row_bytes",
           "with_stand_in"]
