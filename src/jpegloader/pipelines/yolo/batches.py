"""What YOLO's validation and training batches share: the slot's layout, the .npy
files read in place of photos, and the batch the dataset's own collate_fn makes in
the main process (NOTE [ YOLO batches ] in decode.py)."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np
import torch

from ...sources.file_table import FileTable
from ..by_value import pack, unpack
from ..contract import BatchDecoder, BatchWork, DecodeOptions
from ..stand_ins import EMPTY

_LG = logging.getLogger("jpegloader")
#: the .npy files (path, mtime) whose size was held to their photo's, once a process
_checked: set[tuple[str, float]] = set()


# NOTE [ A photo's .npy read as Ultralytics reads it ]
# Ultralytics' load_image reads <photo>.npy (what cache="disk" writes: the photo as
# cv2.imread gave it) in place of the photo when one exists and is not older than
# the photo, or whatever its age under cache="disk" (8.4; earlier releases read any
# that exists).  A photo with a .npy beside it is left to the dataset's own
# load_image, which applies its own release's rule, so the pixels are the ones
# Ultralytics would train on.  Where the rule reads a .npy whose size is not its
# photo's, one WARNING a process names both (Ultralytics says nothing there); each
# .npy's header is read once a process, not every epoch.
def npy_instead(dataset, index: int, hw: tuple[int, int]) -> bool:
    """Whether photo ``index`` (``hw`` its size as OpenCV reads it) has a .npy beside
    it, which the dataset's own load_image is left to read or not."""
    files = getattr(dataset, "npy_files", None)
    if not files:
        return False
    npy = os.fspath(files[index])
    try:
        written = os.stat(npy).st_mtime
    except OSError:
        return False
    photo = os.fspath(dataset.im_files[index])
    try:
        read = getattr(dataset, "cache", None) == "disk" or written >= os.stat(photo).st_mtime
    except OSError:
        read = False  # the photo is gone: its reading says so
    if read and (npy, written) not in _checked:
        _checked.add((npy, written))  # its header read once, not every epoch
        try:
            held = np.load(npy, mmap_mode="r").shape[:2]
        except (OSError, ValueError):
            held = hw  # unreadable: Ultralytics' load_image warns and reads the photo
        if tuple(held) != tuple(hw):
            _LG.warning("%s holds a %d x %d image, where its photo %s (sample %d) is "
                        "%d x %d: Ultralytics trains on the .npy, so this loader does too. "
                        "Delete the .npy (or cache again) to train on the photo.",
                        npy, held[0], held[1], photo, index, hw[0], hw[1])
    return True


@dataclass(slots=True)
class YoloWork(BatchWork):
    compact: bool = False              # the images one after another (NOTE [ YOLO batches ])
    shape: tuple | None = None         # their shape when compact
    out_hw: list | None = None         # each sample's image size
    labels: list | None = None         # each sample's label dict
    hw: list | None = None             # validation: each (original, resized) size, where native
    images: dict | None = None         # training: index -> (BGR image, original, resized)


class YoloBatches(BatchDecoder):
    """A batch of images of up to ``source.largest``, one after another from the
    slot's start when the batch's are known to be equal (``work.compact``, the
    shape ``work.shape``), else each at its own row's start; each sample's labels
    (``work.labels``) and image size (``work.out_hw``) kept for ``finish``."""

    partial_rows = True
    work_type = YoloWork

    def __init__(self, source, options: DecodeOptions):
        super().__init__(options)
        self.source = source
        dataset = source.dataset
        self.table = FileTable.from_samples([(str(f), i) for i, f in enumerate(dataset.im_files)])
        self.collate_fn = type(dataset).collate_fn

    @property
    def layout(self):
        return (((3, *self.source.largest), torch.uint8),)

    @property
    def files(self) -> FileTable:
        return self.table

    @staticmethod
    def shape_batch(work: BatchWork, shapes: set[tuple[int, int]] | None) -> None:
        """``work.compact`` and ``work.shape`` from the shapes the batch's images are
        known to have before decoding (None: not known): compact where one shape."""
        work.compact = shapes is not None and len(shapes) == 1
        work.shape = next(iter(shapes)) if work.compact else None

    def image_out(self, work: BatchWork, k: int, h: int, w: int) -> np.ndarray:
        """Where sample k's h x w image goes in the slot (NOTE [ YOLO batches ])."""
        flat = work.arrays[0].reshape(len(work.arrays[0]), -1)
        if work.compact:
            every = flat.reshape(-1)[:len(flat) * 3 * h * w].reshape(len(flat), 3, h, w)
            return every[k:k + 1]
        return flat[k, :3 * h * w].reshape(1, 3, h, w)

    def fields(self, work: BatchWork):
        return []  # finish moves the kept samples: NOTE [ YOLO batches ]

    def finish(self, work: BatchWork, count: int) -> None:
        kept = np.flatnonzero(work.keep)
        if len(kept) < len(work.keep):
            for to, k in enumerate(kept):
                if to != k:
                    h, w = work.out_hw[k]
                    self.image_out(work, to, h, w)[0] = self.image_out(work, k, h, w)[0]
        work.report.extras = (work.compact, [work.out_hw[k] for k in kept],
                              [pack(work.labels[k], limit=None) for k in kept])

    def assemble(self, tensors: list[torch.Tensor], extras=None) -> dict:
        compact, shapes, labels = extras
        slot = tensors[0]
        n = len(shapes)
        if compact:
            h, w = shapes[0]
            image = slot.reshape(-1)[:n * 3 * h * w].view(n, 3, h, w)
        else:  # the collate_fn's stack, which raises as it would for unequal shapes
            image = torch.stack([slot[k].reshape(-1)[:3 * h * w].view(3, h, w)
                                 for k, (h, w) in enumerate(shapes)])
        batch = self.collate_fn([{**unpack(label), "img": EMPTY} for label in labels])
        batch["img"] = image
        return batch
