"""Instance masks painted in C into the slot (NOTE [ Masks painted into the slot ]):
bit-identical to pycocotools' decode of every real annotation, and to torch's loader
(or the user's objects replayed) for the Mask R-CNN recipe, whatever the row holds."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torchvision import tv_tensors
from torchvision.transforms import v2 as T

pytest.importorskip("pycocotools", reason="torchvision's CocoDetection needs pycocotools")
from pycocotools import mask as coco_mask  # noqa: E402

import jpegloader  # noqa: E402
from jpegloader.pipelines import DETECTION, DecodeOptions  # noqa: E402
from jpegloader.pipelines.detection import masks as painting  # noqa: E402
from jpegloader.pipelines.detection._masks import paint, paint_mapped  # noqa: E402
from jpegloader.pipelines.detection.draw import draw  # noqa: E402
from jpegloader.pipelines.random_stream import epoch_seed  # noqa: E402
from tests import detection_references_copy as R  # noqa: E402
from tests.coco_fixtures import coco_sample  # noqa: E402
from tests.pipelines.detection.conftest import (  # noqa: E402
    assert_same_sample, build, decoded, flat, loader, replaying)


def reference_rle(segmentation, h, w):
    """The v2 wrapper's segmentation_to_mask, up to the decode."""
    if isinstance(segmentation, list):
        return coco_mask.merge(coco_mask.frPyObjects(segmentation, h, w))
    if isinstance(segmentation["counts"], str):
        return segmentation
    return coco_mask.frPyObjects(segmentation, h, w)


def test_painting_equals_pycocotools_decode_for_every_real_annotation():
    _, ann_file = coco_sample()
    data = json.loads(ann_file.read_text())
    sizes = {im["id"]: (im["height"], im["width"]) for im in data["images"]}
    kinds = set()
    for a in data["annotations"]:
        h, w = sizes[a["image_id"]]
        kinds.add(type(a["segmentation"]).__name__)
        rle = reference_rle(a["segmentation"], h, w)
        want = np.ascontiguousarray(coco_mask.decode(rle))
        counts = rle["counts"]
        counts = counts.encode() if isinstance(counts, str) else counts
        for flip in (False, True):
            out = np.full((1, h, w), 7, np.uint8)  # every pixel written
            paint((counts,), h, w, flip, out)
            np.testing.assert_array_equal(out[0], want[:, ::-1] if flip else want,
                                          err_msg=f"annotation {a['id']}, flip {flip}")
    assert kinds == {"list", "dict"}  # polygons and crowd RLE both seen


def test_mapped_painting_samples_pycocotools_decode_by_the_maps():
    _, ann_file = coco_sample()
    data = json.loads(ann_file.read_text())
    sizes = {im["id"]: (im["height"], im["width"]) for im in data["images"]}
    rng = np.random.default_rng(0)
    for a in data["annotations"][::7]:
        h, w = sizes[a["image_id"]]
        rle = reference_rle(a["segmentation"], h, w)
        want = coco_mask.decode(rle)
        counts = rle["counts"]
        counts = counts.encode() if isinstance(counts, str) else counts
        rows = rng.integers(0, h, int(rng.integers(1, 2 * h)))
        cols = rng.integers(0, w, int(rng.integers(1, 2 * w)))
        out = np.full((2, len(rows), len(cols)), 7, np.uint8)
        paint_mapped((counts, counts), h, w, rows, cols, out)
        np.testing.assert_array_equal(out[0], want[rows][:, cols])
        np.testing.assert_array_equal(out[1], out[0])


def test_mapped_painting_pads_with_zeros_where_an_index_is_minus_one():
    counts = b"0`0"  # a 4 x 4 mask of ones (no zeros, 16 ones)
    out = np.full((1, 3, 3), 7, np.uint8)
    paint_mapped((counts,), 4, 4, np.array([0, -1, 3]), np.array([-1, 2, 1]), out)
    np.testing.assert_array_equal(out[0], [[0, 1, 1], [0, 0, 0], [0, 1, 1]])


def test_mapped_painting_refuses_indices_outside_the_mask():
    with pytest.raises(ValueError, match=r"rows\[1\] is outside -1..3"):
        paint_mapped((b"00",), 4, 4, np.array([0, 4]), np.array([0]), np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match=r"cols\[0\] is outside -1..3"):
        paint_mapped((b"00",), 4, 4, np.array([0]), np.array([-2]), np.zeros(1, np.uint8))
    with pytest.raises(ValueError, match="out is a 3-byte buffer, expected 2 bytes"):
        paint_mapped((b"00",), 4, 4, np.array([0, 1]), np.array([0]), np.zeros(3, np.uint8))


@pytest.mark.parametrize("counts", [b"", b"0", b"\x01", b"[", b"99999999999999", b"06"])
def test_malformed_counts_are_refused(counts):
    with pytest.raises(ValueError, match="mask 0: RLE counts malformed"):
        paint((counts,), 4, 4, False, np.zeros(16, np.uint8))


def test_a_wrong_buffer_is_refused():
    with pytest.raises(ValueError, match="out is a 15-byte buffer, expected 16 bytes"):
        paint((b"00",), 4, 4, False, np.zeros(15, np.uint8))


def masks_of(ds) -> bool:
    """Whether the loader paints the dataset's masks into the slot."""
    lowering = DETECTION.lower(ds, {"collate_fn": R.collate_fn})
    return DETECTION.decoder(lowering, DecodeOptions()).masks


@pytest.mark.parametrize("keys", [["boxes", "labels", "image_id", "masks"], "all"])
@pytest.mark.parametrize("workers", [0, 2])
def test_eval_masks_equal_torchs_loader(keys, workers):
    ds = build("eval", image_set="val", target_keys=keys)
    assert masks_of(ds)
    got = flat(loader(ds, workers, decode="exact"))
    want = flat(loader(ds, 0, cls=torch.utils.data.DataLoader))
    assert len(got) == len(want) == len(ds)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_same_sample(a, b, where=f"sample {k}")


def test_mask_rcnn_training_equals_the_references_objects_replayed():
    ds = build("hflip", with_masks=True)
    indices = list(range(len(ds)))
    seed = epoch_seed(5, 1)
    decoder, ours = decoded(ds, indices, seed)
    assert decoder.masks
    d = draw(decoder.program, seed, indices)
    for k, i in enumerate(indices):
        with replaying(decoder.program, d, k):
            ref = ds[i]
        assert_same_sample(ours[k], ref, where=f"sample {i}")
    # ToPureTensor made the stand-in a plain tensor: so are the masks
    assert all(type(t["masks"]) is torch.Tensor for _, t in ours)


def test_mask_rcnn_training_is_the_same_for_any_workers():
    ds = build("hflip", with_masks=True)
    runs = []
    for workers in (0, 2):
        torch.manual_seed(4)
        runs.append(flat(loader(ds, workers, shuffle=True)))
    assert len(runs[0]) == len(runs[1]) == len(ds)
    for a, b in zip(*runs):
        assert_same_sample(a, b)


def test_masks_that_do_not_fit_their_row_travel_beside_it(monkeypatch):
    monkeypatch.setattr(painting, "ROW_QUANTILE", 0.0)  # rows fit the smallest need only
    ds = build("hflip", with_masks=True)
    indices = list(range(len(ds)))
    decoder, ours, report = decoded(ds, indices, 9, report_too=True)
    d = draw(decoder.program, 9, indices)
    apart = [p for *_, p in report.extras.samples if p["masks"].apart is not None]
    assert 0 < len(apart) < len(indices)
    for k, i in enumerate(indices):
        with replaying(decoder.program, d, k):
            ref = ds[i]
        assert_same_sample(ours[k], ref, where=f"sample {i}")
    torch.manual_seed(2)
    got = flat(loader(ds, 2, shuffle=True))
    torch.manual_seed(2)
    want = flat(loader(ds, 0, shuffle=True))
    for a, b in zip(got, want):
        assert_same_sample(a, b)


def test_sanitize_drops_the_masks_torch_drops(odd_coco):
    # a degenerate box, a box reaching outside, a JSON size smaller than the file (its
    # masks then exceed the row sized from the JSON), a PNG named .jpg
    folder, ann, _, bad_id = odd_coco
    ds = build("hflip", with_masks=True, folder=folder, ann=ann)
    torch.manual_seed(1)
    got = flat(loader(ds, 2, batch_size=2))
    torch.manual_seed(1)
    want = flat(loader(ds, 0, batch_size=2, cls=torch.utils.data.DataLoader))
    assert len(got) == len(want) == 4
    raw = ds.dataset._dataset._load_target(bad_id)
    i = next(i for i, j in enumerate(ds.indices) if ds.dataset.ids[j] == bad_id)
    assert len(want[i][1]["masks"]) < len(raw)
    eval_ds = build("eval", image_set="val", with_masks=True, folder=folder, ann=ann)
    got = flat(loader(eval_ds, 2, batch_size=2, decode="exact"))
    want = flat(loader(eval_ds, 0, batch_size=2, cls=torch.utils.data.DataLoader))
    for a, b in zip(got, want):
        assert_same_sample(a, b)


def test_an_rle_of_another_size_takes_the_wrappers_path(tmp_path):
    # a crowd RLE made for another canvas: the wrapper's own path, which torch's loader
    # also takes (here it fails in torch.stack, and so does ours, named)
    img_folder, ann_file = coco_sample()
    data = json.loads(ann_file.read_text())
    a = next(a for a in data["annotations"] if isinstance(a["segmentation"], list))
    a["segmentation"] = {"size": [4, 4], "counts": [0, 16]}
    a["iscrowd"] = 1
    ann = tmp_path / "odd_rle.json"
    ann.write_text(json.dumps(data))
    ds = build("eval", image_set="val", with_masks=True, ann=ann)
    index = ds._dataset.ids.index(a["image_id"])
    with pytest.raises(RuntimeError) as theirs:
        ds[index]
    with pytest.raises(RuntimeError, match=rf"sample {index} \(") as ours:
        list(loader(ds, 2, decode="exact"))
    assert str(theirs.value).splitlines()[0] in str(ours.value)


def test_crops_flips_and_resizes_paint_masks_as_the_references_objects_do():
    # RandomIoUCrop's window, then the flip: ssdlite's masks too (replayed in
    # test_coco_v2.py with the tensor backend; here the PIL one, at 2 workers too)
    ds = build("ssdlite", with_masks=True)
    assert masks_of(ds) and masks_of(build("multiscale", with_masks=True))
    indices = list(range(len(ds)))
    decoder, ours = decoded(ds, indices, 21)
    d = draw(decoder.program, 21, indices)
    for k, i in enumerate(indices):
        with replaying(decoder.program, d, k):
            ref = ds[i]
        assert_same_sample(ours[k], ref, where=f"sample {i}")
    src = decoder.source
    cropped = [tuple(img.shape[-2:]) != src.json_size(src.base_index(i))
               for i, (img, _) in zip(indices, ours)]
    assert 0 < sum(cropped) < len(indices)  # the crop was drawn for some samples only


@pytest.mark.parametrize("sizes", [[480, 800], [288, 320], [1100, 1200]],
                         ids=["multiscale", "down", "up"])
def test_resized_masks_equal_the_references_objects_replayed(sizes):
    # masks resized by index maps (torch's nearest rule), flipped before or after
    img_folder, ann_file = coco_sample()
    for flip_first in (True, False):
        steps = [T.RandomShortestSize(sizes, max_size=1333), T.RandomHorizontalFlip()]
        ds = R.get_coco(str(img_folder), str(ann_file), "train", T.Compose(
            (steps[::-1] if flip_first else steps) + [T.PILToTensor(), T.SanitizeBoundingBoxes()]),
            with_masks=True)
        indices = list(range(0, len(ds), 3))
        decoder, ours = decoded(ds, indices, 13)
        assert decoder.masks
        d = draw(decoder.program, 13, indices)
        for k, i in enumerate(indices):
            with replaying(decoder.program, d, k):
                ref = ds[i]
            assert_same_sample(ours[k], ref, exact_pixels=False, where=f"sample {i}")
            assert type(ours[k][1]["masks"]) is tv_tensors.Mask


def test_v1_masks_are_painted_where_convert_builds_as_the_references_do():
    from tests import detection_references_v1 as R1
    img_folder, ann_file = coco_sample()

    def v1(convert):
        ds = R1.get_coco(str(img_folder), str(ann_file), "train",
                         R1.DetectionPresetTrain(data_augmentation="multiscale"))
        ds.dataset._transforms.transforms[0] = convert
        return ds

    ds = v1(R1.ConvertCocoPolysToMask())
    assert masks_of(ds)
    verdict = jpegloader.DataLoader(ds, collate_fn=R.collate_fn).eligibility.report()
    assert "instance masks painted by C" in verdict, verdict

    class KeepsCrowds(R1.ConvertCocoPolysToMask):  # a user's change: theirs is used
        def __call__(self, image, target):
            image, target = super().__call__(image, target)
            target["area"] = target["area"] * 2
            return image, target

    KeepsCrowds.__name__ = "ConvertCocoPolysToMask"
    changed = v1(KeepsCrowds())
    assert not masks_of(changed)
    torch.manual_seed(3)
    got = flat(jpegloader.DataLoader(changed, batch_size=4, num_workers=2, shuffle=True,
                                     collate_fn=R.collate_fn))
    torch.manual_seed(3)
    want = flat(jpegloader.DataLoader(changed, batch_size=4, num_workers=0, shuffle=True,
                                      collate_fn=R.collate_fn))
    for a, b in zip(got, want):
        assert_same_sample(a, b)
    assert torch.equal(got[0][1]["area"], want[0][1]["area"])


def test_a_device_copy_takes_what_the_samples_fill():
    # device= copies the assembled batch (partial_rows), not the slot's rows
    ds = build("hflip", with_masks=True)
    runs = []
    for device in (None, "cpu"):
        torch.manual_seed(6)
        runs.append(flat(loader(ds, 2, shuffle=True, device=device)))
    for a, b in zip(*runs, strict=True):
        assert_same_sample(a, b)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_mask_rcnn_batches_pinned_and_on_the_gpu():
    ds = build("hflip", with_masks=True)
    torch.manual_seed(8)
    want = flat(loader(ds, 2, shuffle=True))
    torch.manual_seed(8)
    pinned = flat(loader(ds, 2, shuffle=True, pin_memory=True))
    assert all(img.is_pinned() and t["masks"].is_pinned() for img, t in pinned)
    torch.manual_seed(8)
    on_gpu = flat(loader(ds, 2, shuffle=True, pin_memory=True, device="cuda"))
    for (img, t), (wimg, wt), (pimg, pt) in zip(on_gpu, want, pinned, strict=True):
        assert img.is_cuda and t["masks"].is_cuda and t["boxes"].is_cuda
        assert torch.equal(img.cpu(), wimg) and torch.equal(pimg, wimg)
        assert torch.equal(t["masks"].cpu(), wt["masks"]) and torch.equal(pt["masks"], wt["masks"])


def test_odd_polygons_and_an_annotation_without_its_image_give_what_torch_gives(tmp_path):
    img_folder, ann_file = coco_sample()
    data = json.loads(ann_file.read_text())
    polygons = [a for a in data["annotations"] if isinstance(a["segmentation"], list)]
    polygons[0]["segmentation"] = [[10.0, 10.0, 20.0, 20.0, 30.0]]  # 2.5 points: accepted
    data["annotations"].append({**polygons[1], "id": 10 ** 9, "image_id": 10 ** 9})  # no image
    ann = tmp_path / "odd.json"
    ann.write_text(json.dumps(data))
    ds = build("eval", image_set="val", with_masks=True, ann=ann)
    got = flat(loader(ds, 2, decode="exact"))
    want = flat(loader(ds, 0, cls=torch.utils.data.DataLoader))
    assert len(got) == len(want) == len(data["images"])
    for k, (a, b) in enumerate(zip(got, want)):
        assert_same_sample(a, b, where=f"sample {k}")

    # two points read as a box by pycocotools: torch's loader raises; ours names the image
    polygons[0]["segmentation"] = [[10.0, 10.0, 20.0, 20.0]]
    ann.write_text(json.dumps(data))
    ds = build("eval", image_set="val", with_masks=True, ann=ann)
    index = ds._dataset.ids.index(polygons[0]["image_id"])
    name = ds._dataset.coco.imgs[polygons[0]["image_id"]]["file_name"]
    with pytest.raises(TypeError) as theirs:
        ds[index]
    with pytest.raises(TypeError, match=rf"sample {index} \(.*{name}\)") as ours:
        list(loader(ds, 2, decode="exact"))
    assert str(theirs.value) in str(ours.value)
    kept = loader(ds, 0, on_error="skip", decode="exact")
    assert len(flat(kept)) == len(ds) - 1 and [i for i, _, _ in kept.skipped_samples] == [index]


def test_masks_are_painted_through_a_fixed_size_crop_only_where_it_moves_them_as_theirs():
    # the references' FixedSizeCrop keeps the masks of the boxes it keeps, cropped and
    # padded; a copy that leaves the masks alone keeps its own path
    from jpegloader.pipelines.detection.references_v1 import fixed_crop_moves_masks
    from tests import detection_references_copy as R2
    from tests import detection_references_v1 as R1
    assert fixed_crop_moves_masks(R1.FixedSizeCrop((64, 48), fill=(1, 2, 3)), (64, 48))
    assert not fixed_crop_moves_masks(R2.FixedSizeCrop((64, 48)), (64, 48))
