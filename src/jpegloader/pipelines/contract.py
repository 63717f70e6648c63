"""The one contract every accelerated pipeline keeps, and what they share.

NOTE [ A pipeline's contract ]
A pipeline is one package under ``pipelines/`` that answers, for a dataset:
recognise (``Pipeline.claims``: is this dataset of my kind?); lower
(``Pipeline.lower`` -> ``Lowering``: every rule, pass or fail, and when all
pass the ``program`` the C core runs, with a ``key`` that changes whenever
anything it was built from changes; the loader compares keys at each epoch
start); and decode (``Pipeline.decoder`` -> a ``BatchDecoder`` that draws a
batch's random parameters, decodes it into the slot's arrays and assembles
default_collate's structure).  The engine (dataloader/) knows nothing beyond
this; the C core (decoders/) knows nothing of datasets.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch._utils import ExceptionWrapper

from .. import _shared_pages
from .._shared_pages import SharedMemoryError
from ..decoders import DEFAULT_MAX_PIXELS
from ..decoders import status as st
from ..sources.file_table import FileTable, forget_changed, image_sizes
from ..sources.read_files import read_in_groups

_LG = logging.getLogger("jpegloader")

ON_ERROR_CHOICES = ("raise", "skip")
DECODE_CHOICES = ("auto", "exact")
#: Where a worker's time goes, per batch (seconds, in BatchReport.seconds); "yours" is
#: the user's own transforms and collate_fn (NOTE [ Hybrid pipelines ]).
WORKER_STAGES = ("read", "decode", "augment", "python_path", "yours")
#: A batch layout: per field, the shape of one sample's entry and its dtype.
Layout = tuple[tuple[tuple[int, ...], torch.dtype], ...]


@dataclass(frozen=True)
class Where:
    """The process decoding a batch: ``text`` names it in errors (``str()`` gives it),
    ``in_main`` says whether it is the loop's own (num_workers=0)."""

    text: str
    in_main: bool = False

    def __str__(self) -> str:
        return self.text


#: ``where`` for a batch decoded by the loop's own process (num_workers=0)
IN_MAIN = Where("in the main process", in_main=True)


@dataclass(frozen=True)
class EarlierSamples:
    """The samples before a batch that its decoder reads (``BatchDecoder.window``):
    ``indices`` at the epoch's positions ``first``, ``first + 1``, ...; the batch's own
    follow them.  Those before ``written_from`` were not decoded in this run (a resumed
    epoch's skipped batches): whoever needs one decodes it."""

    first: int
    indices: tuple[int, ...]
    written_from: int

    @property
    def own_first(self) -> int:
        """The position of the batch's first sample."""
        return self.first + len(self.indices)


#: int64 columns of a Workspace's header rows
HEADER_WIDTH = 8


@dataclass(frozen=True)
class Workspace:
    """Shared memory the workers exchange decoded data through (``BatchDecoder.
    workspace_size``): ``data`` bytes, ``header`` rows of int64, and the lock that
    orders what they write and read (multiprocessing's, or a no-op lock in one process)."""

    data: torch.Tensor
    header: torch.Tensor
    lock: object


@dataclass(frozen=True)
class Check:
    """One rule's outcome.  On failure ``message`` names the offending value and
    ``hint`` says what to change."""

    rule: str
    passed: bool
    message: str
    hint: str = ""


def object_name(obj) -> str:
    """How a user's object is named in a verdict: a function (or a partial of one) by
    its own name, anything else by its class's."""
    fn = getattr(obj, "func", obj)  # functools.partial
    if callable(fn) and type(fn).__name__ in ("function", "builtin_function_or_method",
                                              "method"):
        return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "function")
    return type(obj).__name__


def check(rule: str, ok: bool, good: str, bad: str, hint: str) -> Check:
    return Check(rule, ok, good if ok else bad, "" if ok else hint)


@dataclass(frozen=True)
class Lowering:
    """A pipeline's verdict on a dataset: its rules, and what the C core runs."""

    pipeline: str
    checks: tuple[Check, ...]
    program: object = field(default=None, compare=False)  # None unless every check passed
    source: object = field(default=None, compare=False)   # what the decoder reads files from
    key: object = None  # equal keys: the same program on the same samples
    #: What runs where: {"native": [...], "yours": [...], "collate": str | None}
    #: (NOTE [ Hybrid pipelines ]); empty unless every check passed.
    split: dict = field(default_factory=dict, compare=False)
    #: equal while every index reads the same sample (its bytes' place, its target):
    #: NOTE [ Persistent workers and changed samples ] in dataloader/loader.py
    samples: object = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.program is not None and all(c.passed for c in self.checks)


@dataclass(frozen=True)
class DecodeOptions:
    """The loader's options every pipeline's decoder honours."""

    dct_scaling: bool = True      # decode at a smaller DCT scale where a resize allows
    on_error: str = "raise"       # "skip": drop samples that fail in C and in Python
    max_pixels: int = DEFAULT_MAX_PIXELS

    @classmethod
    def from_loader(cls, decode: str = "auto", on_error: str = "raise",
                    max_pixels: int = DEFAULT_MAX_PIXELS) -> DecodeOptions:
        """From the DataLoader's options: ``decode="exact"`` turns DCT scaling off."""
        return cls(decode == "auto", on_error, max_pixels)


class Pipeline:
    """See NOTE [ A pipeline's contract ]."""

    name: str

    def claims(self, dataset) -> bool:
        raise NotImplementedError

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        """``loader_args``: the DataLoader's batch_size, batch_sampler and collate_fn."""
        raise NotImplementedError

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> BatchDecoder:
        raise NotImplementedError


class SampleFailure(Exception):
    """Internal: carries a wrapped sample error to where it can be re-raised."""

    def __init__(self, wrapper: ExceptionWrapper):
        super().__init__(wrapper.exc_msg)
        self.wrapper = wrapper


@dataclass
class Tally:
    """What a batch, an epoch or a loader's whole life did: samples skipped (index,
    path, why), samples that took the Python path, and seconds per stage (NOTE
    [ Stage times ] in loader.py).  ``add`` and ``merged`` sum them."""

    skipped: list[tuple[int, str, str]] = field(default_factory=list)
    python_path: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        self.skipped.extend(other.skipped)
        self.python_path += other.python_path
        self.add_seconds(other.seconds)

    def add_seconds(self, seconds: dict[str, float]) -> None:
        for stage, t in seconds.items():
            self.seconds[stage] = self.seconds.get(stage, 0.0) + t

    def merged(self, other: Tally) -> Tally:
        out = Tally(list(self.skipped), self.python_path, dict(self.seconds))
        out.add(other)
        return out


@dataclass
class BatchReport(Tally):
    """A batch's tally, how many samples were written, a collate_fn's batch that
    travels as it is (not through the ring), and ``extras``: what ``assemble`` needs
    beside the slot's tensors (a detection batch's shapes and packed targets)."""

    count: int = 0
    payload: object = None
    extras: object = None


class Stopwatch:
    """Charges the time since the previous lap to a stage of ``seconds``."""

    def __init__(self, seconds: dict[str, float]):
        self.seconds = seconds
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self.last
        self.last = now

    def lap_c_core(self, c_seconds: np.ndarray, threads: int = 1) -> None:
        """Ends a C core call: its decode time to "decode", its augment time and the
        Python around it to "augment".  Over several threads the C times are summed
        over them (as worker stages are summed over workers)."""
        now = time.perf_counter()
        decode, augment = float(c_seconds[0]), float(c_seconds[1])
        around = max(0.0, now - self.last - (decode + augment) / max(threads, 1))
        self.seconds["decode"] = self.seconds.get("decode", 0.0) + decode
        self.seconds["augment"] = self.seconds.get("augment", 0.0) + augment + around
        self.last = now


def compact(arrays: Sequence[np.ndarray], keep: np.ndarray) -> int:
    """Moves the kept samples of every field to the front; returns their count."""
    kept = np.flatnonzero(keep)
    for a in arrays:
        a[:len(kept)] = a[kept]
    return len(kept)


@dataclass(slots=True)
class BatchWork:
    """One batch on its way through ``BatchDecoder.decode``: what the skeleton was
    given, what the decoder's hooks find (``rows`` and ``paths`` from ``begin``), and
    which samples are still in the batch (``keep``).  A decoder's own state is the
    fields of its subclass (``BatchDecoder.work_type``), declared there: slots, so an
    attribute nobody declared is an error, not a new blackboard entry."""

    indices: np.ndarray
    seed: int
    arrays: tuple[np.ndarray, ...]
    where: Where
    batch_no: int
    threads: int
    report: BatchReport
    rows: np.ndarray | None = None
    paths: list[str] | None = None
    keep: np.ndarray | None = None
    #: the main process pins the batch once it is assembled, in its pin thread
    pinned: bool = False
    #: the samples before the batch that it reads (BatchDecoder.window), or None
    earlier: EarlierSamples | None = None

    @property
    def in_main(self) -> bool:
        return self.where.in_main


class BatchDecoder:
    """Turns a batch of dataset indices into a batch's tensors, in one process
    (each worker, or the main process with num_workers=0).

    ``layout`` declares the batch (per field: one sample's shape and dtype);
    ``decode`` fills those arrays for the samples at ``indices`` and returns a
    BatchReport; ``assemble`` gives the tensors default_collate's structure.
    A sample the C core cannot do is re-run through the dataset's own Python
    reading with the same random parameters, so its result equals the native
    loader's; only when that fails too does the sample fail, with the file, the
    index and the process named (``where``).
    """

    layout: Layout
    #: the BatchWork subclass whose fields the hooks fill
    work_type: type[BatchWork] = BatchWork
    #: whether the user's own objects (transforms, collate_fn) run in the workers
    runs_user_code: bool = False
    #: whether a batch may be decoded in parts by several workers, each writing its
    #: samples' rows of the slot (NOTE [ The last batches spread out ] in pool.py)
    splittable: bool = False
    #: whether a sample may fill only part of its row (images of their own sizes): a
    #: pinned or device copy then copies the assembled batch, not the slot's rows
    partial_rows: bool = False
    #: the heap a worker keeps from one batch to the next, per sample (NOTE [ libjpeg's
    #: buffers, kept for a batch ] in dataloader/heap.py)
    heap_per_sample: int = 0
    #: whether the heap a batch grows is more than ``heap_per_sample`` can say though
    #: none of the user's code runs (a collate_fn's batch made in the slot): then, as
    #: where the user's code runs, handed back only every few batches
    heap_unsized: bool = False
    #: how many samples before a batch's end it reads, its own included (0: only its
    #: own): the epoch sends each batch those before it (``EarlierSamples``)
    window: int = 0
    #: whether a batch fills a part of its slot that varies from batch to batch: its
    #: pages are then reserved as written (NOTE [ A slot holds what its batch takes ]
    #: in _shared_pages.py) through ``reserve`` and ``hand_back``
    fills_part: bool = False
    #: whether each row of its Workspace holds data whose size varies (a decoded
    #: photo): the Workspace is then made without pages, each row reserving what it
    #: holds (NOTE [ A stored photo holds its own pages ] in yolo/partners.py)
    workspace_fills_part: bool = False

    def __init__(self, options: DecodeOptions):
        self.options = options

    def pins_assembled(self, extras=None) -> bool:
        """Whether pin_memory=True pins the assembled batch (torch's pin_memory over
        its structure, from the slot lent) rather than a copy of the slot's rows."""
        return self.partial_rows

    @property
    def sparse_slots(self) -> bool:
        """Whether its slots are made without pages, reserved by the batches written
        into them (``fills_part``, where the kernel can: NOTE [ A slot holds what its
        batch takes ] in _shared_pages.py)."""
        return self.fills_part and _shared_pages.can_reserve()

    @property
    def sparse_workspace(self) -> bool:
        """Whether its Workspace is made without pages (``workspace_fills_part``,
        where the kernel can reserve them on request)."""
        return self.workspace_fills_part and _shared_pages.can_reserve()

    def reserve(self, work: BatchWork, view: np.ndarray, what: str) -> None:
        """Reserves the slot's pages ``view`` spans before ``work`` writes ``what``
        there (a worker's batch in a sparse slot; elsewhere nothing to do)."""
        if self.sparse_slots and not work.in_main:
            _shared_pages.reserve(view, f"batch {work.batch_no}'s {what} {work.where}")

    def hand_back(self, work: BatchWork, region: np.ndarray, used: int,
                  extra: float = _shared_pages.KEEP_BEYOND_USED) -> None:
        """Hands back the pages of the slot's ``region`` past ``used`` bytes and
        ``extra`` times more, once ``work`` is written (a worker's batch in a sparse
        slot)."""
        if self.sparse_slots and not work.in_main:
            _shared_pages.hand_back(region, used, extra)

    @property
    def inline_layout(self) -> Layout:
        """The layout with num_workers=0, where a batch need not cross processes."""
        return self.layout

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: Where | str, batch_no: int = 0, threads: int = 1,
               pinned: bool = False, earlier: EarlierSamples | None = None) -> BatchReport:
        """Fills the batch of the samples at ``indices`` into ``arrays`` (the slot's
        fields) and returns its report; ``where`` is this process (a str: a worker,
        named so in errors); the C core's work may be split over ``threads`` threads;
        ``pinned``: the main process pins the assembled batch in its pin thread (a
        decoder may leave it what is cheaper done there); ``earlier``: the samples
        before the batch, for a decoder with a ``window`` (None: the batch alone).

        NOTE [ One batch skeleton ]
        Every pipeline's batch goes through these steps, written here once; a
        decoder fills in the hooks.  ``begin`` (the rows and paths, buffers, draws
        that need no file) -> the files read in groups (NOTE [ Reading a batch in
        groups ] in read_files.py) -> each group's image sizes (remembered in the
        file table) -> ``draw_and_decode`` (its random parameters from (seed,
        index), the C core) -> files found changed forgotten -> ``targets``
        (labels, ids, boxes; may drop a sample) -> the samples the C core did not
        do, ``redo``ne through the dataset's own reading with the same draws (a
        failure there too is skipped or raised, per on_error) -> the kept samples
        moved to the front of ``fields`` -> ``finish`` (the user's own code)."""
        indices = np.asarray(indices, dtype=np.int64)
        n = len(indices)
        where = where if isinstance(where, Where) else Where(where)
        work = self.work_type(indices, seed, arrays, where, batch_no, threads,
                              BatchReport(count=n), keep=np.ones(n, dtype=bool),
                              pinned=pinned, earlier=earlier)
        watch = Stopwatch(work.report.seconds)
        self.begin(work)
        status, messages = self.read_and_decode(work, watch)
        self.targets(work)
        watch.lap("augment")
        for k in np.flatnonzero((status != st.OK) & work.keep):
            work.report.python_path += 1
            try:
                self.redo(work, int(k))
            except SharedMemoryError:
                raise  # the batch's, not the sample's
            except Exception:
                work.keep[k] = False
                self._python_path_failed(work.report, int(indices[k]), work.paths[k],
                                         messages[k] or st.DESCRIPTIONS[int(status[k])],
                                         where)
        watch.lap("python_path")
        count = n if work.keep.all() else compact(self.fields(work), work.keep)
        work.report.count = count
        self.finish(work, count)
        watch.lap("yours")
        return work.report

    def read_and_decode(self, work: BatchWork, watch: Stopwatch | None = None
                        ) -> tuple[np.ndarray, list[str]]:
        """The skeleton's reading: ``work``'s files read in groups, each group's image
        sizes, ``draw_and_decode`` on it, files found changed forgotten; each sample's
        (status, message), and the time laps on ``watch``."""
        n = len(work.rows)
        status = np.zeros(n, np.int32)
        messages: list[str] = [""] * n
        files = self.files
        with contextlib.closing(read_in_groups(work.paths, spans=files.spans_of(work.rows))) \
                as groups:
            for part, encoded in groups:
                if watch is not None:
                    watch.lap("read")
                sizes = image_sizes(files, work.rows[part], encoded)
                c_seconds = np.zeros(2)
                status[part], messages[part] = self.draw_and_decode(
                    work, part, encoded, np.maximum(sizes[:, 0], 1),
                    np.maximum(sizes[:, 1], 1), sizes[:, 0] > 0, c_seconds)
                forget_changed(files, work.rows[part], status[part])
                if watch is not None:
                    watch.lap_c_core(c_seconds, work.threads)
        return status, messages

    # -- the skeleton's hooks ---------------------------------------------------------
    @property
    def files(self) -> FileTable:
        """The file table the batch's files are read through."""
        raise NotImplementedError

    def begin(self, work: BatchWork) -> None:
        """Sets ``work.rows`` (file table rows of the batch's samples) and
        ``work.paths``, and whatever the other hooks need that needs no file."""
        work.rows = work.indices
        work.paths = self.files.paths(work.rows)

    def draw_and_decode(self, work: BatchWork, part: slice, encoded, widths: np.ndarray,
                        heights: np.ndarray, known: np.ndarray,
                        c_seconds: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """One group of samples (``part`` of the batch, their files in ``encoded``,
        their image sizes, ``known`` False where the header could not be read):
        their random parameters drawn and the C core run; its (status, messages)."""
        raise NotImplementedError

    def targets(self, work: BatchWork) -> None:
        """Writes what goes with the images (labels, ids, boxes); a sample whose
        target fails is dropped through ``_python_path_failed`` and ``work.keep``."""

    def redo(self, work: BatchWork, k: int) -> None:
        """Sample ``k`` through the dataset's own reading, with its draws."""
        raise NotImplementedError

    def fields(self, work: BatchWork) -> Sequence[np.ndarray]:
        """The per-sample arrays whose kept samples are moved to the front."""
        return work.arrays

    def finish(self, work: BatchWork, count: int) -> None:
        """After the batch is complete in ``count`` samples: the user's own code."""

    def assemble(self, tensors: list[torch.Tensor], extras=None) -> list:
        """The batch the user gets from the slot's ``tensors`` (views of its first
        samples) and the report's ``extras``."""
        raise NotImplementedError

    def workspace_size(self, in_flight: int, batch_size: int) -> tuple[int, int] | None:
        """The bytes and header rows of the Workspace its workers share, with up to
        ``in_flight`` batches of up to ``batch_size`` samples in flight; None: none."""
        return None

    def attach(self, workspace: Workspace) -> None:
        """Takes the Workspace the engine made, before the workers start."""

    def shared_tensors(self) -> list[torch.Tensor]:
        """The tables the workers read (file lists, targets, sizes, boxes), built in
        private memory; the loader moves them into shared memory before workers
        start, within one budget (NOTE [ One shared-memory budget ])."""
        return []

    def _python_path_failed(self, report: BatchReport, index: int, path: str, why: str,
                            where: str) -> None:
        """A sample failed in C and in Python: skip it (recorded in the report)
        or raise, naming the file, the index and the process."""
        exc = sys.exc_info()[1]
        if self.options.on_error == "skip":
            report.skipped.append((index, path, f"{type(exc).__name__}: {exc}"))
            _LG.warning("skipped sample %d (%s): %s: %s", index, path, type(exc).__name__, exc)
            return
        raise SampleFailure(ExceptionWrapper(
            sys.exc_info(),
            where=f"loading sample {index} ({path}) {where} [fast path: {why}; to drop "
                  "unreadable samples instead, pass on_error='skip']")) from None
