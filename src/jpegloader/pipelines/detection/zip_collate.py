"""The references' zip collate_fn, recognised (a detection batch's targets travel
packed: NOTE [ Packed targets ] in pipelines/by_value.py)."""
from __future__ import annotations


def zips(fn) -> bool:
    """Is ``fn`` the references' ``collate_fn``, ``tuple(zip(*batch))`` (it is cheap
    enough to run in the main process on the samples as they come out of the ring)?
    Tried on stand-in samples: the result must hold the very objects, in order."""
    samples = [(object(), object()) for _ in range(3)]
    try:
        result = fn(samples)
    except Exception:  # noqa: BLE001 - not a zip, then
        return False
    columns = ([s[0] for s in samples], [s[1] for s in samples])
    return isinstance(result, tuple) and len(result) == 2 and all(
        isinstance(got, tuple) and len(got) == 3 and all(a is b for a, b in zip(got, want))
        for got, want in zip(result, columns))


__all__ = ["BY_VALUE_BYTES", "pack", "unpack", "zips"]
