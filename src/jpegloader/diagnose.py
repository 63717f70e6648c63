"""Fallback diagnostics for an existing training script.

    python -m jpegloader.diagnose [options] SCRIPT [SCRIPT ARGS...]

Runs SCRIPT unchanged (as ``python SCRIPT ARGS...`` would, with
``__name__ == "__main__"``) while intercepting the construction of every
``torch.utils.data.DataLoader``, ``habana_dataloader.HabanaDataLoader`` and
``jpegloader.DataLoader``.  The loaders the script gets behave exactly as
before.  For each one it reports where it was built (file:line), the dataset
and transform it saw, the verdict (accelerated pipeline or fallback), every
eligibility rule with pass/fail, and for each failure the change that would
make it eligible.

Options:
    --no-run      stop the script at the first batch any loader is asked for
                  (the loaders built before the training loop are reported)
    --batches N   after each loader is built, pull N batches from a jpegloader
                  built with the same arguments and report img/s
    --compare     with --batches, also from torch's DataLoader: the ratio
    --json FILE   also write the report as JSON (schema below); "-" writes it
                  to stdout and sends the script's own output to stderr

Exit status: 0 every loader is accelerated; 1 at least one falls back; 2 bad
options or no such script; 3 the script built no loader; 4 the script
failed (raised, or exited with a non-zero status) - loaders built before are
still reported.

JSON schema ``jpegloader.diagnose/1`` (stable; fields are only ever added):
    {"schema": "jpegloader.diagnose/1", "script": str, "argv": [str],
     "outcome": {"status": "completed" | "stopped" | "failed",
                 "exit_code": int | null, "error": str | null, "where": str | null},
     "loaders": [{"index": int, "built_at": "file:line", "class": str,
                  "dataset": str, "transform": str | null,
                  "arguments": {"batch_size": ..., "shuffle": ..., "num_workers": ..., ...},
                  "accelerated": bool, "pipeline": "classification" | "ssd" | null,
                  "split": null | {"native": [str], "yours": [str],
                                   "collate": str | null},
                  "rules": [{"rule": str, "passed": bool, "detail": str,
                             "change": str | null}],
                  "measured": null | {"batches": int,
                      "jpegloader": {"img_per_s": float, "first_batch_s": float},
                      "native": null | {"img_per_s": float, "first_batch_s": float},
                      "ratio": float | null}}],
     "exit_status": int}
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import runpy
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.utils.data

import habana_dataloader
import jpegloader
from jpegloader.patching import TORCH_NAMES, TorchDataLoader, call_site

SCHEMA = "jpegloader.diagnose/1"
EXIT_ACCELERATED, EXIT_FALLBACK, EXIT_USAGE, EXIT_NO_LOADER, EXIT_SCRIPT_FAILED = 0, 1, 2, 3, 4
#: Arguments shown in the report (the rest are passed on but not printed).
SHOWN_ARGUMENTS = ("batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
                   "collate_fn", "pin_memory", "drop_last", "persistent_workers")
# The classes as imported, before any interception replaces the module attributes.
_JPEGLOADER, _TORCH = jpegloader.DataLoader, TorchDataLoader
_SIGNATURE = inspect.signature(_JPEGLOADER.__init__)
_OWN_FILES = tuple(str(Path(m.__file__).resolve().parent)
                   for m in (torch, jpegloader, habana_dataloader))


class _StopScript(BaseException):
    """--no-run: raised at the first batch request; a BaseException so the
    script's own ``except Exception`` does not swallow it."""


@dataclass
class LoaderRecord:
    index: int
    built_at: str
    cls: str
    dataset: str
    transform: str | None
    arguments: dict
    verdict: jpegloader.Eligibility
    measured: dict | None = None

    def to_json(self) -> dict:
        return {
            "index": self.index, "built_at": self.built_at, "class": self.cls,
            "dataset": self.dataset, "transform": self.transform,
            "arguments": self.arguments, "accelerated": self.verdict.accelerated,
            "pipeline": self.verdict.pipeline, "split": self.verdict.split or None,
            "rules": [{"rule": c.rule, "passed": c.passed, "detail": c.message,
                       "change": c.hint or None} for c in self.verdict.checks],
            "measured": self.measured,
        }


@dataclass
class Outcome:
    status: str = "completed"
    exit_code: int | None = 0
    error: str | None = None
    where: str | None = None


@dataclass
class Diagnosis:
    script: str
    argv: list[str]
    loaders: list[LoaderRecord] = field(default_factory=list)
    outcome: Outcome = field(default_factory=Outcome)

    @property
    def exit_status(self) -> int:
        if self.outcome.status == "failed":
            return EXIT_SCRIPT_FAILED
        if not self.loaders:
            return EXIT_NO_LOADER
        if all(r.verdict.accelerated for r in self.loaders):
            return EXIT_ACCELERATED
        return EXIT_FALLBACK

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "script": self.script, "argv": self.argv,
                "outcome": vars(self.outcome), "loaders": [r.to_json() for r in self.loaders],
                "exit_status": self.exit_status}


# -- what a loader saw ---------------------------------------------------------------------
def _short(obj, limit: int = 300) -> str:
    text = " ".join(repr(obj).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe_dataset(dataset) -> str:
    """Class, root and size: the dataset's own repr also prints its transform."""
    parts = []
    root = getattr(dataset, "root", None) or getattr(dataset, "img_folder", None)
    if root is not None:
        parts.append(f"root={str(root)!r}")
    try:
        parts.append(f"{len(dataset)} samples")
    except TypeError:
        pass
    classes = getattr(dataset, "classes", None)
    if isinstance(classes, list):
        parts.append(f"{len(classes)} classes")
    return f"{_class_name(type(dataset))}({', '.join(parts)})"


def _argument_text(value) -> object:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return getattr(value, "__qualname__", None) or type(value).__qualname__


def _bind(args: tuple, kwargs: dict) -> dict:
    """The DataLoader arguments by name, as torch's signature binds them."""
    bound = _SIGNATURE.bind(None, *args, **kwargs)
    return {k: v for k, v in bound.arguments.items() if k != "self"}


def _verdict(loader, arguments: dict) -> jpegloader.Eligibility:
    if isinstance(loader, _JPEGLOADER):
        return loader.eligibility
    return jpegloader.explain(arguments["dataset"], arguments.get("batch_size", 1),
                              batch_sampler=arguments.get("batch_sampler"),
                              collate_fn=arguments.get("collate_fn"))


# -- measuring ---------------------------------------------------------------------------
def _batch_len(batch) -> int:
    if isinstance(batch, torch.Tensor):
        return len(batch) if batch.dim() else 1
    if isinstance(batch, list | tuple) and batch:
        return _batch_len(batch[0])
    if isinstance(batch, dict) and batch:
        return _batch_len(next(iter(batch.values())))
    return 1


def _pull(loader, batches: int) -> dict:
    """Time to the first batch, and img/s over the batches after it."""
    start = time.perf_counter()
    it = iter(loader)
    images, first = 0, None
    for pulled, batch in enumerate(it, 1):
        if first is None:
            first = time.perf_counter()
        else:
            images += _batch_len(batch)
        if pulled >= batches:
            break
    end = time.perf_counter()
    del it
    if hasattr(loader, "close"):
        loader.close()
    rate = images / (end - first) if first is not None and end > first and images else 0.0
    return {"img_per_s": round(rate, 1),
            "first_batch_s": round((first or end) - start, 3)}


def _measure(arguments: dict, batches: int, compare: bool) -> dict:
    """Batches from fresh loaders built with the same arguments, leaving the
    script's random state as it was (torch's global RNG and its generator)."""
    kwargs = dict(arguments)
    generator = kwargs.get("generator")
    results = {"batches": batches, "native": None, "ratio": None}
    with torch.random.fork_rng(devices=[]):
        for name, cls in (("jpegloader", _JPEGLOADER), ("native", _TORCH)):
            if name == "native" and not compare:
                break
            if generator is not None:
                kwargs["generator"] = torch.Generator().set_state(generator.get_state())
            results[name] = _pull(cls(**kwargs), batches)
    if results["native"] and results["native"]["img_per_s"]:
        results["ratio"] = round(results["jpegloader"]["img_per_s"]
                                 / results["native"]["img_per_s"], 2)
    return results


# -- interception --------------------------------------------------------------------------
class Interceptor:
    """Replaces the loader classes with recording subclasses while active."""

    PATCHES = (  # (module, attribute, key)
        *((module, name, "torch") for module, name in TORCH_NAMES),
        (habana_dataloader, "HabanaDataLoader", "habana"),
        (jpegloader, "DataLoader", "jpegloader"),
    )

    def __init__(self, diagnosis: Diagnosis, *, stop_at_first_batch: bool, batches: int,
                 compare: bool):
        self.diagnosis = diagnosis
        self.stop_at_first_batch = stop_at_first_batch
        self.batches = batches
        self.compare = compare
        self.originals = {key: getattr(module, attr) for module, attr, key in self.PATCHES}
        self._recording = {key: self._recording_class(cls) for key, cls in self.originals.items()}

    def _recording_class(self, base):
        interceptor = self

        class Recording(base):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                interceptor._record(self, base, args, kwargs)

            def __iter__(self):
                if interceptor.stop_at_first_batch:
                    raise _StopScript
                return super().__iter__()

        Recording.__name__, Recording.__qualname__ = base.__name__, base.__qualname__
        Recording.__module__ = base.__module__
        return Recording

    def _record(self, loader, base, args, kwargs) -> None:
        arguments = _bind(args, kwargs)
        dataset = arguments["dataset"]
        record = LoaderRecord(
            index=len(self.diagnosis.loaders), built_at=call_site(),
            cls=_class_name(base),
            dataset=_describe_dataset(dataset),
            transform=_short(getattr(dataset, "transform", None))
            if getattr(dataset, "transform", None) is not None else None,
            arguments={k: _argument_text(arguments.get(k)) for k in SHOWN_ARGUMENTS
                       if k in arguments},
            verdict=_verdict(loader, arguments))
        self.diagnosis.loaders.append(record)
        if self.batches:
            record.measured = _measure(arguments, self.batches, self.compare)

    def __enter__(self):
        for module, attr, key in self.PATCHES:
            setattr(module, attr, self._recording[key])
        return self

    def __exit__(self, *exc):
        for module, attr, key in self.PATCHES:
            setattr(module, attr, self.originals[key])


# -- running the script ------------------------------------------------------------------
def _where(tb) -> str | None:
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        if not str(Path(frame.filename).resolve()).startswith(_OWN_FILES):
            return f"{frame.filename}:{frame.lineno}"
    return None


def run_script(script: Path, script_args: list[str], *, stop_at_first_batch: bool = False,
               batches: int = 0, compare: bool = False) -> Diagnosis:
    diagnosis = Diagnosis(str(script), [str(script), *script_args])
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *script_args]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        with Interceptor(diagnosis, stop_at_first_batch=stop_at_first_batch, batches=batches,
                         compare=compare):
            runpy.run_path(str(script), run_name="__main__")
    except _StopScript:
        diagnosis.outcome = Outcome("stopped", None, None, None)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) or e.code is None else 1
        if code:
            diagnosis.outcome = Outcome("failed", code, f"SystemExit: {e.code}",
                                        _where(e.__traceback__))
        else:
            diagnosis.outcome = Outcome("completed", 0, None, None)
    except BaseException as e:  # noqa: BLE001 - the script's failure is reported, not raised
        diagnosis.outcome = Outcome("failed", None, f"{type(e).__name__}: {e}",
                                    _where(e.__traceback__))
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return diagnosis


# -- the report ---------------------------------------------------------------------------
def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in text.splitlines())


def render(diagnosis: Diagnosis) -> str:
    out = [f"jpegloader.diagnose: {diagnosis.script}"]
    o = diagnosis.outcome
    if o.status == "completed":
        out.append("  the script ran to completion")
    elif o.status == "stopped":
        out.append("  stopped at the first batch request (--no-run)")
    else:
        out.append(f"  the script failed: {o.error}" + (f" (at {o.where})" if o.where else ""))
    if not diagnosis.loaders:
        out.append("  it built no DataLoader (torch.utils.data.DataLoader, "
                   "habana_dataloader.HabanaDataLoader or jpegloader.DataLoader)"
                   + (" before it failed" if o.status == "failed" else ""))
    for r in diagnosis.loaders:
        v = r.verdict
        as_torchs = r.cls == _class_name(_TORCH)  # built by name as torch's own class
        if v.accelerated and as_torchs:
            verdict = (f"ACCELERATES AS jpegloader.DataLoader ({v.pipeline} pipeline); "
                       "built as torch's, it runs on torch's DataLoader")
        elif v.accelerated:
            verdict = f"ACCELERATED ({v.pipeline} pipeline)"
        else:
            verdict = f"FALLBACK ({len(v.reasons)} rule{'s' * (len(v.reasons) != 1)} failed)"
        out += ["", f"loader {r.index}: {r.cls} built at {r.built_at}",
                f"  dataset:   {r.dataset}",
                f"  transform: {r.transform}",
                "  arguments: " + ", ".join(f"{k}={v!r}" for k, v in r.arguments.items()),
                f"  verdict:   {verdict}"]
        if v.accelerated:
            out.append("  split:     " + "\n             ".join(v.split_text().splitlines()))
        out.append(_indent(v.report(), "    "))
        if v.accelerated and as_torchs:
            out.append("  to accelerate it: build jpegloader.DataLoader with the same "
                       "arguments (import jpegloader; jpegloader.DataLoader(...))")
        if r.measured:
            m = r.measured
            line = (f"  measured over {m['batches']} batches: jpegloader "
                    f"{_rate(m['jpegloader']['img_per_s'])} img/s (first batch "
                    f"{m['jpegloader']['first_batch_s']:.2f} s)")
            if m["native"]:
                line += (f", torch {_rate(m['native']['img_per_s'])} img/s (first batch "
                         f"{m['native']['first_batch_s']:.2f} s)")
            if m["ratio"]:
                line += f": {m['ratio']:.2f}x"
            out.append(line)
    return "\n".join(out)


def _rate(img_per_s: float) -> str:
    """Three significant figures at least (4.3 and 1.3 img/s, not 4 and 1), so the
    ratio printed beside two rates can be read off them."""
    return f"{img_per_s:,.0f}" if img_per_s >= 100 else f"{img_per_s:.3g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jpegloader.diagnose",
        description="Run a training script unchanged and report, for every DataLoader it "
                    "builds, whether jpegloader accelerates it and what to change if not.",
        epilog="Exit status: 0 all loaders accelerated, 1 some fall back, 2 usage error, "
               "3 no loader built, 4 the script failed. JSON schema: see the module docstring "
               "(python -m pydoc jpegloader.diagnose).")
    parser.add_argument("--batches", type=int, default=0, metavar="N",
                        help="pull N batches from each loader (rebuilt as jpegloader) and "
                             "report img/s")
    parser.add_argument("--compare", action="store_true",
                        help="with --batches: also time torch's DataLoader and give the ratio")
    parser.add_argument("--no-run", action="store_true",
                        help="stop the script at the first batch request (no training step)")
    parser.add_argument("--json", metavar="FILE",
                        help="write the report as JSON to FILE ('-': stdout, the script's "
                             "output then goes to stderr)")
    parser.add_argument("script", type=Path)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    if options.batches < 0:
        parser.error("--batches must be >= 0")
    if options.compare and not options.batches:
        parser.error("--compare needs --batches N")
    if not options.script.is_file():
        parser.error(f"no such script: {options.script}")
    to_stdout = options.json == "-"
    with contextlib.redirect_stdout(sys.stderr) if to_stdout else contextlib.nullcontext():
        diagnosis = run_script(options.script, options.args,
                               stop_at_first_batch=options.no_run,
                               batches=options.batches, compare=options.compare)
    if to_stdout:
        print(json.dumps(diagnosis.to_json(), indent=1))
    else:
        print(render(diagnosis))
        if options.json:
            Path(options.json).write_text(json.dumps(diagnosis.to_json(), indent=1) + "\n")
    return diagnosis.exit_status


if __name__ == "__main__":
    sys.exit(main())
