"""The verdict on a YOLO dataset: every rule of recognise.py, the loader's batch size
and collate_fn, and what the workers run."""
from __future__ import annotations

from ..contract import Lowering, check
from . import in_place, recognise, steps
from .opencv import opencv_match

NAME = "yolo"


def lower(dataset, loader_args: dict | None = None) -> Lowering:
    args = loader_args or {}
    source, checks = recognise.recognise(dataset)
    checks.append(recognise.collate_check(dataset, args.get("collate_fn")))
    if dataset.rect and args.get("batch_size") not in (None, dataset.batch_size):
        checks.append(check(
            "loader.batch_size", False, "", f"batch_size={args.get('batch_size')} with "
            f"the dataset's rect batches of {dataset.batch_size}", "give the loader the "
            "dataset's batch size, as Ultralytics' build_dataloader does"))
    if source is None or not all(c.passed for c in checks):
        return Lowering(NAME, tuple(checks))
    if isinstance(source, recognise.YoloTrainSource):
        return _lower_train(source, checks)
    checks.append(check("yolo.task", True, f"{source.task}: each sample's labels made in "
                        "the workers from your LetterBox's and Format's parameters", "", ""))
    replaced, said = in_place.described(source.planned, source.dataset)
    if said:
        checks.append(check("yolo.labels", True, said, "", ""))
    labelled = in_place.labels_replaced(source.planned, source.dataset)
    samples = recognise.dataset_key(source)
    lb, fmt = source.letterbox, source.format
    program = (source.task, source.largest, repr(vars(lb)), repr(vars(fmt)))
    split = {"native": ["decode", "LetterBox", "Format image"] + replaced,
             "yours": [f"{type(t).__name__} labels" for t in source.steps
                       if id(t) not in labelled],
             "collate": "YOLODataset.collate_fn in the main process"}
    return Lowering(NAME, tuple(checks), program, source, (program, samples), split,
                    samples=samples)


def _lower_train(source: recognise.YoloTrainSource, checks: list) -> Lowering:
    """A training dataset: every step the user's object, three steps' pixels in C."""
    planned = steps.planned_steps(source.dataset.transforms)
    replaced, said = in_place.described(planned, source.dataset)
    native = ["decode", "load_image resize"] + [
        k.describes for k in dict.fromkeys(k for _, k in planned) if k and k.native] + replaced
    labelled = in_place.labels_replaced(planned, source.dataset) | \
        {id(t) for t, _ in planned if _keeps_labels(t)}
    yours = list(dict.fromkeys(  # two flips: once
        type(t).__name__ + _left(k is not None and k.native, id(t) in labelled)
        for t, k in planned if not (k and k.native and id(t) in labelled)))
    checks.append(check("yolo.task", True, f"{source.task} training: your transforms run per "
                        "sample in the workers, seeded per sample", "", ""))
    checks.append(check("yolo.opencv", True, opencv_match().describe(), "", ""))
    if said:
        checks.append(check("yolo.labels", True, said, "", ""))
    samples = recognise.dataset_key(source)
    program = (source.task, source.largest, "train",
               tuple((type(t).__name__, repr(vars(t))) for t, k in planned
                     if k in (None, steps.UnbuiltMosaic, steps.CvWarp)))
    split = {"native": native, "yours": yours,
             "collate": "YOLODataset.collate_fn in the main process"}
    return Lowering(NAME, tuple(checks), program, source,
                    (program, samples, id(source.dataset.transforms)), split, samples=samples)


def _keeps_labels(step) -> bool:
    """Whether a step leaves labels as they are (RandomHSV: Ultralytics' BaseTransform's
    own apply_instances, which returns them)."""
    method = getattr(type(step), "apply_instances", None)
    return getattr(method, "__qualname__", "") == "BaseTransform.apply_instances" and \
        getattr(method, "__module__", "") == "ultralytics.data.augment"


def _left(image_native: bool, labels_native: bool) -> str:
    """What of a step stays the user's object, as the verdict's "yours" names it."""
    return " labels" if image_native else " image" if labels_native else ""
