"""The references' own v1 transforms (references/detection/transforms.py: the default
without --use-v2), recognised by name and attributes in users' copies (lower.py): their
draws, made as their forwards make them with torch's generator (seeded per sample:
NOTE [ Draws by the transforms' own make_params ] in draw.py), and their arithmetic on
targets.  On the Python path the user's objects themselves run, on the same generator,
and the tests replay them against these."""
from __future__ import annotations

import sys

import torch
from PIL import Image
from torchvision.ops import box_iou
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F1

from ..random_stream import generators_kept


def flip(obj, target, width: int, skip: str | None = None):
    """RandomHorizontalFlip on a target: boxes mirrored in place, masks flipped,
    keypoints through their own module's _flip_coco_person_keypoints."""
    boxes = target["boxes"]
    boxes[:, [0, 2]] = width - boxes[:, [2, 0]]
    if "masks" in target and skip != "masks":
        target["masks"] = target["masks"].flip(-1)
    if "keypoints" in target:
        flip_keypoints = getattr(sys.modules.get(type(obj).__module__),
                                 "_flip_coco_person_keypoints", None)
        if flip_keypoints is None:
            raise ValueError(f"{type(obj).__module__} has no "
                             "_flip_coco_person_keypoints to flip the keypoints with")
        target["keypoints"] = flip_keypoints(target["keypoints"], width)
    return target


def resize(target, h: int, w: int, nh: int, nw: int, skip: str | None = None):
    """RandomShortestSize and ScaleJitter on a target: boxes scaled in place, masks
    resized by nearest neighbour."""
    target["boxes"][:, 0::2] *= nw / w
    target["boxes"][:, 1::2] *= nh / h
    if "masks" in target and skip != "masks":
        target["masks"] = F1.resize(target["masks"], [nh, nw],
                                    interpolation=InterpolationMode.NEAREST)
    return target


def jitter_size(obj, h: int, w: int) -> tuple[int, int]:
    """ScaleJitter's draw: the (height, width) it resizes an h x w image to."""
    scale = obj.scale_range[0] + torch.rand(1) * (obj.scale_range[1] - obj.scale_range[0])
    r = min(obj.target_size[1] / h, obj.target_size[0] / w) * scale
    return int(h * r), int(w * r)


def _jitter_factor(jitter) -> float:
    """A ColorJitter of one adjustment, drawn as its forward draws (its own get_params)."""
    drawn = jitter.get_params(jitter.brightness, jitter.contrast, jitter.saturation,
                              jitter.hue)[1:]
    return next(v for v in drawn if v is not None)


def distort_params(obj) -> dict:
    """RandomPhotometricDistort's draws, in torchvision v2's params (colour.py's
    photometric_program runs them in the same order as the v1 forward)."""
    p, r = obj.p, torch.rand(7)
    params = dict.fromkeys(("brightness_factor", "contrast_factor", "saturation_factor",
                            "hue_factor"))
    if r[0] < p:
        params["brightness_factor"] = _jitter_factor(obj._brightness)
    before = bool(r[1] < 0.5)
    if before and r[2] < p:
        params["contrast_factor"] = _jitter_factor(obj._contrast)
    if r[3] < p:
        params["saturation_factor"] = _jitter_factor(obj._saturation)
    if r[4] < p:
        params["hue_factor"] = _jitter_factor(obj._hue)
    if not before and r[5] < p:
        params["contrast_factor"] = _jitter_factor(obj._contrast)
    params["contrast_before"] = before
    params["channel_permutation"] = torch.randperm(3) if r[6] < p else None
    return params


def zoom_out_params(obj, h: int, w: int) -> dict | None:
    """RandomZoomOut's draws: the padding around an h x w image, or None."""
    if torch.rand(1) >= obj.p:
        return None
    r = obj.side_range[0] + torch.rand(1) * (obj.side_range[1] - obj.side_range[0])
    canvas_w, canvas_h = int(w * r), int(h * r)
    r = torch.rand(2)
    left, top = int((canvas_w - w) * r[0]), int((canvas_h - h) * r[1])
    return {"padding": [left, top, canvas_w - (left + w), canvas_h - (top + h)]}


def zoom_out(target, params: dict):
    """RandomZoomOut on a target: the boxes moved (its masks are left as they are)."""
    left, top = params["padding"][:2]
    target["boxes"][:, 0::2] += left
    target["boxes"][:, 1::2] += top
    return target


def iou_crop(obj, h: int, w: int, target) -> tuple[dict | None, dict]:
    """RandomIoUCrop's draws and its arithmetic on the target: (the window, or None
    where it keeps the image, the target)."""
    while True:
        idx = int(torch.randint(low=0, high=len(obj.options), size=(1,)))
        min_overlap = obj.options[idx]
        if min_overlap >= 1.0:
            return None, target
        for _ in range(obj.trials):
            r = obj.min_scale + (obj.max_scale - obj.min_scale) * torch.rand(2)
            new_w, new_h = int(w * r[0]), int(h * r[1])
            if not (obj.min_aspect_ratio <= new_w / new_h <= obj.max_aspect_ratio):
                continue
            r = torch.rand(2)
            left, top = int((w - new_w) * r[0]), int((h - new_h) * r[1])
            right, bottom = left + new_w, top + new_h
            if left == right or top == bottom:
                continue
            boxes = target["boxes"]
            cx = 0.5 * (boxes[:, 0] + boxes[:, 2])
            cy = 0.5 * (boxes[:, 1] + boxes[:, 3])
            inside = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
            if not inside.any():
                continue
            boxes = boxes[inside]
            window = torch.tensor([[left, top, right, bottom]], dtype=boxes.dtype)
            if box_iou(boxes, window).max() < min_overlap:
                continue
            target["boxes"] = boxes
            target["labels"] = target["labels"][inside]
            target["boxes"][:, 0::2] -= left
            target["boxes"][:, 1::2] -= top
            target["boxes"][:, 0::2].clamp_(min=0, max=new_w)
            target["boxes"][:, 1::2].clamp_(min=0, max=new_h)
            return {"top": top, "left": left, "height": new_h, "width": new_w}, target


def fixed_crop_window(size: tuple[int, int], h: int, w: int) -> dict:
    """The references' FixedSizeCrop.forward of ``size`` on an h x w image: its window
    (top, left, height, width), drawn as it draws it (one ``torch.rand(1)`` for both
    offsets, and only when it crops); it pads right and bottom to its size.
    ``state``: torch's generator before the draw, for the object itself to draw the
    same."""
    crop_h, crop_w = size
    new_h, new_w = min(h, crop_h), min(w, crop_w)
    top = left = 0
    state = torch.get_rng_state()
    cropped = (new_h, new_w) != (h, w)
    if cropped:
        r = torch.rand(1)
        top, left = int(max(h - crop_h, 0) * r), int(max(w - crop_w, 0) * r)
    return {"top": top, "left": left, "height": new_h, "width": new_w, "cropped": cropped,
            "state": state}


def fixed_crop_survivors(boxes: torch.Tensor, window: dict) -> torch.Tensor:
    """The boxes the references' FixedSizeCrop keeps when it crops to ``window`` (its
    _crop's arithmetic on a copy): those still wider and taller than nothing."""
    if not window["cropped"]:
        return torch.ones(len(boxes), dtype=torch.bool)
    b = boxes.as_subclass(torch.Tensor).clone()
    b[:, 0::2] -= window["left"]
    b[:, 1::2] -= window["top"]
    b[:, 0::2].clamp_(min=0, max=window["width"])
    b[:, 1::2].clamp_(min=0, max=window["height"])
    return (b[:, 0] < b[:, 2]) & (b[:, 1] < b[:, 3])


def fixed_crop_moves_masks(t, size: tuple[int, int]) -> bool:
    """Whether a FixedSizeCrop moves masks as the references' does (those of the boxes
    it keeps, cropped to its window, padded with zeros): run on a probe that it crops
    and pads, against fixed_crop_window and fixed_crop_survivors."""
    crop_h, crop_w = size
    h, w = crop_h + 37, max(crop_w // 2, 1)
    # with torch.manual_seed(0) it crops 18 rows off the top: the first box goes
    boxes = torch.tensor([[0.0, 0.0, w / 2, 0.5], [1.0, h - 20.0, w - 1.0, h - 1.0],
                          [2.0, 10.0, w - 2.0, h - 5.0]])
    masks = torch.randint(0, 2, (3, h, w), generator=torch.Generator().manual_seed(0),
                          dtype=torch.uint8)
    target = {"boxes": boxes.clone(), "labels": torch.arange(3), "masks": masks}
    with generators_kept():
        torch.manual_seed(0)
        try:
            out = t(Image.new("RGB", (w, h)), target)[1]
        except Exception:  # noqa: BLE001 - not the references' class
            return False
        torch.manual_seed(0)
        window = fixed_crop_window(size, h, w)
    keep = fixed_crop_survivors(boxes, window)
    top, height = window["top"], window["height"]
    want = torch.zeros((int(keep.sum()), crop_h, crop_w), dtype=torch.uint8)
    want[:, :height, :w] = masks[keep][:, top:top + height]
    got = out.get("masks") if isinstance(out, dict) else None
    return 0 < int(keep.sum()) < 3 and isinstance(got, torch.Tensor) and \
        got.shape == want.shape and torch.equal(got, want) and \
        torch.equal(out["labels"], torch.arange(3)[keep])
