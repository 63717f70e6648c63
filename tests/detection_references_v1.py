# ruff: noqa  -- deliberately in the style of the reference code users carry
"""torchvision's detection references without --use-v2 (their default): the own transform
classes of references/detection/transforms.py and the CocoDetection subclass and
ConvertCocoPolysToMask of coco_utils.py, as a user's training script carries them (written
out independently here, in their style and interface).  Each transform takes and returns
(image, target)."""
from typing import Dict, List, Optional, Tuple, Union

import torch
import torchvision
from pycocotools import mask as coco_mask
from torch import nn, Tensor
from torchvision.transforms import functional as F, InterpolationMode, transforms as T


_SSD_OPTIONS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


def _flip_coco_person_keypoints(kps, width):
    flip_inds = [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]
    flipped_data = kps[:, flip_inds]
    flipped_data[..., 0] = width - flipped_data[..., 0]
    # Maintain COCO convention that if visibility == 0, then x, y = 0
    inds = flipped_data[..., 2] == 0
    flipped_data[inds] = 0
    return flipped_data


class Compose:
    def __init__(self, steps):
        self.transforms = steps

    def __call__(self, image, target):
        for t in self.transforms:
            image, target = t(image, target)
        return image, target


class RandomHorizontalFlip(T.RandomHorizontalFlip):
    def forward(
        self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        if torch.rand(1) < self.p:
            image = F.hflip(image)
            if target is not None:
                _, _, width = F.get_dimensions(image)
                target["boxes"][:, [0, 2]] = width - target["boxes"][:, [2, 0]]
                if "masks" in target:
                    target["masks"] = target["masks"].flip(-1)
                if "keypoints" in target:
                    target["keypoints"] = _flip_coco_person_keypoints(target["keypoints"], width)
        return image, target


class PILToTensor(nn.Module):
    def forward(
        self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        image = F.pil_to_tensor(image)
        return image, target


class ToDtype(nn.Module):
    def __init__(self, dtype: torch.dtype, scale: bool = False) -> None:
        super().__init__()
        self.dtype = dtype
        self.scale = scale

    def forward(
        self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        if not self.scale:
            return image.to(dtype=self.dtype), target
        image = F.convert_image_dtype(image, self.dtype)
        return image, target


class RandomShortestSize(nn.Module):
    def __init__(self, min_size: Union[List[int], Tuple[int], int], max_size: int,
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR):
        super().__init__()
        sizes = (min_size,) if isinstance(min_size, int) else min_size
        self.min_size, self.max_size, self.interpolation = list(sizes), max_size, interpolation

    def forward(
        self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
    ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        _, orig_height, orig_width = F.get_dimensions(image)

        min_size = self.min_size[torch.randint(len(self.min_size), (1,)).item()]
        r = min(min_size / min(orig_height, orig_width), self.max_size / max(orig_height, orig_width))
        new_height, new_width = int(orig_height * r), int(orig_width * r)

        image = F.resize(image, [new_height, new_width], interpolation=self.interpolation)

        if target is not None:
            target["boxes"][:, 0::2] *= new_width / orig_width
            target["boxes"][:, 1::2] *= new_height / orig_height
            if "masks" in target:
                target["masks"] = F.resize(
                    target["masks"], [new_height, new_width], interpolation=InterpolationMode.NEAREST
                )

        return image, target


class RandomIoUCrop(nn.Module):
    def __init__(self, min_scale: float = 0.3, max_scale: float = 1.0, min_aspect_ratio: float = 0.5,
                 max_aspect_ratio: float = 2.0, sampler_options: Optional[List[float]] = None,
                 trials: int = 40):
        super().__init__()
        # the SSD paper's sampler: a minimum IoU drawn from the options, 1.0 meaning no crop
        self.min_scale, self.max_scale = min_scale, max_scale
        self.min_aspect_ratio, self.max_aspect_ratio = min_aspect_ratio, max_aspect_ratio
        self.options = list(_SSD_OPTIONS) if sampler_options is None else sampler_options
        self.trials = trials

    def forward(self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
                ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        if target is None:
            raise ValueError("The targets can't be None for this transform.")
        _, orig_h, orig_w = F.get_dimensions(image)
        lo, hi = self.min_scale, self.max_scale
        while True:
            choice = torch.randint(low=0, high=len(self.options), size=(1,))
            threshold = self.options[int(choice)]
            if threshold >= 1.0:  # the option that keeps the image whole
                return image, target
            for _ in range(self.trials):
                scale = torch.rand(2) * (hi - lo) + lo  # a width and a height factor
                w, h = int(orig_w * scale[0]), int(orig_h * scale[1])
                if not self.min_aspect_ratio <= w / h <= self.max_aspect_ratio:
                    continue
                u = torch.rand(2)  # where the window sits
                x0, y0 = int((orig_w - w) * u[0]), int((orig_h - h) * u[1])
                x1, y1 = x0 + w, y0 + h
                if w == 0 or h == 0:
                    continue
                boxes = target["boxes"]
                centre_x = (boxes[:, 0] + boxes[:, 2]) * 0.5
                centre_y = (boxes[:, 1] + boxes[:, 3]) * 0.5
                inside = (centre_x > x0) & (centre_x < x1) & (centre_y > y0) & (centre_y < y1)
                if not bool(inside.any()):
                    continue
                kept = boxes[inside]
                window = torch.tensor([[x0, y0, x1, y1]], dtype=kept.dtype, device=kept.device)
                if torchvision.ops.box_iou(kept, window).max() < threshold:
                    continue
                kept[:, 0::2] -= x0
                kept[:, 1::2] -= y0
                kept[:, 0::2].clamp_(min=0, max=w)
                kept[:, 1::2].clamp_(min=0, max=h)
                target["boxes"], target["labels"] = kept, target["labels"][inside]
                return F.crop(image, y0, x0, h, w), target


class RandomZoomOut(nn.Module):
    def __init__(self, fill: Optional[List[float]] = None, side_range: Tuple[float, float] = (1.0, 4.0),
                 p: float = 0.5):
        super().__init__()
        self.fill = [0.0, 0.0, 0.0] if fill is None else fill
        self.side_range = side_range
        lo, hi = side_range
        if not 1.0 <= lo <= hi:
            raise ValueError(f"Invalid canvas side range provided {side_range}.")
        self.p = p

    def _get_fill_value(self, is_pil):
        return tuple(int(x) for x in self.fill) if is_pil else 0

    def forward(self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
                ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        if torch.rand(1) >= self.p:
            return image, target
        _, orig_h, orig_w = F.get_dimensions(image)
        lo, hi = self.side_range
        ratio = torch.rand(1) * (hi - lo) + lo
        canvas_w, canvas_h = int(orig_w * ratio), int(orig_h * ratio)
        u = torch.rand(2)  # where the image sits on the canvas
        left, top = int((canvas_w - orig_w) * u[0]), int((canvas_h - orig_h) * u[1])
        right, bottom = canvas_w - orig_w - left, canvas_h - orig_h - top
        fill = self._get_fill_value(F._is_pil_image(image))
        image = F.pad(image, [left, top, right, bottom], fill=fill)
        if isinstance(image, torch.Tensor):
            # PyTorch's pad supports only integers on fill. So we need to overwrite the colour
            v = torch.tensor(self.fill, device=image.device, dtype=image.dtype).view(-1, 1, 1)
            image[..., :top, :] = image[..., :, :left] = image[..., (top + orig_h):, :] = image[
                ..., :, (left + orig_w):] = v
        if target is not None:
            target["boxes"][:, 0::2] += left
            target["boxes"][:, 1::2] += top
        return image, target


class RandomPhotometricDistort(nn.Module):
    def __init__(self, contrast: Tuple[float] = (0.5, 1.5), saturation: Tuple[float] = (0.5, 1.5),
                 hue: Tuple[float] = (-0.05, 0.05), brightness: Tuple[float] = (0.875, 1.125),
                 p: float = 0.5):
        super().__init__()
        self._brightness = T.ColorJitter(brightness=brightness)
        self._contrast = T.ColorJitter(contrast=contrast)
        self._hue = T.ColorJitter(hue=hue)
        self._saturation = T.ColorJitter(saturation=saturation)
        self.p = p

    def forward(self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
                ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        r = torch.rand(7)
        if r[0] < self.p:
            image = self._brightness(image)
        contrast_before = r[1] < 0.5
        if contrast_before:
            if r[2] < self.p:
                image = self._contrast(image)
        if r[3] < self.p:
            image = self._saturation(image)
        if r[4] < self.p:
            image = self._hue(image)
        if not contrast_before:
            if r[5] < self.p:
                image = self._contrast(image)
        if r[6] < self.p:
            channels, _, _ = F.get_dimensions(image)
            permutation = torch.randperm(channels)
            is_pil = F._is_pil_image(image)
            if is_pil:
                image = F.pil_to_tensor(image)
                image = F.convert_image_dtype(image)
            image = image[..., permutation, :, :]
            if is_pil:
                image = F.to_pil_image(image)
        return image, target


class ScaleJitter(nn.Module):
    def __init__(self, target_size: Tuple[int, int], scale_range: Tuple[float, float] = (0.1, 2.0),
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.target_size, self.scale_range = target_size, scale_range
        self.interpolation, self.antialias = interpolation, antialias

    def forward(self, image: Tensor, target: Optional[Dict[str, Tensor]] = None
                ) -> Tuple[Tensor, Optional[Dict[str, Tensor]]]:
        _, orig_height, orig_width = F.get_dimensions(image)
        lo, hi = self.scale_range
        target_w, target_h = self.target_size
        ratio = min(target_h / orig_height, target_w / orig_width) * (torch.rand(1) * (hi - lo) + lo)
        new_height, new_width = int(orig_height * ratio), int(orig_width * ratio)
        image = F.resize(image, [new_height, new_width], interpolation=self.interpolation,
                         antialias=self.antialias)
        if target is not None:
            target["boxes"][:, 0::2] *= new_width / orig_width
            target["boxes"][:, 1::2] *= new_height / orig_height
            if "masks" in target:
                nearest = InterpolationMode.NEAREST
                target["masks"] = F.resize(target["masks"], [new_height, new_width],
                                           interpolation=nearest, antialias=self.antialias)
        return image, target


class FixedSizeCrop(nn.Module):
    def __init__(self, size, fill=0, padding_mode="constant"):
        super().__init__()
        size = tuple(T._setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        self.crop_height = size[0]
        self.crop_width = size[1]
        self.fill, self.padding_mode = fill, padding_mode  # the fill reaches PIL images only

    def _pad(self, img, target, padding):
        pad_left, pad_top, pad_right, pad_bottom = padding
        img = F.pad(img, padding, fill=self.fill, padding_mode=self.padding_mode)
        if target is not None:
            target["boxes"][:, 0::2] += pad_left
            target["boxes"][:, 1::2] += pad_top
            if "masks" in target:
                target["masks"] = F.pad(target["masks"], padding, 0, "constant")
        return img, target

    def _crop(self, img, target, top, left, height, width):
        img = F.crop(img, top, left, height, width)
        if target is not None:
            boxes = target["boxes"]
            boxes[:, 0::2] -= left
            boxes[:, 1::2] -= top
            boxes[:, 0::2].clamp_(min=0, max=width)
            boxes[:, 1::2].clamp_(min=0, max=height)
            is_valid = (boxes[:, 0] < boxes[:, 2]) & (boxes[:, 1] < boxes[:, 3])
            target["boxes"] = boxes[is_valid]
            target["labels"] = target["labels"][is_valid]
            if "masks" in target:
                target["masks"] = F.crop(target["masks"][is_valid], top, left, height, width)
        return img, target

    def forward(self, img, target=None):
        height, width = F.get_dimensions(img)[1:]
        new_height = min(height, self.crop_height)
        new_width = min(width, self.crop_width)
        if new_height != height or new_width != width:
            offset_height = max(height - self.crop_height, 0)
            offset_width = max(width - self.crop_width, 0)
            r = torch.rand(1)
            top = int(offset_height * r)
            left = int(offset_width * r)
            img, target = self._crop(img, target, top, left, new_height, new_width)
        pad_bottom = max(self.crop_height - new_height, 0)
        pad_right = max(self.crop_width - new_width, 0)
        if pad_bottom != 0 or pad_right != 0:
            img, target = self._pad(img, target, [0, 0, pad_right, pad_bottom])
        return img, target


def _object_masks(objects, height, width):
    """Each object's pixels, the union of its polygons: a uint8 plane of 0 and 1 each."""
    masks = torch.zeros((len(objects), height, width), dtype=torch.uint8)
    for k, o in enumerate(objects):
        planes = coco_mask.decode(coco_mask.frPyObjects(o["segmentation"], height, width))
        masks[k] = torch.from_numpy(planes.reshape(height, width, -1).max(axis=2))
    return masks


class ConvertCocoPolysToMask:
    """COCO's annotations of a photo as the references' target: crowds left out; boxes
    as (x0, y0, x1, y1) inside the photo, those without area dropped with their labels,
    masks and keypoints; area and iscrowd of every object kept."""

    def __call__(self, image, target):
        width, height = image.size
        objects = [o for o in target["annotations"] if o["iscrowd"] == 0]
        xywh = torch.tensor([o["bbox"] for o in objects], dtype=torch.float32).reshape(-1, 4)
        x0, y0 = xywh[:, 0], xywh[:, 1]
        corners = torch.stack([x0.clamp(0, width), y0.clamp(0, height),
                               (x0 + xywh[:, 2]).clamp(0, width),
                               (y0 + xywh[:, 3]).clamp(0, height)], dim=1)
        valid = (corners[:, 2] > corners[:, 0]) & (corners[:, 3] > corners[:, 1])
        labels = torch.tensor([o["category_id"] for o in objects], dtype=torch.int64)
        out = {"boxes": corners[valid], "labels": labels[valid],
               "masks": _object_masks(objects, height, width)[valid],
               "image_id": target["image_id"]}
        if objects and "keypoints" in objects[0]:
            points = torch.tensor([o["keypoints"] for o in objects], dtype=torch.float32)
            out["keypoints"] = points.reshape(len(objects), -1, 3)[valid]
        out["area"] = torch.tensor([o["area"] for o in objects])
        out["iscrowd"] = torch.tensor([o["iscrowd"] for o in objects])
        return image, out


class CocoDetection(torchvision.datasets.CocoDetection):
    """torchvision's CocoDetection handing (image, {"image_id", "annotations"}) to
    ``_transforms``."""

    def __init__(self, img_folder, ann_file, transforms):
        super().__init__(img_folder, ann_file)
        self._transforms = transforms

    def __getitem__(self, idx):
        image, annotations = super().__getitem__(idx)
        target = {"image_id": self.ids[idx], "annotations": annotations}
        return (image, target) if self._transforms is None else self._transforms(image, target)


def get_coco(img_folder, ann_file, image_set, transforms):
    from tests.detection_references_copy import _coco_remove_images_without_annotations
    t = [ConvertCocoPolysToMask()]
    if transforms is not None:
        t.append(transforms)
    transforms = Compose(t)
    dataset = CocoDetection(img_folder, ann_file, transforms=transforms)
    if image_set == "train":
        dataset = _coco_remove_images_without_annotations(dataset)
    return dataset


class DetectionPresetTrain:
    def __init__(self, *, data_augmentation, hflip_prob=0.5, mean=(123.0, 117.0, 104.0), backend="pil"):
        transforms = []
        if backend == "tensor":
            transforms.append(PILToTensor())
        if data_augmentation == "hflip":
            transforms += [RandomHorizontalFlip(p=hflip_prob)]
        elif data_augmentation == "multiscale":
            transforms += [
                RandomShortestSize(min_size=(480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800), max_size=1333),
                RandomHorizontalFlip(p=hflip_prob),
            ]
        elif data_augmentation == "lsj":
            transforms += [
                ScaleJitter(target_size=(1024, 1024), antialias=True),
                FixedSizeCrop(size=(1024, 1024), fill=mean),
                RandomHorizontalFlip(p=hflip_prob),
            ]
        elif data_augmentation == "ssd":
            transforms += [
                RandomPhotometricDistort(),
                RandomZoomOut(fill=list(mean)),
                RandomIoUCrop(),
                RandomHorizontalFlip(p=hflip_prob),
            ]
        elif data_augmentation == "ssdlite":
            transforms += [
                RandomIoUCrop(),
                RandomHorizontalFlip(p=hflip_prob),
            ]
        else:
            raise ValueError(f'Unknown data augmentation policy "{data_augmentation}"')
        if backend == "pil":
            transforms += [PILToTensor()]
        transforms += [ToDtype(torch.float, scale=True)]
        self.transforms = Compose(transforms)

    def __call__(self, img, target):
        return self.transforms(img, target)


class DetectionPresetEval:
    def __init__(self):
        self.transforms = Compose([PILToTensor(), ToDtype(torch.float, scale=True)])

    def __call__(self, img, target):
        return self.transforms(img, target)
