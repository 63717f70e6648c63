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

from .detr_user import convert_coco_poly_to_mask

_boxes_keys = ["format", "canvas_size"]


# -- _misc.py -----------------------------------------------------------------------------
def convert_to_tv_tensor(tensor, key: str, box_format="xyxy", spatial_size=None):
    assert key in ("boxes", "masks")
    if key == "boxes":
        box_format = getattr(BoundingBoxFormat, box_format.upper())
        return BoundingBoxes(tensor, **dict(zip(_boxes_keys, [box_format, spatial_size])))
    return Mask(tensor)


# -- transforms/_transforms.py ------------------------------------------------------------
RandomPhotometricDistort = T.RandomPhotometricDistort
RandomZoomOut = T.RandomZoomOut
RandomHorizontalFlip = T.RandomHorizontalFlip
Resize = T.Resize
SanitizeBoundingBoxes = T.SanitizeBoundingBoxes


class RandomIoUCrop(T.RandomIoUCrop):
    def __init__(self, min_scale=0.3, max_scale=1, min_aspect_ratio=0.5, max_aspect_ratio=2,
                 sampler_options=None, trials=40, p=1.0):
        super().__init__(min_scale, max_scale, min_aspect_ratio, max_aspect_ratio,
                         sampler_options, trials)
        self.p = p

    def __call__(self, *inputs):
        if torch.rand(1) >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return super().forward(*inputs)


class ConvertBoxes(T.Transform):
    _transformed_types = (BoundingBoxes,)

    def __init__(self, fmt="", normalize=False):
        super().__init__()
        self.fmt = fmt
        self.normalize = normalize

    def transform(self, inpt, params):
        spatial_size = getattr(inpt, _boxes_keys[1])
        if self.fmt:
            in_fmt = inpt.format.value.lower()
            inpt = torchvision.ops.box_convert(inpt, in_fmt=in_fmt, out_fmt=self.fmt.lower())
            inpt = convert_to_tv_tensor(inpt, key="boxes", box_format=self.fmt.upper(),
                                        spatial_size=spatial_size)
        if self.normalize:
            inpt = inpt / torch.tensor(spatial_size[::-1]).tile(2)[None]
        return inpt


class ConvertPILImage(T.Transform):
    _transformed_types = (PIL.Image.Image,)

    def __init__(self, dtype="float32", scale=True):
        super().__init__()
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt, params):
        inpt = VF.pil_to_tensor(inpt)
        if self.dtype == "float32":
            inpt = inpt.float()
        if self.scale:
            inpt = inpt / 255.0
        return Image(inpt)


# -- transforms/container.py --------------------------------------------------------------
class Compose(T.Compose):
    def __init__(self, ops, policy=None):
        super().__init__(transforms=list(ops))
        self.policy = policy if policy is not None else {"name": "default"}
        self.global_samples = 0

    def forward(self, *inputs):
        return {"default": self.default_forward, "stop_epoch": self.stop_epoch_forward,
                "stop_sample": self.stop_sample_forward}[self.policy["name"]](*inputs)

    def default_forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        for transform in self.transforms:
            sample = transform(sample)
        return sample

    def stop_epoch_forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        cur_epoch = sample[-1].epoch
        for transform in self.transforms:
            if not (type(transform).__name__ in self.policy["ops"] and
                    cur_epoch >= self.policy["epoch"]):
                sample = transform(sample)
        return sample

    def stop_sample_forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        for transform in self.transforms:
            if not (type(transform).__name__ in self.policy["ops"] and
                    self.global_samples >= self.policy["sample"]):
                sample = transform(sample)
        self.global_samples += 1
        return sample


# -- dataset/coco_dataset.py --------------------------------------------------------------
class ConvertCocoPolysToMask:
    def __init__(self, return_masks=False):
        self.return_masks = return_masks

    def __call__(self, image, target, **kwargs):
        w, h = image.size
        image_id = torch.tensor([target["image_id"]])
        anno = [obj for obj in target["annotations"] if obj.get("iscrowd", 0) == 0]
        boxes = torch.as_tensor([obj["bbox"] for obj in anno], dtype=torch.float32)
        boxes = boxes.reshape(-1, 4)
        boxes[:, 2:] += boxes[:, :2]
        boxes[:, 0::2].clamp_(min=0, max=w)
        boxes[:, 1::2].clamp_(min=0, max=h)
        category2label = kwargs.get("category2label", None)
        labels = [category2label[obj["category_id"]] if category2label is not None
                  else obj["category_id"] for obj in anno]
        labels = torch.tensor(labels, dtype=torch.int64)
        if self.return_masks:
            masks = convert_coco_poly_to_mask([obj["segmentation"] for obj in anno], h, w)
        keep = (boxes[:, 3] > boxes[:, 1]) & (boxes[:, 2] > boxes[:, 0])
        target = {"boxes": boxes[keep], "labels": labels[keep]}
        if self.return_masks:
            target["masks"] = masks[keep]
        target["image_id"] = image_id
        area = torch.tensor([obj["area"] for obj in anno])
        iscrowd = torch.tensor([obj.get("iscrowd", 0) for obj in anno])
        target["area"] = area[keep]
        target["iscrowd"] = iscrowd[keep]
        target["orig_size"] = torch.as_tensor([int(w), int(h)])
        return image, target


#: COCO's 80 category ids in order, each to its label (0-79), as their module keeps them
mscoco_category2label = {k: i for i, k in enumerate(
    [*range(1, 12), *range(13, 26), 27, 28, *range(31, 45), *range(46, 66), 67, 70,
     *range(72, 83), *range(84, 91)])}


class DetDataset(torch.utils.data.Dataset):
    def set_epoch(self, epoch):
        self._epoch = epoch

    @property
    def epoch(self):
        return self._epoch if hasattr(self, "_epoch") else -1


class CocoDetection(torchvision.datasets.CocoDetection, DetDataset):
    def __init__(self, img_folder, ann_file, transforms, return_masks=False,
                 remap_mscoco_category=False):
        super().__init__(img_folder, ann_file)
        self._transforms = transforms
        self.prepare = ConvertCocoPolysToMask(return_masks)
        self.img_folder = img_folder
        self.ann_file = ann_file
        self.return_masks = return_masks
        self.remap_mscoco_category = remap_mscoco_category

    def __getitem__(self, idx):
        img, target = self.load_item(idx)
        if self._transforms is not None:
            img, target, _ = self._transforms(img, target, self)
        return img, target

    def load_item(self, idx):
        image, target = super().__getitem__(idx)
        image_id = self.ids[idx]
        target = {"image_id": image_id, "annotations": target}
        if self.remap_mscoco_category:
            image, target = self.prepare(image, target, category2label=mscoco_category2label)
        else:
            image, target = self.prepare(image, target)
        target["idx"] = torch.tensor([idx])
        if "boxes" in target:
            target["boxes"] = convert_to_tv_tensor(target["boxes"], key="boxes",
                                                   spatial_size=image.size[::-1])
        if "masks" in target:
            target["masks"] = convert_to_tv_tensor(target["masks"], key="masks")
        return image, target


# -- dataloader.py ------------------------------------------------------------------------
class BaseCollateFunction:
    def set_epoch(self, epoch):
        self._epoch = epoch

    @property
    def epoch(self):
        return self._epoch if hasattr(self, "_epoch") else -1

    def __call__(self, items):
        raise NotImplementedError("")


class BatchImageCollateFunction(BaseCollateFunction):
    def __init__(self, scales=None, stop_epoch=None):
        super().__init__()
        self.scales = scales
        self.stop_epoch = stop_epoch if stop_epoch is not None else 100000000

    def __call__(self, items):
        images = torch.cat([x[0][None] for x in items], dim=0)
        targets = [x[1] for x in items]
        if self.scales is not None and self.epoch < self.stop_epoch:
            sz = random.choice(self.scales)
            images = F.interpolate(images, size=sz)
            if "masks" in targets[0]:
                for tg in targets:
                    tg["masks"] = F.interpolate(tg["masks"][:, None].float(), size=sz,
                                                mode="nearest")[:, 0] > 0.5
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
