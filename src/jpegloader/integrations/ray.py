"""Ray Train: ``prepare_data_loader`` keeping jpegloader's loaders accelerated.

``ray.train.torch.prepare_data_loader(loader)`` builds a new torch ``DataLoader`` whenever
it adds a ``DistributedSampler`` (more than one worker), from some of the loader's
attributes: jpegloader's acceleration and options are gone, and so are
``persistent_workers``, ``prefetch_factor`` and ``multiprocessing_context``, with
nothing said.  In the training function::

    from jpegloader.integrations import ray as jl_ray
    loader = jl_ray.prepare_data_loader(loader)      # Ray's arguments, as Ray takes them

calls Ray's and, where Ray built a new loader, builds a jpegloader loader reading the
same dataset with Ray's sampler, batch size, workers and seeding, and the original
loader's other arguments and options; Ray's device wrapper, if any, wraps it.
"""
from __future__ import annotations

from ..dataloader.loader import DataLoader

#: What Ray reads from the loader it rebuilds (the rest is the original's)
_RAYS = ("dataset", "batch_size", "sampler", "num_workers", "collate_fn", "pin_memory",
         "drop_last", "timeout", "worker_init_fn", "generator")
#: What Ray leaves out, and jpegloader's own options: kept from the original loader
_KEPT = ("multiprocessing_context", "prefetch_factor", "persistent_workers",
         "pin_memory_device", "in_order", "decode", "on_error", "max_pixels",
         "decode_threads", "snapshot_every_n_steps")


def rebuilt(built, original: DataLoader) -> DataLoader:
    """A jpegloader.DataLoader reading what Ray's ``built`` loader reads, with
    ``original``'s other arguments and options."""
    kwargs = {k: getattr(built, k) for k in _RAYS}
    kwargs.update({k: getattr(original, k) for k in _KEPT if hasattr(original, k)})
    if not kwargs["num_workers"]:
        kwargs.update(prefetch_factor=None, persistent_workers=False)
    return DataLoader(**kwargs)


def prepare_data_loader(data_loader, *args, **kwargs):
    """``ray.train.torch.prepare_data_loader`` with a ``jpegloader.DataLoader`` kept
    accelerated (see the module's docstring); the same arguments as Ray's."""
    from ray.train.torch import prepare_data_loader as rays
    if isinstance(data_loader, DataLoader):  # NOTE [ A loader a trainer threw away ]
        data_loader._use.handed_over = True
    prepared = rays(data_loader, *args, **kwargs)
    if not isinstance(data_loader, DataLoader):
        return prepared
    inner = getattr(prepared, "_dataloader", prepared)  # Ray's device wrapper holds it
    if isinstance(inner, DataLoader):
        return prepared
    ours = rebuilt(inner, data_loader)
    if inner is prepared:
        return ours
    prepared._dataloader = ours
    return prepared


__all__ = ["prepare_data_loader", "rebuilt"]
