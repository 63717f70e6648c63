"""Decoding a detection batch: each image at its own size, its target built and moved
by torchvision's own code, then the user's part and collate_fn, in the worker.

Per batch (NOTE [ One batch skeleton ] in contract.py): the draws from the (seed,
index) stream; the files read in groups; each image's output size from its
file's real size (the file wins over the JSON's size, as in torch's loader);
the C core decodes, resizes, flips and converts each image into a tensor of
its own size, made in shared memory in a worker so that sending it to the main
process copies nothing; a sample the C core cannot do is replayed through the
dataset's own reading with the same draws.  Each target is built with its
sample's geometry, by the wrapper's own code (the canvas being the file's real
size), and goes through the native steps with torchvision's kernels
(draw.run_steps); a target that fails sends its sample to the Python path, which
names the file and index if it fails again.  The user's objects after the split
run seeded per sample, and the collate_fn seeded per batch.

NOTE [ Detection batches in the ring ]
Images differ in size from sample to sample, so a slot holds, per sample, room
for the largest image the recipe gives, up to ROW_ROOM times the median photo's
(from the annotation file's sizes and every size a resize may draw), and
the batch's rows are one arena: each image is written after the last.  The
report carries each sample's place, shape and packed target (NOTE [ Packed
targets ] in pipelines/by_value.py); the main process views each image in the slot and
runs the references' zip collate_fn on the samples.  An image that no longer
fits (an outsized photo, a zoom-out's canvas, a file bigger than the annotation
file says) travels as a shared-memory tensor beside them.  Where the user's
objects run after the native part, or the collate_fn is not a zip (a stack, a
padding), the worker runs them and the batch's large tensors come in the slot's
bytes instead (NOTE [ A collate_fn's batch in the slot ] in slot_batches.py).

NOTE [ Levels made float where they are pinned ]
With pin_memory=True, a float32 image in the ring is copied once more, from its
slot into pinned memory, by the pin thread.  So where the batch is to be pinned
(``BatchWork.pinned``), the worker writes the C core's levels into the arena (a
quarter of the bytes) and ``assemble``, in the pin thread, writes them into pinned
memory through the tensor table: the float32 the C core would have written, bit
for bit (it makes them from the same levels through the same table), with a
quarter of the bytes read there and a quarter written by the worker.  Images
beside the batch (outsized, or from the Python path) stay float32.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torch.utils.data import default_collate
from torchvision import tv_tensors

from ..._shared_pages import SharedMemoryError, shared_empty
from ...decoders import Output, decode_each, levels_to_float, resize_hwc
from ...decoders import status as st
from ...decoders.jpeg import FILTERS, PAD_MODES
from ...decoders.plans import Geometry, to_plans, vertical_first
from ...sources.file_table import FileTable
from ..by_value import pack, unpack
from ..colour import photometric_program
from ..contract import BatchDecoder, BatchWork, DecodeOptions
from ..random_stream import (COLLATE_STREAM, PIL_STREAM, generators_kept, seed_generators,
                             seeds)
from ..slot_batches import SlotBatch
from ..slot_batches import pack as pack_batch
from ..slot_batches import rows as slot_rows
from ..slot_batches import unpack as unpack_batch
from ..tensor_stage import division_form
from .draw import Geometry as SampleGeometry
from .draw import ROW_ROOM, draw, largest_output, run_steps
from .lower import DetectionProgram
from .masks import KEY, Painted, paint_survivors, painted, rles, row_bytes
from .recognise import CocoSource
from .slot_collates import Padding
from .states import flattened
from .steps import Distort
from .zip_collate import zips

#: A collate_fn's batch's slot keeps the pages of the largest of the worker's last this
#: many batches (NOTE [ A slot holds what its batch takes ]): their sizes vary 2-3x, so
#: pages kept for the last batch alone would be faulted in again by the next.
KEPT_SIZES = 16

#: A collate_fn's batch with num_workers=0 (nothing crosses processes): one byte per
#: sample, to keep the slot bookkeeping (NOTE [ Detection batches in the ring ]).
_INLINE_LAYOUT = (((1,), torch.uint8),)
#: A collate_fn that pads the batch's images to the largest of them (DETR's
#: NestedTensor) makes each larger than it is: a sample's row has this much room
#: (COCO's photos, landscape and portrait, at DETR's 800 x 1333 pad to 1.35 times).
PADDING_ROOM = 1.5


def _row_pixels(program: DetectionProgram, sizes: list[tuple[int, int]]) -> int:
    """The pixels of a sample's row: the largest output draw.largest_output gives
    the annotated sizes, capped at ROW_ROOM times the median photo's: an outsized
    one travels beside the batch (NOTE [ Detection batches in the ring ])."""
    if not sizes:
        return 1
    distinct, photo_size = np.unique(np.asarray(sizes, np.int64), axis=0,
                                     return_inverse=True)
    per_photo = np.array([largest_output(program, [tuple(s)]) for s in distinct])[
        photo_size.reshape(-1)]
    median = np.quantile(per_photo, 0.5, method="lower")
    return int(min(per_photo.max(), ROW_ROOM * median))


def _empty(shape: tuple[int, ...], dtype: torch.dtype, work: BatchWork,
           what: str) -> torch.Tensor:
    """A tensor for one image, or its masks, beside the batch; in shared memory when
    it is to be sent to another process (torch would otherwise copy it there when
    pickling it)."""
    if work.in_main:
        return torch.empty(shape, dtype=dtype)
    return shared_empty(shape, dtype, f"{what} beside batch {work.batch_no} {work.where}")


def in_ring(program: DetectionProgram) -> bool:
    """Whether the program's batches go through the ring (NOTE [ Detection batches in
    the ring ]): all native, tensors, and a zip collate_fn."""
    return not program.yours and program.output != "pil" and \
        zips(program.collate_fn or default_collate)


def image_dtype(program: DetectionProgram) -> torch.dtype:
    """The dtype of the images the native part gives."""
    return torch.float32 if program.output == "float32" else torch.uint8


def collate_in_slot(program: DetectionProgram) -> Padding | None:
    """The kind of collate_fn whose batches a worker writes straight into the slot
    (NOTE [ A collate_fn's batch made in the slot ] in slot_collates.py), or None."""
    if in_ring(program) or program.output == "pil":
        return None
    return Padding.of(program.collate_fn or default_collate, image_dtype(program))


@dataclass(slots=True)
class DetectionWork(BatchWork):
    draws: object = None               # the batch's draws (draw.draw)
    images: list | None = None         # per sample: its image beside the slot, or None
    arena: int = 0                     # elements of the images' arena filled (_arena's)
    masks_at: int = 0                  # bytes of the mask field filled
    targets: list | None = None        # per sample: its packed target
    #: the arena holds levels (NOTE [ Levels made float where they are pinned ])
    levels: bool = False


@dataclass(slots=True)
class RingBatch:
    """A batch's samples in the ring: per kept sample its slot row, its image's place
    in the arena and shape, the image beside the batch (or None) and its packed
    target; ``levels``: the arena holds levels (NOTE [ Levels made float where they
    are pinned ])."""

    samples: list
    levels: bool = False


class DetectionBatchDecoder(BatchDecoder):
    work_type = DetectionWork

    def __init__(self, source: CocoSource, program: DetectionProgram,
                 options: DecodeOptions):
        super().__init__(options)
        self.source = source
        self.program = program
        self.collate_fn = program.collate_fn or default_collate
        base = source.base
        self.table = FileTable.from_samples(
            [(source.path(i), int(base.ids[i])) for i in range(len(base.ids))])
        self.index_map = None if source.indices is None else torch.from_numpy(source.indices)
        self.lut = program.lut_array
        self.norm = division_form(program.tensor_stage, self.lut)
        # NOTE [ Detection batches in the ring ]
        self.ring = in_ring(program)
        self.runs_user_code = not self.ring
        self.partial_rows = self.ring
        self.dtype = image_dtype(program)
        rows = range(len(base.ids)) if source.indices is None else np.unique(source.indices)
        self.row_elems = 3 * _row_pixels(program, [source.json_size(int(i)) for i in rows])
        # NOTE [ A collate_fn's batch in the slot ] (slot_batches.py): a sample's image
        # and, padded, its mask, with room for padding to the batch's largest
        self.batch_row = 1 if self.ring or program.output == "pil" else int(
            (self.dtype.itemsize + 1 / 3) * self.row_elems * PADDING_ROOM)
        if self.batch_row > 1:  # the images and the collate_fn's batch, kept in the heap
            self.heap_per_sample = self.batch_row + self.row_elems * self.dtype.itemsize
        # NOTE [ A collate_fn's batch made in the slot ] (slot_collates.py): the heap
        # then holds the images alone
        self.in_slot = collate_in_slot(program)
        if self.in_slot is not None:
            self.heap_per_sample = self.row_elems * self.dtype.itemsize
            # nothing of yours runs in the workers, bar a batch the kind cannot take;
            # their heap still grows with the batch's sizes
            self.runs_user_code, self.heap_unsized = bool(program.yours), True
        # NOTE [ A slot holds what its batch takes ] (_shared_pages.py)
        self.fills_part = self.ring or self.batch_row > 1
        self._sizes: deque[int] = deque(maxlen=KEPT_SIZES)  # a worker's last batches' bytes
        # NOTE [ Masks painted into the slot ] (masks.py)
        self.masks = self.ring and painted(source, program)
        self.mask_row = row_bytes(source, lambda h, w: largest_output(program, [(h, w)]),
                                  rows) if self.masks else 0

    @property
    def layout(self):
        if not self.ring:
            return (((self.batch_row,), torch.uint8),)
        image = ((self.row_elems,), self.dtype)
        return (image, ((self.mask_row,), torch.uint8)) if self.masks else (image,)

    def shared_tensors(self) -> list[torch.Tensor]:
        return self.table.tensors() + ([] if self.index_map is None else [self.index_map])

    @property
    def inline_layout(self):
        return self.layout if self.ring else _INLINE_LAYOUT

    def pins_assembled(self, extras=None):
        # a collate_fn's batch is pinned as torch pins it: what has no pin_memory
        # (DETR's NestedTensor) stays where it is, in the slot
        return self.partial_rows or isinstance(extras, SlotBatch)

    def assemble(self, tensors, extras=None):
        """The samples from the slot's rows and the packed targets, through the zip
        collate_fn (NOTE [ Detection batches in the ring ]); or the collate_fn's batch
        a worker put in the slot (NOTE [ A collate_fn's batch in the slot ])."""
        arena = tensors[0].view(-1)
        if isinstance(extras, SlotBatch):
            return unpack_batch(extras, arena)
        if extras.levels:
            arena = arena.view(torch.uint8)
        image = tv_tensors.Image if self.program.image_type == "image" else None
        samples = []
        for k, at, shape, apart, packed in extras.samples:
            x = apart if apart is not None else \
                arena[at:at + shape[0] * shape[1] * shape[2]].view(shape)
            if extras.levels and apart is None:
                x = self._pinned_floats(x)
            target = unpack(packed)
            if isinstance(target, dict) and isinstance(target.get(KEY), Painted):
                target[KEY] = target[KEY].view(tensors[1].view(-1))
            samples.append((image(x) if image is not None else x, target))
        return self.collate_fn(samples)

    def _pinned_floats(self, levels: torch.Tensor) -> torch.Tensor:
        """An image's levels through the tensor table, in pinned memory (NOTE [ Levels
        made float where they are pinned ])."""
        out = torch.empty(levels.shape, dtype=torch.float32, pin_memory=True)
        levels_to_float(levels.numpy(), out.numpy(), self.lut)
        return out

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    @property
    def files(self) -> FileTable:
        return self.table

    def begin(self, work: BatchWork) -> None:
        work.rows = work.indices if self.index_map is None else \
            self.index_map.numpy()[work.indices]
        work.paths = self.table.paths(work.rows)
        n = len(work.indices)
        work.draws = draw(self.program, work.seed, work.indices)
        work.images = [None] * n
        work.arena = 0  # elements of the images' arena filled (_place)
        work.masks_at = 0  # bytes of the mask field filled (_target)
        work.levels = work.pinned and self.ring and self.lut is not None
        # each sample's target, made with its geometry (some draws depend on the boxes:
        # NOTE [ Draws by the transforms' own make_params ] in draw.py)
        work.targets = [None] * n

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        p, ks = self.program, range(*part.indices(len(work.indices)))
        geometry = []
        python_path = ~np.asarray(known, bool)
        for j, (k, h, w) in enumerate(zip(ks, heights, widths, strict=True)):
            size = (int(h), int(w))
            g = SampleGeometry.whole(size)
            if not python_path[j]:
                try:
                    g, work.targets[k] = self._target(work, k, size)
                except SharedMemoryError:
                    raise  # the batch's, not the sample's
                except Exception:  # noqa: BLE001 - redone on the Python path, which names it
                    python_path[j] = True
            geometry.append(g)
        plans = self._plans(geometry, widths, heights, python_path)
        made, outputs = [], []
        for k, g in zip(ks, geometry):
            out, view = self._output(g.output, work, k)
            floats = view.dtype == np.float32  # else levels, or a PIL image's bytes
            if g.then is not None:  # NOTE [ DETR's geometry in one plan ] (detr.py)
                outputs.append(Output(np.empty((1, g.height, g.width, 3), np.uint8), hwc=True))
            else:
                outputs.append(Output(view, self.lut if floats else None,
                                      self.norm if floats else None, hwc=p.output == "pil"))
            made.append((out, view))
        status, messages = decode_each(encoded, plans, outputs, self.options.max_pixels,
                                       c_seconds, work.threads)
        for j, k in enumerate(ks):
            if status[j] == st.OK:
                out, view = made[j]
                if geometry[j].then is not None:
                    self._resize_then(outputs[j].out[0], geometry[j].then, view)
                work.images[k] = out
        return status, messages

    def _resize_then(self, pixels: np.ndarray, size: tuple[int, int], view) -> None:
        """The C core's output resized to ``size`` (height, width) as Pillow resizes
        it for the user's second resize, through the tensor table into ``view``."""
        if self.program.output != "pil":
            h, w = pixels.shape[:2]
            floats = view.dtype == np.float32
            resize_hwc(pixels, view[0], vertical_first(w, h, size[1], size[0]),
                       self.lut if floats else None, self.norm if floats else None)
            return
        view[0] = np.asarray(Image.fromarray(pixels, "RGB").resize(
            (size[1], size[0]), Image.Resampling.BILINEAR))

    def _plans(self, geometry: list[SampleGeometry], widths, heights, skip) -> np.ndarray:
        """The C core's plans: the crop resized; or, for a padded program, the photo
        resized, distorted, padded into its canvas and the window kept (NOTE [ Colour
        before the padding ] in csrc/pipeline.c)."""
        n = len(geometry)
        crops = np.array([g.crop for g in geometry], np.int64).reshape(n, 4)
        flip = np.array([g.flip for g in geometry], bool)
        bilinear = np.full(n, FILTERS["bilinear"], np.int32)
        if not self.program.padded:
            return to_plans(Geometry(
                crop_x=crops[:, 0], crop_y=crops[:, 1], crop_w=crops[:, 2], crop_h=crops[:, 3],
                resize_w=np.array([g.width for g in geometry], np.int64),
                resize_h=np.array([g.height for g in geometry], np.int64),
                keep_x=np.zeros(n, np.int64), keep_y=np.zeros(n, np.int64), flip=flip,
                needs_padding=np.zeros(n, bool), filter=bilinear),
                widths, heights, self.options.dct_scaling, skip=skip)
        w, h = np.asarray(widths, np.int64), np.asarray(heights, np.int64)
        pads = np.array([g.pad or (0, 0, 1, 1) for g in geometry], np.int64).reshape(n, 4)
        scaled = np.array([g.scaled or (1, 1) for g in geometry], np.int64).reshape(n, 2)
        zero = np.zeros(n, np.int64)
        distort = next((s for s in flattened(self.program.steps) if isinstance(s, Distort)),
                       None)
        distorts = distort is not None
        plans = to_plans(Geometry(
            crop_x=zero, crop_y=zero, crop_w=w, crop_h=h,
            resize_w=scaled[:, 1], resize_h=scaled[:, 0],
            keep_x=crops[:, 0], keep_y=crops[:, 1], flip=flip,
            needs_padding=np.zeros(n, bool), filter=bilinear,
            pad_mode=PAD_MODES["constant"], pad_fill=self.program.fill,
            pad_x=pads[:, [0, 2]], pad_y=pads[:, [1, 3]]),
            widths, heights, self.options.dct_scaling, skip=skip,
            colour=photometric_program([g.distort for g in geometry], distort.arithmetic)
            if distorts else None)
        plans["colour_first"] = distorts
        return plans

    def _target(self, work: BatchWork, k: int, size: tuple[int, int]):
        """Sample ``k``'s geometry and target: its masks painted into the slot where
        they can be (NOTE [ Masks painted into the slot ] in masks.py)."""
        row = int(work.rows[k])
        if self.masks:
            target, segmentations = self.source.target_to_paint(row, size)
            counts = rles(segmentations, size, polygons_only=self.source.converts)
            if counts is not None:
                g, target, _ = run_steps(self.program, work.draws, k, size, target,
                                         masks_later=True)
                if isinstance(target, dict) and KEY in target:
                    at = -(-work.masks_at // 64) * 64  # each sample's from a cache line
                    target = paint_survivors(
                        target, counts, size, g.flip,
                        None if g.keeps_the_photo(size) else g.maps,
                        work.arrays[1].reshape(-1), at,
                        lambda shape: _empty(shape, torch.uint8, work, "masks"),
                        lambda view: self.reserve(work, view, "masks"))
                    if target[KEY].apart is None:
                        work.masks_at = at + target[KEY].nbytes
                return g, target
        g, target, _ = run_steps(self.program, work.draws, k, size,
                                 self.source.target(row, size))
        return g, target

    def _output(self, size: tuple[int, int], work: BatchWork, k: int):
        """(what the sample's image of ``size`` will be, the C core's view of it): its
        row of the slot (its shape stands for it), or a tensor of its own."""
        h, w = size
        if self.program.output == "pil":
            pixels = np.empty((1, h, w, 3), np.uint8)
            return pixels, pixels
        shape = (3, h, w)
        at = self._place(work, 3 * h * w)
        if at is not None:
            return (at, shape), self._arena(work)[at:at + 3 * h * w].reshape(1, *shape)
        # beside the ring it travels as it is; else the user's code makes the batch of it
        t = _empty(shape, self.dtype, work, "image") if self.ring else \
            torch.empty(shape, dtype=self.dtype)
        return t, t.numpy()[None]

    def _place(self, work: BatchWork, elems: int) -> int | None:
        """Where the next image of ``elems`` goes in the slot's images field (the
        batch's rows as one arena, each image after the last at a multiple of 16
        elements: 64 bytes of float32, 16 of uint8), or None when it does not fit
        (NOTE [ Detection batches in the ring ])."""
        if not self.ring:
            return None
        at = -(-work.arena // 16) * 16
        arena = self._arena(work)
        if at + elems > arena.size:
            return None
        self.reserve(work, arena[at:at + elems], "images")
        work.arena = at + elems
        return at

    @staticmethod
    def _arena(work: BatchWork) -> np.ndarray:
        """The slot's images field, flat: its float32 elements, or its bytes where
        it holds levels (NOTE [ Levels made float where they are pinned ])."""
        arena = work.arrays[0].reshape(-1)
        return arena.view(np.uint8) if work.levels else arena

    def redo(self, work: BatchWork, k: int) -> None:
        """Sample ``k`` as the dataset reads it, through the reference's own steps."""
        row = int(work.rows[k])
        image = self.source.load_image(row)
        size = (image.height, image.width)
        _, work.targets[k], out = run_steps(self.program, work.draws, k, size,
                                            self.source.target(row, size, image), image)
        if self.ring:  # in the arena, or beside it (float32, so not among levels)
            out = out.as_subclass(torch.Tensor)
            at = None if work.levels else self._place(work, out.numel())
            if at is not None:
                work.arrays[0].reshape(-1)[at:at + out.numel()] = out.reshape(-1).numpy()
                out = (at, tuple(out.shape))
        work.images[k] = out

    def fields(self, work: BatchWork):
        return ()  # the samples are Python objects, kept by work.keep

    def finish(self, work: BatchWork, count: int) -> None:
        if self.ring:
            self._finish_in_ring(work)
            return
        samples, written = [], 0
        arena = work.arrays[0].reshape(-1)

        def reserve(view):
            self.reserve(work, view, "collated batch")

        with generators_kept(work.in_main):
            for k in np.flatnonzero(work.keep):
                try:
                    samples.append(self._sample(work, int(k)))
                except Exception:
                    work.keep[k] = False
                    self._python_path_failed(work.report, int(work.indices[k]),
                                             work.paths[k], "your transforms", work.where)
            work.report.count = len(samples)
            if samples:
                seed_generators(seeds(work.seed, [work.batch_no], COLLATE_STREAM)[0])
                work.report.payload, written = self._collated(work, samples, arena, reserve)
        if work.report.payload is not None and self.batch_row > 1 and not work.in_main:
            # NOTE [ A collate_fn's batch in the slot ] (slot_batches.py)
            packed = pack_batch(work.report.payload, arena, reserve, written)
            if packed is not None:
                work.report.payload, work.report.extras = None, packed
                work.report.count = slot_rows(packed, self.batch_row)
            # a batch written in the slot but sent as torch sends it keeps its pages
            # until it is sent
            self._sizes.append(packed.used if packed else written)
            self.hand_back(work, arena, max(self._sizes), extra=0.0)

    def _collated(self, work: BatchWork, samples: list, arena: np.ndarray,
                  reserve) -> tuple[object, int]:
        """The collate_fn's batch, and the slot's bytes it has written: made straight
        in ``arena`` where the collate_fn is a kind that can be (NOTE [ A collate_fn's
        batch made in the slot ] in slot_collates.py), else the collate_fn's own (0)."""
        if self.in_slot is not None and not work.in_main:
            made = self.in_slot.collate(samples, arena, reserve)
            if made is not None:
                return made
        return self.collate_fn(samples), 0

    def _finish_in_ring(self, work: BatchWork) -> None:
        """Each kept sample's row, image's place in the arena and shape, image apart (or
        None) and packed target; the rows the batch uses: its samples' and the arena's."""
        samples = []
        for k in np.flatnonzero(work.keep):
            k = int(k)
            out = work.images[k]
            apart = out if isinstance(out, torch.Tensor) else None
            at, shape = (0, tuple(out.shape)) if apart is not None else out
            samples.append((k, at, shape, apart, pack(work.targets[k])))
        work.report.extras = RingBatch(samples, work.levels)
        # NOTE [ A slot holds what its batch takes ]: the pages past what it wrote
        arena = self._arena(work)
        self.hand_back(work, arena, work.arena * arena.itemsize)
        if self.masks:
            self.hand_back(work, work.arrays[1].reshape(-1), work.masks_at)
        arena_rows = -(-work.arena * arena.itemsize //
                       (self.row_elems * self.dtype.itemsize))
        mask_rows = -(-work.masks_at // self.mask_row) if self.masks else 0
        work.report.count = max(samples[-1][0] + 1, arena_rows, mask_rows) if samples else 0

    def _sample(self, work: BatchWork, k: int):
        p = self.program
        target = work.targets[k]
        image = self._image(work.images[k])
        if p.yours:
            seed_generators(seeds(work.seed, [int(work.indices[k])], PIL_STREAM)[0])
            for t in p.yours:
                image, target = t(image, target)
        return image, target

    def _image(self, out):
        """The native output as the user's steps left it: a PIL image, a
        tv_tensors.Image or a plain tensor (already so on the Python path)."""
        if isinstance(out, np.ndarray):
            return Image.fromarray(out[0], "RGB")
        if isinstance(out, Image.Image) or type(out) is not torch.Tensor:
            return out
        return tv_tensors.Image(out) if self.program.image_type == "image" else out


__all__ = ["DetectionBatchDecoder", "collate_in_slot", "image_dtype"]
