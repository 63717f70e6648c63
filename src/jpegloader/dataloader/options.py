"""jpegloader.DataLoader's keyword-only options: their defaults, the environment's
word where one is not given, their checks, and what a loader a trainer rebuilds
takes from the user's (NOTE [ A trainer's rebuild keeps the user's options ])."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .._env import DECODE_ENV, ON_ERROR_ENV, env_choice
from ..decoders import DEFAULT_MAX_PIXELS
from ..pipelines import DECODE_CHOICES, ON_ERROR_CHOICES
from .trainers import inherited_options

#: each option's default: an option equal to it was not given
DEFAULTS = {"device": None, "on_error": None, "decode": None, "decode_threads": None,
            "max_pixels": DEFAULT_MAX_PIXELS, "snapshot_every_n_steps": 1}


@dataclass(frozen=True)
class LoaderOptions:
    device: torch.device | None
    on_error: str
    decode: str
    decode_threads: int | None
    max_pixels: int
    snapshot_every_n_steps: int | None
    #: what the caller passed, or the loader a trainer rebuilds was given
    given: dict = field(compare=False)

    @classmethod
    def resolve(cls, dataset, **passed) -> LoaderOptions:
        """The options of a loader over ``dataset`` built with ``passed``; a
        ValueError naming the option that is not valid."""
        given = {k: v for k, v in passed.items()
                 if v is not DEFAULTS[k] and v != DEFAULTS[k]}
        given.update(inherited_options(dataset, given))
        o = {**DEFAULTS, **given}
        snapshot = o["snapshot_every_n_steps"]
        # torchdata's StatefulDataLoader takes None and 0 too (it validates nothing)
        if snapshot is not None and (not isinstance(snapshot, int) or snapshot < 0):
            raise ValueError("snapshot_every_n_steps should be None or an integer >= 0, got "
                             f"{snapshot!r}")
        on_error = env_choice(ON_ERROR_ENV, ON_ERROR_CHOICES) if o["on_error"] is None \
            else o["on_error"]
        decode = env_choice(DECODE_ENV, DECODE_CHOICES) if o["decode"] is None else o["decode"]
        if on_error not in ON_ERROR_CHOICES:
            raise ValueError(f"on_error should be one of {ON_ERROR_CHOICES}, got {on_error!r}")
        if decode not in DECODE_CHOICES:
            raise ValueError(f"decode should be one of {DECODE_CHOICES}, got {decode!r}")
        threads = o["decode_threads"]
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise ValueError(f"decode_threads should be a positive integer or None, got "
                             f"{threads!r}")
        device = torch.device(o["device"]) if o["device"] is not None else None
        return cls(device, on_error, decode, threads, o["max_pixels"], snapshot, given)


__all__ = ["DEFAULTS", "LoaderOptions"]
