"""The accelerated pipelines, one package each, behind one contract
(NOTE [ A pipeline's contract ] in contract.py):

    classification/  image folders with the transforms of real training recipes
    ssd/             COCO with the SSD-300 reference transforms
    detection/       COCO as torchvision's detection references read it (v2)
    yolo/            Ultralytics' YOLODataset, its validation loaders

Beside them, what several share: ``by_value.py`` (tensors sent by value between
processes), ``stand_ins.py`` (images with no pixels, for code that reads only a size),
``slot_batches.py``, ``tensor_stage.py``, ``tensor_backend.py``, ``colour.py``,
``subsets.py``, ``random_stream.py``.

``PIPELINES`` is the registry the loader asks, in order: the first pipeline
that claims a dataset judges it.
"""
from .classification import CLASSIFICATION
from .contract import (
    DECODE_CHOICES,
    ON_ERROR_CHOICES,
    WORKER_STAGES,
    BatchDecoder,
    BatchReport,
    Check,
    DecodeOptions,
    Lowering,
    Pipeline,
    SampleFailure,
)
from .detection import DETECTION
from .ssd import SSD
from .yolo import YOLO

PIPELINES: tuple[Pipeline, ...] = (CLASSIFICATION, SSD, DETECTION, YOLO)


def pipeline_for(dataset) -> Pipeline | None:
    """The pipeline that claims ``dataset``, if any."""
    return next((p for p in PIPELINES if p.claims(dataset)), None)


__all__ = ["CLASSIFICATION", "DECODE_CHOICES", "DETECTION", "ON_ERROR_CHOICES", "PIPELINES", "SSD",
           "YOLO", "WORKER_STAGES", "BatchDecoder",
           "BatchReport", "Check", "DecodeOptions", "Lowering", "Pipeline", "SampleFailure",
           "pipeline_for"]
