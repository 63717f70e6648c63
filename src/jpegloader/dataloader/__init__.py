"""The DataLoader subclass and eligibility; the epoch, its worker pool and the
shared-memory ring; delivery to pinned memory and devices.  What is decoded is
the pipelines' business (pipelines/)."""
from .eligibility import Eligibility, evaluate
from .loader import DataLoader

__all__ = ["DataLoader", "Eligibility", "evaluate"]
