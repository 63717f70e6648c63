"""A COCO dataset's images and boxes as compact tensors shared with workers (moved
into shared memory by the loader, as the FileTable is).

Built from the dataset's own ``images`` / ``img_keys`` / ``img_folder`` (the
attributes the SSD reference's COCODetection keeps), so it holds exactly what
the dataset's ``__getitem__`` would return.  Workers never touch the
dataset's dicts and lists (whose reference counts would copy their pages into
every worker).
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch

from ...sources.file_table import FileTable


class AnnotationTable:
    def __init__(self, files: FileTable, json_hw: torch.Tensor, box_offsets: torch.Tensor,
                 boxes: torch.Tensor, labels: torch.Tensor):
        self.files = files              # paths; targets are the image ids
        self.json_hw = json_hw          # int64[n, 2]: (height, width) from the JSON
        self.box_offsets = box_offsets  # int64[n + 1]
        self.boxes = boxes              # float32[total, 4]: ltrb normalised by the JSON size
        self.labels = labels            # int64[total]: 1..80

    @classmethod
    def from_dataset(cls, dataset) -> AnnotationTable:
        samples, hw, counts, flat_boxes, flat_labels = [], [], [], [], []
        for img_id in dataset.img_keys:
            file_name, (htot, wtot), annotations = dataset.images[img_id]
            samples.append((os.path.join(dataset.img_folder, file_name), int(img_id)))
            hw.append((htot, wtot))
            counts.append(len(annotations))
            for (l, t, w, h), label in annotations:
                # The reference's arithmetic: Python floats, then float32.
                flat_boxes.append((l / wtot, t / htot, (l + w) / wtot, (t + h) / htot))
                flat_labels.append(label)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        boxes = torch.tensor(flat_boxes, dtype=torch.float32).reshape(-1, 4)
        return cls(FileTable.from_samples(samples),
                   torch.tensor(hw, dtype=torch.int64).reshape(-1, 2),
                   torch.from_numpy(offsets), boxes,
                   torch.tensor(flat_labels, dtype=torch.int64))

    def tensors(self) -> list[torch.Tensor]:
        """What goes into shared memory for the workers (BatchDecoder.shared_tensors)."""
        return [*self.files.tensors(), self.json_hw, self.box_offsets, self.boxes, self.labels]

    def __len__(self) -> int:
        return len(self.files)

    def annotations(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(boxes float32[N, 4], labels int64[N]) of one image (copies)."""
        o = self.box_offsets.numpy()
        lo, hi = int(o[index]), int(o[index + 1])
        return self.boxes[lo:hi].clone(), self.labels[lo:hi].clone()

    def json_sizes(self, indices: Sequence[int]) -> np.ndarray:
        return self.json_hw.numpy()[np.asarray(indices, dtype=np.int64)]
