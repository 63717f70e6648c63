"""Datasets the package ships for users: the SSD reference's COCODetection (it
lives with the SSD pipeline, jpegloader.pipelines.ssd.dataset)."""
from ..pipelines.ssd.dataset import COCODetection, COCOFormatError

__all__ = ["COCODetection", "COCOFormatError"]
