"""The YOLO pipeline: Ultralytics' ``YOLODataset`` (detect, segment, pose, obb) as
its loaders read it (``build_yolo_dataset``): validation (rect or square
LetterBox) and training (Mosaic, RandomPerspective, MixUp, HSV, flips: the user's
transforms per sample, two pixel steps in C), batches as its collate_fn makes
them.  See NOTE [ A pipeline's contract ].

    recognise.py  recognise the dataset, its transforms and collate_fn
    lower.py      the verdict: every rule, and what the workers run
    draw.py       each sample's geometry (no random draws in validation) and plan
    labels.py     a validation sample's labels through the user's LetterBox and Format
    batches.py    what both share: the slot's layout, the collate_fn's batch
    decode.py     decode a validation batch into letterboxes
    steps.py      the training steps whose pixels C does, one class each (IN_C)
    augment.py    their pixels: the warp, HSV, Format's planes, Mosaic's unbuilt canvas
    in_place.py   which of your steps' label methods run natively (verified sources)
    polygons.py   segment boxes and Format's masks over all of a sample's polygons at once
    instances.py  Mosaic's, RandomPerspective's, RandomFlip's, LetterBox's and Format's
                  label arithmetic, natively
    oriented.py   oriented boxes held to the image in their direction; Format's xywhr
    train.py      decode a training batch, cache it for Mosaic, run its samples
    csrc/         OpenCV's warpAffine, HSV, fillPoly and the polygons' arithmetic in C
"""
from __future__ import annotations

from ..contract import DecodeOptions, Lowering, Pipeline
from . import lower, recognise
from .batches import YoloBatches
from .decode import YoloBatchDecoder
from .train import YoloTrainDecoder


class YoloPipeline(Pipeline):
    name = lower.NAME

    def claims(self, dataset) -> bool:
        return recognise.claims(dataset)

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        return lower.lower(dataset, loader_args)

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> YoloBatches:
        if isinstance(lowering.source, recognise.YoloTrainSource):
            return YoloTrainDecoder(lowering.source, options)
        return YoloBatchDecoder(lowering.source, options)


YOLO = YoloPipeline()

__all__ = ["YOLO", "YoloPipeline"]
