"""Environment switches, parsed strictly: a typo must not silently pick a code path.

    JPEGLOADER_DISABLE   a boolean: every loader runs on torch's DataLoader
    JPEGLOADER_DECODE    "auto" or "exact": the default of DataLoader(decode=...)
    JPEGLOADER_ON_ERROR  "raise" or "skip": the default of DataLoader(on_error=...)

They let a script that is not edited choose (``python -m jpegloader run`` sets the
last two from its --decode and --on-error options).
"""
from __future__ import annotations

import os

DISABLE_ENV = "JPEGLOADER_DISABLE"
DECODE_ENV = "JPEGLOADER_DECODE"
ON_ERROR_ENV = "JPEGLOADER_ON_ERROR"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_flag(name: str, default: bool = False) -> bool:
    """``name`` as a boolean: 1/true/yes/on or 0/false/no/off (any case).

    Anything else raises, naming the variable."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={raw!r} is not a boolean; "
                     "use 1/true/yes/on or 0/false/no/off")


def env_choice(name: str, choices: tuple[str, ...]) -> str:
    """``name`` as one of ``choices`` (any case; unset or empty: the first).

    Anything else raises, naming the variable and the choices."""
    raw = os.environ.get(name)
    value = (raw or "").strip().lower()
    if not value:
        return choices[0]
    if value in choices:
        return value
    raise ValueError(f"environment variable {name}={raw!r} is not one of "
                     f"{', '.join(choices)}")
