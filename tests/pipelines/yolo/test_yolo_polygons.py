"""RandomPerspective's segment boxes and Format's masks computed over all of a
sample's polygons at once (NOTE [ A sample's polygons at once ] in
pipelines/yolo/polygons.py), held to Ultralytics' own objects: the same samples, bit
for bit, with the same draws, on coco-sample's real polygons; an Ultralytics whose
functions differ from the verified ones keeps its own and the verdict says so."""
from __future__ import annotations

import copy
from importlib import util

import numpy as np
import pytest
import torch

import jpegloader
from jpegloader.pipelines.random_stream import generators_kept, seed_generators
from tests.pipelines.yolo.test_yolo_train import assert_replays_ultralytics
from tests.pipelines.yolo.yolo_sets import coco_yolo_set, train_dataset

pytestmark = pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                reason="Ultralytics is the oracle for the YOLO pipeline")


def _steps(ds):
    from jpegloader.pipelines.yolo.steps import planned_steps
    return planned_steps(ds.transforms)


def _step(ds, name):
    return next(t for t, _ in _steps(ds) if type(t).__name__ == name)


def _samples(ds, indices, seed, at_once: bool) -> list[dict]:
    """``ds[i]`` with the generators seeded per sample, by the user's objects alone
    or with the polygons computed here."""
    from jpegloader.pipelines.yolo.in_place import replaced_for_batch
    # the same photos cached in both passes, none dropped as partners are read
    ds.max_buffer_length = max(ds.max_buffer_length, 2 * len(ds))
    for i in range(len(ds)):
        ds.ims[i] = ds.im_hw0[i] = ds.im_hw[i] = None
    for i in indices:
        ds.load_image(i)
    out = []
    with generators_kept():
        for k, i in enumerate(indices):
            seed_generators(seed + k)
            ds.buffer = list(indices)
            if at_once:
                with replaced_for_batch(_steps(ds)):
                    out.append(ds[i])
            else:
                out.append(ds[i])
    return out


def _assert_same(ours: list[dict], theirs: list[dict]) -> None:
    for a, b in zip(ours, theirs, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], torch.Tensor):
                assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key
            elif isinstance(a[key], np.ndarray):
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.fixture(scope="module")
def coco_segments(tmp_path_factory):
    return coco_yolo_set(tmp_path_factory.mktemp("coco-seg"), segments=True)


def _counted(monkeypatch):
    """How often each replacement ran, and on how many polygons crossing the border."""
    from jpegloader.pipelines.yolo import polygons
    counts = {"boxes": 0, "crossing": 0, "masks": 0}
    boxes, crossing, masks = (polygons.warped_segments, polygons.crossing_corners,
                              polygons.formatted_masks)

    def count(name, fn, weigh=lambda *a: 1):
        def counted(*args):
            counts[name] += weigh(*args)
            return fn(*args)
        return counted
    monkeypatch.setattr(polygons, "warped_segments", count("boxes", boxes))
    monkeypatch.setattr(polygons, "crossing_corners",
                        count("crossing", crossing, lambda points, *_: len(points)))
    monkeypatch.setattr(polygons, "formatted_masks", count("masks", masks))
    return counts


@pytest.mark.parametrize("hyp, overlap, ratio", [
    ({}, True, 4),                                  # Ultralytics' defaults
    ({"degrees": 30.0, "shear": 10.0, "scale": 0.9}, True, 4),
    ({"degrees": 15.0}, False, 4),
    ({"perspective": 0.0005}, True, 4),            # the third coordinate divided out
    ({"scale": 0.9}, True, 2),
    ({}, True, 1),
])
def test_segment_samples_equal_ultralytics_on_real_polygons(coco_segments, monkeypatch, hyp,
                                                            overlap, ratio):
    ds = train_dataset(coco_segments, imgsz=320, batch=8, task="segment", **hyp)
    fmt = _step(ds, "Format")
    fmt.mask_overlap, fmt.mask_ratio = overlap, ratio
    counts = _counted(monkeypatch)
    indices = list(range(0, 24))
    theirs = _samples(ds, indices, 11, at_once=False)
    ours = _samples(ds, indices, 11, at_once=True)
    _assert_same(ours, theirs)
    assert counts["boxes"] >= len(indices) and counts["masks"] >= len(indices) - 2, counts
    assert counts["crossing"] >= 10, counts  # polygons across the border were computed here
    assert sum(len(s["cls"]) for s in ours) > 100


def test_masks_equal_ultralytics_with_opencvs_own_fill(coco_segments, monkeypatch):
    # where the self-check finds the C fill unlike the installed fillPoly, cv2 fills
    # each polygon into its block of the shared canvas: the same samples
    from jpegloader.pipelines.yolo import polygons
    from jpegloader.pipelines.yolo.opencv import OpenCVMatch
    match = polygons.opencv_match()
    unlike = OpenCVMatch(match.version, match.warp, match.hsv_block, fill=False)
    monkeypatch.setattr(polygons, "opencv_match", lambda: unlike)
    ds = train_dataset(coco_segments, imgsz=320, batch=8, task="segment")
    counts = _counted(monkeypatch)
    indices = list(range(8, 24))
    _assert_same(_samples(ds, indices, 5, at_once=True), _samples(ds, indices, 5, at_once=False))
    assert counts["masks"] >= len(indices) - 2, counts


def test_obb_and_preserved_directions_equal_ultralytics(tmp_path, monkeypatch):
    # obb: 4-point polygons, RandomPerspective(preserve_obb=True) leaves them unclipped
    from tests.pipelines.yolo.yolo_sets import generated_yolo_set
    ds = train_dataset(generated_yolo_set(tmp_path, count=12, task="obb"), imgsz=64, batch=4,
                       task="obb", degrees=45.0)
    assert _step(ds, "RandomPerspective").preserve_obb
    counts = _counted(monkeypatch)
    assert_replays_ultralytics(ds, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    assert counts["boxes"] >= 12 and counts["masks"] == 0  # obb has no masks


def test_polygons_anywhere_give_ultralytics_boxes_and_masks(coco_segments):
    # real polygons moved and scaled partly or wholly out of the image, around it,
    # onto its border, to a point, with NaN: the boxes segment2box gives and the
    # masks Format gives (an image size the ratio does not divide: Format's own)
    import ultralytics.data.augment as augment
    from ultralytics.utils.instance import Instances
    from ultralytics.utils.ops import segment2box

    from jpegloader.pipelines.yolo import polygons
    ds = train_dataset(coco_segments, imgsz=320, batch=8, task="segment")
    base = [s for label in ds.labels for s in label["segments"] if len(s) >= 3][:40]
    rng = np.random.default_rng(3)
    w, h = 320, 256
    shapes = []
    for k, s in enumerate(base):
        pts = polygons_resampled(s, 60) * (w, h)
        moved = pts * rng.uniform(0.3, 3.0) + rng.uniform(-400, 400, 2)
        shapes += [moved, pts, np.full((60, 2), (w, 17.0)), (pts - pts.mean(0)) * 9 + (w / 2, h / 2)]
    shapes.append(np.where(np.arange(60)[:, None] == 5, np.nan, shapes[0]))
    points = np.stack(shapes).astype(np.float32)
    theirs = np.stack([segment2box(p, w, h) for p in points])
    np.testing.assert_array_equal(polygons.polygon_boxes(points, w, h, segment2box), theirs)
    # moved by RandomPerspective's own matrices, affine and not: the same points
    # (clipped to their boxes, NaN kept) and boxes as its apply_segments
    rp = _step(ds, "RandomPerspective")
    for m in (((0.8, 0.3, -20.0), (-0.2, 1.1, 15.0), (0.0, 0.0, 1.0)),
              ((0.9, 0.1, 4.0), (0.05, 1.0, -9.0), (2e-4, -1e-4, 1.0))):
        m = np.array(m, np.float32)
        ours = polygons.warped_segments(rp, points.copy(), m, (w, h))
        theirs = rp.apply_segments(points.copy(), m, (w, h))
        for a, b in zip(ours, theirs, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
    fmt = augment.Format(bbox_format="xywh", normalize=True, return_mask=True, mask_ratio=4)
    for size in ((h, w), (250, w)):
        for overlap in (True, False):
            fmt.mask_overlap = overlap
            n = len(points) - 1  # the NaN polygon aside
            instances = Instances(np.zeros((n, 4), np.float32), points[:n].copy(),
                                  bbox_format="xyxy", normalized=False)
            cls = np.arange(n, dtype=np.float32)[:, None]
            ours = polygons.formatted_masks(fmt, copy.deepcopy(instances), cls, size[1], size[0])
            own = fmt._format_segments(copy.deepcopy(instances), cls, size[1], size[0])
            np.testing.assert_array_equal(ours[0], own[0])
            assert ours[0].dtype == own[0].dtype
            np.testing.assert_array_equal(ours[1].segments, own[1].segments)
            np.testing.assert_array_equal(ours[2], own[2])


def polygons_resampled(segment: np.ndarray, n: int) -> np.ndarray:
    """A polygon's outline at ``n`` points evenly spaced along its point order."""
    closed = np.concatenate((segment, segment[:1]))
    at = np.linspace(0, len(segment), n, endpoint=False)
    return np.stack([np.interp(at, np.arange(len(closed)), closed[:, c]) for c in (0, 1)], 1)


def test_an_ultralytics_whose_functions_differ_keeps_its_own_and_says_so(coco_segments,
                                                                        monkeypatch):
    from jpegloader.pipelines.yolo import in_place
    ds = train_dataset(coco_segments, imgsz=320, batch=8, task="segment")
    verdict = jpegloader.explain(ds, batch_size=8, collate_fn=ds.collate_fn)
    version = in_place.ultralytics_version()
    assert f"Ultralytics {version}: Mosaic labels, RandomPerspective segments and their " \
        "boxes, RandomPerspective labels, RandomFlip labels, Format masks, Format labels " \
        "computed natively" in verdict.report()
    native, yours = verdict.split_text().split("yours")
    assert "Format masks" in native and "Mosaic labels" in native
    assert "Mosaic" not in yours and "Format" not in yours and "RandomPerspective labels" \
        not in yours and "RandomFlip labels" not in yours
    assert "RandomHSV" not in yours  # its image is native; it has no label work
    # a version whose segment2box is not a verified one: RandomPerspective's own runs
    monkeypatch.setitem(in_place._VERIFIED, "segment2box", set())
    in_place._unverified.cache_clear()
    try:
        counts = _counted(monkeypatch)
        rp = _step(ds, "RandomPerspective")
        assert not in_place.PerspectiveSegments.claims(rp)
        assert in_place.FormatMasks.claims(_step(ds, "Format"))
        report = jpegloader.explain(ds, batch_size=8, collate_fn=ds.collate_fn).report()
        assert f"Ultralytics {version}: Mosaic labels, RandomPerspective labels, RandomFlip " \
            "labels, Format masks, Format labels computed natively; your objects compute " \
            "RandomPerspective segments and their boxes (segment2box not as verified)" \
            in report, report
        assert_replays_ultralytics(ds, [[0, 1, 2, 3, 4, 5, 6, 7]])
        assert counts["boxes"] == 0 and counts["masks"] > 0
        # a method the user set on the object is theirs, whatever the version
        fmt = _step(ds, "Format")
        fmt._format_segments = fmt._format_segments
        assert not in_place.FormatMasks.claims(fmt)
        report = jpegloader.explain(ds, batch_size=8, collate_fn=ds.collate_fn).report()
        assert "your objects compute RandomPerspective segments and their boxes " \
            "(segment2box not as verified); Format masks (Format._format_segments is set " \
            "on your object)" in report, report
    finally:
        in_place._unverified.cache_clear()


def test_a_functions_key_ignores_its_docstring_and_comments_only(tmp_path):
    import importlib.util

    from jpegloader.pipelines.yolo.in_place import source_key
    bodies = {"one": "def f(x):\n    \"\"\"Doubled.\"\"\"\n    # twice\n    return x * 2\n",
              "two": "def f(x):\n    \"\"\"Twice x.\n\n    More.\"\"\"\n\n    return x * 2  \n",
              "three": "def f(x):\n    \"\"\"Doubled.\"\"\"\n    return x * 3\n"}
    keys = {}
    for name, body in bodies.items():
        (tmp_path / f"{name}.py").write_text(body)
        spec = importlib.util.spec_from_file_location(f"keyed_{name}", tmp_path / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        keys[name] = source_key(module.f)
    assert keys["one"] == keys["two"] != keys["three"]
    namespace: dict = {}
    exec(bodies["one"], namespace)
    assert source_key(namespace["f"]) is None  # no source to read: never verified


def test_the_c_polygon_functions_refuse_buffers_of_the_wrong_size():
    from jpegloader.pipelines.yolo import _opencv
    points = np.zeros((2, 5, 2), np.float32)
    boxes, kinds = np.zeros((2, 4), np.float32), np.zeros(2, np.uint8)
    _opencv.segment_boxes(points, 2, 5, 8.0, 8.0, boxes, kinds)
    with pytest.raises(ValueError, match="points is a 80-byte buffer, expected 96"):
        _opencv.segment_boxes(points, 2, 6, 8.0, 8.0, boxes, kinds)
    with pytest.raises(ValueError, match="kinds"):
        _opencv.segment_boxes(points, 2, 5, 8.0, 8.0, boxes, np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="out of range"):
        _opencv.points_clipped(points, 2, 0, boxes)
    with pytest.raises(ValueError, match="rows"):
        _opencv.rows_xy1(points, 10, np.zeros((10, 2), np.float32))
    with pytest.raises(ValueError, match="xy"):
        _opencv.rows_divided(np.zeros((10, 3), np.float32), 10, np.zeros(19, np.float32))
    with pytest.raises(TypeError):
        _opencv.points_clipped(points.tobytes(), 2, 5, boxes)  # read-only


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_the_overlapped_mask_ranks_blocks_as_a_loop_over_them_does(dtype):
    from jpegloader.pipelines.yolo._opencv import block_areas, ranked_blocks
    rng = np.random.default_rng(7)
    canvas = (rng.random((40, 50)) < 0.4).astype(np.uint8) * rng.integers(1, 3, (40, 50),
                                                                          dtype=np.uint8)
    n = 30
    tall, wide = rng.integers(0, 12, n), rng.integers(0, 12, n)
    blocks = np.column_stack((rng.integers(0, 40 - tall + 1), rng.integers(0, 50 - wide + 1),
                              tall, wide, rng.integers(0, 20 - tall + 1),
                              rng.integers(0, 24 - wide + 1))).astype(np.int32)
    areas = np.full(n, 99, np.uint64)
    block_areas(canvas, 50, blocks, n, areas)
    order = rng.permutation(n).astype(np.int64)
    mask = np.full((20, 24), 3, dtype)
    ranked_blocks(canvas, 50, blocks, n, order, mask, 24, mask.itemsize)
    expected = np.full((20, 24), 3, dtype)
    for rank, i in enumerate(order, start=1):  # later ranks over earlier ones
        row, column, h, w, y, x = blocks[i]
        block = canvas[row:row + h, column:column + w]
        assert areas[i] == np.count_nonzero(block)
        expected[y:y + h, x:x + w][block != 0] = rank
    np.testing.assert_array_equal(mask, expected)
    wrong = blocks.copy()
    wrong[3, 4] = 15  # lands past the mask's last row
    with pytest.raises(ValueError, match="block 3 does not land inside the 20 x 24 mask"):
        ranked_blocks(canvas, 50, wrong, n, order, mask, 24, mask.itemsize)
    wrong = blocks.copy()
    wrong[5, 1] = 45  # reads past the canvas's last column
    with pytest.raises(ValueError, match="block 5 does not fit the 40 x 50 canvas"):
        block_areas(canvas, 50, wrong, n, areas)
    with pytest.raises(ValueError, match="is not a block"):
        ranked_blocks(canvas, 50, blocks, n, np.full(n, n, np.int64), mask, 24, mask.itemsize)
    with pytest.raises(ValueError, match="neither 1"):
        ranked_blocks(canvas, 50, blocks, n, order, mask, 24, 2)
    with pytest.raises(ValueError, match="not rows of 50 bytes"):
        block_areas(canvas[:, :49].copy(), 50, blocks, n, areas)
