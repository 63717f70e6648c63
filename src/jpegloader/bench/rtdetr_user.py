"""RT-DETR's data pipeline as its users carry it (lyuwenyu/RT-DETR ``rtdetrv2_pytorch/src/
data``: ``dataset/coco_dataset.py``, ``transforms/_transforms.py``,
``transforms/container.py``, ``_misc.py``, ``dataloader.py``; D-FINE and DEIM copy it),
written out in its interface: what the benchmark's ``rtdetr`` recipe runs, and what
the tests recognise.  torchvision v2 transforms in their own Compose with an epoch
policy, transforms called with (image, target, dataset), and a collate that stacks the
batch and resizes it to a random scale.  Nothing here is jpegloader's.
"""
from __future__ import annotations

import random

import PIL.Image
import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms.v2 as T
import torchvision.transforms.v2.functional as VF
from torchvision.tv_tensors import BoundingBoxes, BoundingBoxFormat, Image, Mask

import numpy as np
from pycocotools import mask as coco_mask


# -- _misc.py -----------------------------------------------------------------------------
def convert_to_tv_tensor(tensor, key: str, box_format="xyxy", spatial_size=None):
    """A target's boxes (in ``box_format``, on a canvas of ``spatial_size``) or masks
    as torchvision's tv_tensors."""
    if key == "masks":
        return Mask(tensor)
    if key != "boxes":
        raise ValueError(f"convert_to_tv_tensor converts boxes or masks, not {key!r}")
    return BoundingBoxes(tensor, format=BoundingBoxFormat[box_format.upper()],
                         canvas_size=spatial_size)


# -- transforms/_transforms.py ------------------------------------------------------------
RandomPhotometricDistort = T.RandomPhotometricDistort
RandomZoomOut = T.RandomZoomOut
RandomHorizontalFlip = T.RandomHorizontalFlip
Resize = T.Resize
SanitizeBoundingBoxes = T.SanitizeBoundingBoxes


class RandomIoUCrop(T.RandomIoUCrop):
    """torchvision's RandomIoUCrop, taken with probability ``p``: one ``torch.rand(1)``
    drawn first decides."""

    def __init__(self, min_scale=0.3, max_scale=1, min_aspect_ratio=0.5, max_aspect_ratio=2,
                 sampler_options=None, trials=40, p=1.0):
        super().__init__(min_scale=min_scale, max_scale=max_scale,
                         min_aspect_ratio=min_aspect_ratio, max_aspect_ratio=max_aspect_ratio,
                         sampler_options=sampler_options, trials=trials)
        self.p = p

    def __call__(self, *inputs):
        taken = torch.rand(1) < self.p
        if taken:
            return super().forward(*inputs)
        return inputs[0] if len(inputs) == 1 else inputs


class ConvertBoxes(T.Transform):
    """Boxes into the format ``fmt`` (when given), then divided by the canvas's width
    and height (when ``normalize``)."""
    _transformed_types = (BoundingBoxes,)

    def __init__(self, fmt="", normalize=False):
        super().__init__()
        self.fmt, self.normalize = fmt, normalize

    def transform(self, inpt, params):
        height, width = inpt.canvas_size
        if self.fmt:
            inpt = convert_to_tv_tensor(
                torchvision.ops.box_convert(inpt, in_fmt=inpt.format.name.lower(),
                                            out_fmt=self.fmt.lower()),
                "boxes", box_format=self.fmt, spatial_size=(height, width))
        if not self.normalize:
            return inpt
        return inpt / torch.tensor([[width, height, width, height]])


class ConvertPILImage(T.Transform):
    """A PIL photo as a tv_tensors.Image: float32 when ``dtype`` says so, in [0, 1]
    when ``scale``."""
    _transformed_types = (PIL.Image.Image,)

    def __init__(self, dtype="float32", scale=True):
        super().__init__()
        self.dtype, self.scale = dtype, scale

    def transform(self, inpt, params):
        pixels = VF.pil_to_tensor(inpt)
        pixels = pixels.to(torch.float32) if self.dtype == "float32" else pixels
        return Image(pixels.div(255.0) if self.scale else pixels)


# -- transforms/container.py --------------------------------------------------------------
class Compose(T.Compose):
    """torchvision's Compose under a policy: "default" runs every op; "stop_epoch"
    leaves out the ops named in ``policy["ops"]`` from ``policy["epoch"]`` on (the
    epoch of the dataset passed last); "stop_sample" leaves them out once
    ``policy["sample"]`` samples went through."""
    POLICIES = ("default", "stop_epoch", "stop_sample")

    def __init__(self, ops, policy=None):
        super().__init__(transforms=list(ops))
        self.policy = {"name": "default"} if policy is None else policy
        self.global_samples = 0

    def forward(self, *inputs):
        name = self.policy["name"]
        if name not in self.POLICIES:
            raise ValueError(f"unknown Compose policy {name!r}; one of {self.POLICIES}")
        sample = inputs[0] if len(inputs) == 1 else inputs
        if name == "stop_epoch":
            over = sample[-1].epoch >= self.policy["epoch"]
        else:
            over = name == "stop_sample" and self.global_samples >= self.policy["sample"]
        for op in self.transforms:
            if not (over and type(op).__name__ in self.policy["ops"]):
                sample = op(sample)
        if name == "stop_sample":
            self.global_samples += 1
        return sample


# -- dataset/coco_dataset.py --------------------------------------------------------------
def _corners(objects, width, height):
    """Each object's box as (x0, y0, x1, y1) in float32, kept inside the photo."""
    xywh = torch.tensor([o["bbox"] for o in objects], dtype=torch.float32).reshape(-1, 4)
    x0, y0 = xywh[:, 0], xywh[:, 1]
    x1, y1 = x0 + xywh[:, 2], y0 + xywh[:, 3]
    return torch.stack([x0.clamp(0, width), y0.clamp(0, height),
                        x1.clamp(0, width), y1.clamp(0, height)], dim=1)


def _masks(objects, height, width):
    """Each object's pixels (the union of its polygons), a uint8 plane of 0 and 1 each."""
    planes = [coco_mask.decode(coco_mask.frPyObjects(o["segmentation"], height, width))
              .reshape(height, width, -1).any(axis=2) for o in objects]
    if not planes:
        return torch.zeros((0, height, width), dtype=torch.uint8)
    return torch.from_numpy(np.stack(planes).astype(np.uint8))


class ConvertCocoPolysToMask:
    """COCO's annotations of one photo as RT-DETR's target: crowds left out, boxes
    without area dropped, labels remapped where a category2label is given."""

    def __init__(self, return_masks=False):
        self.return_masks = return_masks

    def __call__(self, image, target, **kwargs):
        width, height = image.size
        objects = [o for o in target["annotations"] if not o.get("iscrowd", 0)]
        corners = _corners(objects, width, height)
        remap = kwargs.get("category2label")
        labels = torch.tensor([o["category_id"] if remap is None else remap[o["category_id"]]
                               for o in objects], dtype=torch.int64)
        valid = (corners[:, 2] > corners[:, 0]) & (corners[:, 3] > corners[:, 1])
        out = {"boxes": corners[valid], "labels": labels[valid]}
        if self.return_masks:
            out["masks"] = _masks(objects, height, width)[valid]
        out["image_id"] = torch.tensor([target["image_id"]])
        out["area"] = torch.tensor([o["area"] for o in objects])[valid]
        out["iscrowd"] = torch.tensor([o.get("iscrowd", 0) for o in objects])[valid]
        out["orig_size"] = torch.tensor([int(width), int(height)])
        return image, out


#: COCO's 80 category ids in order, each to its label (0-79), as their module keeps them
mscoco_category2label = {k: i for i, k in enumerate(
    [*range(1, 12), *range(13, 26), 27, 28, *range(31, 45), *range(46, 66), 67, 70,
     *range(72, 83), *range(84, 91)])}


class _Epoch:
    """The epoch a training loop sets on their datasets and collate functions; -1
    until it does."""
    _epoch = -1

    def set_epoch(self, epoch):
        self._epoch = epoch

    @property
    def epoch(self):
        return self._epoch


class DetDataset(_Epoch, torch.utils.data.Dataset):
    pass


class CocoDetection(torchvision.datasets.CocoDetection, DetDataset):
    """torchvision's CocoDetection whose ``load_item`` makes RT-DETR's target (boxes
    as tv_tensors, the sample's index kept), and whose transforms take the dataset too."""

    def __init__(self, img_folder, ann_file, transforms, return_masks=False,
                 remap_mscoco_category=False):
        super().__init__(img_folder, ann_file)
        self.img_folder, self.ann_file = img_folder, ann_file
        self.return_masks = return_masks
        self.remap_mscoco_category = remap_mscoco_category
        self.prepare = ConvertCocoPolysToMask(return_masks)
        self._transforms = transforms

    def __getitem__(self, idx):
        image, target = self.load_item(idx)
        if self._transforms is None:
            return image, target
        image, target, _ = self._transforms(image, target, self)
        return image, target

    def load_item(self, idx):
        image, annotations = super().__getitem__(idx)
        remap = {"category2label": mscoco_category2label} if self.remap_mscoco_category else {}
        image, target = self.prepare(image, {"image_id": self.ids[idx],
                                             "annotations": annotations}, **remap)
        target["idx"] = torch.tensor([idx])
        if "boxes" in target:
            target["boxes"] = convert_to_tv_tensor(target["boxes"], key="boxes",
                                                   spatial_size=image.size[::-1])
        if "masks" in target:
            target["masks"] = convert_to_tv_tensor(target["masks"], key="masks")
        return image, target


# -- dataloader.py ------------------------------------------------------------------------
class BaseCollateFunction(_Epoch):
    def __call__(self, items):
        raise NotImplementedError(f"{type(self).__name__} collates nothing")


class BatchImageCollateFunction(BaseCollateFunction):
    """The images stacked; before ``stop_epoch``, the whole batch resized (nearest) to
    a size drawn from ``scales`` with Python's random, the masks with it."""

    def __init__(self, scales=None, stop_epoch=None):
        super().__init__()
        self.scales = scales
        self.stop_epoch = 100_000_000 if stop_epoch is None else stop_epoch

    def __call__(self, items):
        images = torch.stack([image for image, _ in items])
        targets = [target for _, target in items]
        if self.scales is None or self.epoch >= self.stop_epoch:
            return images, targets
        size = random.choice(self.scales)
        images = F.interpolate(images, size=size)
        if "masks" in targets[0]:
            for target in targets:
                masks = F.interpolate(target["masks"][:, None].float(), size=size,
                                      mode="nearest")
                target["masks"] = masks[:, 0] > 0.5
        return images, targets


# -- configs/dataset/coco_detection.yml, configs/rtdetrv2/include/dataloader.yml ------------
STOP_EPOCH = 71
SCALES = [480, 512, 544, 576, 608, 640, 640, 640, 672, 704, 736, 768, 800]


def train_transforms(stop_epoch=STOP_EPOCH):
    return Compose([
        RandomPhotometricDistort(p=0.5), RandomZoomOut(fill=0), RandomIoUCrop(p=0.8),
        SanitizeBoundingBoxes(min_size=1), RandomHorizontalFlip(), Resize(size=[640, 640]),
        SanitizeBoundingBoxes(min_size=1), ConvertPILImage(dtype="float32", scale=True),
        ConvertBoxes(fmt="cxcywh", normalize=True)],
        policy={"name": "stop_epoch", "epoch": stop_epoch,
                "ops": ["RandomPhotometricDistort", "RandomZoomOut", "RandomIoUCrop"]})


def val_transforms():
    return Compose([Resize(size=[640, 640]), ConvertPILImage(dtype="float32", scale=True)])


def build(image_set, img_folder, ann_file):
    """The train or val dataset and collate_fn, as the configs build them."""
    transforms = train_transforms() if image_set == "train" else val_transforms()
    collate = BatchImageCollateFunction(scales=SCALES, stop_epoch=STOP_EPOCH) \
        if image_set == "train" else BatchImageCollateFunction()
    return CocoDetection(img_folder, ann_file, transforms), collate
