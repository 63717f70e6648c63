"""Box arithmetic of the SSD reference pipeline, shared by the reference
transforms (the native path) and the accelerated workers, so both give the
same float32 results for the same random parameters.

``crop_boxes_c`` and ``encode_into`` are ``crop_boxes`` and ``encode`` in C
(csrc/boxes.c), bit-identical, for the workers.

Boxes are float32 [N, 4] in (left, top, right, bottom) order, normalised to
[0, 1] by the image size.  The operations and their order follow the public
SSD reference (NVIDIA's and Habana's ssd/utils.py), including its float32 rounding.
"""
from __future__ import annotations

import numpy as np
import torch

from . import _boxes


def iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """IoU of every box in ``a`` [N, 4] with every box in ``b`` [M, 4]: [N, M]."""
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp_(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def crop_boxes(bboxes: torch.Tensor, labels: torch.Tensor, left: float, top: float,
               w: float, h: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The boxes of the crop window (left, top, left + w, top + h): those whose
    centre lies strictly inside it, clamped to it and renormalised by the drawn
    w and h (not right - left, which can differ in the last bit).  Does not
    modify its inputs."""
    right, bottom = left + w, top + h
    xc = 0.5 * (bboxes[:, 0] + bboxes[:, 2])
    yc = 0.5 * (bboxes[:, 1] + bboxes[:, 3])
    inside = (xc > left) & (xc < right) & (yc > top) & (yc < bottom)
    kept = bboxes.clone()
    kept[kept[:, 0] < left, 0] = left
    kept[kept[:, 1] < top, 1] = top
    kept[kept[:, 2] > right, 2] = right
    kept[kept[:, 3] > bottom, 3] = bottom
    kept = kept[inside, :]
    kept[:, 0] = (kept[:, 0] - left) / w
    kept[:, 1] = (kept[:, 1] - top) / h
    kept[:, 2] = (kept[:, 2] - left) / w
    kept[:, 3] = (kept[:, 3] - top) / h
    return kept, labels[inside]


def crop_boxes_c(bboxes: torch.Tensor, labels: torch.Tensor, left: float, top: float,
                 w: float, h: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``crop_boxes`` in C: the same boxes and labels, bit for bit."""
    src = np.ascontiguousarray(bboxes.numpy(), dtype=np.float32)
    out = np.empty_like(src)
    kept = np.empty(len(src), dtype=np.int64)
    m = _boxes.crop(src, float(left), float(top), float(w), float(h), out, kept)
    return torch.from_numpy(out[:m]), labels[torch.from_numpy(kept[:m])]


def flip_boxes(bboxes: torch.Tensor) -> torch.Tensor:
    """Boxes of the horizontally mirrored image (a new tensor)."""
    out = bboxes.clone()
    out[:, 0] = 1.0 - bboxes[:, 2]
    out[:, 2] = 1.0 - bboxes[:, 0]
    return out


def encode(bboxes: torch.Tensor, labels: torch.Tensor, dboxes_ltrb: torch.Tensor,
           criteria: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
    """Assigns ground-truth boxes to default boxes (the reference's
    ``Encoder.encode``): returns float32 [M, 4] in (centre x, centre y, w, h)
    and int64 [M] labels, 0 for background."""
    ious = iou(bboxes, dboxes_ltrb)                       # [N, M]
    best_gt_iou, best_gt = ious.max(dim=0)                # per default box
    _, best_dbox = ious.max(dim=1)                        # per ground-truth box
    # Every ground-truth box keeps its best default box, whatever the IoU.
    best_gt_iou.index_fill_(0, best_dbox, 2.0)
    best_gt[best_dbox] = torch.arange(best_dbox.size(0), dtype=torch.int64)
    matched = best_gt_iou > criteria
    labels_out = torch.zeros(dboxes_ltrb.size(0), dtype=torch.long)
    labels_out[matched] = labels[best_gt[matched]]
    ltrb = dboxes_ltrb.clone()
    ltrb[matched, :] = bboxes[best_gt[matched], :]
    xywh = torch.empty_like(ltrb)
    xywh[:, 0] = 0.5 * (ltrb[:, 0] + ltrb[:, 2])
    xywh[:, 1] = 0.5 * (ltrb[:, 1] + ltrb[:, 3])
    xywh[:, 2] = ltrb[:, 2] - ltrb[:, 0]
    xywh[:, 3] = ltrb[:, 3] - ltrb[:, 1]
    return xywh, labels_out


def encode_into(bboxes: torch.Tensor, labels: torch.Tensor, dboxes_ltrb: torch.Tensor,
                criteria: float, out_boxes: np.ndarray, out_labels: np.ndarray) -> None:
    """``encode`` in C, written into out_boxes float32[M, 4] and out_labels
    int64[M] (bit-identical results; the workers' path).  Raises ValueError
    when there is no box to encode, where ``encode`` cannot run either."""
    _boxes.encode(np.ascontiguousarray(bboxes.numpy(), dtype=np.float32),
                  np.ascontiguousarray(labels.numpy(), dtype=np.int64),
                  np.ascontiguousarray(dboxes_ltrb.numpy(), dtype=np.float32), float(criteria),
                  out_boxes, out_labels)
