"""Mosaic's, MixUp's, CutMix's and CopyPaste's merging of labels, RandomPerspective's
instances held to the image and filtered, RandomFlip's and LetterBox's labels, and
Format's label tensors (boxes, oriented boxes, keypoints, overlapped masks), computed
here (oriented boxes held to an image by oriented.py) for the Ultralytics whose
functions in_place.py verified: the same arrays and tensors, value for value, as the
user's objects give.

NOTE [ A Mosaic's labels at once ]
Ultralytics merges a Mosaic's labels one Instances call at a time: each photo's boxes
turned to corners, scaled to its pixels and moved to its place, column by column, its
polygons likewise, then all of them joined, held to the canvas and the boxes of no
area dropped.  Here the boxes of all four (or nine) photos are scaled, moved and held
in three array operations, with each photo's factors repeated over its rows, and the
polygons in one pass of C per photo (csrc/polygons.c, reading numpy's strided layout
as it lies): the same float32 products and sums, in the same order, so the same
values; oriented boxes are placed in numpy and held by oriented.py.  Anything
unusual (another dtype, polygons of differing lengths, a count of polygons that is
not the boxes') is the user's method's.
"""
from __future__ import annotations

import numpy as np
import torch

from . import oriented, polygons
from ._opencv import points_clipped, points_placed


# -- Mosaic ----------------------------------------------------------------------------
def mosaic_instances(step, labels: dict, params: dict) -> dict:
    """Mosaic.apply_instances: each photo's labels scaled from [0, 1] to its pixels
    (where normalised), moved to its place on the canvas, all of them joined, held to
    the 2s x 2s canvas and those whose box has no area dropped."""
    own = type(step).apply_instances
    layout = params["layout"]
    photos = [item["labels_patch"] for item in layout]
    found = [p.get("instances") for p in photos]
    if not _mergeable(step, found, photos):
        return own(step, labels, params)
    for held in found:
        held.convert_bbox("xyxy")
    moves = np.empty((len(layout), 4), np.float32)  # x and y factors, x and y offsets
    for move, item, photo, held in zip(moves, layout, photos, found):
        shape = item.get("img_shape")
        h, w = shape if shape is not None else photo["img"].shape[:2]
        dx, dy = item["padw"], item["padh"]
        if step.n != 4:  # nine photos: the canvas's centre crop
            dx, dy = dx + step.border[0], dy + step.border[1]
        move[:] = (w, h, dx, dy) if held.normalized else (1, 1, dx, dy)
    counts = [len(i.bboxes) for i in found]
    rows = np.repeat(moves, counts, axis=0)
    size = 2 * step.imgsz
    boxes = np.concatenate([i.bboxes for i in found])
    boxes *= rows[:, (0, 1, 0, 1)]
    boxes += rows[:, (2, 3, 2, 3)]
    if getattr(step, "preserve_obb", False) and any(len(i.segments) for i in found):
        segments = np.concatenate([i.segments for i in found])
        segments *= rows[:, None, :2]
        segments += rows[:, None, 2:]
        boxes, segments = oriented.held(boxes, segments, size, size)
    else:
        np.clip(boxes, 0, size, out=boxes)
        segments = _placed_segments(found, moves, size)
    keypoints = _placed_keypoints(found, rows, size)
    keep = _has_area(boxes)
    boxes, segments, keypoints = _kept(keep, boxes, segments, keypoints)
    merged = {"im_file": photos[0]["im_file"], "ori_shape": photos[0]["ori_shape"],
              "resized_shape": (size, size),
              "cls": np.concatenate([p["cls"] for p in photos], 0)[keep],
              "instances": type(found[0])(boxes, segments, keypoints, bbox_format="xyxy",
                                          normalized=False)}
    if "texts" in photos[0]:
        merged["texts"] = photos[0]["texts"]
    labels.update(merged)
    return labels


def _mergeable(step, found: list, photos: list) -> bool:
    """Whether every photo's labels are what ``mosaic_instances`` computes
    (``_plain_labels`` each, one kind of holder, polygons of one length, as many as
    boxes everywhere or none anywhere, keypoints everywhere or nowhere)."""
    if step.n not in (4, 9) or not found or \
            not all(type(i) is type(found[0]) and _plain_labels(i, p.get("cls"))
                    for i, p in zip(found, photos)):
        return False
    segments = [i.segments for i in found]
    keypoints = [i.keypoints for i in found]
    if len({s.shape[1] for s in segments}) > 1 or not (
            all(len(s) == len(i.bboxes) for s, i in zip(segments, found))
            or not any(len(s) for s in segments)):
        return False
    if any(k is None for k in keypoints):
        return all(k is None for k in keypoints)
    return len({k.shape[1:] for k in keypoints}) == 1


def _plain_labels(held, cls) -> bool:
    """Whether one image's labels are what this module computes: Ultralytics'
    Instances with float32 boxes (n x 4), polygons (none, or n of k >= 1 points) and
    keypoints (none, or n x K x 3), and a class array of n rows."""
    if type(held).__name__ != "Instances" or not isinstance(cls, np.ndarray):
        return False
    boxes, segments, keypoints = held.bboxes, held.segments, held.keypoints
    n = len(boxes)
    return (boxes.dtype == np.float32 and boxes.ndim == 2 and len(cls) == n
            and isinstance(segments, np.ndarray) and segments.dtype == np.float32
            and segments.ndim == 3 and segments.shape[2] == 2
            and (len(segments) == 0 or (len(segments) == n and segments.shape[1] >= 1))
            and (keypoints is None or (isinstance(keypoints, np.ndarray)
                                       and keypoints.dtype == np.float32
                                       and keypoints.ndim == 3 and len(keypoints) == n
                                       and keypoints.shape[2] == 3)))


def _placed_segments(found: list, moves: np.ndarray, size: int) -> np.ndarray:
    """Every photo's polygons moved by its row of ``moves`` and held to the canvas,
    joined: one C pass a photo (NOTE [ A Mosaic's labels at once ])."""
    k = found[0].segments.shape[1]
    total = sum(len(i.segments) for i in found)
    out = np.empty((total, k, 2), np.float32)
    at = 0
    for move, instances in zip(moves, found):
        segments, n = instances.segments, len(instances.segments)
        if not n:
            continue
        planar = segments.transpose(0, 2, 1)  # how Ultralytics' resampling lays them out
        if planar.flags.c_contiguous:
            points_placed(planar, n, k, True, tuple(map(float, move)), size, out[at:at + n])
        else:
            points_placed(np.ascontiguousarray(segments), n, k, False,
                          tuple(map(float, move)), size, out[at:at + n])
        at += n
    return out


def _placed_keypoints(found: list, rows: np.ndarray, size: int) -> np.ndarray | None:
    """Every photo's keypoints moved by its rows and joined; those outside the canvas
    made invisible, then held to it."""
    if found[0].keypoints is None:
        return None
    keypoints = np.concatenate([i.keypoints for i in found])
    xy = keypoints[..., :2]
    xy *= rows[:, None, :2]
    xy += rows[:, None, 2:]
    return _keypoints_held(keypoints, size, size)


def _keypoints_held(keypoints: np.ndarray, w, h) -> np.ndarray:
    """Keypoints outside the w x h image made invisible, then all held to it, in
    place (Instances.clip's rule)."""
    x, y = keypoints[..., 0], keypoints[..., 1]
    keypoints[..., 2][(x < 0) | (x > w) | (y < 0) | (y > h)] = 0.0
    np.clip(x, 0, w, out=x)
    np.clip(y, 0, h, out=y)
    return keypoints


# -- MixUp, CutMix and CopyPaste ---------------------------------------------------------
def mixed_instances(step, labels: dict, params: dict) -> dict:
    """MixUp.apply_instances: the partner's labels after the sample's."""
    partner = labels["mix_labels"][0]
    if not _joinable(labels, partner):
        return type(step).apply_instances(step, labels, params)
    labels["instances"] = _joined(labels["instances"], partner["instances"])
    labels["cls"] = np.concatenate((labels["cls"], partner["cls"]))
    return labels


def cut_instances(step, labels: dict, params: dict) -> dict:
    """CutMix.apply_instances: the partner's instances the drawn area takes, as corners
    in pixels, held to the area (moved to its corner and back, with the same scalars
    Ultralytics adds; oriented boxes as oriented.py holds them, those of no area
    dropped) and put after the sample's."""
    if params.get("skip"):
        return labels
    partner = labels["mix_labels"][0]
    if not hasattr(step, "preserve_obb") or not _joinable(labels, partner):
        return type(step).apply_instances(step, labels, params)
    rows = params["indexes2"]
    part = partner["instances"][rows]
    part.convert_bbox("xyxy")
    left, top, right, bottom = params["area"].astype(np.int32)  # int32 scalars, as added
    w, h = right - left, bottom - top
    for x, y in _axes(part):
        if part.normalized:
            x *= params["w"]
            y *= params["h"]
        x += -left
        y += -top
    keypoints = part.keypoints
    boxes, segments = _held(part.bboxes, part.segments, keypoints, w, h, step.preserve_obb)
    if step.preserve_obb:  # remove_zero_area_boxes, and the rows with them
        keep = _has_area(boxes)
        boxes, segments, keypoints = _kept(keep, boxes, segments, keypoints)
        rows = rows[keep]
    part = type(part)(boxes, segments, keypoints, bbox_format="xyxy", normalized=False)
    for x, y in _axes(part):
        x += left
        y += top
    labels["cls"] = np.concatenate((labels["cls"], partner["cls"][rows]))
    labels["instances"] = _joined(labels["instances"], part)
    return labels


def pasted_instances(step, labels: dict, params: dict) -> dict:
    """CopyPaste.apply_instances: the selected copies (the flipped sample's, or the
    partner's) after the sample's instances, with their classes."""
    instances, copies, chosen = params["instances"], params["instances2"], params["selected"]
    if not len(chosen):
        labels["instances"] = params["instances"]
        return labels
    if not _pastable(labels, params):
        return type(step).apply_instances(step, labels, params)
    labels["cls"] = np.concatenate((labels["cls"], _copies_classes(labels, params)[chosen]))
    labels["instances"] = _joined(instances, copies[chosen])
    return labels


def _pastable(labels: dict, params: dict) -> bool:
    """Whether ``pasted_instances`` joins this sample's copies: the sample's and the
    copies' labels ``_plain_labels``, of one kind."""
    instances, copies = params["instances"], params["instances2"]
    return _plain_labels(instances, labels["cls"]) and _same_kind(instances, copies) and \
        _plain_labels(copies, _copies_classes(labels, params))


def _copies_classes(labels: dict, params: dict) -> np.ndarray:
    """The classes of CopyPaste's copies: the partner's (``labels2_cls``), or the
    sample's own where it pastes a flipped copy of itself."""
    classes = params.get("labels2_cls")
    return labels["cls"] if classes is None else classes


def _joinable(labels: dict, partner: dict) -> bool:
    """Whether a sample's labels and its partner's are joined here: ``_plain_labels``
    both, of one kind (``_same_kind``)."""
    return _plain_labels(labels.get("instances"), labels.get("cls")) and \
        _plain_labels(partner.get("instances"), partner.get("cls")) and \
        _same_kind(labels["instances"], partner["instances"])


def _same_kind(a, b) -> bool:
    """One holder class, box format and normalisation, polygons of one length
    (Ultralytics resamples polygons of differing lengths, all of them), keypoints in
    both or neither."""
    return type(a) is type(b) and _box_format(a) == _box_format(b) is not None and \
        a.normalized == b.normalized and (a.keypoints is None) == (b.keypoints is None) and \
        a.segments.shape[1:] == b.segments.shape[1:]


def _box_format(held) -> str | None:
    """The format an Instances holds its boxes in (its Bboxes' own)."""
    return getattr(getattr(held, "_bboxes", None), "format", None)


def _joined(first, second):
    """Instances.concatenate of two ``_same_kind`` holders: the second's rows after
    the first's."""
    keypoints = None if first.keypoints is None else \
        np.concatenate((first.keypoints, second.keypoints))
    return type(first)(np.concatenate((first.bboxes, second.bboxes)),
                       np.concatenate((first.segments, second.segments)), keypoints,
                       bbox_format=_box_format(first), normalized=first.normalized)


def _axes(held) -> list:
    """(x, y) views of the boxes, polygons and keypoints (if any) of ``held``."""
    boxes, segments, keypoints = held.bboxes, held.segments, held.keypoints
    axes = [(boxes[:, 0::2], boxes[:, 1::2]), (segments[..., 0], segments[..., 1])]
    if keypoints is not None:
        axes.append((keypoints[..., 0], keypoints[..., 1]))
    return axes


# -- RandomPerspective -----------------------------------------------------------------
def perspective_instances(step, labels: dict, params: dict) -> dict:
    """RandomPerspective.apply_instances: the boxes, polygons and keypoints moved by
    the step's own apply_bboxes, apply_segments and apply_keypoints, held to the
    image (the polygons in one C pass), and the instances its box_candidates finds
    too shrunk or stretched by the warp dropped (their boxes before it scaled by the
    drawn scale, in place, as Instances.scale does)."""
    own = type(step).apply_instances
    if not _warpable(step, labels):
        return own(step, labels, params)
    cls, held = labels["cls"], labels.pop("instances")
    held.convert_bbox("xyxy")
    h0, w0 = params["orig_shape"]
    held.denormalize(w0, h0)
    matrix, size = params["M"], params["size"]
    w, h = size
    boxes = step.apply_bboxes(held.bboxes, matrix)
    segments, keypoints = held.segments, held.keypoints
    if len(segments):
        boxes, segments = step.apply_segments(segments, matrix, size)
    if keypoints is not None:
        keypoints = step.apply_keypoints(keypoints, matrix, size)
    if boxes.ndim == 1:  # as Bboxes holds a single box
        boxes = boxes[None, :]
    boxes, segments = _held(boxes, segments, keypoints, w, h, step.preserve_obb)
    before = held.bboxes
    before *= params["scale"]
    keep = step.box_candidates(box1=before.T, box2=boxes.T,
                               area_thr=0.01 if len(segments) else 0.10)
    boxes, segments, keypoints = _kept(keep, boxes, segments, keypoints)
    labels["instances"] = type(held)(boxes, segments, keypoints, bbox_format="xyxy",
                                     normalized=False)
    labels["cls"] = cls[keep]
    return labels


def _held(boxes: np.ndarray, segments: np.ndarray, keypoints, w, h, preserve_obb: bool):
    """Instances.clip to a w x h image: xyxy boxes and polygons held to it (the points
    in one C pass, as one polygon of them all), or oriented boxes as oriented.py holds
    them; keypoints outside it made invisible, all held to it (in place).  The boxes
    and polygons after it."""
    if preserve_obb and len(segments):  # the boxes not clipped: oriented.py's NOTE
        boxes, segments = oriented.held(boxes, segments, w, h)
    else:
        np.clip(boxes[:, 0::2], 0, w, out=boxes[:, 0::2])
        np.clip(boxes[:, 1::2], 0, h, out=boxes[:, 1::2])
        if len(segments):
            segments = np.ascontiguousarray(segments)
            points_clipped(segments, 1, segments.size // 2, np.array((0, 0, w, h), np.float32))
    if keypoints is not None:
        _keypoints_held(keypoints, w, h)
    return boxes, segments


def _has_area(boxes: np.ndarray) -> np.ndarray:
    """Which xyxy boxes have an area (Bboxes.areas > 0)."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) > 0


def _kept(keep: np.ndarray, boxes: np.ndarray, segments: np.ndarray, keypoints) -> tuple:
    """The rows ``keep`` marks of the boxes, the polygons (where there are any) and the
    keypoints (where there are any), as Instances' indexing keeps them."""
    if keep.all():
        return boxes, segments, keypoints
    return (boxes[keep], segments[keep] if len(segments) else segments,
            None if keypoints is None else keypoints[keep])


def _warpable(step, labels: dict) -> bool:
    """Whether ``perspective_instances`` computes this sample: ``_plain_labels``."""
    return hasattr(step, "preserve_obb") and \
        _plain_labels(labels.get("instances"), labels.get("cls"))


# -- RandomFlip and LetterBox ---------------------------------------------------------
def flipped_instances(step, labels: dict, params: dict) -> dict:
    """RandomFlip.apply_instances: the boxes as centres and sizes (your Instances'
    conversion); where the draw flips, the centres, polygons and keypoints mirrored
    (``params``' w or h less the coordinate, 1 where normalised) in place and the
    keypoints reordered by ``flip_idx``."""
    if not _flippable(labels, params):
        return type(step).apply_instances(step, labels, params)
    held = labels["instances"] = labels.pop("instances")  # last, as RandomFlip leaves it
    held.convert_bbox("xywh")
    if params["flip"]:
        axis = 0 if params["direction"] == "horizontal" else 1
        size = params["w"] if axis == 0 else params["h"]
        boxes, segments, keypoints = held.bboxes, held.segments, held.keypoints
        boxes[:, axis] = size - boxes[:, axis]
        segments[..., axis] = size - segments[..., axis]
        if keypoints is not None:
            keypoints[..., axis] = size - keypoints[..., axis]
            if params["flip_idx"] is not None:
                held.keypoints = np.ascontiguousarray(keypoints[:, params["flip_idx"], :])
    return labels


def letterboxed_instances(step, labels: dict, params: dict) -> dict:
    """LetterBox.apply_instances: the boxes as corners (your Instances' conversion),
    then the boxes, polygons and keypoints scaled to the photo's pixels (where
    normalised), by the letterbox's ratio and moved by its padding, each coordinate
    by the same float operations on the same scalars in the same order; and
    ``ratio_pad`` as evaluation reads it."""
    if not _letterboxable(labels):
        return type(step).apply_instances(step, labels, params)
    gain_x, gain_y = params["ratio"]
    if "instances" in labels:
        held = labels["instances"]
        held.convert_bbox("xyxy")
        h0, w0 = params["orig_shape"]
        for x, y in _axes(held):
            if held.normalized:
                x *= w0
                y *= h0
            x *= gain_x
            y *= gain_y
            x += params["left"]
            y += params["top"]
        held.normalized = False
    if labels.get("ratio_pad"):
        before_y, before_x = labels["ratio_pad"]
        labels["ratio_pad"] = ((before_y * gain_y, before_x * gain_x),
                               (params["left"], params["top"]))
    return labels


def _flippable(labels: dict, params: dict) -> bool:
    """Whether ``flipped_instances`` computes this sample: ``_plain_labels``, flipped
    one of RandomFlip's two ways."""
    return _plain_labels(labels.get("instances"), labels.get("cls")) and \
        params.get("direction") in ("horizontal", "vertical")


def _letterboxable(labels: dict) -> bool:
    """Whether ``letterboxed_instances`` computes this sample: no instances, or
    ``_plain_labels``."""
    return "instances" not in labels or _plain_labels(labels["instances"], labels.get("cls"))


# -- Format ----------------------------------------------------------------------------
def formatted_labels(step, labels: dict, params: dict) -> dict:
    """Format.apply_instances: the classes and boxes as tensors (the boxes, or the
    oriented ones as oriented.py's centres, sizes and angles, and the keypoints where
    asked for, divided by the image's size as float32 where ``normalize``); where
    masks are asked for, the masks as ``_format_segments`` makes them and their class
    map: for overlapped ones each pixel's class looked up in one table (an uncovered
    pixel, number 0, takes the last instance's class, as Ultralytics' index -1 does),
    else ``_smallest_covering``."""
    own = type(step).apply_instances
    if not _formattable(step, params):
        return own(step, labels, params)
    h, w, count = params["h"], params["w"], params["nl"]
    instances, cls = params["instances"], params["cls"]
    if step.return_mask:
        ratio = step.mask_ratio
        if count:
            masks, instances, cls = step._format_segments(instances, cls, w, h)
            if not (isinstance(masks, np.ndarray) and masks.ndim == 3
                    and masks.dtype in (np.uint8, np.int32)):
                return own(step, labels, params)
        if not count or not masks.shape[0] or not cls.size:
            semantic = torch.zeros(h // ratio, w // ratio)
        elif step.mask_overlap:
            table = np.concatenate((cls[-1:, 0], cls[:, 0]))
            semantic = torch.from_numpy(table[masks[0]])
        else:
            semantic = torch.from_numpy(_smallest_covering(masks, cls[:, 0]))
        labels["masks"] = torch.from_numpy(masks) if count else \
            torch.zeros(1 if step.mask_overlap else 0, h // ratio, w // ratio)
        labels["sem_masks"] = semantic
    boxes = instances.bboxes
    if step.return_obb:  # centre, size, angle: the size's columns divided too
        boxes = oriented.rotated_boxes(instances.segments).astype(np.float32)
    if step.normalize:
        boxes[:, (0, 2)] /= w
        boxes[:, (1, 3)] /= h
    labels["cls"] = torch.from_numpy(cls)  # n x 1 and n x 4 (or 5) float32 (none: 0 x 1)
    labels["bboxes"] = torch.from_numpy(boxes)
    if step.return_keypoint:
        points = instances.keypoints
        if points is None:
            labels["keypoints"] = torch.empty(0, 3)
        else:
            if step.normalize:
                points[..., 0] /= w
                points[..., 1] /= h
            labels["keypoints"] = torch.from_numpy(points)
    if step.batch_idx:
        labels["batch_idx"] = torch.zeros(count)
    return labels


def _smallest_covering(masks: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Format's class map where masks do not overlap: each pixel the class of the
    smallest mask (by its sum) covering it, the first of equal ones; an uncovered
    pixel the first class times 0 (Format's first index of equal keys, then its
    product by "covered")."""
    n = len(masks)
    flat = masks.reshape(n, -1)
    covered = flat != 0
    owner = np.zeros(flat.shape[1], np.intp)
    for k in np.lexsort((np.arange(n), flat.sum(1, dtype=np.int64)))[::-1]:
        np.copyto(owner, k, where=covered[k])  # the smallest, then first, written last
    return (classes[owner] * covered.any(0)).reshape(masks.shape[1:])


def _formattable(step, params: dict) -> bool:
    """Whether ``formatted_labels`` computes this sample: instances with float32 boxes
    (n x 4) and keypoints (none, or n x K x 3) and an (n, 1) float32 class column;
    oriented boxes from n float32 polygons (n x k x 2); masks, where asked for, of a
    ratio that fits the image, made by Format's own method or this package's."""
    cls, instances = params.get("cls"), params.get("instances")
    h, w = params.get("h", 0), params.get("w", 0)
    if not (params.get("nl") is not None and instances is not None
            and isinstance(cls, np.ndarray) and cls.ndim == 2 and cls.shape[1] == 1
            and cls.dtype == np.float32 and type(instances).__name__ == "Instances"):
        return False
    boxes, keypoints = instances.bboxes, instances.keypoints
    if not (boxes.dtype == np.float32 and boxes.ndim == 2 and boxes.shape[1] == 4
            and len(boxes) == len(cls) == params["nl"]):
        return False
    if step.return_obb and not _polygons(instances.segments, len(boxes)):
        return False
    if step.return_keypoint and keypoints is not None and not (
            isinstance(keypoints, np.ndarray) and keypoints.dtype == np.float32
            and keypoints.ndim == 3 and keypoints.shape[2] == 3):
        return False
    if not step.return_mask:
        return True
    ratio = step.mask_ratio
    masks = vars(step).get("_format_segments")  # a method set on your object: all yours
    if masks is not None and getattr(masks, "func", None) is not polygons.formatted_masks:
        return False
    return isinstance(ratio, int) and 0 < ratio <= min(h, w)


def _polygons(segments, n: int) -> bool:
    """Whether ``segments`` are n float32 polygons (n x k x 2, k >= 1)."""
    return isinstance(segments, np.ndarray) and segments.dtype == np.float32 and \
        segments.ndim == 3 and segments.shape[2] == 2 and len(segments) == n and \
        (segments.shape[1] >= 1 or not n)
