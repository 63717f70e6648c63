"""Recognising the datasets the classification pipeline reads, and what they read.

Accepted, also inside (nested) ``torch.utils.data.Subset``s, whose indices are
mapped through:

* ``torchvision.datasets.DatasetFolder`` and ``ImageFolder`` (or subclasses
  that override neither ``__getitem__`` nor ``__len__``) with torchvision's
  default PIL loader;
* timm's ``ImageDataset`` over a folder (its ``ReaderImageFolder``'s samples and
  class map), reading RGB images (``input_img_mode="RGB"``, no bytes, no
  additional features).  An unreadable file there is replaced by the next one,
  as timm does;
* Ultralytics' ``ClassificationDataset`` (``yolo classify``), uncached: its
  samples' paths and classes, each photo read as its own ``imread`` (OpenCV) reads
  it, its samples ``{"img": ..., "cls": ...}``.

A sample is read as the dataset reads it: ``samples[i]`` is (path, target) and
the image is the file opened by PIL and converted to RGB (or by OpenCV and
converted to RGB, for Ultralytics': ``ImageSource.reader``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from PIL import Image
from torchvision import get_image_backend
from torchvision.datasets import DatasetFolder
from torchvision.datasets.folder import default_loader, pil_loader

from ...sources.arrow_images import HuggingFaceImages, arrow_spans
from ..contract import Check, check
from ..opencv_reading import OpenCVReading
from ..subsets import subset_check, unwrap_subsets
from ...sources.shards import WebDataset

#: timm's ImageDataset tries this many consecutive samples before giving up.
TIMM_RETRIES = 20


@dataclass(frozen=True)
class ImageSource:
    """Where the pipeline reads samples from, as the dataset would."""

    samples: Sequence[tuple[str, int]] = field(repr=False)  # by base dataset index
    indices: np.ndarray | None = field(repr=False)  # loader index -> base index (Subsets)
    transform: object = field(repr=False)
    replace_unreadable: bool  # timm: an unopenable file is replaced by the next sample
    description: str
    #: samples that are spans of files (tar shards, Arrow files); ``samples`` is then empty
    members: tuple | None = field(default=None, repr=False, compare=False)
    #: path -> RGB PIL image where the dataset does not open files with PIL (OpenCVReading)
    reader: object = field(default=None, repr=False, compare=False)
    #: the keys of a sample that is a dict ({"img": image, "cls": target}), else None
    sample_keys: tuple[str, str] | None = None

    def __len__(self) -> int:
        base = len(self.samples) if self.members is None else len(self.members.file_of)
        return base if self.indices is None else len(self.indices)

    def key(self) -> tuple:
        """Equal while what the dataset returns for every index stays the same
        (hashing 1.28 M samples takes about 60 ms)."""
        indices = None if self.indices is None else hash(self.indices.tobytes())
        content = hash(tuple(self.samples)) if self.members is None else hash(
            (tuple(self.members[0]), *(a.tobytes() for a in self.members[1:])))
        return (self.description, len(self), content, indices, self.replace_unreadable)


def transform_of(base):
    """The dataset's transform (Ultralytics' ClassificationDataset: ``torch_transforms``)."""
    if _ultralytics_class(base) is not None:
        return getattr(base, "torch_transforms", None)
    return getattr(base, "transform", None)


def open_rgb(path: str) -> Image.Image:
    """torchvision's pil_loader (and timm's Image.open + convert("RGB"))."""
    with open(path, "rb") as f:
        image = Image.open(f)
        return image.convert("RGB")


def _timm_image_dataset_class(cls) -> type | None:
    """The class named ImageDataset in cls's ancestry from timm (or a user's copy)."""
    for base in cls.__mro__:
        if base.__name__ == "ImageDataset":
            return base
    return None


def _is_timm_like(dataset) -> bool:
    return _timm_image_dataset_class(type(dataset)) is not None and \
        hasattr(dataset, "reader") and hasattr(dataset, "transform")


def _ultralytics_class(dataset) -> type | None:
    """Ultralytics' ClassificationDataset in the dataset's ancestry (not imported:
    Ultralytics is no dependency of this package)."""
    return next((c for c in type(dataset).__mro__ if c.__name__ == "ClassificationDataset"
                 and c.__module__.startswith("ultralytics.data.")), None)


def claims(dataset) -> bool:
    base, _, _ = unwrap_subsets(dataset)
    return isinstance(base, (DatasetFolder, WebDataset, HuggingFaceImages)) or \
        _is_timm_like(base) or _ultralytics_class(base) is not None


def _name(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _own_reading(base, cls, good: str, names=("__getitem__", "__len__")) -> Check:
    """The dataset reads samples as ``cls`` does: none of ``names`` overridden."""
    overridden = [name for name in names if getattr(type(base), name) is not getattr(cls, name)]
    return check("dataset.getitem", not overridden, good,
                 f"{type(base).__name__} overrides {', '.join(overridden)}",
                 "no change makes custom per-sample code native; this loader runs on torch's "
                 "DataLoader")


def _folder_checks(base) -> list[Check]:
    loader = getattr(base, "loader", None)
    loader_ok = loader in (default_loader, pil_loader) and get_image_backend() == "PIL"
    loader_name = getattr(loader, "__qualname__", repr(loader))
    return [
        _own_reading(base, DatasetFolder, "DatasetFolder's own loading is used"),
        check("dataset.loader", loader_ok, "images are opened with PIL (default_loader)",
              f"images are opened with {loader_name} (image backend "
              f"{get_image_backend()!r})",
              "use torchvision's default loader (PIL) so the decoded pixels can be reproduced"),
    ]


def _hfds_members(reader):
    """timm's ReaderHfds, read from its dataset's Arrow files as HuggingFaceImages reads
    a dataset (NOTE [ Images in Arrow files ]): its members, or None where it does not
    read one plain integer label per image."""
    if type(reader).__name__ != "ReaderHfds" or getattr(reader, "target_keys", None) or \
            getattr(reader, "remap_class", True) or \
            getattr(reader, "additional_features", None) is not None:
        return None
    cached = getattr(reader, "_jpegloader_members", False)
    if cached is False:
        ds = reader.dataset
        try:
            targets = np.asarray(ds[reader.label_key], dtype=np.int64)
        except (KeyError, TypeError, ValueError):
            cached = None
        else:
            cached = arrow_spans(ds, reader.image_key, targets)
        reader._jpegloader_members = cached
    return cached


def _timm_checks(base) -> list[Check]:
    cls = _timm_image_dataset_class(type(base))
    reader = base.reader
    samples = getattr(reader, "samples", None)
    reader_ok = (type(reader).__name__ == "ReaderImageFolder" and isinstance(samples, list)) \
        or _hfds_members(reader) is not None
    mode = getattr(base, "input_img_mode", "RGB")
    reading_ok = (not getattr(base, "load_bytes", False) and mode == "RGB"
                  and getattr(base, "additional_features", None) is None)
    return [
        _own_reading(base, cls, "timm ImageDataset's own loading is used"),
        check("dataset.reader", reader_ok, f"timm {type(reader).__name__} (a folder of image "
              "files, or a Hugging Face dataset in Arrow files)",
              f"the reader is {type(reader).__name__}; a folder of image files "
              "(ReaderImageFolder) or a Hugging Face dataset with one integer label and no "
              "class map or additional features (ReaderHfds) is read natively",
              "tar, TFDS and WebDataset readers run on torch's DataLoader; "
              "jpegloader.datasets.WebDataset reads tar shards natively"),
        check("dataset.loader", reading_ok, "images are opened with PIL and converted to RGB",
              f"load_bytes={getattr(base, 'load_bytes', None)}, input_img_mode={mode!r}, "
              f"additional_features={getattr(base, 'additional_features', None)!r}",
              "native reading gives RGB images (input_img_mode='RGB', load_bytes=False)"),
    ]


def _ultralytics_checks(base) -> list[Check]:
    cached = "RAM" if getattr(base, "cache_ram", False) else \
        "disk (.npy)" if getattr(base, "cache_disk", False) else None
    return [
        _own_reading(base, _ultralytics_class(base), "Ultralytics' ClassificationDataset's own "
                     "loading is used (each photo read by its imread, OpenCV)",
                     ("__getitem__", "__len__", "imread")),
        check("dataset.cache", cached is None, "no image cache (each photo read from its file)",
              f"the images are cached in {cached}",
              "train with cache=False to accelerate; a cached dataset runs on torch's "
              "DataLoader"),
    ]


def _member_checks(base) -> list[Check]:
    """WebDataset shards, Hugging Face Arrow files: samples that are spans of files."""
    cls = WebDataset if isinstance(base, WebDataset) else HuggingFaceImages
    checks = [_own_reading(base, cls, f"{cls.__name__}'s own reading (each image's bytes "
                                      "at their offset)", ("__getitem__", "__len__", "read"))]
    if cls is HuggingFaceImages:
        checks.append(check("dataset.storage", base.members() is not None,
                            "the images are in the dataset's Arrow files on disk",
                            "the dataset is held in memory, not in Arrow files on disk",
                            "save_to_disk and load_from_disk it (load_dataset gives such a "
                            "dataset too), so the images can be read from its files"))
    return checks


def recognise(dataset) -> tuple[ImageSource | None, list[Check]]:
    """The dataset's rules, pass or fail, and its ImageSource when all pass."""
    base, indices, problems = unwrap_subsets(dataset)
    shards = isinstance(base, (WebDataset, HuggingFaceImages))
    ultralytics = _ultralytics_class(base) is not None
    timm = not shards and not ultralytics and not isinstance(base, DatasetFolder)
    kind = "timm ImageDataset" if timm else type(base).__name__
    wrapped = f"Subset of {kind}" if indices is not None else kind
    checks = [Check("dataset.type", True, f"dataset is {wrapped} (classification pipeline)")]
    checks += _member_checks(base) if shards else _ultralytics_checks(base) if ultralytics \
        else _timm_checks(base) if timm else _folder_checks(base)
    checks.append(subset_check(indices, problems))
    tt = getattr(base, "target_transform", None)
    checks.append(check("dataset.target_transform", tt is None, "no target_transform",
                        f"target_transform is {type(tt).__name__}",
                        "no change makes a target transform native; this loader runs on "
                        "torch's DataLoader"))
    if not all(c.passed for c in checks):
        return None, checks
    if shards:
        members = base.members()
        return ImageSource((), indices, base.transform, False, f"{wrapped} {_name(base)}",
                           members), checks
    if timm and _hfds_members(base.reader) is not None:
        return ImageSource((), indices, base.transform, True, f"{wrapped} {_name(base)}",
                           _hfds_members(base.reader)), checks
    if ultralytics:
        samples = [(str(path), int(target)) for path, target, *_ in base.samples]
        return ImageSource(samples, indices, base.torch_transforms, False,
                           f"{wrapped} {_name(base)}", reader=OpenCVReading(type(base)),
                           sample_keys=("img", "cls")), checks
    samples = base.reader.samples if timm else base.samples
    return ImageSource(samples, indices, base.transform, timm,
                       f"{wrapped} {_name(base)}"), checks
