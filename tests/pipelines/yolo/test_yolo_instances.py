"""Mosaic's merged labels and Format's label tensors computed natively (NOTE [ A
Mosaic's labels at once ] in pipelines/yolo/instances.py), held to Ultralytics' own
objects: whole samples with the same draws for detect, segment and pose, and the two
methods called directly on what their samples rarely hold (nine photos, photos not
normalised, NaN, boxes of no area, more than 255 instances); anything else goes to
the user's method, with the same result."""
from __future__ import annotations

import copy
import re
from importlib import util
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.pipelines.yolo.test_yolo_polygons import _samples
from tests.pipelines.yolo.yolo_sets import coco_yolo_set, generated_yolo_set, train_dataset

pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for the YOLO pipeline")


def _taken(monkeypatch) -> dict:
    """How many samples each replacement computed itself (not handed to your method)."""
    from jpegloader.pipelines.yolo import instances
    counts = {"mosaic": 0, "mix": 0, "paste": 0, "perspective": 0, "flip": 0, "letterbox": 0,
              "format": 0}
    for name, check in (("mosaic", instances._mergeable), ("mix", instances._joinable),
                        ("paste", instances._pastable), ("perspective", instances._warpable),
                        ("flip", instances._flippable), ("letterbox", instances._letterboxable),
                        ("format", instances._formattable)):
        def counted(*args, _name=name, _check=check):
            taken = _check(*args)
            counts[_name] += bool(taken)
            return taken
        monkeypatch.setattr(instances, check.__name__, counted)
    return counts


def _assert_same_value(ours, theirs, where: str = "") -> None:
    """Equal keys, dtypes, shapes and values (NaN where NaN); Instances field by field."""
    from ultralytics.utils.instance import Instances
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key in theirs:
            _assert_same_value(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, Instances):
        assert type(ours) is Instances and ours.normalized == theirs.normalized, where
        assert ours._bboxes.format == theirs._bboxes.format, where
        for field in ("bboxes", "segments", "keypoints"):
            _assert_same_value(getattr(ours, field), getattr(theirs, field), f"{where}.{field}")
    elif isinstance(theirs, list):
        assert type(ours) is list and len(ours) == len(theirs), where
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same_value(a, b, f"{where}[{k}]")
    elif isinstance(theirs, (np.ndarray, torch.Tensor)):
        assert type(ours) is type(theirs) and ours.dtype == theirs.dtype, where
        assert ours.shape == theirs.shape, where
        a, b = (np.asarray(x) for x in (ours, theirs))
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert ours == theirs, where


def _assert_same_outcome(theirs, ours) -> None:
    """The same value from both calls, or the same error."""
    try:
        expected = theirs()
    except Exception as error:  # noqa: BLE001 - whatever your method raises, ours raises
        with pytest.raises(type(error), match=re.escape(str(error))):
            ours()
        return
    _assert_same_value(ours(), expected)


@pytest.fixture(scope="module")
def coco_boxes(tmp_path_factory):
    return coco_yolo_set(tmp_path_factory.mktemp("coco-det"))


@pytest.fixture(scope="module")
def coco_segments(tmp_path_factory):
    return coco_yolo_set(tmp_path_factory.mktemp("coco-seg"), segments=True)


@pytest.mark.parametrize("task, hyp", [
    ("detect", {}),
    ("detect", {"degrees": 20.0, "translate": 0.4, "mixup": 0.5}),   # boxes off the canvas
    ("detect", {"cutmix": 0.8, "scale": 0.2}),
    ("segment", {}),
    ("segment", {"scale": 0.9, "copy_paste": 0.5, "mixup": 0.3}),
    ("segment", {"copy_paste": 0.9, "copy_paste_mode": "mixup", "cutmix": 0.5}),
])
def test_samples_equal_ultralytics_with_the_labels_merged_natively(coco_boxes, coco_segments,
                                                                   monkeypatch, task, hyp):
    ds = train_dataset(coco_segments if task == "segment" else coco_boxes, imgsz=320, batch=8,
                       task=task, **hyp)
    counts = _taken(monkeypatch)
    indices = list(range(0, 24))
    theirs = _samples(ds, indices, 21, at_once=False)
    assert not any(counts.values())
    ours = _samples(ds, indices, 21, at_once=True)
    for a, b in zip(ours, theirs, strict=True):
        _assert_same_value(a, b)
    # MixUp's partner is a Mosaic warped too
    assert counts["mosaic"] >= len(indices) and counts["perspective"] >= len(indices)
    assert counts["flip"] == 2 * len(indices)  # up-down, then left-right
    assert counts["format"] >= len(indices) - (2 if task == "segment" else 0)
    assert (counts["mix"] > 0) == bool(hyp.get("mixup") or hyp.get("cutmix"))
    assert (counts["paste"] > 0) == bool(hyp.get("copy_paste"))
    assert sum(len(s["cls"]) for s in ours) > 100


@pytest.mark.parametrize("task", ["pose", "obb"])
def test_pose_and_obb_samples_equal_ultralytics(tmp_path, monkeypatch, task):
    obb = task == "obb"
    ds = train_dataset(generated_yolo_set(tmp_path, count=12, task=task), imgsz=64, batch=4,
                       task=task, degrees=30.0, translate=0.45, flipud=0.5,
                       copy_paste=0.9 if obb else 0.0, cutmix=0.6 if obb else 0.0)
    counts = _taken(monkeypatch)
    remade = _remade(monkeypatch)  # oriented boxes across a border, remade
    indices = list(range(12))
    _samples(ds, indices, 4, at_once=False)  # the resized photo's first reading aside
    theirs = _samples(ds, indices, 4, at_once=False)
    assert not remade
    ours = _samples(ds, indices, 4, at_once=True)
    for a, b in zip(ours, theirs, strict=True):
        _assert_same_value(a, b)
    assert counts["flip"] == 2 * len(indices)
    assert counts["mosaic"] >= len(indices) and counts["perspective"] >= len(indices)
    assert counts["format"] == len(indices)
    if obb:  # CopyPaste's and CutMix's partners joined here; crossing boxes remade
        assert counts["paste"] > 0 and counts["mix"] > 0 and len(remade) >= 10
        assert all(s["bboxes"].shape[1:] == (5,) for s in ours)
    else:
        assert any(len(s["cls"]) == 0 for s in ours)  # a Mosaic with no instance left
        assert any((s["keypoints"][..., 2] == 0).any() for s in ours)  # some left the canvas


def test_oriented_boxes_labels_are_named_native(tmp_path):
    import jpegloader
    from jpegloader.pipelines.yolo.in_place import ultralytics_version
    ds = train_dataset(generated_yolo_set(tmp_path, count=12, task="obb"), imgsz=64, batch=4,
                       task="obb", copy_paste=0.5, cutmix=0.5)
    verdict = jpegloader.explain(ds, batch_size=4, collate_fn=ds.collate_fn)
    assert f"Ultralytics {ultralytics_version()}: Mosaic labels, CopyPaste labels, " \
        "RandomPerspective segments and their boxes, RandomPerspective labels, CutMix " \
        "labels, RandomFlip labels, Format labels computed natively" in verdict.report()
    native, yours = verdict.split_text().split("yours")
    assert "labels" not in yours


def _photo(rng, n: int, k: int, normalized: bool, size: tuple[int, int], planar: bool,
           keypoints: int = 0) -> dict:
    """A Mosaic photo's labels: n boxes (xywh), n polygons of k points (as Ultralytics'
    resampling lays them out, or row by row), keypoints if asked."""
    from ultralytics.utils.instance import Instances
    h, w = size
    scale = np.array((1, 1) if normalized else (w, h), np.float32)
    xy = rng.uniform(-0.2, 1.2, (n, 2)).astype(np.float32) * scale
    wh = rng.uniform(0, 0.6, (n, 2)).astype(np.float32) * scale
    boxes = np.concatenate((xy, wh), 1)
    points = rng.uniform(-0.3, 1.3, (n, k, 2)).astype(np.float32) * scale
    if planar:
        points = np.ascontiguousarray(points.transpose(0, 2, 1)).transpose(0, 2, 1)
    kp = None
    if keypoints:
        kp = np.concatenate((rng.uniform(-0.3, 1.3, (n, keypoints, 2)) * scale,
                             rng.integers(0, 3, (n, keypoints, 1))), 2).astype(np.float32)
    return {"im_file": f"p{n}.jpg", "ori_shape": size, "resized_shape": size,
            "img": np.zeros((*size, 3), np.uint8), "cls": rng.integers(0, 80, (n, 1)).astype(
                np.float32), "instances": Instances(boxes, points, kp, normalized=normalized)}


def _mosaic_call(mosaic, photos: list[dict], rng) -> tuple[dict, dict]:
    """The (labels, params) Mosaic.apply_instances takes, each photo at a drawn place."""
    s = mosaic.imgsz
    layout = []
    for k, photo in enumerate(photos):
        h, w = photo["img"].shape[:2]
        item = {"labels_patch": photo, "padw": int(rng.integers(-w, 2 * s)),
                "padh": int(rng.integers(-h, 2 * s))}
        if k % 3 != 2:  # a layout from before img_shape: the photo's own image says
            item["img_shape"] = (h, w)
        layout.append(item)
    return photos[0], {"layout": layout}


@pytest.mark.parametrize("n, keypoints, planar", [(4, 0, True), (4, 0, False), (9, 0, True),
                                                  (4, 5, True), (9, 3, False)])
def test_mosaic_labels_equal_ultralytics_on_any_layout(n, keypoints, planar):
    from ultralytics.data.augment import Mosaic

    from jpegloader.pipelines.yolo import instances
    mosaic = Mosaic(SimpleNamespace(cache=None), imgsz=96, p=1.0, n=n)
    rng = np.random.default_rng(n + keypoints)
    for trial in range(40):
        photos = [_photo(rng, int(rng.integers(0, 6)), 7, bool(rng.integers(0, 4)),
                         (int(rng.integers(20, 120)), int(rng.integers(20, 120))), planar,
                         keypoints) for _ in range(n)]
        if trial % 5 == 0:  # NaN and infinity keep numpy's clip
            photos[1]["instances"].segments[..., 0] = np.nan
            photos[2]["instances"].segments[..., 1] = np.inf
        labels, params = _mosaic_call(mosaic, photos, rng)
        theirs = Mosaic.apply_instances(mosaic, *copy.deepcopy((labels, params)))
        assert instances._mergeable(mosaic, [p["instances"] for p in photos], photos)
        ours = instances.mosaic_instances(mosaic, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")


def test_mosaic_labels_it_does_not_compute_are_your_methods(monkeypatch):
    from ultralytics.data.augment import Mosaic

    from jpegloader.pipelines.yolo import instances
    mosaic = Mosaic(SimpleNamespace(cache=None), imgsz=96, p=1.0, n=4)
    rng = np.random.default_rng(5)

    def photos():
        return [_photo(rng, 3, 7, True, (64, 80), True) for _ in range(4)]
    odd = [photos() for _ in range(4)]
    odd[0][2]["instances"]._bboxes.bboxes = odd[0][2]["instances"].bboxes.astype(np.float64)
    odd[1][1]["instances"].segments = odd[1][1]["instances"].segments[:, :5]  # other lengths
    odd[2][3]["instances"].segments = odd[2][3]["instances"].segments[:2]  # fewer polygons
    odd[3][0]["cls"] = [[1.0]] * 3
    for photo_set in odd:
        assert not instances._mergeable(mosaic, [p["instances"] for p in photo_set], photo_set)
        call = _mosaic_call(mosaic, photo_set, rng)
        _assert_same_outcome(lambda: Mosaic.apply_instances(mosaic, *copy.deepcopy(call)),
                             lambda: instances.mosaic_instances(mosaic, *copy.deepcopy(call)))


@pytest.mark.parametrize("hyp", [
    {"degrees": 10.0, "translate": 0.1, "scale": 0.5},
    {"degrees": 45.0, "translate": 0.45, "scale": 0.9, "shear": 20.0},  # many dropped
    {"perspective": 0.001, "scale": 0.5},
])
def test_perspective_labels_equal_ultralytics(hyp):
    import random

    from ultralytics.data.augment import RandomPerspective
    warp = RandomPerspective(**hyp)
    rng = np.random.default_rng(len(hyp))
    random.seed(3)
    kept = dropped = 0
    for trial in range(60):
        keypoints = 4 if trial % 3 == 0 else 0
        photo = _photo(rng, int(rng.integers(0, 8)), 9, trial % 4 == 0, (96, 128),
                       planar=trial % 2 == 0, keypoints=keypoints)
        photo["instances"].convert_bbox("xyxy")
        if trial % 10 == 5:  # a polygon of NaN: segment2box's, clipped as numpy clips
            photo["instances"].segments[:1] = np.nan
        ours = _warped_alike(warp, photo, in_segments_here=trial % 2 == 1, where=trial)
        kept += len(ours["cls"])
        dropped += len(photo["cls"]) - len(ours["cls"])
    assert kept > 20 and dropped > 5  # the candidate filter both kept and dropped


def _warped_alike(warp, photo: dict, in_segments_here: bool, where) -> dict:
    """RandomPerspective.apply_instances on one drawn warp of ``photo``, yours and ours
    (with ``apply_segments`` yours or this package's), asserted equal; ours."""
    from ultralytics.data.augment import RandomPerspective

    from jpegloader.pipelines.yolo import in_place, instances
    params = warp.get_params(photo)
    labels = {k: v for k, v in photo.items() if k in ("img", "cls", "instances")}
    if in_segments_here:
        warp.apply_segments = in_place.PerspectiveSegments.method(warp)
    assert instances._warpable(warp, labels)
    theirs = RandomPerspective.apply_instances(warp, *copy.deepcopy((labels, params)))
    ours = instances.perspective_instances(warp, *copy.deepcopy((labels, params)))
    vars(warp).pop("apply_segments", None)
    _assert_same_value(ours, theirs, f"trial {where}")
    return ours


def test_perspective_labels_it_does_not_compute_are_your_methods():
    from ultralytics.data.augment import RandomPerspective

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(2)
    warp = RandomPerspective(degrees=30.0)
    cases = []
    for change in ("float64", "fewer polygons", "cls"):
        photo = _photo(rng, 4, 9, False, (64, 80), True)
        held = photo["instances"]
        if change == "float64":
            held._bboxes.bboxes = held.bboxes.astype(np.float64)
        elif change == "fewer polygons":
            held.segments = held.segments[:2]
        elif change == "cls":
            photo["cls"] = photo["cls"][:3]
        cases.append((change, {k: photo[k] for k in ("img", "cls", "instances")}))
    for change, labels in cases:
        assert not instances._warpable(warp, labels)
        params = warp.get_params(labels)
        _assert_same_outcome(
            lambda: RandomPerspective.apply_instances(warp, *copy.deepcopy((labels, params))),
            lambda: instances.perspective_instances(warp, *copy.deepcopy((labels, params))))


def _oriented_held(rng, n: int, size: tuple[int, int], dtype=np.float32,
                   normalized: bool = False):
    """n rotated rectangles as an obb dataset holds them (four corners resampled to 100
    points), some across the h x w image's border, some squares or axis-aligned (where
    minAreaRect's angle and sides turn over); boxes their corners' bounds."""
    from ultralytics.utils.instance import Instances
    from ultralytics.utils.ops import resample_segments
    h, w = size
    centres = rng.uniform(-0.1, 1.1, (n, 1, 2)) * (w, h)
    half = rng.uniform(1, 0.4 * min(w, h), (n, 1, 2))
    half[::3, :, 1] = half[::3, :, 0]
    turn = rng.choice([0, np.pi / 2, np.pi / 4, -np.pi / 4, rng.uniform(-np.pi, np.pi)],
                      (n, 1))
    unit = np.array(((-1, -1), (1, -1), (1, 1), (-1, 1))) * half
    c, s = np.cos(turn), np.sin(turn)
    corners = np.stack((unit[..., 0] * c - unit[..., 1] * s,
                        unit[..., 0] * s + unit[..., 1] * c), -1) + centres
    scale = np.array((w, h) if normalized else (1, 1), np.float32)
    segments = np.stack(resample_segments([q.astype(np.float32) for q in corners], 100)) \
        if n else np.zeros((0, 100, 2), np.float32)
    segments = (segments / scale).astype(dtype)
    boxes = np.concatenate((segments.min(1), segments.max(1)), 1).astype(np.float32)
    held = Instances(boxes, segments, None, bbox_format="xyxy", normalized=normalized)
    if normalized:
        held.convert_bbox("xywh")
    return held


def _oriented_photo(rng, n: int, size: tuple[int, int], normalized: bool) -> dict:
    return {"im_file": f"o{n}.jpg", "ori_shape": size, "resized_shape": size,
            "img": np.zeros((*size, 3), np.uint8),
            "cls": rng.integers(0, 15, (n, 1)).astype(np.float32),
            "instances": _oriented_held(rng, n, size, normalized=normalized)}


def _remade(monkeypatch) -> list:
    """Grows by one for each oriented box remade across a border (oriented.py)."""
    from jpegloader.pipelines.yolo import oriented
    remade, rectangle = [], oriented._bounding_rectangle
    monkeypatch.setattr(oriented, "_bounding_rectangle",
                        lambda *args: remade.append(1) or rectangle(*args))
    return remade


@pytest.mark.parametrize("n", [4, 9])
def test_oriented_mosaic_labels_equal_ultralytics(monkeypatch, n):
    # preserve_obb: polygons across the canvas's border remade in their direction,
    # boxes inside left unclipped, those of no area dropped
    from ultralytics.data.augment import Mosaic

    from jpegloader.pipelines.yolo import instances
    mosaic = Mosaic(SimpleNamespace(cache=None, use_obb=True), imgsz=96, p=1.0, n=n)
    assert mosaic.preserve_obb
    remade = _remade(monkeypatch)
    rng = np.random.default_rng(n)
    for trial in range(30):
        photos = [_oriented_photo(rng, int(rng.integers(0, 6)) if trial % 6 else 0,
                                  (int(rng.integers(20, 120)), int(rng.integers(20, 120))),
                                  trial % 3 > 0) for _ in range(n)]
        labels, params = _mosaic_call(mosaic, photos, rng)
        theirs = Mosaic.apply_instances(mosaic, *copy.deepcopy((labels, params)))
        assert instances._mergeable(mosaic, [p["instances"] for p in photos], photos)
        ours = instances.mosaic_instances(mosaic, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")
    assert len(remade) > 20


@pytest.mark.parametrize("hyp", [{"degrees": 45.0, "translate": 0.3, "scale": 0.5},
                                 {"degrees": 180.0, "shear": 10.0, "scale": 0.9}])
def test_oriented_perspective_labels_equal_ultralytics(monkeypatch, hyp):
    import random

    from ultralytics.data.augment import RandomPerspective
    warp = RandomPerspective(**hyp, preserve_obb=True)
    remade = _remade(monkeypatch)
    rng = np.random.default_rng(len(hyp))
    random.seed(5)
    for trial in range(40):
        photo = _oriented_photo(rng, int(rng.integers(0, 8)), (96, 128), trial % 4 == 0)
        photo["instances"].convert_bbox("xyxy")
        _warped_alike(warp, photo, in_segments_here=trial % 2 == 1, where=trial)
    assert len(remade) > 20


def test_oriented_cutmix_labels_equal_ultralytics(monkeypatch):
    # the partner's boxes in the area held to it in their direction, those left with
    # no area dropped with their classes, then moved back
    from ultralytics.data.augment import CutMix

    from jpegloader.pipelines.yolo import instances
    cut = CutMix(SimpleNamespace(use_obb=True), p=1.0)
    remade = _remade(monkeypatch)
    rng = np.random.default_rng(11)
    dropped = 0
    for trial in range(40):
        sample, partner = (_oriented_photo(rng, int(rng.integers(0, 6)), (96, 128), False)
                           for _ in range(2))
        for photo in (sample, partner):
            photo["instances"].convert_bbox("xyxy")
        corner = rng.uniform(0, 90, 2)
        area = np.concatenate((corner, corner + rng.uniform(8, 60, 2)))[[0, 1, 2, 3]]
        params = {"area": area, "w": 128, "h": 96,
                  "indexes2": np.arange(len(partner["cls"]))}
        labels = {**sample, "mix_labels": [partner]}
        assert instances._joinable(labels, partner)
        theirs = CutMix.apply_instances(cut, *copy.deepcopy((labels, params)))
        ours = instances.cut_instances(cut, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")
        dropped += len(sample["cls"]) + len(partner["cls"]) - len(ours["cls"])
    assert len(remade) > 20 and dropped > 5


@pytest.mark.parametrize("normalize", [True, False])
def test_oriented_format_labels_equal_ultralytics(normalize):
    # minAreaRect's centre, sides and angle: the longer side first, the angle brought
    # into [-pi/4, 3pi/4); squares and axis-aligned rectangles where it turns over
    from ultralytics.data.augment import Format

    from jpegloader.pipelines.yolo import instances
    fmt = Format(bbox_format="xywh", normalize=normalize, return_obb=True, batch_idx=True)
    rng = np.random.default_rng(7)
    for trial in range(40):
        count = int(rng.integers(0, 9)) if trial % 5 else 0
        held = _oriented_held(rng, count, (96, 128))
        if trial == 1:  # sides at exactly 45 degrees: an angle on the range's edge
            held = _diamonds()
            count = len(held)
        held.convert_bbox("xywh")
        params = {"h": 96, "w": 128, "nl": count, "instances": held,
                  "cls": rng.integers(0, 15, (count, 1)).astype(np.float32)}
        assert instances._formattable(fmt, params)
        theirs = Format.apply_instances(fmt, {"img": None}, copy.deepcopy(params))
        ours = instances.formatted_labels(fmt, {"img": None}, copy.deepcopy(params))
        _assert_same_value(ours, theirs, f"trial {trial}")
        assert ours["bboxes"].shape == (count, 5)


def _diamonds():
    """Rectangles with whole-pixel corners and sides at 45 degrees, each way round."""
    from ultralytics.utils.instance import Instances
    from ultralytics.utils.ops import resample_segments
    quads = [((10, 0), (20, 10), (0, 30), (-10, 20)), ((0, 10), (10, 0), (30, 20), (20, 30)),
             ((40, 40), (60, 60), (50, 70), (30, 50)), ((60, 20), (70, 30), (60, 40), (50, 30))]
    segments = np.stack(resample_segments([np.array(q, np.float32) for q in quads], 100))
    boxes = np.concatenate((segments.min(1), segments.max(1)), 1)
    return Instances(boxes, segments, None, bbox_format="xyxy", normalized=False)


def _format_params(rng, count: int, size: int, classes: int) -> dict:
    """Format's parameters for ``count`` 12-gons in a size x 4/3 size image."""
    from ultralytics.utils.instance import Instances
    centres = rng.uniform(0, size, (count, 1, 2)) * (4 / 3, 1)
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    radius = rng.uniform(1, size / (4 + count / 8), (count, 1, 1))
    ring = np.stack((np.cos(angles), np.sin(angles)), 1)[None] * radius + centres
    segments = ring.astype(np.float32)
    boxes = np.concatenate((segments.min(1), segments.max(1)), 1)
    return {"h": size, "w": size * 4 // 3, "nl": count,
            "cls": rng.integers(0, classes, (count, 1)).astype(np.float32),
            "instances": Instances(boxes, segments, bbox_format="xyxy", normalized=False)}


@pytest.mark.parametrize("count, ratio, normalize, batch_idx, overlap", [
    (30, 4, True, True, True), (300, 4, True, True, True),   # > 255 instances: int32 masks
    (12, 1, False, False, True), (5, 2, True, False, True),
    (30, 4, True, True, False), (12, 1, False, False, False)])
def test_format_labels_equal_ultralytics(count, ratio, normalize, batch_idx, overlap):
    from ultralytics.data.augment import Format

    from jpegloader.pipelines.yolo import instances
    from jpegloader.pipelines.yolo.in_place import FormatMasks
    fmt = Format(bbox_format="xywh", normalize=normalize, return_mask=True, mask_ratio=ratio,
                 mask_overlap=overlap, batch_idx=batch_idx)
    rng = np.random.default_rng(count)
    for with_masks_here in (False, True):
        if with_masks_here:
            fmt._format_segments = FormatMasks.method(fmt)
        for trial in range(5):
            params = _format_params(rng, count, 96, 80)
            if trial % 2:  # two equal polygons of two classes: the first one's class
                held = params["instances"]
                held.segments[1], held.bboxes[1] = held.segments[0], held.bboxes[0]
                params["cls"][:2, 0] = 3, 4
            assert instances._formattable(fmt, params)
            theirs = Format.apply_instances(fmt, {"img": None}, copy.deepcopy(params))
            ours = instances.formatted_labels(fmt, {"img": None}, copy.deepcopy(params))
            _assert_same_value(ours, theirs)
            if overlap:  # a pixel no instance covers takes the last (smallest) instance's
                # class, as Ultralytics' index -1 does
                uncovered = ours["masks"][0] == 0
                assert uncovered.any() and \
                    (ours["sem_masks"][uncovered] == ours["cls"][-1, 0]).all()
            else:  # the smallest covering mask's class; uncovered pixels 0
                assert (ours["sem_masks"][ours["masks"].sum(0) == 0] == 0).all()
                if trial % 2:
                    assert (ours["sem_masks"][ours["masks"][0] > 0] != 4).all()
    if overlap:
        assert ours["masks"].dtype == (torch.int32 if count > 255 else torch.uint8)


def test_format_labels_it_does_not_compute_are_your_methods():
    from ultralytics.data.augment import Format

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(1)
    cases = [(Format(return_obb=True),  # float64 polygons: xyxyxyxy2xywhr's float64 boxes
              {"instances": _oriented_held(rng, 6, (96, 128), np.float64)}),
             (Format(return_mask=True, mask_ratio=200), {}),          # Format's own error
             (Format(return_mask=True), {"cls": np.arange(6, dtype=np.float64)[:, None]}),
             (Format(return_mask=True), {"nl": 0})]
    # your own _format_segments set on the object: Format's own method calls it, once
    mine, calls = Format(return_mask=True), []

    def own_masks(*args):
        calls.append(1)
        return Format._format_segments(mine, *args)
    mine._format_segments = own_masks
    cases.append((mine, {}))
    for fmt, change in cases:
        params = {**_format_params(rng, 6, 96, 5), **change}
        assert not instances._formattable(fmt, params)
        _assert_same_outcome(
            lambda: Format.apply_instances(fmt, {"img": None}, copy.deepcopy(params)),
            lambda: instances.formatted_labels(fmt, {"img": None}, copy.deepcopy(params)))
    assert len(calls) == 2  # Format's own call, then ours: no second call of yours


@pytest.mark.parametrize("direction", ["horizontal", "vertical"])
def test_flip_labels_equal_ultralytics(direction):
    # corners or centres, normalised or not, keypoints reordered by flip_idx, and the
    # draws that do not flip (the boxes still become centres)
    from ultralytics.data.augment import RandomFlip

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(3)
    for trial in range(40):
        keypoints = (0, 4)[trial % 2]
        flip = RandomFlip(p=0.5, direction=direction,
                          flip_idx=[1, 0, 3, 2] if keypoints and trial % 4 == 1 else None)
        labels = _photo(rng, int(rng.integers(0, 6)), 7, trial % 3 > 0,
                        (int(rng.integers(20, 120)), int(rng.integers(20, 120))), trial % 5 > 1,
                        keypoints)
        if trial % 4 > 1:
            labels["instances"].convert_bbox("xyxy")
        random_state = np.random.default_rng(trial)
        params = {**flip.get_params(labels), "flip": bool(random_state.integers(0, 2))}
        assert instances._flippable(labels, params)
        theirs = RandomFlip.apply_instances(flip, *copy.deepcopy((labels, params)))
        ours = instances.flipped_instances(flip, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")


@pytest.mark.parametrize("rect", [False, True])
def test_letterbox_labels_equal_ultralytics(rect):
    # rect batches give numpy shapes, so a float64 ratio: the same float operations on
    # the same scalars keep numpy's promotion; ratio_pad as evaluation reads it
    from ultralytics.data.augment import LetterBox

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(4)
    for trial in range(40):
        letterbox = LetterBox(new_shape=(96, 128), auto=trial % 3 == 0, stride=32,
                              scaleup=trial % 4 != 1, scale_fill=trial % 3 == 1)
        size = (int(rng.integers(20, 200)), int(rng.integers(20, 200)))
        labels = _photo(rng, int(rng.integers(0, 6)), 7, trial % 3 > 0, size, trial % 2 > 0,
                        (0, 5)[trial % 2])
        if trial % 4 > 1:
            labels["instances"].convert_bbox("xyxy")
        if rect:
            labels["rect_shape"] = np.ceil(np.array((96, 128)) * rng.uniform(0.5, 1.5, 2))
        if trial % 2:
            labels["ratio_pad"] = (size[0] / 333, size[1] / 500)
        if trial % 7 == 0:
            del labels["instances"]
        params = letterbox.get_params(labels)
        assert instances._letterboxable(labels)
        theirs = LetterBox.apply_instances(letterbox, *copy.deepcopy((labels, params)))
        ours = instances.letterboxed_instances(letterbox, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")


def test_flip_and_letterbox_labels_they_do_not_compute_are_your_methods():
    from ultralytics.data.augment import LetterBox, RandomFlip

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(5)
    flip, letterbox = RandomFlip(p=1.0), LetterBox(new_shape=(64, 64))
    for change in ("float64", "cls"):
        labels = _photo(rng, 4, 7, True, (50, 70), True, 3)
        if change == "float64":
            held = labels["instances"]
            held._bboxes.bboxes = held.bboxes.astype(np.float64)
        else:
            labels["cls"] = labels["cls"][:2]
        for step, method, own in ((flip, instances.flipped_instances, RandomFlip),
                                  (letterbox, instances.letterboxed_instances, LetterBox)):
            params = step.get_params(labels)
            assert not (instances._flippable(labels, params) if step is flip
                        else instances._letterboxable(labels))
            _assert_same_outcome(
                lambda: own.apply_instances(step, *copy.deepcopy((labels, params))),
                lambda: method(step, *copy.deepcopy((labels, params))))


@pytest.mark.parametrize("keypoints", [0, 3])
def test_mixup_cutmix_and_copypaste_labels_equal_ultralytics(keypoints):
    # the partner's labels joined after the sample's; CutMix's held to its area (its
    # int32 corners added as Ultralytics adds them); CopyPaste's flipped copies or a
    # partner's, the chosen ones joined; NaN kept
    from ultralytics.data.augment import CopyPaste, CutMix, MixUp

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(7 + keypoints)
    mixup, cutmix = MixUp(SimpleNamespace(), p=1.0), CutMix(SimpleNamespace(), p=1.0)
    paste = CopyPaste(p=0.8)
    for trial in range(30):
        normalized, size = trial % 3 > 0, (int(rng.integers(40, 120)), int(rng.integers(40, 120)))
        labels, partner = (_photo(rng, int(rng.integers(0, 7)), 9, normalized, size,
                                  trial % 2 > 0, keypoints) for _ in range(2))
        if trial % 4 == 1 and len(partner["cls"]):
            partner["instances"].segments[0, ..., 0] = np.nan
        labels["mix_labels"] = [partner]
        assert instances._joinable(labels, partner)
        _assert_same_outcome(
            lambda: MixUp.apply_instances(mixup, *copy.deepcopy((labels, {}))),
            lambda: instances.mixed_instances(mixup, *copy.deepcopy((labels, {}))))
        h, w = size
        x1, y1 = int(rng.integers(0, w - 8)), int(rng.integers(0, h - 8))
        cut = {"area": np.array((x1, y1, rng.integers(x1 + 1, w), rng.integers(y1 + 1, h)),
                                np.float32), "w": w, "h": h,
               "indexes2": np.flatnonzero(rng.integers(0, 2, len(partner["cls"])))}
        for params in (cut, {"skip": True}):
            _assert_same_outcome(
                lambda: CutMix.apply_instances(cutmix, *copy.deepcopy((labels, params))),
                lambda: instances.cut_instances(cutmix, *copy.deepcopy((labels, params))))
        if not len(labels["cls"]):
            continue  # CopyPaste returns at once
        params = paste.get_params(labels)
        if trial % 2:  # a partner's polygons, as mode="mixup" takes them
            held = copy.deepcopy(partner["instances"])
            held.convert_bbox("xyxy")
            held.denormalize(w, h)
            params.update(instances2=held, labels2_cls=partner["cls"],
                          selected=np.flatnonzero(rng.integers(0, 2, len(partner["cls"]))))
        assert instances._pastable(labels, params)
        _assert_same_outcome(
            lambda: CopyPaste.apply_instances(paste, *copy.deepcopy((labels, params))),
            lambda: instances.pasted_instances(paste, *copy.deepcopy((labels, params))))


def test_mixing_labels_it_does_not_compute_are_your_methods():
    # polygons of two lengths (Ultralytics resamples both), keypoints in one only,
    # another box format: Ultralytics' own Instances.concatenate
    from ultralytics.data.augment import MixUp

    from jpegloader.pipelines.yolo import instances
    rng = np.random.default_rng(8)
    mixup = MixUp(SimpleNamespace(), p=1.0)
    for change in ("length", "keypoints", "format"):
        labels = _photo(rng, 4, 9, True, (60, 80), True, 2)
        partner = _photo(rng, 3, 5 if change == "length" else 9, True, (60, 80), True,
                         0 if change == "keypoints" else 2)
        if change == "format":
            partner["instances"].convert_bbox("xyxy")
        labels["mix_labels"] = [partner]
        assert not instances._joinable(labels, partner)
        _assert_same_outcome(
            lambda: MixUp.apply_instances(mixup, *copy.deepcopy((labels, {}))),
            lambda: instances.mixed_instances(mixup, *copy.deepcopy((labels, {}))))


@pytest.mark.parametrize("keypoints, normalize, batch_idx", [
    (False, True, True), (True, True, True), (True, False, False), (False, False, True)])
def test_format_labels_without_masks_equal_ultralytics(keypoints, normalize, batch_idx):
    # detect and pose: boxes (and keypoints) divided by the image's size; no instance
    from ultralytics.data.augment import Format

    from jpegloader.pipelines.yolo import instances
    fmt = Format(bbox_format="xywh", normalize=normalize, return_keypoint=keypoints,
                 batch_idx=batch_idx)
    rng = np.random.default_rng(6)
    for trial in range(12):
        labels = _photo(rng, (0, 1, 7)[trial % 3], 5, False, (90, 130), False,
                        3 if keypoints and trial % 4 else 0)
        params = fmt.get_params(labels)
        assert instances._formattable(fmt, params)
        theirs = Format.apply_instances(fmt, *copy.deepcopy((labels, params)))
        ours = instances.formatted_labels(fmt, *copy.deepcopy((labels, params)))
        _assert_same_value(ours, theirs, f"trial {trial}")


def test_points_placed_is_numpys_scale_shift_and_clip():
    from jpegloader.pipelines.yolo._opencv import points_placed
    rng = np.random.default_rng(10)
    points = rng.uniform(-2, 3, (6, 51, 2)).astype(np.float32)  # odd: the one-point tail too
    points[0, 3, 0], points[1, 4, 1], points[2, 5] = np.nan, np.inf, -np.inf
    points[3, 6] = points[4, 50] = -0.0
    for move in ((640, 480, -37, 212), (1, 1, 0, 0), (0.37, 2.5, 0.125, -9.5)):
        theirs = points.copy()
        theirs[..., 0] *= np.float32(move[0])
        theirs[..., 1] *= np.float32(move[1])
        theirs[..., 0] += np.float32(move[2])
        theirs[..., 1] += np.float32(move[3])
        theirs = theirs.clip(0, 700)
        for planar in (False, True):
            source = np.ascontiguousarray(points.transpose(0, 2, 1)) if planar else points
            out = np.full_like(points, 7.0)
            points_placed(source, 6, 51, planar, tuple(map(float, move)), 700.0, out)
            np.testing.assert_array_equal(out, theirs)
            assert np.array_equal(np.signbit(out), np.signbit(theirs))
    with pytest.raises(ValueError, match="out"):
        points_placed(points, 6, 51, False, (1.0, 1.0, 0.0, 0.0), 9.0, np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="points"):
        points_placed(points, 7, 51, False, (1.0, 1.0, 0.0, 0.0), 9.0, np.zeros_like(points))
    with pytest.raises(TypeError):
        points_placed(points, 6, 51, False, (1.0, 1.0, 0.0, 0.0), 9.0, points.tobytes())
