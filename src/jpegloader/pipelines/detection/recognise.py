"""Recognising a COCO detection dataset as torchvision's detection references build it:

- with ``--use-v2``: ``torchvision.datasets.CocoDetection`` under
  ``wrap_dataset_for_transforms_v2`` (any ``target_keys``); the wrapper's own code
  builds each target, and its ``transforms`` are what the lowering reads;
- without (v1, the references' default): their ``CocoDetection`` subclass (by name and
  structure, in users' copies: ``_transforms``, a Compose whose first step is their
  ``ConvertCocoPolysToMask``); that object of the user's builds each target, and the
  steps after it are what the lowering reads;

- DETR's (detr.py) and RT-DETR's (rtdetr.py): their ``CocoDetection`` subclass with
  their ConvertCocoPolysToMask as ``prepare`` and their transforms as ``_transforms``;
  its ``__getitem__`` checked on a sample to be theirs;

any of them possibly inside ``Subset``s (the references drop images without annotations that
way).  The canvas a target is built on is the file's real size, as in torch's loader.
"""
from __future__ import annotations

import copy
import functools
import os
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from PIL import Image
from torchvision import datasets
from torchvision.datasets import wrap_dataset_for_transforms_v2
from torchvision.tv_tensors._dataset_wrapper import VisionDatasetTVTensorWrapper

from ..contract import Check, check
from ..stand_ins import SizeOnly, canvas
from ..subsets import subset_check, unwrap_subsets
from . import detr, rtdetr
from .family import Family

RULE = "dataset.type"
#: The v2 wrapper's target keys for CocoDetection: its default, and every one ("all").
_DEFAULT_KEYS = frozenset({"image_id", "boxes", "labels"})
_ALL_KEYS = frozenset({"segmentation", "area", "iscrowd", "image_id", "bbox", "category_id",
                       "boxes", "masks", "labels"})


@dataclass(frozen=True)
class CocoSource:
    """What the decoder reads: the base CocoDetection, the v2 wrapper or the v1
    ConvertCocoPolysToMask that builds targets, and the loader's index map."""

    base: object = field(compare=False)      # the torchvision CocoDetection (or subclass)
    wrapped: object = field(compare=False)   # the VisionDatasetTVTensorWrapper (v2)
    convert: object = field(compare=False)   # ConvertCocoPolysToMask (v1)
    indices: np.ndarray | None = field(compare=False, repr=False)  # loader -> base index
    transforms: object = field(compare=False)  # what runs after the target is built
    description: str = ""
    #: whose dataset it is (with DETR's or RT-DETR's own, ``convert`` is its prepare)
    family: Family = Family.V2

    @property
    def converts(self) -> bool:
        """Whether an object of the user's (``convert``) builds the targets."""
        return self.wrapped is None

    def base_index(self, index: int) -> int:
        return int(index if self.indices is None else self.indices[index])

    def __len__(self) -> int:
        return len(self.base) if self.indices is None else len(self.indices)

    def path(self, base_index: int) -> str:
        ds = self.base
        return os.path.join(ds.root, ds.coco.loadImgs(ds.ids[base_index])[0]["file_name"])

    def json_size(self, base_index: int) -> tuple[int, int]:
        """(height, width) as the annotation file gives them."""
        info = self.base.coco.imgs[self.base.ids[base_index]]
        return int(info.get("height", 0) or 0), int(info.get("width", 0) or 0)

    def load_image(self, base_index: int) -> Image.Image:
        """The image as the dataset opens it (CocoDetection._load_image, or the
        ``get_image`` of Deformable-DETR's own base: detr.py)."""
        ds = self.base
        if not isinstance(ds, datasets.CocoDetection):
            return ds.get_image(ds.coco.loadImgs(ds.ids[base_index])[0]["file_name"])
        return ds._load_image(ds.ids[base_index])

    def annotations(self, image_id) -> list:
        """The image's annotations as the dataset reads them."""
        ds = self.base
        if not isinstance(ds, datasets.CocoDetection):
            return ds.coco.loadAnns(ds.coco.getAnnIds(imgIds=image_id))
        return ds._load_target(image_id)

    def target(self, base_index: int, size: tuple[int, int], image=None) -> object:
        """The sample's target as the dataset's __getitem__ builds it for an image of
        ``size`` (height, width): ``image`` itself where given, else a stand-in."""
        ds = self.base
        image_id = ds.ids[base_index]
        annotations = self.annotations(image_id)
        if self.wrapped is not None:
            stand_in = image if image is not None else canvas(*size)
            return self.wrapped._wrapper(base_index, (stand_in, annotations))[1]
        stand_in = image if image is not None else SizeOnly(*size)
        if self.family is Family.RTDETR:
            return rtdetr.load_target(ds, base_index, stand_in, annotations)
        return self.convert(stand_in, dict(image_id=image_id, annotations=annotations))[1]

    def target_to_paint(self, base_index: int, size: tuple[int, int]) -> tuple[dict, list]:
        """The target made without its masks, a stand-in in their place, and each
        instance's segmentation (NOTE [ Masks painted into the slot ] in masks.py)."""
        from .masks import v1_target, with_stand_in
        annotations = self.base._load_target(self.base.ids[base_index])
        if self.converts:
            return v1_target(size, self.base.ids[base_index], annotations)
        target = self._without_masks._wrapper(base_index, (canvas(*size), annotations))[1]
        segmentations = [a["segmentation"] for a in annotations] if annotations else []
        return with_stand_in(target, len(segmentations)), segmentations

    @property
    def target_keys(self) -> frozenset[str]:
        """The v2 wrapper's target keys, as it reads its ``target_keys`` (None: its
        default; "all": every key); empty for v1."""
        if self.converts:
            return frozenset()
        keys = self.wrapped._target_keys
        if keys is None:
            return _DEFAULT_KEYS
        return _ALL_KEYS if keys == "all" else frozenset(keys)

    @functools.cached_property
    def v1_builds_alike(self) -> bool:
        """Whether the v1 ConvertCocoPolysToMask builds targets as masks.v1_target does
        (checked once, on sample images)."""
        from .masks import v1_builds_alike
        if self.family is not Family.V1:
            return False
        # NOTE [ The verdict touches nothing of the user's ]
        return probed(self.base, ("v1 converter",),
                      (type(self.convert), id(self.convert), dataset_key(self)),
                      lambda: v1_builds_alike(self))

    @functools.cached_property
    def _without_masks(self):
        from .masks import KEY
        return wrap_dataset_for_transforms_v2(self.base,
                                              target_keys=set(self.target_keys - {KEY}))


def _wrapped_coco(dataset) -> bool:
    return isinstance(dataset, VisionDatasetTVTensorWrapper) and \
        isinstance(getattr(dataset, "_dataset", None), datasets.CocoDetection)


def _steps_of(transforms) -> list | None:
    """The references' v1 Compose (their own class: ``transforms`` a list), flattened
    with the presets inside it; None when it is not one."""
    if type(transforms).__name__ != "Compose" or not isinstance(
            getattr(transforms, "transforms", None), (list, tuple)):
        return None
    out = []
    for t in transforms.transforms:
        inner = getattr(t, "transforms", None)
        if type(t).__name__ in ("DetectionPresetTrain", "DetectionPresetEval"):
            t = inner
        nested = _steps_of(t)
        out += nested if nested is not None else [t]
    return out


def _v1_coco(dataset) -> bool:
    """The references' v1 CocoDetection: their subclass of torchvision's, with the
    Compose that starts with their ConvertCocoPolysToMask in ``_transforms``."""
    steps = _steps_of(getattr(dataset, "_transforms", None))
    return isinstance(dataset, datasets.CocoDetection) and \
        type(dataset).__name__ == "CocoDetection" and \
        type(dataset) is not datasets.CocoDetection and bool(steps) and \
        type(steps[0]).__name__ == "ConvertCocoPolysToMask"


def claims(dataset) -> bool:
    base = unwrap_subsets(dataset)[0]
    return _wrapped_coco(base) or _v1_coco(base) or detr.is_dataset(base) or \
        rtdetr.is_dataset(base)


def _overridden(obj, cls, names) -> list[str]:
    return [n for n in names if getattr(type(obj), n, None) is not getattr(cls, n, None)]


def recognise(dataset) -> tuple[CocoSource | None, list[Check]]:
    """The dataset's rules, pass or fail, and its CocoSource when all pass."""
    outer, indices, problems = unwrap_subsets(dataset)
    v1 = not _wrapped_coco(outer)
    family = None if not v1 else Family.RTDETR if rtdetr.is_dataset(outer) else \
        Family.DETR if detr.is_dataset(outer) else None
    base = outer if v1 else outer._dataset
    kind = "the references' v1 CocoDetection (ConvertCocoPolysToMask)" if v1 else \
        f"{type(base).__qualname__} under wrap_dataset_for_transforms_v2"
    if family:
        kind = f"{family.title}'s CocoDetection (prepare: its ConvertCocoPolysToMask)"
    if indices is not None:
        kind = f"Subset of {kind}"
    checks = [Check(RULE, True, f"dataset is {kind} (detection pipeline)")]
    # the v1 subclass's own __getitem__ is the references' (recognised by structure);
    # Deformable-DETR's own base is tried on a sample (below)
    reading = [] if not isinstance(base, datasets.CocoDetection) else \
        _overridden(base, datasets.CocoDetection,
                    ("__len__", "_load_image", "_load_target") if v1 else
                    ("__getitem__", "__len__", "_load_image", "_load_target"))
    if not v1:
        reading += [f"the wrapper's {n}" for n in _overridden(
            outer, VisionDatasetTVTensorWrapper, ("__getitem__", "__len__"))]
    if family and not reading and not problems and len(base.ids):
        first = int(indices[0]) if indices is not None and len(indices) else 0
        source = CocoSource(base, None, base.prepare, None, None, kind, family)
        differs = _getitem_differs(source, first)
        reading += [f"__getitem__ ({differs})"] if differs else []
    loading = "CocoDetection's own loading is used" + (
        f", and {family.title}'s __getitem__ (tried on a sample)" if family else "")
    checks.append(check("dataset.getitem", not reading, loading,
                        f"{type(base).__name__} overrides {', '.join(reading)}",
                        "no change makes custom per-sample code native; this loader runs on "
                        "torch's DataLoader"))
    checks.append(subset_check(indices, problems))
    separate = [n for n in ("transform", "target_transform")
                if getattr(outer, n, None) is not None]
    checks.append(check("dataset.transforms", not separate,
                        "one joint transforms (image, target), as the references pass it",
                        f"the dataset has a separate {' and '.join(separate)}",
                        "pass the detection transforms as transforms=, as torchvision's "
                        "references do; a separate image transform does not move the boxes"))
    if not all(c.passed for c in checks):
        return None, checks
    if family:
        return CocoSource(base, None, base.prepare, indices, base._transforms, kind,
                          family), checks
    if v1:
        steps = _steps_of(base._transforms)
        return CocoSource(base, None, steps[0], indices, steps[1:], kind, Family.V1), checks
    return CocoSource(base, outer, None, indices, outer.transforms, kind, Family.V2), checks


def _getitem_differs(source: CocoSource, index: int) -> str:
    """Why the dataset's own __getitem__ is not its family's (the image as
    CocoDetection loads it, the target as ``source.target`` builds it, then
    ``_transforms``), tried on sample ``index`` of a shallow copy whose
    ``_transforms`` is set aside; "" when it is.  Asked once per dataset and
    sample while the dataset reads the same (NOTE [ The verdict touches nothing
    of the user's ])."""
    ds = source.base
    return probed(ds, ("getitem", index), (type(ds).__getitem__, dataset_key(source)),
                  lambda: _try_getitem(source, ds, index))


def _try_getitem(source: CocoSource, ds, index: int) -> str:
    probe = copy.copy(ds)
    probe._transforms = None
    try:
        image, target = probe[index]
    except Exception as e:  # noqa: BLE001 - said in the verdict
        return f"its __getitem__ fails on sample {index}: {type(e).__name__}: {e}"
    want_image = source.load_image(index)
    want = source.target(index, (want_image.height, want_image.width), want_image)
    if type(image) is not type(want_image) or image.size != want_image.size or \
            image.mode != want_image.mode or image.tobytes() != want_image.tobytes():
        return "its __getitem__ gives another image than CocoDetection's"
    if not isinstance(target, dict) or target.keys() != want.keys() or not all(
            type(target[k]) is type(v) and (torch.equal(target[k], v) if isinstance(
                v, torch.Tensor) else target[k] == v) for k, v in want.items()):
        return "its __getitem__ gives another target than its prepare does"
    return ""


# NOTE [ The verdict touches nothing of the user's ]
# What the verdict learns by running the user's code on a sample is asked without
# changing their objects: their __getitem__ runs on a shallow copy whose _transforms
# is set aside, their v1 converter on fresh stand-ins.  Each answer is kept per
# dataset object, one per question, with a key of everything it depends on (the
# dataset's images and annotations, the class's code, the converter): an epoch start
# asks again only when the key changed, and the new answer replaces the old.
_PROBED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def probed(ds, question: tuple, key: tuple, ask):
    """``ask()``, remembered for ``ds`` and ``question`` while ``key`` stays equal."""
    try:
        answers = _PROBED.setdefault(ds, {})
    except TypeError:  # not weakly referable: asked each time
        return ask()
    known = answers.get(question)
    if known is None or known[0] != key:
        known = answers[question] = (key, ask())
    return known[1]


def dataset_key(source: CocoSource) -> tuple:
    """Equal while the dataset reads the same images and annotations."""
    ds = source.base
    keys = ("v1", repr(source.convert)) if source.converts else \
        tuple(sorted(source.target_keys))
    return (id(ds.coco), str(ds.root), tuple(ds.ids), keys,
            None if source.indices is None else source.indices.tobytes())
