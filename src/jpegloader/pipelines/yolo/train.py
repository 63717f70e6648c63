"""Decoding a YOLO training batch: the batch's photos decoded by the C core as
``load_image`` reads them (OpenCV's decode, the long side resized to imgsz with
INTER_LINEAR) and left cached in the dataset; then each sample through the user's
own transforms, seeded per sample, the pixels of three steps in C (NOTE [ YOLO
training samples ] in augment.py); the batch made by the dataset's own collate_fn."""
from __future__ import annotations

import contextlib
from copy import deepcopy

import numpy as np

from ...decoders import Output, decode_each, skipped_plans
from ...decoders import status as st
from ...decoders.plans import packed_fill
from ..contract import BatchWork, DecodeOptions
from ..random_stream import SAMPLE_STREAM, generators_kept, seed_generators, seeds
from ._opencv import planes_to_bgr
from .batches import YoloBatches, npy_instead, read_as_opencv
from .draw import letterbox_plan, rect_hw, resized_hw
from .recognise import YoloTrainSource, keeps_own
from .steps import planned_steps, run_steps

_NO_PAD = {"top": 0, "bottom": 0, "left": 0, "right": 0}


def sample_seeds(seed: int, batch_no: int, n: int) -> list[int]:
    """The seeds of the n samples of batch ``batch_no`` of an epoch seeded ``seed``."""
    batch_seed = seeds(seed, [batch_no], SAMPLE_STREAM)[0]
    return seeds(batch_seed, np.arange(n), SAMPLE_STREAM)


@contextlib.contextmanager
def cached_batch(dataset, indices, images: dict):
    """The batch's images (index -> (image, original hw, resized hw)) in the
    dataset's cache, its ``buffer`` the batch's indices, as ``load_image`` leaves
    them after reading the batch; afterwards nothing cached that was not before."""
    ram = dataset.cache == "ram"
    for i, image in images.items():
        dataset.ims[i], dataset.im_hw0[i], dataset.im_hw[i] = image
    dataset.buffer = [int(i) for i in indices]
    try:
        yield
    finally:
        touched = set(images) | set(dataset.buffer)
        dataset.buffer = []
        if not ram:
            for i in touched:
                dataset.ims[i] = dataset.im_hw0[i] = dataset.im_hw[i] = None


# NOTE [ A photo's labels read once a batch ]
# Ultralytics' ``get_image_and_label`` deep-copies a photo's cached labels and, for
# segments, resamples every polygon to 1000 points (``update_labels_info``): 0.2 ms
# a photo, done again each time Mosaic takes it as a partner (four times a sample
# on average).  Nothing in it draws at random and the batch's images are cached,
# so for a dataset with Ultralytics' own ``update_labels_info`` each photo's dict
# is computed once a batch and handed out again as a deep copy (the image itself
# the cached array, as ``load_image`` returns it): the same dict, for a fifth of
# the time.  Left alone where it cannot pay: detection's labels cost no more to
# compute than to copy, and with no mixing step (close_mosaic) none is read twice.
def _labels_read_once(dataset, steps) -> bool:
    partners = any(hasattr(step, "get_indexes") and getattr(step, "p", 1.0) > 0
                   for step, _ in steps)
    return partners and keeps_own(dataset, "update_labels_info") \
        and bool(getattr(dataset, "use_segments", False) or getattr(dataset, "use_obb", False))


@contextlib.contextmanager
def labels_once(dataset, steps):
    """Within the batch, ``dataset.get_image_and_label`` computes each photo's dict
    once (NOTE [ A photo's labels read once a batch ]); ``steps`` as planned_steps
    gives them."""
    if not _labels_read_once(dataset, steps) or "get_image_and_label" in vars(dataset):
        yield
        return
    read, kept = dataset.get_image_and_label, {}

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

    def __init__(self, source: YoloTrainSource, options: DecodeOptions):
        super().__init__(source, options)
        self.fill = packed_fill([0, 0, 0])

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

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        dataset = self.source.dataset
        rows = range(part.start, part.stop)
        status = np.full(len(rows), st.OK, np.int32)
        messages = [""] * len(rows)
        if dataset.cache == "ram":  # the dataset holds every image already
            return status, messages
        plans, outputs = skipped_plans(len(rows)), [Output.skipped() for _ in rows]
        planned = {}  # index -> (j, original hw, resized hw)
        for j, k in enumerate(rows):
            index = int(work.indices[k])
            ori = (int(heights[j]), int(widths[j]))
            if index in work.images or index in planned or \
                    not read_as_opencv(encoded, j, bool(known[j])) or \
                    npy_instead(dataset, index, ori):
                continue  # the dataset's own load_image reads it (targets)
            rh, rw = resized_hw(dataset, *ori)
            plans[j] = letterbox_plan(ori, (rh, rw), {"new_unpad": (rw, rh), **_NO_PAD},
                                      self.fill)[0]
            if (rh, rw) == ori:  # decoded straight into OpenCV's BGR rows
                outputs[j] = Output(np.empty((1, rh, rw, 3), np.uint8), hwc=True, bgr=True)
            else:  # resized into RGB planes, then OpenCV's BGR rows
                outputs[j] = Output(np.empty((1, 3, rh, rw), np.uint8))
            planned[index] = (j, ori, (rh, rw))
        decoded, _ = decode_each(encoded, plans, outputs, self.options.max_pixels, c_seconds,
                                 work.threads)
        for index, (j, ori, (rh, rw)) in planned.items():
            if decoded[j] == st.OK:
                bgr = outputs[j].out[0]
                if not outputs[j].bgr:
                    bgr = np.empty((rh, rw, 3), np.uint8)
                    planes_to_bgr(outputs[j].out, rh, rw, bgr)
                work.images[index] = (bgr, ori, (rh, rw))
        return status, messages

    def targets(self, work: BatchWork) -> None:
        dataset = self.source.dataset
        indices = [int(i) for i in work.indices]
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
        steps = planned_steps(dataset.transforms)
        sample_seed = sample_seeds(work.seed, work.batch_no, len(indices))
        readable = [i for k, i in enumerate(indices) if work.keep[k]]  # Mosaic's partners
        with generators_kept(work.in_main), cached_batch(dataset, readable, work.images), \
                labels_once(dataset, steps):
            for k, index in enumerate(indices):
                if work.keep[k]:
                    self._one_sample(work, k, index, steps, sample_seed[k])

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
