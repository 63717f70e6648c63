"""The COCO / SSD-300 pipeline: the SSD reference's COCODetection and
SSDTransformer (NVIDIA's and Habana's ssd/utils.py), recognised by name and structure in users'
own copies, or taken from this package.  See NOTE [ A pipeline's contract ].

    reference.py  the reference transforms (public as jpegloader.transforms.ssd)
    boxes.py      their box arithmetic, and its C twins (csrc/)
    recognise.py  recognise the dataset
    lower.py      lower the transform (SSDTransformer) into a program
    table.py      images and boxes as tensors shared with workers
    draw.py       crop/flip/jitter draws; plans; replay through the reference ops
    decode.py     decode a batch into the slot; assemble
"""
from __future__ import annotations

from torch.utils.data import default_collate

from ..contract import DecodeOptions, Lowering, Pipeline, check
from . import lower, recognise
from .decode import CocoBatchDecoder
from .table import AnnotationTable


class SSDPipeline(Pipeline):
    name = "ssd"

    def claims(self, dataset) -> bool:
        return recognise.claims(dataset)

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        checks = recognise.dataset_checks(dataset)
        fn = (loader_args or {}).get("collate_fn")
        checks.append(check("loader.collate_fn", fn is None or fn is default_collate,
                            "default_collate",
                            f"custom collate_fn {getattr(fn, '__qualname__', fn)!r}",
                            "the SSD pipeline reproduces default_collate only; with this "
                            "collate_fn this loader runs on torch's DataLoader"))
        if not all(c.passed for c in checks):
            return Lowering(self.name, tuple(checks))
        lowered, transform_checks = lower.lower_ssd(getattr(dataset, "transform", None))
        checks += transform_checks
        if lowered is None:
            return Lowering(self.name, tuple(checks))
        samples = recognise.dataset_key(dataset)
        return Lowering(self.name, tuple(checks), lowered, dataset, (lowered, samples),
                        {"native": ["decode", *lowered.names], "yours": [], "collate": None},
                        samples=samples)

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> CocoBatchDecoder:
        return CocoBatchDecoder(AnnotationTable.from_dataset(lowering.source),
                                lowering.program, options)


SSD = SSDPipeline()

__all__ = ["SSD", "SSDPipeline"]
