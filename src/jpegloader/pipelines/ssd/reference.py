"""The SSD-300 reference data pipeline (NVIDIA's and Habana's ssd/utils.py), as the
package ships it.

These classes behave like the public SSD reference implementation's
(NVIDIA DeepLearningExamples, Habana Model-References): users without that
code can build the same pipeline from here, the loader falls back to them
natively, and the parity tests use them as the reference.  Random choices
come from Python's ``random`` module (crop, flip) and torch's generator
(ColorJitter), as in the reference.
"""
from __future__ import annotations

import itertools
import math
import random

import torch
from PIL import Image
from torchvision import transforms as T

from . import boxes as B

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class DefaultBoxes:
    """SSD's default (anchor) boxes for a square input of ``fig_size`` pixels.

    Order: per feature map, per box shape, then row-major over the grid.  The
    (cx, cy, w, h) boxes are clamped to [0, 1] before the ltrb form is derived.
    """

    def __init__(self, fig_size, feat_size, steps, scales, aspect_ratios,
                 scale_xy=0.1, scale_wh=0.2):
        self.fig_size = fig_size
        self.feat_size = feat_size
        self.steps = steps
        self.scales = scales
        self.aspect_ratios = aspect_ratios
        self.scale_xy = scale_xy
        self.scale_wh = scale_wh
        boxes = []
        for k, fmap in enumerate(feat_size):
            cells = fig_size / steps[k]
            small, large = scales[k] / fig_size, scales[k + 1] / fig_size
            shapes = [(small, small), (math.sqrt(small * large),) * 2]
            for alpha in aspect_ratios[k]:
                w, h = small * math.sqrt(alpha), small / math.sqrt(alpha)
                shapes += [(w, h), (h, w)]
            for w, h in shapes:
                for i, j in itertools.product(range(fmap), repeat=2):
                    boxes.append(((j + 0.5) / cells, (i + 0.5) / cells, w, h))
        self.dboxes = torch.tensor(boxes, dtype=torch.float32).clamp_(min=0, max=1)
        xy, wh = self.dboxes[:, :2], self.dboxes[:, 2:]
        self.dboxes_ltrb = torch.cat([xy - 0.5 * wh, xy + 0.5 * wh], dim=1)

    def __call__(self, order="ltrb"):
        if order == "ltrb":
            return self.dboxes_ltrb
        if order == "xywh":
            return self.dboxes
        raise ValueError(f"order should be 'ltrb' or 'xywh', got {order!r}")


def dboxes300_coco() -> DefaultBoxes:
    """The 8,732 default boxes of SSD-300 on COCO."""
    return DefaultBoxes(300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300],
                        [21, 45, 99, 153, 207, 261, 315],
                        [[2], [2, 3], [2, 3], [2, 3], [2], [2]])


class Encoder:
    """Matches ground-truth boxes to default boxes (``encode``)."""

    def __init__(self, dboxes: DefaultBoxes):
        self.dboxes = dboxes(order="ltrb")
        self.dboxes_xywh = dboxes(order="xywh").unsqueeze(dim=0)
        self.nboxes = self.dboxes.size(0)
        self.scale_xy = dboxes.scale_xy
        self.scale_wh = dboxes.scale_wh

    def encode(self, bboxes_in, labels_in, criteria=0.5):
        """float32 [N, 4] ltrb, int64 [N] -> float32 [8732, 4] xywh (absolute,
        in [0, 1]; default boxes where unmatched), int64 [8732] (0: background)."""
        return B.encode(bboxes_in, labels_in, self.dboxes, criteria)


class SSDCropping:
    """SSD's random crop: a mode is chosen uniformly from no crop, minimum IoU
    0.1/0.3/0.5/0.7/0.9, or unconstrained; a window (w, h in [0.3, 1], aspect
    within [0.5, 2]) is tried ``num_cropping_iterations`` times for the mode,
    and the loop picks a new mode until one succeeds."""

    def __init__(self, num_cropping_iterations=1):
        self.sample_options = (
            None,          # keep the whole image
            (0.1, None),   # (minimum IoU, maximum IoU)
            (0.3, None),
            (0.5, None),
            (0.7, None),
            (0.9, None),
            (None, None),  # any window
        )
        self.num_cropping_iterations = num_cropping_iterations

    def __call__(self, img, img_size, bboxes, labels):
        while True:
            mode = random.choice(self.sample_options)
            if mode is None:
                return img, img_size, bboxes, labels
            htot, wtot = img_size
            min_iou = -math.inf if mode[0] is None else mode[0]
            max_iou = math.inf if mode[1] is None else mode[1]
            for _ in range(self.num_cropping_iterations):
                w = random.uniform(0.3, 1.0)
                h = random.uniform(0.3, 1.0)
                if w / h < 0.5 or w / h > 2:
                    continue
                left = random.uniform(0, 1.0 - w)
                top = random.uniform(0, 1.0 - h)
                right, bottom = left + w, top + h
                ious = B.iou(bboxes, torch.tensor([[left, top, right, bottom]]))
                if not ((ious > min_iou) & (ious < max_iou)).all():
                    continue
                kept, kept_labels = B.crop_boxes(bboxes, labels, left, top, w, h)
                if kept.size(0) == 0:
                    continue
                box = (int(left * wtot), int(top * htot), int(right * wtot),
                       int(bottom * htot))
                img = img.crop(box)
                return img, (box[3] - box[1], box[2] - box[0]), kept, kept_labels


class RandomHorizontalFlip:
    """Mirrors the image and its boxes with probability ``p``."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image, bboxes):
        if random.random() < self.p:
            return image.transpose(Image.FLIP_LEFT_RIGHT), B.flip_boxes(bboxes)
        return image, bboxes


class SSDTransformer:
    """The SSD-300 sample transform: crop, flip, resize, colour jitter,
    ToTensor, Normalize and box encoding for training (``val=False``); resize,
    ToTensor, Normalize and zero-padded boxes for validation."""

    def __init__(self, dboxes, size=(300, 300), val=False):
        self.size = size
        self.val = val
        self.dboxes_ = dboxes
        self.encoder = Encoder(dboxes)
        self.crop = SSDCropping()
        self.hflip = RandomHorizontalFlip()
        self.img_trans = T.Compose([
            T.Resize(size),
            T.ColorJitter(brightness=0.125, contrast=0.5, saturation=0.5, hue=0.05),
            T.ToTensor(),
        ])
        self.normalize = T.Normalize(mean=IMAGENET_MEAN, std=IMAGENET_STD)
        self.trans_val = T.Compose([T.Resize(size), T.ToTensor(), self.normalize])

    @property
    def dboxes(self):
        return self.dboxes_

    def __call__(self, img, img_size, bbox=None, label=None, max_num=200):
        if self.val:
            if bbox.size(0) > max_num:
                raise ValueError(f"{bbox.size(0)} boxes do not fit the {max_num} "
                                 "validation slots")
            bbox_out = torch.zeros(max_num, 4)
            label_out = torch.zeros(max_num, dtype=torch.long)
            bbox_out[:bbox.size(0), :] = bbox
            label_out[:label.size(0)] = label
            return self.trans_val(img), img_size, bbox_out, label_out
        img, img_size, bbox, label = self.crop(img, img_size, bbox, label)
        img, bbox = self.hflip(img, bbox)
        img = self.img_trans(img).contiguous()
        img = self.normalize(img)
        bbox, label = self.encoder.encode(bbox, label)
        return img, img_size, bbox, label
