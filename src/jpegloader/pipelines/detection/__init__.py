"""The detection pipeline: COCO as torchvision's detection references read it (with
``--use-v2``: ``CocoDetection`` under ``wrap_dataset_for_transforms_v2``; without:
their own v1 classes), and as DETR's and RT-DETR's families read it, in Subsets or not, with their
transforms.  See NOTE [ A pipeline's contract ].

    recognise.py  recognise the dataset; what a sample reads (CocoSource)
    lower.py      lower the transforms: native steps, then the user's own objects
    steps.py      one class per kind of native step; torchvision v2's
    families.py   which step lowers a transform: v2 by type; the references' v1,
                  DETR's and RT-DETR's classes as subclasses, by name and structure
    draw.py       per-sample draws; the steps run on targets (and images, for replay)
    iou_crop.py   RandomIoUCrop's make_params with numpy arithmetic
    references_v1.py  the references' own v1 classes: their draws and arithmetic
    detr.py       DETR's dataset and transforms: their draws and arithmetic
    rtdetr.py     RT-DETR's dataset, Compose and epoch policy, and own transforms
    decode.py     decode a batch; targets, the user's part and collate_fn
    masks.py      instance masks painted by C into the slot
    zip_collate.py  the references' zip collate_fn, recognised
    slot_collates.py  DETR's padding collate_fn, recognised and made in the slot
"""
from __future__ import annotations

import dataclasses

from ..contract import DecodeOptions, Lowering, Pipeline, check
from . import lower, masks, recognise, rtdetr
from .decode import DetectionBatchDecoder, collate_in_slot, in_ring
from .family import Family


def _collate_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


class DetectionPipeline(Pipeline):
    name = "detection"

    def claims(self, dataset) -> bool:
        return recognise.claims(dataset)

    def lower(self, dataset, loader_args: dict | None = None) -> Lowering:
        args = loader_args or {}
        source, checks = recognise.recognise(dataset)
        if source is None:
            return Lowering(self.name, tuple(checks))
        transforms, policy = source.transforms, ""
        epoch = getattr(source.base, "epoch", -1)
        if source.family is Family.RTDETR:  # the steps its policy runs this epoch
            transforms, policy = rtdetr.active_steps(transforms, epoch)
            if transforms is None:
                return Lowering(self.name, (*checks, check(
                    lower.RULE, False, "", policy, "this loader runs on torch's DataLoader")))
        program, transform_checks = lower.lower(transforms, source.family)
        if policy:
            transform_checks.append(check(lower.RULE, True, f"RT-DETR's Compose: {policy} "
                                          f"(epoch {epoch} now)", "", ""))
        checks += transform_checks
        fn = args.get("collate_fn")
        collate = "default_collate" if fn is None else _collate_name(fn)
        if program is None:
            return Lowering(self.name, tuple(checks))
        program = dataclasses.replace(program, collate_fn=fn)
        # NOTE [ Detection batches in the ring ] (decode.py)
        where = "in the main process, on the images in the ring" if in_ring(program) \
            else "in the workers"
        kind = collate_in_slot(program)  # NOTE [ A collate_fn's batch made in the slot ]
        if kind is not None:
            where += f" ({kind.describes}: written straight into the batch's slot)"
        checks.append(check("loader.collate_fn", True, f"{collate}, run {where}", "", ""))
        if source.family is Family.V1 or masks.KEY in source.target_keys or \
                (source.family.own_dataset and getattr(source.convert, "return_masks", False)):
            # NOTE [ Masks painted into the slot ] (masks.py)
            maker = "your ConvertCocoPolysToMask" if source.converts else "the wrapper"
            if in_ring(program) and masks.painted(source, program):
                how = "painted by C into the batch's slot"
                if source.converts:
                    how += f" (targets built as {maker} builds them on sample images)"
            elif source.family is Family.DETR:
                how = "made by your prepare at the photo's size and moved by DETR's arithmetic"
            elif source.family.own_dataset:
                how = "made by your prepare at the photo's size and moved by torchvision's"
            else:
                how = (f"made by {maker} and moved with the native steps (your objects run "
                       "in the workers, or your target builder differs from the "
                       "references')")
            checks.append(check("target.masks", True, f"instance masks {how}", "", ""))
        split = {"native": ["decode", *program.names], "yours": list(program.yours_names),
                 "collate": f"{collate} {where}"}
        samples = recognise.dataset_key(source)
        return Lowering(self.name, tuple(checks), program, source,
                        (program, program.key, samples, repr(fn)), split, samples=samples)

    def decoder(self, lowering: Lowering, options: DecodeOptions) -> DetectionBatchDecoder:
        return DetectionBatchDecoder(lowering.source, lowering.program, options)


DETECTION = DetectionPipeline()

__all__ = ["DETECTION", "DetectionPipeline"]
