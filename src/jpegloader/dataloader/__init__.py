"""The DataLoader subclass, eligibility and fallback, the multi-process engine,
the shared-memory ring, and delivery to pinned memory and devices."""
from .eligibility import Check, Eligibility, evaluate
from .loader import DataLoader

__all__ = ["Check", "DataLoader", "Eligibility", "evaluate"]
