"""The C host copy's contract (see csrc/module.c)."""
from collections.abc import Buffer

def stream_copy(dst: Buffer, src: Buffer, /) -> None: ...
