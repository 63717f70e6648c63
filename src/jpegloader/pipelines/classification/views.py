"""Multi-view transforms: several augmented views of each image, as self-supervised
recipes make them (DINO's multi-crop, SimCLR, MoCo and BYOL's two views).

NOTE [ Multi-view transforms ]
A transform whose ``__call__`` returns a list of views, each made from the image by
one of the transforms the object holds (DINO's global_transfo1/2 and local_transfo,
MoCo's base_transform twice, SimCLR's n_views), is recognised by a probe: a shallow
copy of it, its transforms replaced by recorders, must hand each recorder the image
itself and return what they gave, the same sequence in every call.  The user's
object is not changed and its transforms do not run.  Each view is lowered on its own (lower.py, the
hybrid machinery included); each JPEG is decoded once for all its views (NOTE
[ Several views of one decode ] in csrc/pipeline.c); view v draws from its own
stream, ``view_seed(seed, v)``, so each follows its transform's distributions.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from PIL import Image

from ..contract import Check
from ..random_stream import epoch_seed, generators_kept, seed_generators
from .lower import RULE, is_transform_pipeline, lower_transform
from .program import ClassificationProgram

#: The most views one sample may have (the C core's JL_MAX_VIEWS).
MAX_VIEWS = 32
#: Calls of ``__call__`` whose view sequences must agree (a random count of views
#: could not be batched).
PROBES = 3
#: the probes' seeds: chosen so that random.randint(1, 4) and torch.randint(1, 5, ())
#: give different counts across them (tests/pipelines/classification/test_views.py)
PROBE_SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class Views:
    """A multi-view transform, lowered: one program per view, in the order
    ``__call__`` returns them, and the name of the transform each came from."""

    programs: tuple[ClassificationProgram, ...]
    names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.programs)


def view_seed(seed: int, view: int) -> int:
    """View ``view``'s own key from the epoch's key."""
    return epoch_seed(seed, 0x5649_4557 + view)  # "VIEW"


class _Recorder:
    """Stands for one of the container's transforms during the probe."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, x):
        return _Made(self.name, x)


@dataclass(frozen=True, eq=False)
class _Made:
    name: str
    given: object


def _candidates(obj) -> dict[str, object]:
    """The object's attributes that hold a view transform, or a list or tuple of them."""
    found = {}
    for name, value in getattr(obj, "__dict__", {}).items():
        if is_transform_pipeline(value):
            found[name] = value
        elif isinstance(value, (list, tuple)) and value and \
                all(is_transform_pipeline(v) for v in value):
            found[name] = value
    return found


def _probe(obj, candidates: dict[str, object]) -> list[str] | None:
    """The sequence of transform names one call returns (a list or a tuple: default_collate
    batches both as a list); None when the call is not views made from the image itself."""
    try:
        shadow = copy.copy(obj)
    except Exception:  # noqa: BLE001 - an object that cannot be copied is not probed
        return None
    for name, value in candidates.items():
        if isinstance(value, (list, tuple)):
            setattr(shadow, name, type(value)(_Recorder(f"{name}[{k}]")
                                              for k in range(len(value))))
        else:
            setattr(shadow, name, _Recorder(name))
    image = Image.new("RGB", (64, 48))
    sequences = []
    with generators_kept():
        for k in range(PROBES):
            # each probe from its own fixed seed: a container whose count of views is
            # random shows it on every run, not by the luck of the caller's generators
            seed_generators(PROBE_SEEDS[k])
            try:
                out = shadow(image)
            except Exception:  # noqa: BLE001 - not a container of the views we know
                return None
            if not isinstance(out, (list, tuple)) or not out or \
                    not all(isinstance(v, _Made) and v.given is image for v in out):
                return None
            sequences.append([v.name for v in out])
    if any(s != sequences[0] for s in sequences):
        return None
    return sequences[0]


def recognise_views(transform) -> tuple[list[tuple[str, object]], str] | None:
    """[(name, view transform)] in the order the views come, and the container's name;
    None when ``transform`` is not a multi-view container."""
    if transform is None or is_transform_pipeline(transform) or not callable(transform):
        return None
    candidates = _candidates(transform)
    if not candidates:
        return None
    names = _probe(transform, candidates)
    if names is None:
        return None
    flat = {}
    for name, value in candidates.items():
        if isinstance(value, (list, tuple)):
            flat.update((f"{name}[{k}]", v) for k, v in enumerate(value))
        else:
            flat[name] = value
    return [(n, flat[n]) for n in names], type(transform).__qualname__


def lower_views(transform) -> tuple[Views | None, list[Check]] | None:
    """Lowers a multi-view transform view by view; None when it is not one."""
    found = recognise_views(transform)
    if found is None:
        return None
    views, container = found
    count = len(views)
    if count > MAX_VIEWS:
        return None, [Check(RULE, False, f"{container} returns {count} views; at most "
                                         f"{MAX_VIEWS} are decoded together",
                            "this loader runs on torch's DataLoader, with the same results")]
    lowered: dict[int, tuple] = {}  # a transform used for several views is lowered once
    programs = []
    for _, t in views:
        if id(t) not in lowered:
            lowered[id(t)] = lower_transform(t)
        programs.append(lowered[id(t)][0])
    checks = []
    for key, (_, view_checks) in lowered.items():
        numbers = [k for k, (_, t) in enumerate(views) if id(t) == key]
        where = f"{_numbered(numbers, count)} ({views[numbers[0]][0]})"
        checks += [Check(c.rule, c.passed, f"{where}: {c.message}", c.hint) for c in view_checks]
    if any(p is None for p in programs):
        return None, [c for c in checks if not c.passed]
    pil = [k for k, p in enumerate(programs) if p.sample.kind == "pil"]
    if pil:
        return None, [Check(RULE, False, f"view {pil[0] + 1} of {count} ends in a PIL image, "
                                         "which default_collate cannot batch (torch's loader "
                                         "fails on it too)",
                            "end each view's transform in a tensor conversion")]
    summary = Check(RULE, True, f"{container}: {count} views of each image, decoded once "
                                f"({', '.join(_counted(n for n, _ in views))})")
    return Views(tuple(programs), tuple(n for n, _ in views)), [summary, *checks]


def _numbered(numbers: list[int], count: int) -> str:
    """"view 1 of 10", "views 3-10 of 10", "views 1, 3 of 4" (numbers from 0)."""
    if len(numbers) == 1:
        return f"view {numbers[0] + 1} of {count}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"views {numbers[0] + 1}-{numbers[-1] + 1} of {count}"
    return f"views {', '.join(str(k + 1) for k in numbers)} of {count}"


def _counted(names) -> list[str]:
    """["global_transfo1", "local_transfo x8"] for a sequence of names."""
    out: list[list] = []
    for n in names:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return [n if k == 1 else f"{n} x{k}" for n, k in out]


def view_split(views: Views) -> list[dict]:
    """What runs natively and what as the user's objects, per view (views made by the
    same transform together)."""
    groups: dict[tuple, list[int]] = {}
    for k, (name, p) in enumerate(zip(views.names, views.programs, strict=True)):
        groups.setdefault((name, p), []).append(k)
    return [{"view": f"{_numbered(numbers, len(views))} ({name})",
             "native": [n for who, names in p.split if who == "native" for n in names],
             "yours": [n for who, names in p.split if who == "yours" for n in names],
             "sequence": [list(part) for part in p.split]}
            for (name, p), numbers in groups.items()]
