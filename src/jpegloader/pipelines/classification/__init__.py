"""The classification pipeline: image folders (torchvision's DatasetFolder and
ImageFolder, timm's ImageDataset, Subsets of them) with the transforms real
training recipes build.  See NOTE [ A pipeline's contract ] in contract.py.

    datasets.py    recognise the dataset; what a sample reads (ImageSource)
    transforms.py  lower the transform into ops (ops.py): every blocker named
    draw.py        per-sample random parameters; replay through torchvision
    decoder.py     decode a batch into the slot; assemble
"""
from __future__ import annotations

import torch

from ..contract import DecodeOptions, Lowering, Pipeline
from ..file_table import FileTable
from . import datasets
from .decoder import ClassificationBatchDecoder
from .transforms import ClassificationProgram, lower_transform


class ClassificationPipeline(Pipeline):
    name = "classification"

    def claims(self, dataset) -> bool:
        return datasets.claims(dataset)

    def lower(self, dataset) -> Lowering:
        source, checks = datasets.recognise(dataset)
        transform = source.transform if source is not None else \
            getattr(datasets.unwrap_subsets(dataset)[0], "transform", None)
        program, transform_checks = lower_transform(transform)
        checks = [*checks, *transform_checks]
        if source is None or program is None:
            return Lowering(self.name, tuple(checks))
        return Lowering(self.name, tuple(checks), program, source, (program, source.key()))

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> ClassificationBatchDecoder:
        source: datasets.ImageSource = lowering.source
        index_map = None if source.indices is None else \
            torch.from_numpy(source.indices.copy()).share_memory_()
        return ClassificationBatchDecoder(FileTable.from_samples(source.samples), index_map,
                                          lowering.program, source.replace_unreadable, options)


CLASSIFICATION = ClassificationPipeline()

__all__ = ["CLASSIFICATION", "ClassificationPipeline", "ClassificationProgram"]
