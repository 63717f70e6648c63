"""jpegloader.DataLoader: torch's DataLoader, accelerated when it can be."""
from __future__ import annotations

import inspect
import logging
import warnings

import torch
import torch.multiprocessing
import torch.utils.data

from ..decoders import DEFAULT_MAX_PIXELS
from .annotation_table import AnnotationTable
from .batch_decoder import DECODE_CHOICES, ON_ERROR_CHOICES, ImageFolderBatchDecoder
from .coco_decoder import CocoBatchDecoder
from .delivery import accelerator_available, map_tensors
from .eligibility import IMAGEFOLDER, Eligibility, evaluate, fallback_message
from .engine import Engine
from .file_table import FileTable
from .iterator import AcceleratedIterator
from .ring import MIB, BatchRing, fit_prefetch, layout_bytes, shared_memory_free

_LG = logging.getLogger("jpegloader")
_TORCH_HAS_IN_ORDER = "in_order" in inspect.signature(torch.utils.data.DataLoader.__init__).parameters


class DataLoader(torch.utils.data.DataLoader):
    """A drop-in ``torch.utils.data.DataLoader``.

    Takes torch's arguments, in torch's order, with torch's defaults and
    errors.  When ``eligibility.accelerated`` (an ImageFolder with the
    supported transforms, or a COCODetection with the SSD-300 transform),
    batches are decoded by the libjpeg-turbo pipeline;
    otherwise this is exactly torch's loader, and one WARNING on the
    ``jpegloader`` logger says why.

    Keyword-only extras:
        device: copy each batch to this device ahead of use, on a side stream.
        on_error: "raise" (default) raises for an unreadable sample, naming the
            file, the index and the worker; "skip" drops it, logs it and counts
            it in ``skipped_samples``.
        decode: "auto" allows DCT-domain downscaling of large images (a small,
            measured change in pixels); "exact" disables it.
        max_pixels: images whose header claims more pixels are handed to PIL,
            which refuses decompression bombs.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True, device=None, on_error="raise", decode="auto",
                 max_pixels=DEFAULT_MAX_PIXELS):
        extra = {"in_order": in_order} if _TORCH_HAS_IN_ORDER else {}
        super().__init__(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                         collate_fn, pin_memory, drop_last, timeout, worker_init_fn,
                         multiprocessing_context, generator, prefetch_factor=prefetch_factor,
                         persistent_workers=persistent_workers,
                         pin_memory_device=pin_memory_device, **extra)
        if on_error not in ON_ERROR_CHOICES:
            raise ValueError(f"on_error should be one of {ON_ERROR_CHOICES}, got {on_error!r}")
        if decode not in DECODE_CHOICES:
            raise ValueError(f"decode should be one of {DECODE_CHOICES}, got {decode!r}")
        self.device = torch.device(device) if device is not None else None
        self.on_error = on_error
        self.decode = decode
        self.skipped_samples: list[tuple[int, str, str]] = []
        self.python_path_samples = 0
        #: Seconds spent per stage since the loader was built (see NOTE [ Stage times ]).
        self.stage_seconds: dict[str, float] = {}
        self._epochs = 0
        self._engine: Engine | None = None
        self._rings: list[BatchRing] | None = None
        self._ring_prefetch = 0  # set with the rings, to what /dev/shm holds
        self._pin_note_given = False
        self.eligibility: Eligibility = evaluate(
            dataset, batch_size=batch_size, batch_sampler=batch_sampler, collate_fn=collate_fn)
        if self.eligibility.pipeline == IMAGEFOLDER:
            self._batch_decoder = ImageFolderBatchDecoder(
                FileTable.from_samples(dataset.samples), self.eligibility.lowered,
                dataset.loader, decode=decode, on_error=on_error, max_pixels=max_pixels)
        elif self.eligibility.accelerated:
            self._batch_decoder = CocoBatchDecoder(
                AnnotationTable.from_dataset(dataset), self.eligibility.lowered,
                decode=decode, on_error=on_error, max_pixels=max_pixels)
        else:
            _LG.warning(fallback_message(self.eligibility))

    # -- iteration ---------------------------------------------------------
    def __iter__(self):
        if not self.eligibility.accelerated:
            return self._to_device(super().__iter__())
        if self.pin_memory and not accelerator_available() and not self._pin_note_given:
            self._pin_note_given = True
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        if not self.persistent_workers and self._engine is not None:
            if self._engine.idle:
                self._engine.stop()  # reaped in the background
            else:  # abandoned mid-epoch: wait, so no worker still writes a slot
                self._engine.shutdown()
            self._engine = None
        return AcceleratedIterator(self)

    def _engine_for_epoch(self, base_seed: int) -> Engine | None:
        """The engine for a new epoch; worker seeds are base_seed + worker id, as in torch."""
        if self.num_workers == 0:
            return None
        if self._engine is not None and self._engine.alive and self.persistent_workers:
            return self._engine
        context = self.multiprocessing_context or torch.multiprocessing
        if self._rings is None:
            self._ring_prefetch = self._fit_ring_to_shared_memory()
            self._rings = [BatchRing(BatchRing.slots_per_worker(self._ring_prefetch),
                                     self._batch_decoder.layout, self.batch_size or 1)
                           for _ in range(self.num_workers)]
        self._engine = Engine(self._batch_decoder, self._rings, num_workers=self.num_workers,
                              prefetch_factor=self._ring_prefetch, context=context,
                              base_seed=base_seed, worker_init_fn=self.worker_init_fn,
                              dataset=self.dataset)
        return self._engine

    def _fit_ring_to_shared_memory(self) -> int:
        """The prefetch factor the ring can have in the free /dev/shm; warns when
        it is below the one asked for (see ring.py's NOTE [ When /dev/shm is small ])."""
        asked = self.prefetch_factor or 2
        slot_bytes = layout_bytes(self._batch_decoder.layout, self.batch_size or 1)
        free = shared_memory_free()
        fitted = fit_prefetch(asked, self.num_workers, slot_bytes, free)
        if fitted < asked:
            _LG.warning(
                "/dev/shm has %.0f MiB free, too little for prefetch_factor=%d (a ring of "
                "%d x %d slots of %.1f MiB); running with prefetch_factor=%d. Give the machine "
                "more shared memory (Docker: --shm-size=2g) to prefetch fully.",
                free / MIB, asked, self.num_workers, BatchRing.slots_per_worker(asked),
                slot_bytes / MIB, fitted)
        return fitted

    def _next_epoch(self) -> int:
        self._epochs += 1
        return self._epochs - 1

    def _note_report(self, report) -> None:
        self.skipped_samples.extend(report.skipped)
        self.python_path_samples += report.python_path
        self._note_seconds(report.seconds)

    def _note_seconds(self, seconds: dict[str, float]) -> None:
        """NOTE [ Stage times ]
        Worker stages (read, decode, augment, python_path) are summed over all
        workers, so with several workers they can exceed the wall time; main
        process stages are: wait (the consumer blocked for the next batch),
        assembly (handing the batch over) and pin_copy (copies into pinned
        memory and to the device)."""
        for stage, t in seconds.items():
            self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + t

    def _to_device(self, it):
        if self.device is None:
            return it
        return (map_tensors(b, lambda t: t.to(self.device, non_blocking=True)) for b in it)

    def _shutdown(self) -> None:
        if self._engine is not None:
            self._engine.shutdown()
            self._engine = None

    def close(self) -> None:
        """Stops the worker processes now (they also stop when the loader is freed)."""
        self._shutdown()

    def __del__(self):
        if getattr(self, "_engine", None) is not None:
            self._shutdown()

