"""NOTE [ RandomIoUCrop's draws, fast ]: the numpy arithmetic gives make_params' windows,
on the COCO sample's real boxes, after zoom-outs, for many seeds."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision import tv_tensors
from torchvision.transforms import v2 as T

pytest.importorskip("pycocotools", reason="torchvision's CocoDetection needs pycocotools")

from jpegloader.pipelines import DETECTION, DecodeOptions  # noqa: E402
from jpegloader.pipelines.detection import iou_crop  # noqa: E402
from jpegloader.pipelines.stand_ins import canvas  # noqa: E402
from tests.pipelines.detection.conftest import build  # noqa: E402


def same(theirs: dict, ours: dict) -> bool:
    return theirs.keys() == ours.keys() and all(
        torch.equal(v, ours[k]) if isinstance(v, torch.Tensor) else v == ours[k]
        for k, v in theirs.items())


@pytest.mark.parametrize("options", [None, [0.0, 0.3, 2.0]])
def test_the_windows_are_make_params_windows_on_real_boxes(options):
    t = T.RandomIoUCrop(sampler_options=options)
    source = DETECTION.decoder(DETECTION.lower(build("ssdlite"), {}), DecodeOptions()).source
    compared = cropped = 0
    for row in range(0, len(source.base.ids), 4):
        h, w = source.json_size(row)
        boxes = source.target(row, (h, w))["boxes"]
        for zoom in (1.0, 2.7):  # as after RandomZoomOut: the boxes moved into a canvas
            H, W = int(h * zoom), int(w * zoom)
            moved = tv_tensors.wrap(boxes + torch.tensor([W - w, H - h] * 2) // 2,
                                    like=boxes, canvas_size=(H, W))
            for seed in range(6):
                torch.manual_seed(seed)
                theirs = t.make_params([canvas(H, W), moved])
                next_theirs = torch.rand(1)
                torch.manual_seed(seed)
                ours = iou_crop.params(t, iou_crop.xyxy(moved), H, W)
                assert same(theirs, ours), (row, zoom, seed)
                assert torch.equal(torch.rand(1), next_theirs)  # the same draws, no more
                compared += 1
                cropped += bool(ours)
    assert compared > 100 and 0 < cropped < compared


def test_an_object_whose_draws_differ_keeps_its_own_make_params():
    t = T.RandomIoUCrop()
    t.make_params = lambda flat: {}
    assert not iou_crop.agrees(t)
    assert iou_crop.agrees(T.RandomIoUCrop())


def test_float64_boxes_are_compared_in_float64():
    t = T.RandomIoUCrop()
    raw = torch.tensor(np.array([[10.25, 20.5, 300.75, 200.125]]), dtype=torch.float64)
    boxes = tv_tensors.BoundingBoxes(raw, format="XYXY", canvas_size=(480, 640))
    for seed in range(20):
        torch.manual_seed(seed)
        theirs = t.make_params([canvas(480, 640), boxes])
        torch.manual_seed(seed)
        assert same(theirs, iou_crop.params(t, iou_crop.xyxy(boxes), 480, 640))
