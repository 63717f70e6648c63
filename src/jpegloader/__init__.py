"""jpegloader: a drop-in, faster torch.utils.data.DataLoader for JPEG image datasets.

    loader = jpegloader.DataLoader(dataset, batch_size=256, num_workers=8, pin_memory=True)
    loader.eligibility.report()          # what accelerates, and why not
    jpegloader.explain(dataset, batch_size=256)
    jpegloader.patch()                   # every torch DataLoader built from now on is ours

    python -m jpegloader run train.py ARGS...   # the same for a script, unedited
"""
from .dataloader import DataLoader, Eligibility
from .dataloader.eligibility import evaluate as _evaluate
from .decoders import libjpeg_turbo_version
from .patching import patch
from .pipelines import Check

__version__ = "0.1.0"


def explain(dataset, batch_size=1, *, batch_sampler=None, collate_fn=None, **loader_kwargs
            ) -> Eligibility:
    """The verdict ``DataLoader(dataset, ...)`` would reach, without building it.

    Accepts the DataLoader's keyword arguments; those that never affect
    eligibility are ignored."""
    return _evaluate(dataset, batch_size=batch_size, batch_sampler=batch_sampler,
                     collate_fn=collate_fn, in_order=loader_kwargs.get("in_order", True))


__all__ = ["Check", "DataLoader", "Eligibility", "explain", "libjpeg_turbo_version", "patch"]
