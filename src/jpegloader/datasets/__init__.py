"""Datasets the package ships for users: WebDataset tar shards read in place
(jpegloader.pipelines.shards) and the SSD reference's COCODetection (it lives with
the SSD pipeline, jpegloader.pipelines.ssd.dataset)."""
from ..pipelines.shards import ShardError, WebDataset
from ..pipelines.ssd.dataset import COCODetection, COCOFormatError

__all__ = ["COCODetection", "COCOFormatError", "ShardError", "WebDataset"]
