"""COCO detection dataset as the SSD reference reads it (NVIDIA's and Habana's ssd/utils.py).

Category ids map to 1..80 in the order of the JSON's ``categories`` (0 is
background); images without annotations are dropped; iscrowd boxes are kept.
A sample is ``(image, image id, (height, width) from the JSON, float32[N, 4]
ltrb boxes normalised by the JSON size, int64[N] labels)``, passed through
``transform(image, (h, w), boxes, labels)`` when one is set.

Malformed annotation files fail at construction with the file and the
offending record named.  Boxes outside the image or with zero area are kept,
as the reference keeps them, and counted in one warning.
"""
from __future__ import annotations

import json
import logging
import os

import torch
import torch.utils.data
from PIL import Image

_LG = logging.getLogger("jpegloader")
_REQUIRED = {"images": ("id", "file_name", "height", "width"),
             "annotations": ("id", "image_id", "category_id", "bbox"),
             "categories": ("id", "name")}


class COCOFormatError(ValueError):
    """The annotation file is not in COCO instances format."""


def _validate(data, path: str) -> None:
    if not isinstance(data, dict):
        raise COCOFormatError(f"{path}: not a COCO instances file (the top level is a "
                              f"{type(data).__name__}, not an object)")
    for key, fields in _REQUIRED.items():
        records = data.get(key)
        if not isinstance(records, list):
            raise COCOFormatError(f"{path}: not a COCO instances file (no {key!r} list; "
                                  "captions or keypoints files are not detection files)")
        for k, rec in enumerate(records):
            missing = [f for f in fields if not isinstance(rec, dict) or f not in rec]
            if missing:
                rid = rec.get("id", "?") if isinstance(rec, dict) else "?"
                raise COCOFormatError(f"{path}: {key}[{k}] (id {rid}) lacks "
                                      f"{', '.join(missing)}")


class COCODetection(torch.utils.data.Dataset):
    """The SSD reference's COCO dataset (this module's docstring says what a sample is).

    Args:
        img_folder: the folder of the images (``val2017/``, ``train2017/``).
        annotate_file: the instances JSON (``instances_val2017.json``).
        transform: called as ``transform(image, (h, w), boxes, labels)``, as the
            reference's ``SSDTransformer`` is.
    """

    def __init__(self, img_folder, annotate_file, transform=None):
        self.img_folder = img_folder
        self.annotate_file = annotate_file
        try:
            with open(annotate_file) as f:
                self.data = json.load(f)
        except json.JSONDecodeError as e:
            raise COCOFormatError(f"{annotate_file}: not valid JSON ({e})") from None
        _validate(self.data, str(annotate_file))

        self.label_map = {}                 # COCO category id -> 1..80
        self.label_info = {0: "background"}
        for k, cat in enumerate(self.data["categories"], start=1):
            self.label_map[cat["id"]] = k
            self.label_info[k] = cat["name"]

        self.images = {}                    # id -> (file name, (h, w), [(bbox, label)])
        for img in self.data["images"]:
            if img["id"] in self.images:
                raise COCOFormatError(f"{annotate_file}: image id {img['id']} appears "
                                      "twice in 'images'")
            self.images[img["id"]] = (img["file_name"], (img["height"], img["width"]), [])

        odd = []
        for ann in self.data["annotations"]:
            if ann["image_id"] not in self.images:
                raise COCOFormatError(f"{annotate_file}: annotation {ann['id']} refers to "
                                      f"image id {ann['image_id']}, which is not in 'images'")
            if ann["category_id"] not in self.label_map:
                raise COCOFormatError(f"{annotate_file}: annotation {ann['id']} has "
                                      f"category_id {ann['category_id']}, which is not in "
                                      "'categories'")
            bbox = ann["bbox"]
            if len(bbox) != 4:
                raise COCOFormatError(f"{annotate_file}: annotation {ann['id']} has bbox "
                                      f"{bbox!r}; expected [x, y, width, height]")
            entry = self.images[ann["image_id"]]
            h, w = entry[1]
            x, y, bw, bh = bbox
            if bw <= 0 or bh <= 0 or x < 0 or y < 0 or x + bw > w or y + bh > h:
                odd.append(ann["id"])
            entry[2].append((bbox, self.label_map[ann["category_id"]]))
        if odd:
            _LG.warning("%s: %d annotation(s) have zero area or reach outside their image "
                        "(ids %s); they are kept, as the SSD reference keeps them",
                        annotate_file, len(odd), ", ".join(map(str, odd[:10])) +
                        (", ..." if len(odd) > 10 else ""))

        for key in [k for k, v in self.images.items() if not v[2]]:
            del self.images[key]
        self.img_keys = list(self.images.keys())
        self.transform = transform

    @property
    def labelnum(self) -> int:
        return len(self.label_info)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, idx):
        img_id = self.img_keys[idx]
        file_name, (htot, wtot), annotations = self.images[img_id]
        img = Image.open(os.path.join(self.img_folder, file_name)).convert("RGB")
        bboxes = torch.tensor([(l / wtot, t / htot, (l + w) / wtot, (t + h) / htot)
                               for (l, t, w, h), _ in annotations])
        labels = torch.tensor([label for _, label in annotations])
        if self.transform is not None:
            img, (htot, wtot), bboxes, labels = self.transform(img, (htot, wtot), bboxes, labels)
        return img, img_id, (htot, wtot), bboxes, labels
