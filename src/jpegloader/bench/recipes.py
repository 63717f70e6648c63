"""The benchmark's pipelines: the transforms (and collate functions) real training
recipes build, by name, and the datasets they run on."""
from __future__ import annotations

import contextlib
import io
import os
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from PIL import ImageFilter, ImageOps
from torchvision import datasets
from torchvision import transforms as T

from ..datasets import COCODetection
from ..transforms.ssd import SSDTransformer, dboxes300_coco
from . import peers, rtdetr_user, yolo_user

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def _normalized():
    return [T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]


def _timm_train():
    # timm's train.py without its prefetcher: train_interpolation "random", color_jitter 0.4
    from timm.data import create_transform
    return create_transform(224, is_training=True, interpolation="random", color_jitter=0.4)


def _deit_train():
    # DeiT's "rand-m9-mstd0.5-inc1" minus "inc1": with Pillow 13, timm's increasing
    # posterize asks for 0 bits when the noisy magnitude reaches 10 and Pillow raises
    # (about 1 sample in 500, torch's own loader included); the plain variant runs the
    # same operations.
    from timm.data import create_transform
    return create_transform(224, is_training=True, color_jitter=0.4,
                            auto_augment="rand-m9-mstd0.5", interpolation="bicubic",
                            re_prob=0.25)


def _tv_resnet50_v2():
    # torchvision references/classification, the ResNet-50 v2 recipe's train transform
    return T.Compose([T.RandomResizedCrop(176), T.RandomHorizontalFlip(),
                      T.TrivialAugmentWide(), T.PILToTensor(), T.ConvertImageDtype(torch.float),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD), T.RandomErasing(0.1)])


class MixUpCutMixCollate:
    """The references' collate: MixUp(0.2) or CutMix(1.0), chosen per batch, after
    default_collate (a class, so that spawned workers can unpickle it)."""

    def __init__(self, num_classes: int):
        from torchvision.transforms import v2
        self.mix = v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=num_classes),
                                    v2.CutMix(alpha=1.0, num_classes=num_classes)])

    def __call__(self, batch):
        return self.mix(*torch.utils.data.default_collate(batch))


def fast_collate(batch):
    """A fast_collate as NVIDIA's DeepLearningExamples writes it: PIL images stacked
    into uint8[B, 3, H, W] and int64 targets."""
    images = torch.stack([torch.from_numpy(np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)
                                           .copy()) for image, _ in batch])
    return images, torch.tensor([target for _, target in batch], dtype=torch.int64)


class RandomGaussianBlur:
    """DINO's GaussianBlur: with probability p, Pillow's GaussianBlur of a radius
    uniform in [radius_min, radius_max]."""

    def __init__(self, p: float = 0.5, radius_min: float = 0.1, radius_max: float = 2.0):
        self.p, self.radius_min, self.radius_max = p, radius_min, radius_max

    def __call__(self, image):
        if random.random() > self.p:
            return image
        return image.filter(ImageFilter.GaussianBlur(
            radius=random.uniform(self.radius_min, self.radius_max)))


class RandomSolarize:
    """DINO's Solarization: Pillow's solarize with probability p."""

    def __init__(self, p: float):
        self.p = p

    def __call__(self, image):
        return ImageOps.solarize(image) if random.random() < self.p else image


class RandomGrayscaleOf3:
    """DeiT III's gray_scale: Grayscale(3) with probability p."""

    def __init__(self, p: float):
        self.p, self.gray = p, T.Grayscale(3)

    def __call__(self, image):
        return self.gray(image) if random.random() < self.p else image


def deit3_train(size: int = 224):
    """DeiT III's 3-Augment with simple random crop (its ImageNet-1k recipe, --src):
    Resize, RandomCrop(padding=4, reflect), flip, one of grayscale, solarize and blur,
    ColorJitter(0.3, 0.3, 0.3), ToTensor, Normalize."""
    return T.Compose([
        T.Resize(size, interpolation=T.InterpolationMode.BICUBIC),
        T.RandomCrop(size, padding=4, padding_mode="reflect"), T.RandomHorizontalFlip(),
        T.RandomChoice([RandomGrayscaleOf3(1.0), RandomSolarize(1.0), RandomGaussianBlur(1.0)]),
        T.ColorJitter(0.3, 0.3, 0.3), *_normalized()])


class DinoMultiCrop:
    """DINO's DataAugmentationDINO (its published ViT-S/16 settings): two global
    crops of 224 and eight local crops of 96, each a list entry."""

    def __init__(self, global_scale=(0.4, 1.0), local_scale=(0.05, 0.4), local_crops=8):
        bicubic = T.InterpolationMode.BICUBIC
        flip_and_jitter = T.Compose([
            T.RandomHorizontalFlip(p=0.5),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2)])
        normalize = T.Compose(_normalized())
        self.global_transfo1 = T.Compose([
            T.RandomResizedCrop(224, scale=global_scale, interpolation=bicubic),
            flip_and_jitter, RandomGaussianBlur(1.0), normalize])
        self.global_transfo2 = T.Compose([
            T.RandomResizedCrop(224, scale=global_scale, interpolation=bicubic),
            flip_and_jitter, RandomGaussianBlur(0.1), RandomSolarize(0.2), normalize])
        self.local_crops_number = local_crops
        self.local_transfo = T.Compose([
            T.RandomResizedCrop(96, scale=local_scale, interpolation=bicubic),
            flip_and_jitter, RandomGaussianBlur(0.5), normalize])

    def __call__(self, image):
        crops = [self.global_transfo1(image), self.global_transfo2(image)]
        crops += [self.local_transfo(image) for _ in range(self.local_crops_number)]
        return crops


class ViewGenerator:
    """SimCLR's view generator: ``n_views`` draws of one base transform."""

    def __init__(self, base_transform, n_views: int = 2):
        self.base_transform, self.n_views = base_transform, n_views

    def __call__(self, image):
        return [self.base_transform(image) for _ in range(self.n_views)]


def _simclr():
    return ViewGenerator(T.Compose([
        T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(0.2),
        T.RandomApply([T.GaussianBlur(23, sigma=(0.1, 2.0))], p=0.5), *_normalized()]))


def _detection_presets(policy: str):
    """torchvision's references/detection presets.py with --use-v2 and the default PIL
    backend: DetectionPresetTrain(data_augmentation=policy), or DetectionPresetEval;
    "-uint8" leaves out ToDtype (uint8 images, normalised on the GPU); "-tensor" is
    --backend tensor (PILToTensor first, the augmentation on the uint8 tensor)."""
    from torchvision import tv_tensors
    from torchvision.transforms import v2
    mean = (123.0, 117.0, 104.0)
    uint8 = policy.endswith("-uint8")  # normalised on the GPU: uint8 batches
    tensor = policy.endswith("-tensor")  # --backend tensor
    policy = policy.removesuffix("-uint8").removesuffix("-tensor")
    augment = {
        "eval": [],
        "hflip": [v2.RandomHorizontalFlip(0.5)],
        "multiscale": [v2.RandomShortestSize(min_size=tuple(range(480, 801, 32)),
                                             max_size=1333), v2.RandomHorizontalFlip(0.5)],
        "ssdlite": [v2.RandomIoUCrop(), v2.RandomHorizontalFlip(0.5)],
        "lsj": [v2.ScaleJitter(target_size=(1024, 1024), antialias=True),
                FixedSizeCrop(size=(1024, 1024), fill=mean), v2.RandomHorizontalFlip(0.5)],
        "ssd": [v2.RandomPhotometricDistort(),
                v2.RandomZoomOut(fill=defaultdict(lambda: mean, {tv_tensors.Mask: 0})),
                v2.RandomIoUCrop(), v2.RandomHorizontalFlip(0.5)],
    }[policy]
    head, image = ([v2.PILToTensor()], []) if tensor else ([], [v2.ToImage()])
    tail = image if uint8 else [*image, v2.ToDtype(torch.float, scale=True)]
    if policy != "eval":
        tail += [v2.ConvertBoundingBoxFormat(tv_tensors.BoundingBoxFormat.XYXY),
                 v2.SanitizeBoundingBoxes()]
    return v2.Compose([*head, *augment, *tail, v2.ToPureTensor()])


class FixedSizeCrop(torch.nn.Module):
    """The references' lsj crop-or-pad to a fixed size (transforms.py), as users carry it
    for --use-v2: a window of the photo at a random offset, padded right and bottom with
    ``fill``, its boxes moved by torchvision's v2 kernels."""

    def __init__(self, size, fill=0):
        super().__init__()
        self.crop_height, self.crop_width = size
        self.fill = fill
        self.padding_mode = "constant"

    def forward(self, img, target=None):
        from torchvision.transforms.v2 import functional as F
        height, width = F.get_size(img)
        new_height, new_width = min(height, self.crop_height), min(width, self.crop_width)
        if (new_height, new_width) != (height, width):
            r = torch.rand(1)
            top = int(max(height - self.crop_height, 0) * r)
            left = int(max(width - self.crop_width, 0) * r)
            img = F.crop(img, top, left, new_height, new_width)
            if target is not None:
                target["boxes"] = F.crop(target["boxes"], top, left, new_height, new_width)
        pad = [0, 0, self.crop_width - new_width, self.crop_height - new_height]
        if any(pad):
            img = F.pad(img, pad, fill=list(self.fill) if isinstance(self.fill, tuple)
                        else self.fill)
            if target is not None:
                target["boxes"] = F.pad(target["boxes"], pad)
        return img, target


def detection_collate(batch):
    """The references' utils.collate_fn."""
    return tuple(zip(*batch))


def _has_boxes(annotations) -> bool:
    # the references' _coco_remove_images_without_annotations (no keypoints)
    return bool(annotations) and not all(any(v <= 1 for v in a["bbox"][2:])
                                         for a in annotations)


def coco_v2(images, annotations, transforms, train: bool, masks: bool = False):
    """The references' get_coco with --use-v2: CocoDetection wrapped for transforms v2
    (boxes, labels, image_id, and masks for Mask R-CNN); training keeps the images
    with boxes, through a Subset."""
    from torchvision.datasets import CocoDetection, wrap_dataset_for_transforms_v2
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints as it indexes
        base = CocoDetection(str(images), str(annotations), transforms=transforms)
    keys = ["boxes", "labels", "image_id"] + (["masks"] if masks else [])
    dataset = wrap_dataset_for_transforms_v2(base, target_keys=keys)
    if not train:
        return dataset
    keep = [k for k, i in enumerate(base.ids)
            if _has_boxes(base.coco.loadAnns(base.coco.getAnnIds(imgIds=i, iscrowd=None)))]
    return torch.utils.data.Subset(dataset, keep)


_DET = "torchvision references/detection --use-v2, PIL backend: "
#: name -> (what it is, transform factory[, collate_fn factory taking the dataset]);
#: the transforms (and collate functions) real recipes build.
PIPELINES = {
    "train": ("RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize "
              "(pytorch/examples)",
              lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                 *_normalized()])),
    "eval": ("Resize(256), CenterCrop(224), ToTensor, Normalize (pytorch/examples)",
             lambda: T.Compose([T.Resize(256), T.CenterCrop(224), *_normalized()])),
    "deit-eval": ("Resize(256, bicubic), CenterCrop(224), ToTensor, Normalize (DeiT, ConvNeXt, "
                  "Swin validation)",
                  lambda: T.Compose([T.Resize(256, interpolation=T.InterpolationMode.BICUBIC),
                                     T.CenterCrop(224), *_normalized()])),
    "timm-train": ("timm create_transform(224, is_training=True, interpolation='random', "
                   "color_jitter=0.4): RandomResizedCropAndInterpolation, flip, ColorJitter, "
                   "ToTensor, Normalize (needs timm)", _timm_train),
    "eval-uint8": ("Resize(256), CenterCrop(224), PILToTensor: uint8 batches",
                   lambda: T.Compose([T.Resize(256), T.CenterCrop(224), T.PILToTensor()])),
    "train-uint8": ("RandomResizedCrop(224), RandomHorizontalFlip, PILToTensor: uint8 batches",
                    lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                       T.PILToTensor()])),
    "deit-train": ("DeiT/ConvNeXt/Swin training: timm create_transform(224, is_training=True, "
                   "color_jitter=0.4, auto_augment='rand-m9-mstd0.5', "
                   "interpolation='bicubic', re_prob=0.25): RandAugment and RandomErasing run "
                   "as your own objects (needs timm)", _deit_train),
    "tv-resnet50-v2": ("torchvision references ResNet-50 v2 recipe: RandomResizedCrop(176), "
                       "flip, TrivialAugmentWide, PILToTensor, ConvertImageDtype, Normalize, "
                       "RandomErasing(0.1), MixUp/CutMix collate",
                       _tv_resnet50_v2, lambda ds: MixUpCutMixCollate(len(ds.classes))),
    "dle-train": ("NVIDIA DeepLearningExamples ResNet-50: RandomResizedCrop(224), flip, "
                  "fast_collate to uint8 batches",
                  lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()]),
                  lambda ds: fast_collate),
    "deit3-train": ("DeiT III 3-Augment: Resize(224, bicubic), RandomCrop(224, padding=4, "
                    "reflect), flip, RandomChoice(grayscale, solarize, blur) and "
                    "ColorJitter(0.3, 0.3, 0.3) (yours), ToTensor, Normalize", deit3_train),
    "dino": ("DINO multi-crop: 2 global crops (224, scale 0.4-1) and 8 local ones (96, "
             "scale 0.05-0.4), bicubic, flip, ColorJitter(p=0.8), RandomGrayscale, "
             "GaussianBlur and Solarization (yours), ToTensor, Normalize",
             DinoMultiCrop),
    "simclr": ("SimCLR two views: RandomResizedCrop(224), flip, ColorJitter(0.4, 0.4, 0.4, "
               "0.1) p=0.8, RandomGrayscale(0.2), GaussianBlur(23) p=0.5, ToTensor, "
               "Normalize", _simclr),
    "ssd": ("SSD-300 training (crop, flip, Resize, ColorJitter, Normalize, encode boxes)",
            lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=False)),
    "ssd-val": ("SSD-300 validation (Resize, Normalize, boxes padded to 200)",
                lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=True)),
}
#: The references' detection recipes: name -> (what it is, policy, masks)
DETECTION_V2 = {
    "det-hflip": (_DET + "RandomHorizontalFlip (Faster R-CNN, RetinaNet, FCOS)", "hflip",
                  False),
    "det-multiscale": (_DET + "RandomShortestSize(480-800, max_size=1333), flip",
                       "multiscale", False),
    "det-ssdlite": (_DET + "RandomIoUCrop, flip (SSDlite)", "ssdlite", False),
    "det-ssd": (_DET + "RandomPhotometricDistort, RandomZoomOut, RandomIoUCrop, flip (SSD)",
                "ssd", False),
    "det-lsj": (_DET + "ScaleJitter(1024), FixedSizeCrop(1024), flip (large-scale jitter)",
                "lsj", False),
    "det-ssd-tensor": ("torchvision references/detection --use-v2 --backend tensor: "
                       "PILToTensor, RandomPhotometricDistort, RandomZoomOut, RandomIoUCrop, "
                       "flip (SSD)", "ssd-tensor", False),
    "det-multiscale-tensor": ("torchvision references/detection --use-v2 --backend tensor: "
                              "PILToTensor, RandomShortestSize(480-800, max_size=1333), flip",
                              "multiscale-tensor", False),
    "det-eval": (_DET + "DetectionPresetEval: each photo at its own size", "eval", False),
    "det-hflip-uint8": (_DET + "RandomHorizontalFlip, ToImage: uint8 images (normalised on "
                        "the GPU)", "hflip-uint8", False),
    "maskrcnn": (_DET + "RandomHorizontalFlip with masks (Mask R-CNN)", "hflip", True),
}
for _name, (_what, _policy, _) in DETECTION_V2.items():
    PIPELINES[_name] = (_what, lambda policy=_policy: _detection_presets(policy),
                        lambda ds: detection_collate)
#: DETR's family (DETR's own code, peers.detr()): name -> (what it is, image set)
DETR = {
    "detr": ("DETR make_coco_transforms('train'): flip, RandomSelect(RandomResize(480-800, "
             "max_size=1333), [RandomResize(400-600), RandomSizeCrop(384, 600), "
             "RandomResize(480-800, max_size=1333)]), ToTensor, Normalize (boxes cxcywh), "
             "NestedTensor collate", "train"),
    "detr-val": ("DETR make_coco_transforms('val'): RandomResize([800], max_size=1333), "
                 "ToTensor, Normalize, NestedTensor collate", "val"),
}
for _name, (_what, _image_set) in DETR.items():
    PIPELINES[_name] = (_what, lambda image_set=_image_set: peers.detr().datasets.coco.
                        make_coco_transforms(image_set),
                        lambda ds: peers.detr().util.misc.collate_fn)
#: RT-DETR's family (rtdetr_user.py): name -> (what it is, image set)
RTDETR = {
    "rtdetr": ("RT-DETR v2 train: RandomPhotometricDistort, RandomZoomOut, RandomIoUCrop(p=0.8), "
               "SanitizeBoundingBoxes, flip, Resize(640, 640), ConvertPILImage, ConvertBoxes "
               "(cxcywh), stacked and resized to a random scale (480-800)", "train"),
    "rtdetr-val": ("RT-DETR v2 val: Resize(640, 640), ConvertPILImage, stacked", "val"),
}
for _name, (_what, _image_set) in RTDETR.items():
    PIPELINES[_name] = (_what, None)
#: Ultralytics' loaders (yolo_user.py): name -> (what it is, task, mode, the dataset's
#: settings beyond Ultralytics' defaults)
YOLO = {
    "yolo-train": ("Ultralytics YOLO train (detect): build_yolo_dataset(mode='train'), imgsz "
                   "640, default hyperparameters: Mosaic, RandomPerspective (translate 0.1, "
                   "scale 0.5), RandomHSV, fliplr 0.5, Format, YOLODataset.collate_fn",
                   "detect", "train", {}),
    "yolo-train-ram": ("Ultralytics YOLO train (detect): as yolo-train, with cache='ram' (the "
                       "dataset keeps every photo decoded and resized, filled when it is "
                       "built)", "detect", "train", {"cache": "ram"}),
    "yolo-train-disk": ("Ultralytics YOLO train (detect): as yolo-train, with cache='disk' (each "
                        "photo read from the .npy the dataset wrote beside it, by its own "
                        "load_image)", "detect", "train", {"cache": "disk"}),
    "yolo-train-rect": ("Ultralytics YOLO train (detect): as yolo-train, with rect=True (no "
                        "Mosaic, MixUp or CutMix; each photo warped to its batch's shape, the "
                        "set in aspect-ratio order, unshuffled)", "detect", "train",
                        {"rect": True}),
    "yolo-seg-train": ("Ultralytics YOLO train (segment): as yolo-train, with the instances' "
                       "polygons and Format's masks", "segment", "train", {}),
    "yolo-val": ("Ultralytics YOLO val (detect): build_yolo_dataset(mode='val', rect=True), "
                 "imgsz 640, LetterBox(scaleup=False), Format, YOLODataset.collate_fn",
                 "detect", "val", {}),
    "yolo-seg-val": ("Ultralytics YOLO val (segment): as yolo-val, with the instances' "
                     "polygons and Format's masks", "segment", "val", {}),
}
for _name, (_what, *_) in YOLO.items():
    PIPELINES[_name] = (_what, None)
#: Ultralytics' classification loaders (``yolo classify``) over an image folder: name ->
#: (what it is, its training augmentation)
YOLO_CLASSIFY = {
    "yolo-classify": ("Ultralytics YOLO classify train: ClassificationDataset(augment=True), "
                      "imgsz 224, default hyperparameters: RandomResizedCrop (scale 0.5-1), "
                      "fliplr 0.5, RandAugment, ToTensor, Normalize, RandomErasing(0.4)", True),
    "yolo-classify-val": ("Ultralytics YOLO classify val: ClassificationDataset, imgsz 224, "
                          "classify_transforms: Resize(224), CenterCrop(224), ToTensor, "
                          "Normalize", False),
}
for _name, (_what, _) in YOLO_CLASSIFY.items():
    PIPELINES[_name] = (_what, None)
DETECTION = ("ssd", "ssd-val", *DETECTION_V2, *DETR, *RTDETR, *YOLO)
NEEDS = {"timm-train": "timm", "deit-train": "timm",
         **{name: "pycocotools" for name in (*DETECTION_V2, *DETR, *RTDETR)},
         **{name: "ultralytics" for name in (*YOLO, *YOLO_CLASSIFY)}}
#: Recipes whose loaders keep the dataset's order: Ultralytics' rect batches (shapes by
#: batch) come in the order its loader gives them, unshuffled.
IN_ORDER = frozenset(name for name, (_, _, mode, settings) in YOLO.items()
                     if mode == "val" or settings.get("rect"))


def batch_images(batch) -> list[torch.Tensor]:
    """A recipe's batch's image tensors: its first field, each of its views, or each
    image of a detection batch (a tuple of images of their own sizes)."""
    if isinstance(batch, dict):  # Ultralytics' collate_fn
        return [batch["img"]]
    first = batch[0]
    if type(first).__name__ == "NestedTensor":  # DETR's collate_fn
        return [first.tensors]
    return list(first) if isinstance(first, (list, tuple)) else [first]


def images_in(batch) -> int:
    """How many samples a recipe's batch holds."""
    images = batch_images(batch)
    return len(images) if images[0].dim() == 3 else images[0].shape[0]


def build_dataset(pipeline: str, root, batch_size: int = 32):
    """(dataset, collate_fn or None) of a pipeline on root: an ImageFolder root, or
    (image folder, instances JSON) for detection; ``batch_size`` for the recipes whose
    dataset knows its batches (Ultralytics' rect batches)."""
    entry = PIPELINES[pipeline]
    if pipeline in YOLO_CLASSIFY:
        with contextlib.redirect_stdout(io.StringIO()):
            dataset = yolo_user.classify_dataset(Path(root), YOLO_CLASSIFY[pipeline][1])
        return dataset, None
    if pipeline in YOLO:
        _, task, mode, settings = YOLO[pipeline]
        yaml = yolo_user.yolo_set_for(root[0], root[1], segments=task == "segment",
                                      variant="disk" if settings.get("cache") == "disk" else "")
        build = yolo_user.train_dataset if mode == "train" else yolo_user.val_dataset
        with contextlib.redirect_stdout(io.StringIO()):
            dataset = build(yaml, batch_size, task=task, **settings)
        return dataset, dataset.collate_fn
    if pipeline in DETECTION_V2:
        _, policy, masks = DETECTION_V2[pipeline]
        dataset = coco_v2(root[0], root[1], entry[1](), policy != "eval", masks)
    elif pipeline in RTDETR:
        with contextlib.redirect_stdout(io.StringIO()):
            return rtdetr_user.build(RTDETR[pipeline][1], str(root[0]), str(root[1]))
    elif pipeline in DETR:
        with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints as it indexes
            dataset = peers.detr().datasets.coco.CocoDetection(
                str(root[0]), str(root[1]), entry[1](), return_masks=False)
    elif pipeline in DETECTION:
        dataset = COCODetection(str(root[0]), str(root[1]), entry[1]())
    else:
        dataset = datasets.ImageFolder(str(root), entry[1]())
    return dataset, (entry[2](dataset) if len(entry) > 2 else None)


def image_files(dataset) -> list[str]:
    """The image files a recipe's dataset reads: an ImageFolder's, or a wrapped
    CocoDetection's (through its Subset)."""
    if hasattr(dataset, "samples"):  # (path, target), or Ultralytics' [path, target, npy, image]
        return [str(sample[0]) for sample in dataset.samples]
    if hasattr(dataset, "im_files"):  # Ultralytics' YOLODataset
        return [str(f) for f in dataset.im_files]
    indices = None
    if isinstance(dataset, torch.utils.data.Subset):
        dataset, indices = dataset.dataset, dataset.indices
    coco = getattr(dataset, "_dataset", dataset)  # the v2 wrapper's, or DETR's own
    ids = coco.ids if indices is None else [coco.ids[k] for k in indices]
    return [os.path.join(coco.root, coco.coco.imgs[i]["file_name"]) for i in ids]
