"""The SSD-300 reference data pipeline (NVIDIA's and Habana's ssd/utils.py) as the package ships it:
``SSDTransformer``, ``SSDCropping``, the box-aware ``RandomHorizontalFlip``,
``Encoder``, ``DefaultBoxes`` and ``dboxes300_coco``.  They live with the
accelerated SSD pipeline (jpegloader.pipelines.ssd.reference)."""
from ..pipelines.ssd.reference import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    DefaultBoxes,
    Encoder,
    RandomHorizontalFlip,
    SSDCropping,
    SSDTransformer,
    dboxes300_coco,
)

__all__ = ["IMAGENET_MEAN", "IMAGENET_STD", "DefaultBoxes", "Encoder", "RandomHorizontalFlip",
           "SSDCropping", "SSDTransformer", "dboxes300_coco"]
