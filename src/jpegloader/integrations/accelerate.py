"""Hugging Face Accelerate: ``prepare`` keeping jpegloader's loaders accelerated.

``accelerator.prepare(loader)`` builds a new torch ``DataLoader`` inside its
``DataLoaderShard`` from the loader's attributes, with a batch sampler that gives this
process its share of the batches: jpegloader's acceleration and its options (``decode``,
``on_error``, ...) are gone, and nothing says so.  Accelerate offers no hook to keep a
loader's class (accelerate#3322), so::

    from jpegloader.integrations import accelerate as jl_accelerate
    model, optimizer, loader = jl_accelerate.prepare(accelerator, model, optimizer, loader)

calls ``accelerator.prepare`` as usual and then gives each prepared loader that came
from a ``jpegloader.DataLoader`` a jpegloader loader built from what Accelerate built:
the same dataset, the same per-process batch sampler, workers and collate_fn, with the
original loader's own options.  Everything else of Accelerate's wrapper (device
placement, RNG synchronisation, gradient accumulation's end-of-loader signal, state)
is kept, as it wraps the loader it holds.
"""
from __future__ import annotations

import logging

from ..dataloader.loader import DataLoader

_LG = logging.getLogger("jpegloader")
#: torch's arguments read from the loader Accelerate built (batch_size, shuffle,
#: sampler and drop_last live in its batch sampler)
_TORCH_ARGUMENTS = ("num_workers", "collate_fn", "pin_memory", "timeout", "worker_init_fn",
                    "multiprocessing_context", "generator", "prefetch_factor",
                    "persistent_workers", "pin_memory_device", "in_order")
#: jpegloader's own options, read from the user's loader
_OWN_OPTIONS = ("decode", "on_error", "max_pixels", "decode_threads",
                "snapshot_every_n_steps")


def rebuilt(built, original: DataLoader) -> DataLoader:
    """A jpegloader.DataLoader reading what Accelerate's ``built`` loader reads, with
    ``original``'s options."""
    kwargs = {k: getattr(built, k) for k in _TORCH_ARGUMENTS if hasattr(built, k)}
    if not kwargs.get("num_workers"):
        kwargs.pop("prefetch_factor", None)
    kwargs.update({k: getattr(original, k) for k in _OWN_OPTIONS})
    if built.batch_sampler is not None:
        kwargs["batch_sampler"] = built.batch_sampler
    else:  # an iterable dataset: Accelerate batches it itself
        kwargs.update(batch_size=built.batch_size, drop_last=built.drop_last)
    return DataLoader(built.dataset, **kwargs)


def prepare(accelerator, *objects):
    """``accelerator.prepare(*objects)``, with every ``jpegloader.DataLoader`` among
    them still accelerated in what it returns (see the module's docstring)."""
    for original in objects:  # NOTE [ A loader a trainer threw away ]
        if isinstance(original, DataLoader):
            original._use.handed_over = True
    prepared = accelerator.prepare(*objects)
    outputs = [prepared] if len(objects) == 1 else list(prepared)
    for original, output in zip(objects, outputs, strict=True):
        if not isinstance(original, DataLoader):
            continue
        built = getattr(output, "base_dataloader", None)
        if built is None:
            _LG.warning("Accelerate returned a %s for a jpegloader.DataLoader, with no "
                        "base_dataloader to replace: it runs on torch's DataLoader",
                        type(output).__name__)
            continue
        if not isinstance(built, DataLoader):
            output.base_dataloader = rebuilt(built, original)
    return prepared


__all__ = ["prepare", "rebuilt"]
