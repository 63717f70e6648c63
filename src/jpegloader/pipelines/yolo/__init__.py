"""The YOLO pipeline: Ultralytics' ``YOLODataset`` (detect, segment, pose, obb) as
its validation loaders read it (``build_yolo_dataset`` with mode="val", rect or
square), batches as its collate_fn makes them.  Training loaders (Mosaic,
RandomPerspective, MixUp, HSV, flips) are recognised and run on torch's
DataLoader, the verdict naming their transforms.  See NOTE [ A pipeline's contract ].

    recognise.py  recognise the dataset, its transforms and collate_fn
    lower.py      the verdict: every rule, and what the workers run
    draw.py       each sample's geometry (no random draws in validation) and plan
    labels.py     a sample's labels through the user's LetterBox and Format
    decode.py     decode a batch into letterboxes; assemble the collate_fn's batch
"""
from __future__ import annotations

from ..contract import DecodeOptions, Lowering, Pipeline
from . import lower, recognise
from .decode import YoloBatchDecoder


class YoloPipeline(Pipeline):
    name = lower.NAME

    def claims(self, dataset) -> bool:
        return recognise.claims(dataset)

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        return lower.lower(dataset, loader_args)

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> YoloBatchDecoder:
        return YoloBatchDecoder(lowering.source, options)


YOLO = YoloPipeline()

__all__ = ["YOLO", "YoloPipeline"]
