"""Recognising a COCO dataset: the SSD reference's ``COCODetection``, matched by
class name and attributes, as users keep their own copy of the reference class."""
from __future__ import annotations

from ..contract import Check

#: What the SSD reference's COCODetection keeps and the COCO path reads.
COCO_ATTRIBUTES = ("img_folder", "annotate_file", "images", "label_info", "img_keys")


def coco_missing(dataset) -> list[str]:
    missing = [a for a in COCO_ATTRIBUTES if not hasattr(dataset, a)]
    if "label_info" in missing and hasattr(dataset, "label_map"):
        missing.remove("label_info")
    return missing


def claims(dataset) -> bool:
    """COCO datasets are recognised by class name and attributes: users keep their
    own copy of the reference class."""
    return type(dataset).__name__ == "COCODetection"


def dataset_checks(dataset) -> list[Check]:
    missing = coco_missing(dataset)
    name = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
    if missing:
        return [Check("dataset.type", False,
                      f"dataset is {name} but lacks {', '.join(missing)}, so it is not the "
                      "SSD reference's COCODetection",
                      "keep the reference attributes (img_folder, annotate_file, images, "
                      "label_map/label_info, img_keys) or use jpegloader.datasets.COCODetection")]
    return [Check("dataset.type", True, "dataset is COCODetection (ssd pipeline)")]


def dataset_key(dataset) -> tuple:
    """Equal while the images and annotations the dataset returns stay the same."""
    content = hash(tuple(
        (k, dataset.images[k][0], tuple(dataset.images[k][1]),
         tuple((tuple(box), label) for box, label in dataset.images[k][2]))
        for k in dataset.img_keys))
    return (str(dataset.img_folder), len(dataset.img_keys), content)
