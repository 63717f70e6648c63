"""Datasets the package ships for users: WebDataset tar shards read in place
(jpegloader.pipelines.shards), Hugging Face datasets read from their Arrow files
(jpegloader.pipelines.arrow_images), and the SSD reference's COCODetection (it lives
with the SSD pipeline, jpegloader.pipelines.ssd.dataset)."""
from ..pipelines.arrow_images import HuggingFaceImages
from ..pipelines.remote_cache import CacheLimitError
from ..pipelines.shards import ShardError, ShardSampler, WebDataset
from ..pipelines.ssd.dataset import COCODetection, COCOFormatError

__all__ = ["CacheLimitError", "COCODetection", "COCOFormatError", "HuggingFaceImages",
           "ShardError", "ShardSampler", "WebDataset"]
