"""Datasets the accelerated pipelines understand (beyond torchvision's ImageFolder)."""
from .coco import COCODetection

__all__ = ["COCODetection"]
