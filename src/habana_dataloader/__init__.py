"""Compatibility module: ``habana_dataloader.HabanaDataLoader`` is jpegloader's loader.

Scripts written for Habana's loader (for example Model-References' ResNet and
SSD training) run unchanged: the same arguments, the same fallback messages,
and acceleration wherever jpegloader can provide it.
"""
from jpegloader import DataLoader as _DataLoader


class HabanaDataLoader(_DataLoader):
    """``jpegloader.DataLoader`` under Habana's name."""


__all__ = ["HabanaDataLoader"]
