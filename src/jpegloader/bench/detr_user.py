"""DETR's data pipeline as its users carry it (facebookresearch/detr ``datasets/coco.py``,
``datasets/transforms.py``, ``util/misc.py``, ``util/box_ops.py``; Deformable-DETR,
DINO-DETR, Conditional/DAB/DN-DETR copy it almost unchanged), written out in its
interface: what the benchmark's ``detr`` and ``detr-val`` recipes run, and what the
tests recognise.  Its own classes, drawing from Python's ``random`` and torch's
generator as DETR's do; nothing here is jpegloader's.
"""
from __future__ import annotations

import random

import PIL
import torch
import torchvision
import torchvision.transforms as T
import torchvision.transforms.functional as F


# -- util/box_ops.py ----------------------------------------------------------------------
def box_xyxy_to_cxcywh(x):
    x0, y0, x1, y1 = x.unbind(-1)
    b = [(x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0), (y1 - y0)]
    return torch.stack(b, dim=-1)


# -- util/misc.py -------------------------------------------------------------------------
class NestedTensor:
    """A padded batch and its mask (True where an image is padding)."""

    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask

    def to(self, device):
        mask = None if self.mask is None else self.mask.to(device)
        return NestedTensor(self.tensors.to(device), mask)

    def decompose(self):
        return self.tensors, self.mask

    def __repr__(self):
        return str(self.tensors)


def _max_by_axis(the_list):
    maxes = the_list[0]
    for sublist in the_list[1:]:
        for index, item in enumerate(sublist):
            maxes[index] = max(maxes[index], item)
    return maxes


def nested_tensor_from_tensor_list(tensor_list):
    if tensor_list[0].ndim != 3:
        raise ValueError("not supported")
    max_size = _max_by_axis([list(img.shape) for img in tensor_list])
    b, c, h, w = [len(tensor_list)] + max_size
    tensor = torch.zeros((b, c, h, w), dtype=tensor_list[0].dtype)
    mask = torch.ones((b, h, w), dtype=torch.bool)
    for img, pad_img, m in zip(tensor_list, tensor, mask):
        pad_img[: img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
        m[: img.shape[1], : img.shape[2]] = False
    return NestedTensor(tensor, mask)


def collate_fn(batch):
    batch = list(zip(*batch))
    batch[0] = nested_tensor_from_tensor_list(batch[0])
    return tuple(batch)


# -- datasets/transforms.py ---------------------------------------------------------------
def crop(image, target, region):
    cropped_image = F.crop(image, *region)
    target = target.copy()
    i, j, h, w = region
    target["size"] = torch.tensor([h, w])
    fields = ["labels", "area", "iscrowd"]
    if "boxes" in target:
        boxes = target["boxes"]
        max_size = torch.as_tensor([w, h], dtype=torch.float32)
        cropped_boxes = boxes - torch.as_tensor([j, i, j, i])
        cropped_boxes = torch.min(cropped_boxes.reshape(-1, 2, 2), max_size)
        cropped_boxes = cropped_boxes.clamp(min=0)
        area = (cropped_boxes[:, 1, :] - cropped_boxes[:, 0, :]).prod(dim=1)
        target["boxes"] = cropped_boxes.reshape(-1, 4)
        target["area"] = area
        fields.append("boxes")
    if "masks" in target:
        target["masks"] = target["masks"][:, i:i + h, j:j + w]
        fields.append("masks")
    if "boxes" in target or "masks" in target:
        if "boxes" in target:
            cropped_boxes = target["boxes"].reshape(-1, 2, 2)
            keep = torch.all(cropped_boxes[:, 1, :] > cropped_boxes[:, 0, :], dim=1)
        else:
            keep = target["masks"].flatten(1).any(1)
        for field in fields:
            target[field] = target[field][keep]
    return cropped_image, target


def hflip(image, target):
    flipped_image = F.hflip(image)
    w, h = image.size
    target = target.copy()
    if "boxes" in target:
        boxes = target["boxes"]
        boxes = boxes[:, [2, 1, 0, 3]] * torch.as_tensor([-1, 1, -1, 1]) + \
            torch.as_tensor([w, 0, w, 0])
        target["boxes"] = boxes
    if "masks" in target:
        target["masks"] = target["masks"].flip(-1)
    return flipped_image, target


def resize(image, target, size, max_size=None):
    def get_size_with_aspect_ratio(image_size, size, max_size=None):
        w, h = image_size
        if max_size is not None:
            min_original_size = float(min((w, h)))
            max_original_size = float(max((w, h)))
            if max_original_size / min_original_size * size > max_size:
                size = int(round(max_size * min_original_size / max_original_size))
        if (w <= h and w == size) or (h <= w and h == size):
            return (h, w)
        if w < h:
            ow = size
            oh = int(size * h / w)
        else:
            oh = size
            ow = int(size * w / h)
        return (oh, ow)

    def get_size(image_size, size, max_size=None):
        if isinstance(size, (list, tuple)):
            return size[::-1]
        return get_size_with_aspect_ratio(image_size, size, max_size)

    size = get_size(image.size, size, max_size)
    rescaled_image = F.resize(image, size)
    if target is None:
        return rescaled_image, None
    ratios = tuple(float(s) / float(s_orig) for s, s_orig in zip(rescaled_image.size,
                                                                  image.size))
    ratio_width, ratio_height = ratios
    target = target.copy()
    if "boxes" in target:
        target["boxes"] = target["boxes"] * torch.as_tensor(
            [ratio_width, ratio_height, ratio_width, ratio_height])
    if "area" in target:
        target["area"] = target["area"] * (ratio_width * ratio_height)
    h, w = size
    target["size"] = torch.tensor([h, w])
    if "masks" in target:
        target["masks"] = torch.nn.functional.interpolate(
            target["masks"][:, None].float(), size, mode="nearest")[:, 0] > 0.5
    return rescaled_image, target


class RandomSizeCrop:
    def __init__(self, min_size: int, max_size: int):
        self.min_size = min_size
        self.max_size = max_size

    def __call__(self, img: PIL.Image.Image, target: dict):
        w = random.randint(self.min_size, min(img.width, self.max_size))
        h = random.randint(self.min_size, min(img.height, self.max_size))
        region = T.RandomCrop.get_params(img, [h, w])
        return crop(img, target, region)


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img, target):
        if random.random() < self.p:
            return hflip(img, target)
        return img, target


class RandomResize:
    def __init__(self, sizes, max_size=None):
        assert isinstance(sizes, (list, tuple))
        self.sizes = sizes
        self.max_size = max_size

    def __call__(self, img, target=None):
        size = random.choice(self.sizes)
        return resize(img, target, size, self.max_size)


class RandomSelect:
    """transforms1 with probability p, else transforms2."""

    def __init__(self, transforms1, transforms2, p=0.5):
        self.transforms1 = transforms1
        self.transforms2 = transforms2
        self.p = p

    def __call__(self, img, target):
        if random.random() < self.p:
            return self.transforms1(img, target)
        return self.transforms2(img, target)


class ToTensor:
    def __call__(self, img, target):
        return F.to_tensor(img), target


class Normalize:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, image, target=None):
        image = F.normalize(image, mean=self.mean, std=self.std)
        if target is None:
            return image, None
        target = target.copy()
        h, w = image.shape[-2:]
        if "boxes" in target:
            boxes = box_xyxy_to_cxcywh(target["boxes"])
            target["boxes"] = boxes / torch.tensor([w, h, w, h], dtype=torch.float32)
        return image, target


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, image, target):
        for t in self.transforms:
            image, target = t(image, target)
        return image, target

    def __repr__(self):
        return self.__class__.__name__ + "(" + "".join(
            f"\n    {t}" for t in self.transforms) + "\n)"


# -- datasets/coco.py ---------------------------------------------------------------------
def convert_coco_poly_to_mask(segmentations, height, width):
    from pycocotools import mask as coco_mask
    masks = []
    for polygons in segmentations:
        rles = coco_mask.frPyObjects(polygons, height, width)
        mask = coco_mask.decode(rles)
        if len(mask.shape) < 3:
            mask = mask[..., None]
        masks.append(torch.as_tensor(mask, dtype=torch.uint8).any(dim=2))
    if masks:
        return torch.stack(masks, dim=0)
    return torch.zeros((0, height, width), dtype=torch.uint8)


class ConvertCocoPolysToMask:
    def __init__(self, return_masks=False):
        self.return_masks = return_masks

    def __call__(self, image, target):
        w, h = image.size
        image_id = torch.tensor([target["image_id"]])
        anno = [obj for obj in target["annotations"] if obj.get("iscrowd", 0) == 0]
        boxes = torch.as_tensor([obj["bbox"] for obj in anno], dtype=torch.float32)
        boxes = boxes.reshape(-1, 4)
        boxes[:, 2:] += boxes[:, :2]
        boxes[:, 0::2].clamp_(min=0, max=w)
        boxes[:, 1::2].clamp_(min=0, max=h)
        classes = torch.tensor([obj["category_id"] for obj in anno], dtype=torch.int64)
        if self.return_masks:
            masks = convert_coco_poly_to_mask([obj["segmentation"] for obj in anno], h, w)
        keep = (boxes[:, 3] > boxes[:, 1]) & (boxes[:, 2] > boxes[:, 0])
        target = {"boxes": boxes[keep], "labels": classes[keep]}
        if self.return_masks:
            target["masks"] = masks[keep]
        target["image_id"] = image_id
        area = torch.tensor([obj["area"] for obj in anno])
        iscrowd = torch.tensor([obj.get("iscrowd", 0) for obj in anno])
        target["area"] = area[keep]
        target["iscrowd"] = iscrowd[keep]
        target["orig_size"] = torch.as_tensor([int(h), int(w)])
        target["size"] = torch.as_tensor([int(h), int(w)])
        return image, target


class CocoDetection(torchvision.datasets.CocoDetection):
    def __init__(self, img_folder, ann_file, transforms, return_masks):
        super().__init__(img_folder, ann_file)
        self._transforms = transforms
        self.prepare = ConvertCocoPolysToMask(return_masks)

    def __getitem__(self, idx):
        img, target = super().__getitem__(idx)
        image_id = self.ids[idx]
        target = {"image_id": image_id, "annotations": target}
        img, target = self.prepare(img, target)
        if self._transforms is not None:
            img, target = self._transforms(img, target)
        return img, target


SCALES = [480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800]


def make_coco_transforms(image_set):
    normalize = Compose([ToTensor(), Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    if image_set == "train":
        return Compose([
            RandomHorizontalFlip(),
            RandomSelect(
                RandomResize(SCALES, max_size=1333),
                Compose([RandomResize([400, 500, 600]), RandomSizeCrop(384, 600),
                         RandomResize(SCALES, max_size=1333)])),
            normalize,
        ])
    if image_set == "val":
        return Compose([RandomResize([800], max_size=1333), normalize])
    raise ValueError(f"unknown {image_set}")


def build(image_set, img_folder, ann_file, masks=False):
    """DETR's datasets.coco.build, from the folder and annotation file."""
    return CocoDetection(img_folder, ann_file, transforms=make_coco_transforms(image_set),
                         return_masks=masks)
