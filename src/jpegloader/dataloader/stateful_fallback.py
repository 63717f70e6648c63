"""The fallback for datasets that keep a state of their own: torchdata's
StatefulDataLoader, where it is installed.

NOTE [ A dataset's own state on the fallback ]
A dataset (or the iterator an IterableDataset gives each worker) may keep a
state of its own, with ``state_dict``/``load_state_dict`` (torchdata's Stateful
protocol): a position in a stream, a random generator.  It lives in each
worker, so only the worker loop can take it with the batches, which torch's
loop does not do and torchdata's StatefulDataLoader does.  So on the fallback,
an IterableDataset or a dataset with those two methods is iterated by a
StatefulDataLoader built from the loader's own arguments, and the loader's
state is torchdata's, wrapped (``wrap``/``unwrap``).  Without torchdata the
loader restores the order and fast-forwards as before and says, once, that the
dataset's own state is not saved.  Under ``patch()`` torchdata's class is
jpegloader's own, so nothing is handed over.

NOTE [ torchdata's state, as it is ]
A delegated loader's state is torchdata's own dict with two keys added
(``version``, ``fallback``; torchdata's keys all start with ``_`` or name a
dataset or fetcher state), so code written against StatefulDataLoader's state
reads it unchanged, and a state saved by StatefulDataLoader itself loads.
"""
from __future__ import annotations

import inspect
import logging

import torch

from .resume import VERSION

_LG = logging.getLogger("jpegloader")
#: The loader state's "fallback" when torchdata's StatefulDataLoader holds it.
TORCHDATA = "torchdata"
#: jpegloader.DataLoader's arguments that are torch's (and torchdata's).
TORCH_ARGUMENTS = frozenset({
    "dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
    "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
    "multiprocessing_context", "generator", "prefetch_factor", "persistent_workers",
    "pin_memory_device", "in_order", "snapshot_every_n_steps"})


def declares_state(dataset) -> bool:
    """Whether ``dataset`` has ``state_dict`` and ``load_state_dict`` (torchdata's
    Stateful protocol)."""
    return callable(getattr(dataset, "state_dict", None)) and \
        callable(getattr(dataset, "load_state_dict", None))


def keeps_state(dataset) -> bool:
    """Whether ``dataset`` may keep a state of its own (NOTE [ A dataset's own state
    on the fallback ]): it declares one, or it is an IterableDataset (whose
    iterators may)."""
    return isinstance(dataset, torch.utils.data.IterableDataset) or declares_state(dataset)


def stateful_loader_class(ours: type):
    """torchdata's StatefulDataLoader, or None where it is not installed or is
    ``ours`` (under ``patch()``, torchdata subclasses the patched class)."""
    try:
        from torchdata.stateful_dataloader import StatefulDataLoader
    except ImportError:
        return None
    return None if issubclass(StatefulDataLoader, ours) else StatefulDataLoader


def stateful_loader(cls, arguments: dict):
    """``cls`` (torchdata's StatefulDataLoader, or None) built with the arguments it
    takes of ``arguments``; None without it."""
    if cls is None:
        return None
    accepted = inspect.signature(cls.__init__).parameters
    # in order, as on every path (NOTE [ Batches in order ] in loader.py)
    arguments = {**arguments, "in_order": True}
    return cls(**{k: v for k, v in arguments.items() if k in accepted})


def load_into(delegate, state: dict, dataset, accelerated: bool) -> None:
    """Loads torchdata's ``state`` into ``delegate``, or says why it cannot."""
    if delegate is None:
        raise ValueError(
            "this state was saved by torchdata's StatefulDataLoader, to which the fallback "
            f"handed {type(dataset).__name__} (it keeps its own state); this loader cannot "
            "load it: " + ("it is accelerated" if accelerated else
                           "torchdata is not installed (pip install torchdata)"))
    delegate.load_state_dict(state)


#: Keys only torchdata's StatefulDataLoader's states have (with workers, without).
_TORCHDATA_KEYS = ("_snapshot", "fetcher_state")
_MARKS = ("version", "fallback")


def wrap(state: dict) -> dict:
    """torchdata's ``state`` as a loader state (NOTE [ torchdata's state, as it is ])."""
    return {**state, "version": VERSION, "fallback": TORCHDATA}


def unwrap(state) -> dict | None:
    """torchdata's state in a loader state, or one StatefulDataLoader saved itself;
    None when it is neither."""
    if not isinstance(state, dict):
        return None
    if state.get("fallback") == TORCHDATA:
        if set(state) == {*_MARKS, "state"}:  # nested, as loaders before this layout saved it
            return state["state"]
        return {k: v for k, v in state.items() if k not in _MARKS}
    if any(k in state for k in _TORCHDATA_KEYS) and "version" not in state:
        return state
    return None


def warn_unsaved(dataset) -> None:
    _LG.warning("jpegloader: %s keeps a state of its own (state_dict/load_state_dict), which "
                "torch's DataLoader cannot save from its workers: the checkpoint restores the "
                "sample order and fast-forwards. Install torchdata (pip install torchdata) "
                "and this loader hands such datasets to its StatefulDataLoader, which saves "
                "and restores it", type(dataset).__name__)


__all__ = ["TORCHDATA", "TORCH_ARGUMENTS", "declares_state", "keeps_state", "load_into",
           "stateful_loader", "stateful_loader_class", "unwrap", "warn_unsaved", "wrap"]
