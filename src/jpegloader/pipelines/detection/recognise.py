"""Recognising a COCO detection dataset as torchvision's detection references build
it with ``--use-v2``: ``torchvision.datasets.CocoDetection`` under
``wrap_dataset_for_transforms_v2`` (any ``target_keys``), possibly inside
``Subset``s (the references drop images without annotations that way).

What a sample reads is the base dataset's own: its ``coco`` index, ``ids``,
``root`` and ``_load_target``; the wrapper's own code builds each target (so
boxes, labels, masks and the JSON's other keys are what torch's loader gives,
with the file's real size as the canvas), and the wrapper's ``transforms`` are
what the lowering reads.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from PIL import Image
from torchvision import datasets
from torchvision.tv_tensors._dataset_wrapper import VisionDatasetTVTensorWrapper

from ..contract import Check, check
from ..subsets import unwrap_subsets

RULE = "dataset.type"


@dataclass(frozen=True)
class CocoSource:
    """What the decoder reads: the wrapped dataset and the loader's index map."""

    wrapped: object = field(compare=False)   # the VisionDatasetTVTensorWrapper
    indices: np.ndarray | None = field(compare=False, repr=False)  # loader -> base index
    transforms: object = field(compare=False)
    description: str = ""

    @property
    def coco_dataset(self):
        return self.wrapped._dataset

    def base_index(self, index: int) -> int:
        return int(index if self.indices is None else self.indices[index])

    def __len__(self) -> int:
        return len(self.wrapped) if self.indices is None else len(self.indices)

    def path(self, base_index: int) -> str:
        ds = self.coco_dataset
        return os.path.join(ds.root, ds.coco.loadImgs(ds.ids[base_index])[0]["file_name"])

    def json_size(self, base_index: int) -> tuple[int, int]:
        """(height, width) as the annotation file gives them."""
        info = self.coco_dataset.coco.imgs[self.coco_dataset.ids[base_index]]
        return int(info.get("height", 0) or 0), int(info.get("width", 0) or 0)

    def load_image(self, base_index: int) -> Image.Image:
        """The image as the dataset opens it (CocoDetection._load_image)."""
        ds = self.coco_dataset
        return ds._load_image(ds.ids[base_index])

    def target(self, base_index: int, canvas) -> object:
        """The wrapper's target for a sample whose image is ``canvas`` (anything with
        the image's size: the wrapper reads only that), as its __getitem__ builds it."""
        ds = self.coco_dataset
        return self.wrapped._wrapper(base_index,
                                     (canvas, ds._load_target(ds.ids[base_index])))[1]


def _wrapped_coco(dataset) -> bool:
    return isinstance(dataset, VisionDatasetTVTensorWrapper) and \
        isinstance(getattr(dataset, "_dataset", None), datasets.CocoDetection)


def claims(dataset) -> bool:
    return _wrapped_coco(unwrap_subsets(dataset)[0])


def _overridden(obj, cls, names) -> list[str]:
    return [n for n in names if getattr(type(obj), n, None) is not getattr(cls, n, None)]


def recognise(dataset) -> tuple[CocoSource | None, list[Check]]:
    """The dataset's rules, pass or fail, and its CocoSource when all pass."""
    wrapped, indices, problems = unwrap_subsets(dataset)
    base = wrapped._dataset
    kind = f"{type(base).__qualname__} under wrap_dataset_for_transforms_v2"
    if indices is not None:
        kind = f"Subset of {kind}"
    checks = [Check(RULE, True, f"dataset is {kind} (detection pipeline)")]
    reading = _overridden(base, datasets.CocoDetection,
                          ("__getitem__", "__len__", "_load_image", "_load_target"))
    reading += [f"the wrapper's {n}" for n in _overridden(
        wrapped, VisionDatasetTVTensorWrapper, ("__getitem__", "__len__"))]
    checks.append(check("dataset.getitem", not reading, "CocoDetection's own loading is used",
                        f"{type(base).__name__} overrides {', '.join(reading)}",
                        "no change makes custom per-sample code native; this loader runs on "
                        "torch's DataLoader"))
    checks.append(check("dataset.subset", not problems, "indices map into the dataset"
                        if indices is not None else "not a Subset", "; ".join(problems),
                        "give the Subset valid integer indices"))
    separate = [n for n in ("transform", "target_transform")
                if getattr(wrapped, n, None) is not None]
    checks.append(check("dataset.transforms", not separate,
                        "one joint transforms (image, target), as the references pass it",
                        f"the dataset has a separate {' and '.join(separate)}",
                        "pass the detection transforms as transforms=, as torchvision's "
                        "references do; a separate image transform does not move the boxes"))
    if not all(c.passed for c in checks):
        return None, checks
    return CocoSource(wrapped, indices, wrapped.transforms, kind), checks


def dataset_key(source: CocoSource) -> tuple:
    """Equal while the dataset reads the same images and annotations."""
    ds = source.coco_dataset
    return (id(ds.coco), str(ds.root), tuple(ds.ids), tuple(sorted(source.wrapped._target_keys
                                                               or ())),
            None if source.indices is None else source.indices.tobytes())
