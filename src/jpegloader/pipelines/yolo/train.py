"""Decoding a YOLO training batch: the batch's photos decoded by the C core as
``load_image`` reads them (OpenCV's decode, the long side resized to imgsz with
INTER_LINEAR) into the store Mosaic's partners are drawn from (partners.py) and left
cached in the dataset with the photos before them; then each sample through the user's
own transforms, seeded per sample, the pixels of three steps in C (NOTE [ YOLO
training samples ] in augment.py); the batch made by the dataset's own collate_fn."""
from __future__ import annotations

import contextlib
from copy import deepcopy

import numpy as np

import torch

from ...decoders import Output, decode_each, skipped_plans
from ...decoders import status as st
from ...decoders.plans import packed_fill
from ..contract import HEADER_WIDTH, BatchReport, BatchWork, DecodeOptions, Workspace
from ..random_stream import SAMPLE_STREAM, generators_kept, seed_generators, seeds
from ._opencv import planes_to_bgr
from ..opencv_reading import read_as_opencv
from .batches import YoloBatches, YoloWork, npy_instead
from .draw import letterbox_plans, rect_hw, resized_hw
from .partners import ABSENT, OUTSIZED, READY, PhotoStore, held, state_of
from .in_place import replaced_for_batch
from .recognise import YoloTrainSource, flat_steps, imgsz, keeps_own
from .steps import planned_steps, run_steps

_NO_PAD = {"top": 0, "bottom": 0, "left": 0, "right": 0}


def sample_seeds(seed: int, batch_no: int, n: int) -> list[int]:
    """The seeds of the n samples of batch ``batch_no`` of an epoch seeded ``seed``."""
    batch_seed = seeds(seed, [batch_no], SAMPLE_STREAM)[0]
    return seeds(batch_seed, np.arange(n), SAMPLE_STREAM)


@contextlib.contextmanager
def cached_batch(dataset, pool, images: dict):
    """The batch's images and its partners' (index -> (image, original hw, resized
    hw)) in the dataset's cache, its ``buffer`` ``pool`` (Mosaic's partners), as
    ``load_image`` leaves them after reading those photos; afterwards nothing cached
    that was not before."""
    ram = dataset.cache == "ram"
    for i, image in images.items():
        dataset.ims[i], dataset.im_hw0[i], dataset.im_hw[i] = image
    dataset.buffer = [int(i) for i in pool]
    try:
        yield
    finally:
        touched = set(images) | set(dataset.buffer)
        dataset.buffer = []
        if not ram:
            for i in touched:
                dataset.ims[i] = dataset.im_hw0[i] = dataset.im_hw[i] = None


def _reads_buffer(dataset) -> bool:
    """Whether a step draws Mosaic's partners from ``dataset.buffer``: an Ultralytics
    Mosaic with a chance to run and its buffer on (off under cache="ram")."""
    return any(getattr(step, "buffer_enabled", False) and getattr(step, "p", 1.0) > 0
               and hasattr(step, "get_indexes") for step in flat_steps(dataset.transforms))


def _largest_photo(dataset) -> int:
    """The bytes of the largest photo ``load_image`` gives, from the sizes the
    labels hold (imgsz square where they hold none)."""
    size = imgsz(dataset)
    shapes = [label.get("shape") for label in getattr(dataset, "labels", ())]
    if not shapes or any(s is None for s in shapes):
        return size * size * 3
    return 3 * max(h * w for h, w in (resized_hw(dataset, int(a), int(b)) for a, b in shapes))


# NOTE [ A photo's labels read once a batch ]
# Ultralytics' ``get_image_and_label`` deep-copies a photo's cached labels and, for
# segments, resamples every polygon to 1000 points (``update_labels_info``): 0.2 ms
# a photo, done again each time Mosaic takes it as a partner (four times a sample
# on average).  Nothing in it draws at random and the batch's images are cached,
# so for a dataset with Ultralytics' own ``update_labels_info`` each photo's dict is
# computed once while it is in Mosaic's pool (a worker keeps them from batch to
# batch) and handed out again as a deep copy (the image the cached array, as
# ``load_image`` returns it): the same dict, for a fifth of the time.  Left alone
# where it cannot pay: detection's labels cost no more to compute than to copy, and
# with no mixing step (close_mosaic) none is read twice.
def _labels_read_once(dataset, steps) -> bool:
    partners = any(hasattr(step, "get_indexes") and getattr(step, "p", 1.0) > 0
                   for step, _ in steps)
    return partners and keeps_own(dataset, "update_labels_info") \
        and bool(getattr(dataset, "use_segments", False) or getattr(dataset, "use_obb", False))


@contextlib.contextmanager
def labels_once(dataset, steps, kept: dict, pool):
    """Within the batch, ``dataset.get_image_and_label`` computes each photo's dict
    once, ``kept`` (index -> dict) from earlier batches for the photos still in the
    ``pool`` (NOTE [ A photo's labels read once a batch ]); ``steps`` as planned_steps
    gives them."""
    if not _labels_read_once(dataset, steps) or "get_image_and_label" in vars(dataset):
        yield
        return
    for index in set(kept) - set(pool):
        del kept[index]
    read = dataset.get_image_and_label

    def get_image_and_label(index):
        if index in kept:
            label = deepcopy(kept[index])
            label["img"] = dataset.load_image(index)[0]
            return label
        label = read(index)
        kept[index] = deepcopy({k: None if k == "img" else v for k, v in label.items()})
        return label
    dataset.get_image_and_label = get_image_and_label
    try:
        yield
    finally:
        del dataset.get_image_and_label


class YoloTrainDecoder(YoloBatches):
    runs_user_code = True
    workspace_fills_part = True  # NOTE [ A stored photo holds its own pages ] (partners.py)

    def __init__(self, source: YoloTrainSource, options: DecodeOptions):
        super().__init__(source, options)
        self.fill = packed_fill([0, 0, 0])
        dataset = source.dataset
        # NOTE [ Mosaic's partners across workers ] (partners.py)
        self.window = int(getattr(dataset, "max_buffer_length", 0) or 0) \
            if _reads_buffer(dataset) else 0
        self.capacity = _largest_photo(dataset) if self.window else 0
        self.store: PhotoStore | None = None
        self._labels: dict = {}  # NOTE [ A photo's labels read once a batch ]

    def workspace_size(self, in_flight: int, batch_size: int) -> tuple[int, int] | None:
        if not self.window:
            return None
        slots = self.window + in_flight * batch_size
        return slots * self.capacity, slots

    def attach(self, workspace: Workspace) -> None:
        self.store = PhotoStore(workspace, self.capacity, sparse=self.sparse_workspace)

    def _own_store(self, n: int) -> None:
        """num_workers=0: a store in this process, for the window and the batch."""
        def make(slots: int) -> Workspace:
            return Workspace(torch.empty(slots * self.capacity, dtype=torch.uint8),
                             torch.zeros((slots, HEADER_WIDTH), dtype=torch.int64),
                             contextlib.nullcontext())
        slots = self.window + n
        if self.store is None:
            self.store = PhotoStore(make(slots), self.capacity, shared=False)
        elif self.store.slots < slots:
            self.store = self.store.grown(slots, make)

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    def begin(self, work: BatchWork) -> None:
        super().begin(work)
        n = len(work.indices)
        dataset = self.source.dataset
        # NOTE [ YOLO batches ]: each sample warped to imgsz square or its rect batch's shape
        self.shape_batch(work, {rect_hw(dataset, int(i)) for i in work.indices}
                         if dataset.rect else {self.source.largest})
        work.out_hw = [None] * n
        work.labels = [None] * n
        work.images = {}  # index -> (BGR image, original hw, resized hw), decoded here
        if work.earlier is not None and self.window and \
                (self.store is None or not self.store.shared):
            self._own_store(n)  # num_workers=0 (with workers, the engine's is attached)

    def _store_for(self, work: BatchWork) -> PhotoStore | None:
        return self.store if work.earlier is not None and self.window else None

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        dataset = self.source.dataset
        rows = range(part.start, part.stop)
        status = np.full(len(rows), st.OK, np.int32)
        messages = [""] * len(rows)
        if dataset.cache == "ram":  # the dataset holds every image already
            return status, messages
        store = self._store_for(work)
        plans, outputs = skipped_plans(len(rows)), [Output.skipped() for _ in rows]
        planned = {}  # index -> (j, original hw, resized hw, where its BGR rows go)
        for j, k in enumerate(rows):
            index = int(work.indices[k])
            ori = (int(heights[j]), int(widths[j]))
            if index in work.images or index in planned or \
                    not read_as_opencv(encoded, j, bool(known[j])) or \
                    npy_instead(dataset, index, ori):
                continue  # the dataset's own load_image reads it (targets)
            rh, rw = resized_hw(dataset, *ori)
            bgr = store.out(work.earlier.own_first + k, rh, rw, index, work.where) \
                if store is not None else None
            if bgr is None:
                bgr = np.empty((rh, rw, 3), np.uint8)
            if (rh, rw) == ori:  # decoded straight into OpenCV's BGR rows
                outputs[j] = Output(bgr[None], hwc=True, bgr=True)
            else:  # resized into RGB planes, then OpenCV's BGR rows
                outputs[j] = Output(np.empty((1, 3, rh, rw), np.uint8))
            planned[index] = (j, ori, (rh, rw), bgr)
        if planned:  # each photo whole at its own size, or resized as load_image does
            plans[[j for j, *_ in planned.values()]] = letterbox_plans(
                [(ori, hw, {"new_unpad": hw[::-1], **_NO_PAD}) for _, ori, hw, _ in
                 planned.values()], self.fill)
        decoded, _ = decode_each(encoded, plans, outputs, self.options.max_pixels, c_seconds,
                                 work.threads)
        for index, (j, ori, (rh, rw), bgr) in planned.items():
            if decoded[j] == st.OK:
                if not outputs[j].bgr:
                    planes_to_bgr(outputs[j].out, rh, rw, bgr)
                work.images[index] = (bgr, ori, (rh, rw))
        return status, messages

    def targets(self, work: BatchWork) -> None:
        dataset = self.source.dataset
        indices = [int(i) for i in work.indices]
        store = self._store_for(work)
        published = False
        try:
            for k, index in enumerate(indices):  # what the C core did not read
                if dataset.cache != "ram" and index not in work.images:
                    work.report.python_path += 1
                    try:
                        work.images[index] = dataset.load_image(index)
                    except Exception:
                        work.keep[k] = False
                        self._python_path_failed(work.report, index, work.paths[k],
                                                 "needs OpenCV's turn, colour conversion or "
                                                 "reading", work.where)
            readable = [i for k, i in enumerate(indices) if work.keep[k]]  # Mosaic's partners
            pool = readable
            if store is not None:
                self._publish(work, store, indices)
                published = True
                pool = self._earlier_photos(work, store) + readable
        finally:
            if store is not None and not published:  # its readers are not left waiting
                first = work.earlier.own_first
                store.publish(work.seed, [(first + k, i, ABSENT, (0, 0), (0, 0))
                                          for k, i in enumerate(indices)])
        steps = planned_steps(dataset.transforms)
        sample_seed = sample_seeds(work.seed, work.batch_no, len(indices))
        with generators_kept(work.in_main), \
                cached_batch(dataset, pool, work.images), \
                labels_once(dataset, steps, self._labels, pool), \
                replaced_for_batch(steps):
            for k, index in enumerate(indices):
                if work.keep[k]:
                    self._one_sample(work, k, index, steps, sample_seed[k])

    def _publish(self, work: BatchWork, store: PhotoStore, indices: list[int]) -> None:
        """The batch's photos in their slots, published for the batches after it."""
        first, entries = work.earlier.own_first, []
        for k, index in enumerate(indices):
            image = work.images.get(index) if work.keep[k] else None
            if image is None:
                entries.append((first + k, index, ABSENT, (0, 0), (0, 0)))
                continue
            bgr, ori, hw = image
            if not store.holds(first + k, bgr):  # not decoded into its slot
                plain = bgr.ndim == 3 and bgr.shape[2] == 3 and bgr.dtype == np.uint8
                slot = store.out(first + k, *bgr.shape[:2], index, work.where) \
                    if plain else None
                if slot is None:  # not a slot's photo: its readers read it themselves
                    entries.append((first + k, index, OUTSIZED, ori, hw))
                    continue
                slot[...] = bgr
            entries.append((first + k, index, READY, ori, hw))
        store.publish(work.seed, entries)

    def _earlier_photos(self, work: BatchWork, store: PhotoStore) -> list[int]:
        """The readable photos before the batch (NOTE [ Mosaic's partners across
        workers ]), oldest first, each in ``work.images``: read in their slots once
        published, or decoded here where this run never decoded them."""
        earlier = work.earlier
        positions = np.arange(earlier.first, earlier.own_first, dtype=np.int64)
        unwritten = [i for p, i in zip(positions, earlier.indices) if p < earlier.written_from]
        if unwritten:
            self._decode_here(work, unwritten)
        written = positions[positions >= earlier.written_from]
        rows = store.wait(work.seed, written) if len(written) else []
        pool = [i for i in unwritten if i in work.images]
        for p, row in zip(written, rows):
            index, ori, hw = held(row)
            if state_of(row) == READY:
                work.images.setdefault(index, (store.photo(int(p), *hw), ori, hw))
            if state_of(row) in (READY, OUTSIZED):
                pool.append(index)
        return pool

    def _decode_here(self, work: BatchWork, indices: list[int]) -> None:
        """Photos of a resumed epoch's skipped batches into ``work.images``, read as
        their batches' workers read them (the C core, else load_image); unreadable
        ones are left out, as those workers leave them out of the pool."""
        rows = np.asarray(indices, dtype=np.int64)
        sub = YoloWork(rows, work.seed, (), work.where, work.batch_no, work.threads,
                       BatchReport(), rows=rows, paths=self.files.paths(rows),
                       keep=np.ones(len(rows), dtype=bool), images={})
        self.read_and_decode(sub)
        dataset = self.source.dataset
        for index in indices:
            if index not in sub.images:
                try:
                    sub.images[index] = dataset.load_image(index)
                except Exception:
                    continue
        for index, image in sub.images.items():
            work.images.setdefault(index, image)

    def _one_sample(self, work: BatchWork, k: int, index: int, steps, seed: int) -> None:
        dataset = self.source.dataset
        shape = work.shape or rect_hw(dataset, index)
        out = self.image_out(work, k, *shape)[0]
        seed_generators(seed)
        try:
            label = run_steps(steps, dataset.get_image_and_label(index), out)
            image = label.pop("img").numpy()
            h, w = image.shape[1:]
            if (h, w) != shape:
                raise RuntimeError(f"the transforms gave a {h} x {w} image, not the "
                                   f"{shape} of its training batch")
        except Exception:
            work.keep[k] = False
            self._python_path_failed(work.report, index, work.paths[k],
                                     "the sample's transforms failed", work.where)
            return
        if not np.shares_memory(image, out):  # Format wrote it there (augment.py) or not
            out[...] = image
        work.out_hw[k], work.labels[k] = (h, w), label
