"""Decoding a classification batch: default_collate's [images[B, ...], labels int64[B]],
or what the user's collate_fn makes of the samples (NOTE [ Hybrid pipelines ])."""
from __future__ import annotations

import copy
import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from ...decoders import decode_batch
from ...decoders.plans import to_plans
from ..contract import BatchDecoder, BatchWork, DecodeOptions
from ...sources.file_table import FileTable
from ..tensor_stage import division_form
from .draw import draw, replay
from .hybrid import CollatePlan, Yours, as_collate_input, sample_layout
from .program import ClassificationProgram
from ..opencv_reading import read_as_opencv
from .recognise import TIMM_RETRIES, open_rgb

#: a member or an Arrow image cell with no bytes (a None cell of a datasets.Dataset)
EMPTY_IMAGE = ("the sample has no image: its image cell is empty (None) or its member holds "
               "no bytes; filter such rows out of the dataset, or pass on_error='skip' to "
               "leave them out")

_LG = logging.getLogger("jpegloader")


class EmptyImageError(UnidentifiedImageError, ValueError):
    """A sample with no image bytes.  Each source's own path raises one of these for
    it (PIL's UnidentifiedImageError for a shard's zero-byte member, ValueError for a
    None Arrow cell): an ``except`` written against torch's loader catches this too."""

#: What queue-mode batches occupy in the ring: nothing real (the result travels
#: through the result queue), one byte per sample to keep the slot bookkeeping.
_QUEUE_LAYOUT = (((1,), torch.uint8),)


@dataclass(slots=True)
class ImagesWork(BatchWork):
    native: np.ndarray | None = None   # the C core's output, before your part
    final: np.ndarray | None = None    # after your part (the slot's images)
    labels: np.ndarray | None = None


class ClassificationBatchDecoder(BatchDecoder):
    work_type = ImagesWork

    def __init__(self, table: FileTable, index_map: torch.Tensor | None,
                 program: ClassificationProgram, replace_unreadable: bool,
                 options: DecodeOptions, collate: CollatePlan | None = None,
                 reader=None, sample_keys: tuple[str, str] | None = None):
        super().__init__(options)
        #: path -> RGB image where the dataset reads with OpenCV (ImageSource.reader): the
        #: C core then decodes only the photos OpenCV reads alike (read_as_opencv)
        self.reader = reader
        self.sample_keys = sample_keys  # a sample's dict keys (ImageSource.sample_keys)
        self.table = table            # paths and targets by base dataset index
        self.index_map = index_map    # int64[len]: loader index -> base index (Subsets)
        self.program = program
        self.replace_unreadable = replace_unreadable  # timm's ImageDataset
        # None: default_collate (or a fast_collate), done by the layout itself.  A
        # fast_collate after your own PIL-stage transforms (AutoAugment, as NVIDIA's
        # EfficientNet recipe has it) is run as yours on their PIL images: the C core's
        # output is not the sample any more.
        native_stack = collate is not None and collate.native_stack and \
            program.sample.kind != "pil"
        self.collate = None if collate is None or native_stack else collate
        self.structure = collate.structure if collate is not None else list
        self.lut = program.lut_array
        self.norm = division_form(program.tensor_stage, self.lut)  # NOTE [ Levels by division ]
        self.yours = Yours(program)
        self.runs_user_code = bool(program.yours_pil or program.yours_tensor
                                   or self.collate is not None)
        # its samples are rows of the slot's arrays, drawn by index
        self.splittable = not self.runs_user_code

    def shared_tensors(self) -> list[torch.Tensor]:
        return self.table.tensors() + ([] if self.index_map is None else [self.index_map])

    @property
    def layout(self):
        if self.collate is None:
            return sample_layout(self.program.sample)
        return self.collate.layout if self.collate.ring else _QUEUE_LAYOUT

    def assemble(self, tensors: list[torch.Tensor], extras=None):
        # default_collate's [images, labels] (or its dict of them, for samples that are
        # dicts), a fast_collate's (images, labels), or the collate_fn's own structure:
        # a namedtuple takes its fields one by one
        if self.sample_keys is not None and self.collate is None:
            return dict(zip(self.sample_keys, tensors, strict=True))
        if issubclass(self.structure, tuple) and hasattr(self.structure, "_fields"):
            return self.structure(*tensors)
        return self.structure(tensors)

    def rows(self, indices: Sequence[int]) -> np.ndarray:
        """Rows of the file table for these loader indices."""
        indices = np.asarray(indices, dtype=np.int64)
        return indices if self.index_map is None else self.index_map.numpy()[indices]

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    @property
    def files(self) -> FileTable:
        return self.table

    def begin(self, work: BatchWork) -> None:
        work.rows = self.rows(work.indices)
        work.paths = self.table.paths(work.rows)
        work.native, work.final, work.labels = self.buffers(len(work.indices), work.arrays)

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        p = self.program
        d = draw(p, widths, heights, work.seed, work.indices[part])
        skip = ~known
        if self.reader is not None:  # the others through the dataset's own reading
            skip = skip | ~np.array([read_as_opencv(encoded, j, bool(k))
                                     for j, k in enumerate(known)], dtype=bool)
        plans = to_plans(d.geometry, widths, heights, self.options.dct_scaling,
                         skip=skip, colour=d.colour)
        return decode_batch(encoded, plans, work.native[part], self.lut,
                            self.options.max_pixels, c_seconds, hwc=p.handover == "pil",
                            threads=work.threads, norm=self.norm)

    def targets(self, work: BatchWork) -> None:
        work.labels[:len(work.rows)] = self.table.targets_of(work.rows)

    def redo(self, work: BatchWork, k: int) -> None:
        work.native[k], work.labels[k] = self._python_path(int(work.indices[k]),
                                                           int(work.rows[k]), work.seed)

    def fields(self, work: BatchWork):
        return (work.native, work.labels)

    def finish(self, work: BatchWork, count: int) -> None:
        p, native, final = self.program, work.native, work.final
        indices = work.indices[work.keep]
        samples = None
        if p.hybrid:
            samples = self.yours.run(native[:count], indices, work.seed,
                                     final[:count] if final is not None else None,
                                     work.where, work.in_main)
        elif final is not None and final is not native:
            final[:count] = native[:count]
        if self.collate is not None and count:
            self._collate(samples, native, final, work.labels, count, work.arrays,
                          work.report, work.batch_no, work.seed, work.in_main)

    def buffers(self, n: int, arrays):
        """(native: what the C core writes, final: where finished samples go (None when
        they stay objects, as PIL images for a collate_fn), labels)."""
        p = self.program
        custom = self.collate is not None
        if custom:
            labels = self.yours.buffer("labels", (n,), np.int64)
            final = None if p.sample.kind == "pil" else self.yours.buffer(
                "samples", (n, *p.sample.shape), _numpy_dtype(p.sample))
        else:
            labels = arrays[1]
            final = arrays[0][:n]
        if p.handover == "pil":
            native = self.yours.buffer("native_hwc", (n, *p.output_size, 3), np.uint8)
        elif not p.yours_tensor and final is not None:
            native = final  # the C core writes the samples in place
        else:
            native = self.yours.buffer("native", (n, 3, *p.output_size), p.output_dtype)
        return native, final, labels

    def _collate(self, samples, native, final, labels, count, arrays, report, batch_no, seed,
                 in_main) -> None:
        kind = self.program.sample.kind
        if samples is None:  # finished samples are in `final`
            samples = [torch.from_numpy(final[k]) for k in range(count)]
        # NOTE [ A collate_fn's samples are its own ]
        # The samples are views of buffers the next batch reuses.  A collate_fn whose
        # result goes out as it is (through the queue, or as is with num_workers=0)
        # may keep them (a list of images), so it is given copies, as torch's
        # workers give fresh samples; one whose result is copied into the ring is
        # not, and should its result not fit the ring after all, the result is copied.
        if not self.collate.ring:
            samples = [_own(x) for x in samples[:count]]
        pairs = [(as_collate_input(samples[k], kind), int(labels[k])) for k in range(count)]
        result = self.collate.run(pairs, batch_no, seed, in_main)
        fields = list(result) if isinstance(result, (tuple, list)) else None
        if self.collate.ring and fields is not None and len(fields) == len(arrays) and all(
                isinstance(t, torch.Tensor) and tuple(t.shape[1:]) == a.shape[1:]
                and t.shape[0] == count and t.dtype == torch.from_numpy(a[:0]).dtype
                and t.is_contiguous()
                for t, a in zip(fields, arrays, strict=True)):
            for t, a in zip(fields, arrays, strict=True):
                a[:count] = t.numpy()
            report.count = count
        else:  # not the layout the ring was made for: sent as torch sends it
            report.payload = copy.deepcopy(result) if self.collate.ring else result

    def _python_path(self, index: int, row: int, seed: int) -> tuple[np.ndarray, int]:
        """The sample's native part as the dataset reads it, with this index's random
        parameters (the user's part then runs on it as on the others)."""
        row, image = self.open_row(row)
        return self.native_from_image(image, index, seed), int(self.table.targets_of([row])[0])

    def native_from_image(self, image: Image.Image, index: int, seed: int) -> np.ndarray:
        """The program's native part on an opened image, with this index's draws."""
        d = draw(self.program, [image.width], [image.height], seed, [index])
        out = replay(self.program, d, 0, image, native_only=True)
        return np.asarray(out) if isinstance(out, Image.Image) else out.numpy()

    def open_row(self, row: int) -> tuple[int, Image.Image]:
        """(the row read, its RGB image) as the dataset opens it: timm's ImageDataset
        moves on to the next row when a file cannot be opened."""
        if self.table.spans is not None:  # a shard's member, as WebDataset reads it
            data = self.table.read(row)
            if not data:
                raise EmptyImageError(EMPTY_IMAGE)
            return row, Image.open(io.BytesIO(data)).convert("RGB")
        if self.reader is not None:
            return row, self.reader(self.table.path(row))
        if not self.replace_unreadable:
            return row, open_rgb(self.table.path(row))
        # timm's ImageDataset: a file that cannot be opened is replaced by the next
        # sample's, up to TIMM_RETRIES times; converting (decoding) errors propagate.
        for _ in range(TIMM_RETRIES):
            path = self.table.path(row)
            try:
                image = Image.open(open(path, "rb"))  # noqa: SIM115 - as timm reads it
                break
            except OSError as e:
                _LG.warning("Skipped sample (index %d). %s", row, e)
                row = (row + 1) % len(self.table)
        else:
            raise RuntimeError(f"Failed to load {TIMM_RETRIES} consecutive samples")
        return row, image.convert("RGB")


def _numpy_dtype(sample) -> np.dtype:
    if sample.kind == "ndarray":
        return np.dtype(sample.dtype)
    return torch.zeros(0, dtype=sample.torch_dtype).numpy().dtype


def _own(x):
    """A sample that shares no memory with the decoder's buffers."""
    if isinstance(x, torch.Tensor):
        return x.clone()
    return x.copy() if isinstance(x, np.ndarray) else x
