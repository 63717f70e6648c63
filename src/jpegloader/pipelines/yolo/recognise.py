"""Recognising Ultralytics' ``YOLODataset`` and the transforms it built, by class
name, module and structure: Ultralytics is not imported here (it is not a
dependency of this package) and nothing of its code is in it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contract import Check, check

_DATASET_MODULE = "ultralytics.data."
_AUGMENT_MODULE = "ultralytics.data.augment"
#: What reads a sample's pixels: overriding any of these changes the image, so the
#: dataset's own reading no longer is the one reproduced here.
_PIXEL_READERS = ("__getitem__", "get_image_and_label", "load_image")
#: The steps of a validation Compose (``YOLODataset.build_transforms`` with
#: augment=False), each with the methods the labels are replayed through.
_VAL_STEPS = ("LetterBox", "Format")
_REPLAYED = ("get_params", "apply_instances", "apply_semantic")
RULE = "dataset.transforms"
_FALLBACK = "this loader runs on torch's DataLoader (Ultralytics' own loading)"


def _yolo_class(dataset) -> type | None:
    return next((c for c in type(dataset).__mro__ if c.__name__ == "YOLODataset"
                 and c.__module__.startswith(_DATASET_MODULE)), None)


def claims(dataset) -> bool:
    return _yolo_class(dataset) is not None


def keeps_own(dataset, method: str) -> bool:
    """Whether the dataset's class keeps ``YOLODataset``'s own ``method``."""
    return getattr(type(dataset), method) is getattr(_yolo_class(dataset), method)


def _is_ultralytics(obj, name: str) -> bool:
    cls = type(obj)
    return cls.__name__ == name and cls.__module__ == _AUGMENT_MODULE


def _is_compose(obj) -> bool:
    return _is_ultralytics(obj, "Compose") and isinstance(getattr(obj, "transforms", None), list)


def flat_steps(steps) -> list:
    """The transforms, Ultralytics' nested Composes (v8_transforms' pre_transform)
    opened: a Compose calls its steps in turn and nothing else."""
    flat = []
    for t in steps:
        flat += flat_steps(t.transforms) if _is_compose(t) else [t]
    return flat


def _step_names(steps) -> list[str]:
    return [type(t).__name__ for t in flat_steps(steps)]


def _name(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


@dataclass(frozen=True)
class YoloTrainSource:
    """A recognised training dataset: its transforms run per sample in the workers
    (NOTE [ YOLO training samples ]), every image ``largest`` (imgsz square) or, in
    rect training, its batch's shape, at most ``largest``."""

    dataset: object
    largest: tuple[int, int]

    @property
    def task(self) -> str:
        return task_of(self.dataset)


@dataclass(frozen=True)
class YoloSource:
    """A recognised dataset: the dataset, its LetterBox and Format objects (the
    user's own, whose label arithmetic the workers replay), and the largest image a
    sample can have, (height, width)."""

    dataset: object
    letterbox: object
    format: object
    largest: tuple[int, int]

    @property
    def steps(self) -> tuple:
        return (self.letterbox, self.format)

    @property
    def planned(self) -> list:
        """The steps as in_place.py takes a plan: none with a C step of its own."""
        return [(step, None) for step in self.steps]

    @property
    def task(self) -> str:
        return task_of(self.dataset)


def task_of(d) -> str:
    return "segment" if d.use_segments else "pose" if d.use_keypoints else \
        "obb" if d.use_obb else "detect"


def imgsz(dataset) -> int:
    """The long side ``load_image`` resizes to (the larger of a (h, w) imgsz)."""
    size = dataset.imgsz
    return int(max(size)) if isinstance(size, (tuple, list)) else int(size)


def _shape(new_shape) -> tuple[int, int]:
    return (int(new_shape), int(new_shape)) if isinstance(new_shape, (int, np.integer)) \
        else (int(new_shape[0]), int(new_shape[1]))


def _rect_largest(dataset) -> tuple[int, int]:
    """The largest of a rect dataset's batch shapes, (h, w), each side on its own."""
    shapes = np.asarray(dataset.batch_shapes)
    return int(shapes[:, 0].max()), int(shapes[:, 1].max())


def _largest(dataset, letterbox) -> tuple[int, int]:
    return _rect_largest(dataset) if dataset.rect else _shape(letterbox.new_shape)


def recognise(dataset) -> tuple[YoloSource | None, list[Check]]:
    """The source and the checks, every rule said whether it passed or not."""
    name = _name(dataset)
    overridden = [m for m in _PIXEL_READERS if not keeps_own(dataset, m)]
    checks = [check("dataset.type", not overridden,
                    f"dataset is {name} (yolo pipeline)",
                    f"dataset is {name}, which overrides {', '.join(overridden)}",
                    f"keep YOLODataset's own image reading; {_FALLBACK}")]
    checks.append(check("dataset.channels", getattr(dataset, "channels", 3) == 3,
                        "3-channel images (cv2.IMREAD_COLOR)",
                        f"channels={getattr(dataset, 'channels', None)}",
                        f"only 3-channel datasets are accelerated; {_FALLBACK}"))
    transforms = getattr(dataset, "transforms", None)
    steps = list(getattr(transforms, "transforms", ()) or ())
    names = _step_names(steps)
    if getattr(dataset, "augment", False):
        return _recognise_train(dataset, transforms, steps, names, checks)
    val = len(steps) == 2 and all(_is_ultralytics(t, n) for t, n in zip(steps, _VAL_STEPS))
    checks.append(check(
        RULE, val and type(transforms).__name__ == "Compose",
        "Compose(LetterBox, Format): Ultralytics' validation transforms",
        f"{type(transforms).__name__}({', '.join(names)}) is not Ultralytics' validation "
        "Compose(LetterBox, Format)",
        f"keep the transforms YOLODataset.build_transforms makes; {_FALLBACK}"))
    if not all(c.passed for c in checks):
        return None, checks
    letterbox, fmt = steps
    missing = [f"{type(t).__name__}.{m}" for t in steps for m in _REPLAYED if not hasattr(t, m)]
    checks.append(check(
        "ultralytics.version", not missing,
        "LetterBox and Format replay labels through get_params and apply_instances",
        f"this Ultralytics has no {', '.join(missing)}",
        f"upgrade Ultralytics to 8.4 or later; {_FALLBACK}"))
    fill = getattr(letterbox, "padding_value", 114)
    checks.append(check(
        "LetterBox.padding_value", isinstance(fill, (int, np.integer)) and 0 <= fill <= 255,
        f"LetterBox pads with {fill}", f"padding_value={fill!r}",
        f"a padding level from 0 to 255 is accelerated; {_FALLBACK}"))
    checks.append(check(
        "LetterBox.scale_fill", not letterbox.scale_fill, "LetterBox keeps the aspect ratio",
        "scale_fill=True stretches the image", f"validation LetterBoxes do not stretch; "
        f"{_FALLBACK}"))
    checks.append(check(
        "Format.bgr", float(fmt.bgr) == 0.0, "Format gives RGB (bgr=0.0)",
        f"bgr={fmt.bgr}: channels swapped at random", f"validation Formats use bgr=0.0; "
        f"{_FALLBACK}"))
    if not all(c.passed for c in checks):
        return None, checks
    return YoloSource(dataset, letterbox, fmt, _largest(dataset, letterbox)), checks


def _recognise_train(dataset, transforms, steps, names, checks) -> tuple:
    """A training dataset: Ultralytics' Compose ending in Format; square batches,
    or each rect batch of its own shape."""
    flat = flat_steps(steps)
    ends_in_format = bool(flat) and _is_ultralytics(flat[-1], "Format")
    checks.append(check(
        RULE, _is_compose(transforms) and ends_in_format,
        f"Compose({', '.join(names)}): Ultralytics' training transforms",
        f"{type(transforms).__name__}({', '.join(names)}) is not an Ultralytics Compose "
        "ending in Format", f"keep the transforms YOLODataset.build_transforms makes; "
        f"{_FALLBACK}"))
    if not all(c.passed for c in checks):
        return None, checks
    size = imgsz(dataset)
    return YoloTrainSource(dataset, _rect_largest(dataset) if dataset.rect else (size, size)), \
        checks


def collate_check(dataset, collate_fn) -> Check:
    """Ultralytics' loaders pass the dataset's own collate_fn; its batch is what
    the main process assembles, by calling it (images stand in, NOTE [ YOLO batches ]
    in decode.py)."""
    own = getattr(type(dataset), "collate_fn", None)
    name = getattr(collate_fn, "__qualname__", type(collate_fn).__name__)
    return check("loader.collate_fn", collate_fn is not None and collate_fn is own,
                 f"{name}, the dataset's own, run in the main process",
                 f"collate_fn {name} is not the dataset's own collate_fn",
                 f"pass collate_fn=dataset.collate_fn, as Ultralytics' build_dataloader "
                 f"does; {_FALLBACK}")


def dataset_key(source: YoloSource | YoloTrainSource) -> tuple:
    """Equal while every index reads the same file with the same labels and shape."""
    d = source.dataset
    shapes = np.asarray(d.batch_shapes).tobytes() if d.rect else b""
    return (tuple(d.im_files), imgsz(d), bool(d.rect), shapes, id(d.labels), len(d.labels))
