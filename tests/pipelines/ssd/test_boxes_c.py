"""The SSD box arithmetic in C (transforms.boxes.crop_boxes_c and
encode_into) against the torch versions it replaces in the workers:
bit-identical outputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from jpegloader.pipelines.ssd import boxes as B
from jpegloader.sources.coco_ssd import COCODetection
from jpegloader.transforms.ssd import dboxes300_coco
from tests.coco_fixtures import coco_sample

DBOXES = dboxes300_coco()("ltrb")


def both(bboxes: torch.Tensor, labels: torch.Tensor, criteria: float = 0.5):
    want_boxes, want_labels = B.encode(bboxes, labels, DBOXES, criteria)
    boxes = np.full((len(DBOXES), 4), np.nan, dtype=np.float32)
    out_labels = np.full(len(DBOXES), -1, dtype=np.int64)
    B.encode_into(bboxes, labels, DBOXES, criteria, boxes, out_labels)
    return (want_boxes.numpy(), want_labels.numpy()), (boxes, out_labels)


def assert_identical(bboxes, labels, criteria=0.5):
    (wb, wl), (gb, gl) = both(bboxes, labels, criteria)
    np.testing.assert_array_equal(gb, wb)  # bit for bit, not within a tolerance
    np.testing.assert_array_equal(gl, wl)


def random_boxes(g: torch.Generator, n: int) -> torch.Tensor:
    xy = torch.rand(n, 2, generator=g) * 0.9
    wh = torch.rand(n, 2, generator=g) * (1 - xy) + 1e-3
    return torch.cat([xy, xy + wh], 1)


def test_random_boxes_match_torch_bit_for_bit():
    g = torch.Generator().manual_seed(0)
    for _ in range(300):
        n = int(torch.randint(1, 40, (1,), generator=g))
        assert_identical(random_boxes(g, n), torch.randint(1, 81, (n,), generator=g))


def test_ties_and_exact_default_boxes_match_torch():
    g = torch.Generator().manual_seed(1)
    boxes = random_boxes(g, 6)
    boxes[3] = boxes[1]           # duplicate ground truth: equal IoUs everywhere
    boxes[4] = DBOXES[1234]       # exactly a default box: IoU 1.0
    boxes[5] = DBOXES[1234]       # ... claimed twice: the later box wins it
    assert_identical(boxes, torch.arange(1, 7))
    assert_identical(boxes[:1], torch.tensor([5]))          # a single box
    assert_identical(torch.tensor([[0.0, 0.0, 1.0, 1.0]]), torch.tensor([2]))
    assert_identical(boxes, torch.arange(1, 7), criteria=0.3)


def test_degenerate_boxes_match_torch():
    # zero-area and outside-the-image boxes reach the encoder in user data
    boxes = torch.tensor([[0.2, 0.2, 0.2, 0.5], [0.5, 0.5, 0.4, 0.4], [1.1, 1.1, 1.3, 1.2],
                          [0.1, 0.1, 0.3, 0.3]])
    assert_identical(boxes, torch.tensor([1, 2, 3, 4]))


def test_real_coco_annotations_match_torch():
    images, annotations = coco_sample()
    ds = COCODetection(str(images), str(annotations))
    checked = 0
    for img_id in ds.img_keys:
        _, (htot, wtot), anns = ds.images[img_id]
        boxes = torch.tensor([(l / wtot, t / htot, (l + w) / wtot, (t + h) / htot)
                              for (l, t, w, h), _ in anns], dtype=torch.float32)
        assert_identical(boxes, torch.tensor([label for _, label in anns]))
        checked += 1
    assert checked == len(ds) > 50


def test_no_boxes_and_wrong_buffers_are_refused():
    out = np.empty((len(DBOXES), 4), np.float32), np.empty(len(DBOXES), np.int64)
    with pytest.raises(ValueError, match="at least one box"):
        B.encode_into(torch.zeros(0, 4), torch.zeros(0, dtype=torch.int64), DBOXES, 0.5, *out)
    with pytest.raises(ValueError, match="labels"):
        B.encode_into(torch.rand(3, 4), torch.zeros(2, dtype=torch.int64), DBOXES, 0.5, *out)
    with pytest.raises(ValueError, match="out_boxes"):
        B.encode_into(torch.rand(3, 4), torch.zeros(3, dtype=torch.int64), DBOXES, 0.5,
                      out[0][:10], out[1])


def assert_same_crop(bboxes, labels, window):
    want_boxes, want_labels = B.crop_boxes(bboxes, labels, *window)
    got_boxes, got_labels = B.crop_boxes_c(bboxes, labels, *window)
    np.testing.assert_array_equal(got_boxes.numpy(), want_boxes.numpy())
    np.testing.assert_array_equal(got_labels.numpy(), want_labels.numpy())
    assert got_boxes.dtype == want_boxes.dtype and got_labels.dtype == want_labels.dtype
    return len(got_boxes)


def test_crop_matches_torch_on_random_windows():
    g = torch.Generator().manual_seed(2)
    rng = np.random.default_rng(2)
    sizes = set()
    for _ in range(500):
        n = int(torch.randint(0, 30, (1,), generator=g))
        w, h = rng.uniform(0.3, 1.0, 2)
        window = (float(rng.uniform(0, 1 - w)), float(rng.uniform(0, 1 - h)), float(w), float(h))
        sizes.add(assert_same_crop(random_boxes(g, n), torch.randint(1, 81, (n,), generator=g),
                                   window))
    assert 0 in sizes and max(sizes) > 10  # windows that keep nothing, and many


def test_crop_rounds_the_bounds_to_float32_as_torch_does():
    # a centre exactly at float32(left) with left a double just below it: inside
    # in double arithmetic, outside in torch's float32 comparison
    xc = np.float32(0.4)
    left = float(np.nextafter(np.float64(xc), 0))
    boxes = torch.tensor([[0.3, 0.3, float(2 * xc) - 0.3, 0.5],  # centre x == float32(left)
                          [0.45, 0.45, 0.6, 0.6],
                          [0.1, 0.2, 0.9, 0.8]], dtype=torch.float32)
    assert assert_same_crop(boxes, torch.tensor([1, 2, 3]), (left, 0.1, 0.5, 0.7)) >= 1
    # bounds that clamp every side, and a window over the whole image
    assert assert_same_crop(boxes, torch.tensor([1, 2, 3]), (0.35, 0.35, 0.3, 0.3)) >= 1
    assert assert_same_crop(boxes, torch.tensor([1, 2, 3]), (0.0, 0.0, 1.0, 1.0)) == 3
