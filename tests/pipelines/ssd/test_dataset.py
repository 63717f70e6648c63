"""COCODetection: the reference's reading of an instances file, and bad files."""
from __future__ import annotations

import json

import pytest
import torch
from PIL import Image

from jpegloader.datasets import COCODetection
from jpegloader.sources.coco_ssd import COCOFormatError
from tests import ssd_user_copy as user
from tests.coco_fixtures import write_coco


@pytest.fixture
def small_coco(tmp_path):
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        Image.new("RGB", (64, 48), (120, 30, 200)).save(tmp_path / name)
    images = [{"id": 30, "file_name": "c.jpg", "height": 48, "width": 64},
              {"id": 10, "file_name": "a.jpg", "height": 48, "width": 64},
              {"id": 20, "file_name": "b.jpg", "height": 48, "width": 64}]
    annotations = [
        {"id": 1, "image_id": 10, "category_id": 90, "bbox": [1.5, 2, 30, 20], "iscrowd": 0},
        {"id": 2, "image_id": 30, "category_id": 5, "bbox": [0, 0, 64, 48], "iscrowd": 1},
        {"id": 3, "image_id": 10, "category_id": 2, "bbox": [10, 10, 5.25, 7], "iscrowd": 0},
    ]
    categories = [{"id": 5, "name": "five"}, {"id": 2, "name": "two"},
                  {"id": 90, "name": "ninety"}]
    return tmp_path, write_coco(tmp_path, images, annotations, categories)


def test_reads_like_the_reference(small_coco):
    folder, ann = small_coco
    ours, ref = COCODetection(folder, ann), user.COCODetection(folder, ann)
    assert ours.label_map == {5: 1, 2: 2, 90: 3} == ref.label_map  # JSON order, 1..N
    assert ours.label_info == ref.label_info
    assert ours.img_keys == [30, 10] == ref.img_keys  # image 20 has no boxes: dropped
    for i in range(len(ours)):
        a, b = ours[i], ref[i]
        assert a[1:3] == b[1:3]
        assert torch.equal(a[3], b[3]) and a[3].dtype == torch.float32
        assert torch.equal(a[4], b[4]) and a[4].dtype == torch.int64
        assert a[0].size == b[0].size and a[0].mode == "RGB"
    assert ours[0][4].tolist() == [1]  # the iscrowd box is kept


@pytest.mark.parametrize("content, fragment", [
    ([1, 2, 3], "top level is a list"),
    ({"images": [], "annotations": []}, "no 'categories' list"),
    ({"images": [{"id": 1}], "annotations": [], "categories": []}, "images[0] (id 1) lacks"),
])
def test_not_instances_format(tmp_path, content, fragment):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(content))
    with pytest.raises(COCOFormatError, match=r"x\.json") as e:
        COCODetection(tmp_path, path)
    assert fragment in str(e.value)


def test_not_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(COCOFormatError, match="not valid JSON"):
        COCODetection(tmp_path, path)


def test_bad_records_named(tmp_path):
    img = [{"id": 1, "file_name": "a.jpg", "height": 10, "width": 10}]
    cat = [{"id": 1, "name": "x"}]
    ann = {"id": 77, "image_id": 1, "category_id": 3, "bbox": [0, 0, 1, 1]}
    with pytest.raises(COCOFormatError, match="annotation 77 has category_id 3"):
        COCODetection(tmp_path, write_coco(tmp_path, img, [ann], cat))
    ann = {"id": 78, "image_id": 9, "category_id": 1, "bbox": [0, 0, 1, 1]}
    with pytest.raises(COCOFormatError, match="annotation 78 refers to image id 9"):
        COCODetection(tmp_path, write_coco(tmp_path, img, [ann], cat))
    with pytest.raises(COCOFormatError, match="image id 1 appears twice"):
        COCODetection(tmp_path, write_coco(tmp_path, img * 2, [], cat))


def test_odd_boxes_kept_and_reported(tmp_path, caplog):
    img = [{"id": 1, "file_name": "a.jpg", "height": 10, "width": 10}]
    anns = [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 0, 4]},
            {"id": 6, "image_id": 1, "category_id": 1, "bbox": [8, 8, 5, 5]}]
    with caplog.at_level("WARNING", logger="jpegloader"):
        ds = COCODetection(tmp_path, write_coco(tmp_path, img, anns, [{"id": 1, "name": "x"}]))
    assert "ids 5, 6" in caplog.text
    assert len(ds.images[1][2]) == 2
