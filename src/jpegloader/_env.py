"""Environment switches, parsed as real booleans."""
from __future__ import annotations

import os

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_flag(name: str, default: bool = False) -> bool:
    """``name`` as a boolean: 1/true/yes/on or 0/false/no/off (any case).

    Anything else raises, naming the variable: a typo must not silently pick
    a code path."""
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
