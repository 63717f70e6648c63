"""Datasets the package ships for users: WebDataset tar shards read in place
(jpegloader.sources.shards), Hugging Face datasets read from their Arrow files
(jpegloader.sources.arrow_images), and the SSD reference's COCODetection
(jpegloader.sources.coco_ssd)."""
from ..sources.arrow_images import HuggingFaceImages
from ..sources.coco_ssd import COCODetection, COCOFormatError
from ..sources.file_table import SpanChangedError
from ..sources.remote_cache import CacheLimitError
from ..sources.shards import ShardError, ShardSampler, WebDataset

__all__ = ["CacheLimitError", "COCODetection", "COCOFormatError", "HuggingFaceImages",
           "ShardError", "ShardSampler", "SpanChangedError", "WebDataset"]
