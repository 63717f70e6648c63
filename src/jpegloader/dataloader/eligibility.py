"""Eligibility: can jpegloader reproduce this dataset + transform + loader?

The loader's own rules (the environment switch, collate_fn, batching) are
checked here; the dataset and its transform are judged by the pipeline that
claims the dataset (pipelines/, NOTE [ A pipeline's contract ]).  All rules
run, so a verdict lists every reason at once; ``Eligibility.report()`` shows
the whole table.  Ineligibility is a value, never an exception: the loader
falls back and logs it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .._env import DISABLE_ENV, env_flag
from ..pipelines import Check, Lowering, pipeline_for
from ..pipelines.contract import check

_NATIVE = "this loader runs on torch's DataLoader, with the same results"


@dataclass(frozen=True)
class Eligibility:
    """The verdict for one loader: accelerated or not, and why."""

    accelerated: bool
    pipeline: str | None
    checks: tuple[Check, ...]
    lowering: Lowering | None = field(default=None, repr=False, compare=False)

    @property
    def split(self) -> dict:
        """What runs natively and what as your own code (NOTE [ Hybrid pipelines ]):
        {"native": [...], "yours": [...], "collate": str | None}; empty on fallback."""
        return dict(self.lowering.split) if self.accelerated else {}

    def split_text(self) -> str:
        """One line, or for a multi-view transform one line per view."""
        s = self.split
        if not s:
            return ""
        if s.get("views"):
            return "\n".join(f"{v['view']}: {_who_runs(v)}" for v in s["views"])
        text = _who_runs(s)
        if s["collate"]:
            text += f"; collate: {s['collate']}"
        return text

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
        if self.accelerated:
            lines += [f"  {line}" for line in self.split_text().splitlines()]
        for c in self.checks:
            lines.append(f"  {'PASS' if c.passed else 'FAIL'}  {c.rule:<{width}}  {c.message}")
            if not c.passed and c.hint:
                lines.append(f"        {'':<{width}}  -> {c.hint}")
        return "\n".join(lines)


def _who_runs(s: dict) -> str:
    """What runs natively and what as the user's objects, in the order they run."""
    sequence = s.get("sequence") or [("native", s["native"])] + (
        [("yours", s["yours"])] if s["yours"] else [])
    return "; ".join(f"{who}: {', '.join(names)}" for who, names in sequence if names)


def _loader_checks(args) -> list[Check]:
    """The loader's own rules (the collate_fn is the pipeline's to judge)."""
    disabled = env_flag(DISABLE_ENV)
    batched = args.get("batch_size", 1) is not None or args.get("batch_sampler") is not None
    # NOTE [ Batches in order ] (loader.py): said where it was asked for otherwise
    in_order = [] if args.get("in_order", True) else [check(
        "loader.in_order", True, "in_order=False: batches still come in the sampler's "
        "order, on both paths, so that state_dict() says exactly which were handed over; "
        "a slow sample holds back the batches after it", "", "")]
    return [*in_order,
        check("env.disable", not disabled, f"{DISABLE_ENV} is not set",
              f"{DISABLE_ENV} is set to a true value",
              f"unset {DISABLE_ENV} (or set it to 0) to allow acceleration"),
        check("loader.batch_size", batched, "batches are collated",
              "batch_size=None (no automatic batching)",
              f"give a batch_size or a batch_sampler; without automatic batching {_NATIVE}"),
    ]


def evaluate(dataset, **loader_args) -> Eligibility:
    """Runs every rule against a dataset and DataLoader keyword arguments."""
    checks = _loader_checks(loader_args)
    pipeline = pipeline_for(dataset)
    lowering = None
    if pipeline is None:
        name = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
        checks.append(Check(
            "dataset.type", False,
            f"dataset is {name}: not an image folder (torchvision DatasetFolder/ImageFolder, "
            "timm ImageDataset, or a Subset of one), tar shards, a Hugging Face image dataset "
            "nor a COCO detection dataset (the SSD reference's COCODetection, torchvision's "
            "CocoDetection wrapped for transforms v2)", _source_hint(dataset)))
    else:
        lowering = pipeline.lower(dataset, loader_args)
        checks += lowering.checks
    ok = lowering is not None and lowering.ok and all(c.passed for c in checks)
    return Eligibility(ok, pipeline.name if ok else None, tuple(checks), lowering if ok else None)


def _source_hint(dataset) -> str:
    """The one-line change for the datasets the sources below are read through."""
    module = type(dataset).__module__.split(".")[0]
    if module == "timm" and type(getattr(dataset, "reader", None)).__name__ == "ReaderWds":
        return ("read the same shards with jpegloader.datasets.WebDataset(urls, transform) "
                "(a map-style dataset: timm's transform and your loader's shuffle=True) "
                "to accelerate them; timm's wds reader streams them through torch's loader")
    if module == "webdataset":
        return ("read the same shards with jpegloader.datasets.WebDataset(urls, transform) "
                "(a map-style dataset; pass shuffle=True to the loader) to accelerate them")
    if module == "datasets":
        return ("wrap the dataset: jpegloader.datasets.HuggingFaceImages(ds, transform, "
                "image_column=..., label_column=...) reads its images from its Arrow files")
    return "other datasets run on torch's DataLoader, with the same results"


def fallback_message(verdict: Eligibility) -> str:
    """The fallback WARNING: two lines users' log scrapers know, then details."""
    return (f"Failed to initialize Habana Dataloader, error: {verdict.summary()}\n"
            "Running with PyTorch Dataloader\n" + verdict.report())
