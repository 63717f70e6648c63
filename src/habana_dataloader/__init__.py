"""Compatibility module: ``habana_dataloader.HabanaDataLoader`` is turboloader's loader.

Scripts written for Habana's loader (for example Model-References' ResNet and
SSD training) run unchanged: the same arguments, the same fallback messages,
and acceleration wherever turboloader can provide it.
"""
from turboloader import DataLoader as _DataLoader


class HabanaDataLoader(_DataLoader):
    """``turboloader.DataLoader`` under Habana's name."""


__all__ = ["HabanaDataLoader"]
