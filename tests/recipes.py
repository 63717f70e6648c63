"""The transforms real training recipes build, written as their code builds them
(from reading pytorch/examples, torchvision's references/classification and weight
transforms, timm's create_transform, DeiT, DeiT III, ConvNeXt/Swin, NVIDIA
DeepLearningExamples, DINO and MoCo v2; DeiT III's and DINO's live in jpegloader.bench.recipes,
which the benchmark runs).

Each recipe is (name, builder, accelerated, blocker names): the blockers are the
transform names the verdict must list when it falls back.
"""
from __future__ import annotations

import functools
import random

import torch
from PIL import ImageFilter
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode as IM
from torchvision.transforms import v2 as T2

from jpegloader.bench.recipes import DinoMultiCrop, deit3_train

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


# -- torchvision references/classification, the preset classes as users carry them ----------
class ClassificationPresetTrain:
    """The shape of references/classification/presets.py (current version): a list
    of transforms kept in one Compose, applied by __call__."""

    def __init__(self, *, crop_size, mean=MEAN, std=STD, interpolation=IM.BILINEAR,
                 hflip_prob=0.5, auto_augment_policy=None, random_erase_prob=0.0,
                 backend="pil", use_v2=False):
        t = T2 if use_v2 else T
        steps = []
        if backend == "tensor":
            steps.append(t.PILToTensor())
        steps.append(t.RandomResizedCrop(crop_size, interpolation=interpolation, antialias=True))
        if hflip_prob > 0:
            steps.append(t.RandomHorizontalFlip(hflip_prob))
        if auto_augment_policy == "ta_wide":
            steps.append(t.TrivialAugmentWide(interpolation=interpolation))
        elif auto_augment_policy == "ra":
            steps.append(t.RandAugment(interpolation=interpolation))
        if backend == "pil":
            steps.append(t.PILToTensor())
        steps += [t.ToDtype(torch.float, scale=True) if use_v2 else t.ConvertImageDtype(torch.float),
                  t.Normalize(mean=mean, std=std)]
        if random_erase_prob > 0:
            steps.append(t.RandomErasing(p=random_erase_prob))
        if use_v2:
            steps.append(t.ToPureTensor())
        self.transforms = t.Compose(steps)

    def __call__(self, img):
        return self.transforms(img)


class ClassificationPresetEval:
    def __init__(self, *, crop_size, resize_size=256, mean=MEAN, std=STD,
                 interpolation=IM.BILINEAR, backend="pil", use_v2=False):
        t = T2 if use_v2 else T
        steps = []
        if backend == "tensor":
            steps.append(t.PILToTensor())
        steps += [t.Resize(resize_size, interpolation=interpolation, antialias=True),
                  t.CenterCrop(crop_size)]
        if backend == "pil":
            steps.append(t.PILToTensor())
        steps += [t.ToDtype(torch.float, scale=True) if use_v2 else t.ConvertImageDtype(torch.float),
                  t.Normalize(mean=mean, std=std)]
        if use_v2:
            steps.append(t.ToPureTensor())
        self.transforms = t.Compose(steps)

    def __call__(self, img):
        return self.transforms(img)


def _timm():
    from timm.data import create_transform
    return create_transform


def _weights(name: str):
    from torchvision import models
    enum, member = name.split(".")
    return getattr(models, enum)[member].transforms()


def examples_train():
    return T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize(MEAN, STD)])


def examples_eval():
    return T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])


def deit_eval():
    # DeiT / ConvNeXt / Swin: build_transform(is_train=False), resize = int(224 / crop_pct)
    size = int(224 / 0.875)
    return T.Compose([T.Resize(size, interpolation=IM.BICUBIC), T.CenterCrop(224),
                      T.ToTensor(), T.Normalize(MEAN, STD)])


def deit_train():
    return _timm()(input_size=224, is_training=True, color_jitter=0.4,
                   auto_augment="rand-m9-mstd0.5-inc1", interpolation="bicubic",
                   re_prob=0.25, re_mode="pixel", re_count=1)


def timm_train():
    # timm's train.py defaults: train_interpolation "random", color jitter 0.4, no prefetcher
    return _timm()(224, is_training=True, interpolation="random", color_jitter=0.4)


def timm_train_prefetcher():
    return _timm()(224, is_training=True, interpolation="random", color_jitter=0.4,
                   use_prefetcher=True)


def timm_eval():
    return _timm()(224, interpolation="bicubic", crop_pct=0.95)


def timm_eval_prefetcher():
    return _timm()(224, interpolation="bicubic", crop_pct=0.875, use_prefetcher=True)


def timm_eval_squash():
    return _timm()(224, crop_mode="squash", crop_pct=0.9)


def timm_eval_non_square():
    return _timm()((3, 192, 256), crop_pct=0.9)


def nvidia_dle_train():
    # DeepLearningExamples ConvNets: PIL pipeline, tensors made by fast_collate
    return T.Compose([T.RandomResizedCrop(224, interpolation=IM.BILINEAR),
                      T.RandomHorizontalFlip()])


def nvidia_dle_eval():
    return T.Compose([T.Resize(256), T.CenterCrop(224)])


def simclr_like():
    return T.Compose([T.RandomResizedCrop(96), T.RandomHorizontalFlip(),
                      T.RandomApply([T.ColorJitter(0.8, 0.8, 0.8, 0.2)], p=0.8),
                      T.RandomGrayscale(p=0.2), T.ToTensor(), T.Normalize(MEAN, STD)])


class TwoCropsTransform:
    """MoCo v2's: the base transform drawn twice."""

    def __init__(self, base_transform):
        self.base_transform = base_transform

    def __call__(self, x):
        return [self.base_transform(x), self.base_transform(x)]


class GaussianBlur:
    """MoCo v2's own blur (moco/loader.py): Pillow's GaussianBlur of a radius uniform in
    sigma, drawn with Python's random."""

    def __init__(self, sigma=(0.1, 2.0)):
        self.sigma = sigma

    def __call__(self, x):
        sigma = random.uniform(self.sigma[0], self.sigma[1])
        return x.filter(ImageFilter.GaussianBlur(radius=sigma))


def moco_v2_train():
    # as main_moco.py builds it with --aug-plus: its own blur class runs as yours
    return TwoCropsTransform(T.Compose([
        T.RandomResizedCrop(224, scale=(0.2, 1.0)),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(p=0.2),
        T.RandomApply([GaussianBlur([0.1, 2.0])], p=0.5),
        T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)]))


#: name -> (builder, accelerated, blockers named when not); COLLATES: the collate_fn a
#: recipe's loader uses (default_collate when not listed).
RECIPES = {
    "pytorch-examples-train": (examples_train, True, ()),
    "pytorch-examples-eval": (examples_eval, True, ()),
    "tv-ref-train": (lambda: ClassificationPresetTrain(crop_size=224), True, ()),
    "tv-ref-train-bicubic-v2": (lambda: ClassificationPresetTrain(
        crop_size=176, interpolation=IM.BICUBIC, use_v2=True), True, ()),
    "tv-ref-train-resnet50-v2": (lambda: ClassificationPresetTrain(
        crop_size=176, auto_augment_policy="ta_wide", random_erase_prob=0.1), True, ()),
    # NOTE [ The tensor backend ]: the conversion moves after the resizes
    "tv-ref-train-tensor-backend": (lambda: ClassificationPresetTrain(
        crop_size=224, backend="tensor"), True, ()),
    "tv-ref-eval-tensor-backend": (lambda: ClassificationPresetEval(
        crop_size=224, backend="tensor"), True, ()),
    "tv-ref-eval-tensor-backend-v2": (lambda: ClassificationPresetEval(
        crop_size=224, resize_size=232, backend="tensor", use_v2=True), True, ()),
    "tv-ref-eval": (lambda: ClassificationPresetEval(crop_size=224), True, ()),
    "tv-ref-eval-v2": (lambda: ClassificationPresetEval(crop_size=224, resize_size=232,
                                                        use_v2=True), True, ()),
    "tv-weights-resnet50-v2": (lambda: _weights("ResNet50_Weights.IMAGENET1K_V2"), True, ()),
    "tv-weights-vit-b16": (lambda: _weights("ViT_B_16_Weights.IMAGENET1K_V1"), True, ()),
    "tv-weights-efficientnet-b0": (lambda: _weights("EfficientNet_B0_Weights.IMAGENET1K_V1"),
                                   True, ()),
    "deit-eval": (deit_eval, True, ()),
    "deit-train": (deit_train, True, ()),
    "timm-train": (timm_train, True, ()),
    "timm-train-prefetcher": (timm_train_prefetcher, True, ()),
    "timm-eval": (timm_eval, True, ()),
    "timm-eval-prefetcher": (timm_eval_prefetcher, True, ()),
    "timm-eval-squash": (timm_eval_squash, True, ()),
    "timm-eval-non-square": (timm_eval_non_square, True, ()),
    "nvidia-dle-train": (nvidia_dle_train, True, ()),
    "nvidia-dle-eval": (nvidia_dle_eval, True, ()),
    "simclr-like": (simclr_like, True, ()),
    "deit3-train-3augment": (deit3_train, True, ()),
    "dino-multicrop": (DinoMultiCrop, True, ()),
    "moco-v2-two-crops": (moco_v2_train, True, ()),
}

COLLATES = {
    "nvidia-dle-train": lambda: functools.partial(dle_fast_collate, torch.contiguous_format),
    "nvidia-dle-eval": lambda: functools.partial(dle_fast_collate, torch.contiguous_format),
}

#: Pairs that must give the same batches: an alias and the pipeline it stands for.
ALIASES = {
    "PILToTensor+ConvertImageDtype = ToTensor": (
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.PILToTensor(),
                           T.ConvertImageDtype(torch.float), T.Normalize(MEAN, STD)]),
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor(),
                           T.Normalize(MEAN, STD)])),
    "v2 ToImage+ToDtype+ToPureTensor = ToTensor": (
        lambda: T2.Compose([T2.RandomResizedCrop(56), T2.RandomHorizontalFlip(), T2.ToImage(),
                            T2.ToDtype(torch.float32, scale=True), T2.Normalize(MEAN, STD),
                            T2.ToPureTensor()]),
        lambda: T.Compose([T.RandomResizedCrop(56), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize(MEAN, STD)])),
    "reference preset = its Compose": (
        lambda: ClassificationPresetEval(crop_size=56, resize_size=64),
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor(),
                           T.Normalize(MEAN, STD)])),
    "weights.transforms() = Resize, CenterCrop, ToTensor, Normalize": (
        lambda: _weights("ResNet50_Weights.IMAGENET1K_V2"),
        lambda: T.Compose([T.Resize(232), T.CenterCrop(224), T.ToTensor(),
                           T.Normalize(MEAN, STD)])),
    "timm RandomResizedCropAndInterpolation = RandomResizedCrop": (
        lambda: T.Compose([_timm_rrc(56, "bicubic"), T.ToTensor()]),
        lambda: T.Compose([T.RandomResizedCrop(56, interpolation=IM.BICUBIC), T.ToTensor()])),
    "timm MaybeToTensor = ToTensor": (
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), _timm_class("MaybeToTensor")()]),
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor()])),
    "timm ToNumpy = PILToTensor": (
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), _timm_class("ToNumpy")()]),
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.PILToTensor()])),
    "timm MaybePILToTensor = PILToTensor": (
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), _timm_class("MaybePILToTensor")()]),
        lambda: T.Compose([T.Resize(64), T.CenterCrop(56), T.PILToTensor()])),
}


def _timm_class(name: str):
    import timm.data.transforms as tt
    return getattr(tt, name)


def _timm_rrc(size, interpolation):
    return _timm_class("RandomResizedCropAndInterpolation")(size, interpolation=interpolation)



def dle_fast_collate(memory_format, batch):
    """The shape of NVIDIA DeepLearningExamples' fast_collate (image_classification/
    dataloaders.py): PIL images to uint8[B, 3, H, W] in ``memory_format``, int64 targets."""
    import numpy as np

    images = [image for image, _ in batch]
    targets = torch.tensor([target for _, target in batch], dtype=torch.int64)
    w, h = images[0].size
    tensor = torch.zeros((len(images), 3, h, w), dtype=torch.uint8).contiguous(
        memory_format=memory_format)
    for i, image in enumerate(images):
        array = np.asarray(image, dtype=np.uint8)
        if array.ndim < 3:
            array = np.expand_dims(array, axis=-1)
        tensor[i] += torch.from_numpy(np.rollaxis(array, 2).copy())
    return tensor, targets
