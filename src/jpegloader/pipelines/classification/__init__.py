"""The classification pipeline: image folders (torchvision's DatasetFolder and
ImageFolder, timm's ImageDataset, Ultralytics' ClassificationDataset, Subsets of
them) with the transforms real training recipes build.  See NOTE [ A pipeline's contract ] in contract.py.

    recognise.py   recognise the dataset; what a sample reads (ImageSource)
    lower.py       lower the transform into ops (ops.py), natively as far as it goes,
                   into a program (program.py)
    dry_run.py     what one sample becomes (the user's objects run once)
    draw.py        per-sample random parameters; replay through torchvision
    hybrid.py      the user's own transforms and collate_fn, in the workers
    decode.py      decode a batch into the slot; assemble
    views.py       multi-view transforms (self-supervised recipes): recognise, lower
    decode_views.py  decode their batches, each image once for all its views
"""
from __future__ import annotations

import dataclasses

import torch
from torch.utils.data import default_collate

from ..contract import BatchDecoder, Check, DecodeOptions, Lowering, Pipeline, check
from ...sources.file_table import FileTable
from . import recognise
from .decode import ClassificationBatchDecoder
from .decode_views import ViewsBatchDecoder
from .hybrid import CollatePlan, plan_collate
from .lower import lower_transform
from .program import ClassificationProgram, Sample
from .views import Views, lower_views, view_split


class ClassificationPipeline(Pipeline):
    name = "classification"

    def claims(self, dataset) -> bool:
        return recognise.claims(dataset)

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        args = loader_args or {}
        source, checks = recognise.recognise(dataset)
        transform = source.transform if source is not None else \
            recognise.transform_of(recognise.unwrap_subsets(dataset)[0])
        views = lower_views(transform)
        if views is not None:
            return self._lower_views(source, checks, args, *views)
        program, transform_checks = lower_transform(transform)
        checks = [*checks, *transform_checks]
        collate, collate_check = _collate(args, program)
        checks.append(collate_check)
        if program is not None:
            program = _stacked_natively(program, collate)
        if source is None or program is None or not collate_check.passed:
            return Lowering(self.name, tuple(checks))
        split = {"native": [n for who, names in program.split or (("native", ("decode",
                                                                               *program.names)),)
                            if who == "native" for n in names],
                 "yours": [n for who, names in program.split if who == "yours" for n in names],
                 "sequence": [list(part) for part in program.split],
                 "collate": None if collate is None else
                 f"{collate.name} {'natively' if collate.native_stack else 'in the workers'}"}
        samples = source.key()
        return Lowering(self.name, tuple(checks), (program, collate), source,
                        (program, collate, samples), split, samples=samples)

    def _lower_views(self, source, checks, args, views: Views | None, view_checks
                     ) -> Lowering:
        """A multi-view transform (NOTE [ Multi-view transforms ] in views.py)."""
        fn = args.get("collate_fn")
        collate_check = check(
            "loader.collate_fn", fn is None or fn is default_collate, "default_collate "
            "(a list of views, each [B, ...], and the targets)",
            f"custom collate_fn {getattr(fn, '__qualname__', type(fn).__name__)} with a "
            "multi-view transform", "this loader runs on torch's DataLoader, with the same "
            "results; with default_collate the views are decoded natively")
        checks = [*checks, *view_checks, collate_check]
        if source is None or views is None or not collate_check.passed:
            return Lowering(self.name, tuple(checks))
        per_view = view_split(views)
        split = {"native": list(dict.fromkeys(n for v in per_view for n in v["native"])),
                 "yours": list(dict.fromkeys(n for v in per_view for n in v["yours"])),
                 "collate": None, "views": per_view}
        samples = source.key()
        return Lowering(self.name, tuple(checks), (views, None), source, (views, samples),
                        split, samples=samples)

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> BatchDecoder:
        source: recognise.ImageSource = lowering.source
        program, collate = lowering.program
        index_map = None if source.indices is None else torch.from_numpy(source.indices.copy())
        table = FileTable.from_samples(source.samples) if source.members is None else \
            FileTable.from_members(source.members)
        if isinstance(program, Views):
            return ViewsBatchDecoder(table, index_map, program, source.replace_unreadable,
                                     options)
        return ClassificationBatchDecoder(table, index_map, program, source.replace_unreadable,
                                          options, collate, source.reader, source.sample_keys)


def _collate(args: dict, program) -> tuple[CollatePlan | None, Check]:
    """The loader's collate_fn: default_collate is the batch layout itself; a custom
    one runs in the workers (NOTE [ Hybrid pipelines ])."""
    fn = args.get("collate_fn")
    if fn is None or fn is default_collate:
        ok = program is None or program.sample.kind != "pil"
        return None, check("loader.collate_fn", ok, "default_collate",
                           "the transform ends in PIL images, which default_collate cannot "
                           "batch (torch's loader fails on them too)",
                           "end the transform in a tensor conversion, or give the collate_fn "
                           "your recipe uses")
    name = getattr(fn, "__qualname__", None) or getattr(getattr(fn, "func", None),
                                                      "__qualname__", type(fn).__name__)
    if program is None:
        return None, Check("loader.collate_fn", True, f"custom collate_fn {name} (would run "
                                                      "in the workers)")
    batch_size = args.get("batch_size") or 2
    try:
        plan = plan_collate(fn, program.sample, batch_size)
    except Exception as e:  # noqa: BLE001 - the user's function; its error is the reason
        return None, Check("loader.collate_fn", False,
                           f"collate_fn {name} fails on a batch of {batch_size} "
                           f"{program.sample.kind} samples: {type(e).__name__}: {e}",
                           "this loader runs on torch's DataLoader, with the same results")
    if plan.native_stack:
        return plan, Check("loader.collate_fn", True,
                           f"collate: {plan.name} stacks uint8 images and int64 targets "
                           "(verified on random batches): done natively")
    how = "its tensors written into the ring" if plan.ring else \
        "its batches returned through the result queue, as torch returns them"
    return plan, Check("loader.collate_fn", True,
                       f"collate: {plan.name} in the workers, seeded per batch ({how})")


def _stacked_natively(program, collate):
    """A fast_collate done natively (NOTE [ fast_collate ]): PIL images handed to
    nothing else become uint8 written by the C core itself."""
    if collate is None or not collate.native_stack or program.handover != "pil" or \
            program.yours_pil or program.yours_tensor:
        return program
    shape = (3, *program.output_size)
    return dataclasses.replace(program, handover="slot", output_dtype="uint8", lut=None,
                               sample=Sample("tensor", shape, "uint8"))


CLASSIFICATION = ClassificationPipeline()

__all__ = ["CLASSIFICATION", "ClassificationPipeline", "ClassificationProgram"]
