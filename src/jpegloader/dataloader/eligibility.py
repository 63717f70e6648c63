"""Eligibility: can jpegloader reproduce this dataset + transform + loader?

Each rule is a small function returning a ``Check``.  All rules run, so a
verdict lists every reason at once; ``Eligibility.report()`` shows the whole
table.  Ineligibility is a value, never an exception: the loader falls back
and logs it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from torch.utils.data import default_collate
from torchvision import get_image_backend
from torchvision.datasets import DatasetFolder, ImageFolder
from torchvision.datasets.folder import default_loader, pil_loader

from .._env import env_flag
from ..transforms import LoweredPipeline, NotLowerable, lower
from ..transforms.ssd_lowering import LoweredSSD, lower_ssd

DISABLE_ENV = "JPEGLOADER_DISABLE"
IMAGEFOLDER = "imagefolder"
COCO = "coco"
#: What the SSD reference's COCODetection keeps and the COCO path reads.
COCO_ATTRIBUTES = ("img_folder", "annotate_file", "images", "label_info", "img_keys")


def _coco_missing(dataset) -> list[str]:
    missing = [a for a in COCO_ATTRIBUTES if not hasattr(dataset, a)]
    if "label_info" in missing and hasattr(dataset, "label_map"):
        missing.remove("label_info")
    return missing


def dataset_kind(dataset) -> str | None:
    """Which accelerated pipeline the dataset is for, if any.  COCO datasets are
    recognised by class name and attributes: users keep their own copy of the
    reference class."""
    if isinstance(dataset, ImageFolder):
        return IMAGEFOLDER
    if type(dataset).__name__ == "COCODetection" and not _coco_missing(dataset):
        return COCO
    return None


@dataclass(frozen=True)
class Check:
    """One rule's outcome.  On failure ``message`` names the offending value and
    ``hint`` says what to change."""

    rule: str
    passed: bool
    message: str
    hint: str = ""


@dataclass(frozen=True)
class Eligibility:
    """The verdict for one loader: accelerated or not, and why."""

    accelerated: bool
    pipeline: str | None
    checks: tuple[Check, ...]
    lowered: LoweredPipeline | LoweredSSD | None = field(default=None, repr=False,
                                                         compare=False)

    @property
    def reasons(self) -> tuple[Check, ...]:
        """Every failed rule, in rule order."""
        return tuple(c for c in self.checks if not c.passed)

    def summary(self) -> str:
        return "; ".join(f"{c.rule}: {c.message}" for c in self.reasons)

    def report(self) -> str:
        """Every rule, pass or fail, as a readable table."""
        verdict = (f"accelerated ({self.pipeline} pipeline)" if self.accelerated
                   else "not accelerated: runs on torch.utils.data.DataLoader")
        width = max(len(c.rule) for c in self.checks)
        lines = [f"jpegloader verdict: {verdict}"]
        for c in self.checks:
            lines.append(f"  {'PASS' if c.passed else 'FAIL'}  {c.rule:<{width}}  {c.message}")
            if not c.passed and c.hint:
                lines.append(f"        {'':<{width}}  -> {c.hint}")
        return "\n".join(lines)


def _check(rule: str, ok: bool, good: str, bad: str, hint: str) -> Check:
    return Check(rule, ok, good if ok else bad, "" if ok else hint)


def _env_rule(dataset, args) -> Check:
    disabled = env_flag(DISABLE_ENV)
    return _check("env.disable", not disabled, f"{DISABLE_ENV} is not set",
                  f"{DISABLE_ENV} is set to a true value",
                  f"unset {DISABLE_ENV} (or set it to 0) to allow acceleration")


def _dataset_type_rule(dataset, args) -> Check:
    kind = dataset_kind(dataset)
    name = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
    if kind is None and type(dataset).__name__ == "COCODetection":
        return Check("dataset.type", False,
                     f"dataset is {name} but lacks {', '.join(_coco_missing(dataset))}, so it "
                     "is not the SSD reference's COCODetection",
                     "keep the reference attributes (img_folder, annotate_file, images, "
                     "label_map/label_info, img_keys) or use jpegloader.datasets.COCODetection")
    return _check("dataset.type", kind is not None,
                  f"dataset is {type(dataset).__name__} ({kind} pipeline)",
                  f"dataset is {name}, neither a torchvision.datasets.ImageFolder nor a "
                  "COCODetection",
                  "use torchvision.datasets.ImageFolder or jpegloader.datasets.COCODetection "
                  "(other datasets run natively)")


def _dataset_getitem_rule(dataset, args) -> Check:
    if not isinstance(dataset, ImageFolder):
        return Check("dataset.getitem", True, "not applicable")
    overridden = [name for name in ("__getitem__", "__len__")
                  if getattr(type(dataset), name) is not getattr(DatasetFolder, name)]
    return _check("dataset.getitem", not overridden, "ImageFolder's own loading is used",
                  f"{type(dataset).__name__} overrides {', '.join(overridden)}",
                  "move custom per-sample logic into the training step, or keep the "
                  "native loader for this dataset")


def _dataset_loader_rule(dataset, args) -> Check:
    if not isinstance(dataset, ImageFolder):
        return Check("dataset.loader", True, "not applicable")
    loader = getattr(dataset, "loader", None)
    ok = loader in (default_loader, pil_loader) and get_image_backend() == "PIL"
    name = getattr(loader, "__qualname__", repr(loader))
    return _check("dataset.loader", ok, "images are opened with PIL (default_loader)",
                  f"images are opened with {name} (image backend "
                  f"{get_image_backend()!r})",
                  "use the default loader (PIL) so the decoded pixels can be reproduced")


def _target_transform_rule(dataset, args) -> Check:
    tt = getattr(dataset, "target_transform", None)
    return _check("dataset.target_transform", tt is None, "no target_transform",
                  f"target_transform is {type(tt).__name__}",
                  "apply the target transform in the training step instead")


def _collate_rule(dataset, args) -> Check:
    fn = args.get("collate_fn")
    ok = fn is None or fn is default_collate
    return _check("loader.collate_fn", ok, "default_collate",
                  f"custom collate_fn {getattr(fn, '__qualname__', fn)!r}",
                  "drop collate_fn (default_collate is reproduced natively)")


def _batching_rule(dataset, args) -> Check:
    ok = args.get("batch_size", 1) is not None or args.get("batch_sampler") is not None
    return _check("loader.batch_size", ok, "batches are collated",
                  "batch_size=None (no automatic batching)",
                  "give a batch_size or a batch_sampler")


RULES: tuple[Callable, ...] = (_env_rule, _dataset_type_rule, _dataset_getitem_rule,
                               _dataset_loader_rule, _target_transform_rule, _collate_rule,
                               _batching_rule)


def evaluate(dataset, **loader_args) -> Eligibility:
    """Runs every rule against a dataset and DataLoader keyword arguments."""
    checks = [rule(dataset, loader_args) for rule in RULES]
    lowered = None
    kind = dataset_kind(dataset)
    lowerer = {IMAGEFOLDER: lower, COCO: lower_ssd}.get(kind)
    if lowerer is None:
        checks.append(Check("dataset.transform", True, "not applicable"))
    else:
        try:
            lowered = lowerer(getattr(dataset, "transform", None))
            what = ("SSD validation: " if lowered.val else "SSD training: ") \
                if kind == COCO else ""
            checks.append(Check("dataset.transform", True, what + " -> ".join(lowered.names)))
        except NotLowerable as e:
            checks.append(Check("dataset.transform", False, str(e),
                                e.hint or "use only the supported transforms (see the "
                                "README's eligibility rules)"))
    ok = all(c.passed for c in checks)
    return Eligibility(ok, kind if ok else None, tuple(checks), lowered if ok else None)


def fallback_message(verdict: Eligibility) -> str:
    """The fallback WARNING: two lines users' log scrapers know, then details."""
    return (f"Failed to initialize Habana Dataloader, error: {verdict.summary()}\n"
            "Running with PyTorch Dataloader\n" + verdict.report())
