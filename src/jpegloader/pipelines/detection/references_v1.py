"""The references' own v1 transforms (references/detection/transforms.py: the default
without --use-v2), recognised by name and attributes in users' copies (lower.py): their
draws, made as their forwards make them with torch's generator (seeded per sample:
NOTE [ Draws by the transforms' own make_params ] in draw.py), and their arithmetic on
targets.  On the Python path the user's objects themselves run, on the same generator,
and the tests replay them against these.  Their step classes (below) are the steps
they are, overriding only this arithmetic (NOTE [ One class per step ] in steps.py)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

import torch
from PIL import Image
from torchvision.ops import box_iou
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F1

from ..random_stream import generators_kept
from . import fills
from .family import Family
from .states import bilinear, image_size, window_map
from .steps import (Distort, Flip, IoUCrop, OnImage, OwnToTensor, Resize, ScaleJitter, Step,
                    ToDtype, ZoomOut)


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


# -- their steps ----------------------------------------------------------------------
class ReferencesV1:
    """The references' own v1 classes, which take and return (image, target): their
    draws and arithmetic (references_py); on the Python path, the steps that draw
    are the user's objects themselves."""

    family = Family.V1
    has_make_params = False
    #: the attributes its draws read
    ATTRIBUTES: ClassVar[tuple] = ()

    @classmethod
    def admit(cls, t, prefix):
        missing = [a for a in cls.ATTRIBUTES if not hasattr(t, a)]
        if missing:
            return f"it has no {', '.join(missing)}, so it is not the references' class"
        return cls.admit_theirs(t, prefix)

    @classmethod
    def admit_theirs(cls, t, prefix) -> str | None:
        """As the step it is admits it, unless its class says otherwise."""
        return super(ReferencesV1, cls).admit(t, prefix)

    def run(self, state, draws, k):
        if state.image is not None and self.draws_own:
            state.image, state.target = self.obj(state.image, state.target)
            state.h, state.w = image_size(state.image)
            return
        super().run(state, draws, k)

    def on_image(self, image):
        return self.obj(image, None)[0]


def _v1_resize(step: Resize, state, nh: int, nw: int) -> None:
    """Their resize, even to the same size: boxes scaled in place, masks by nearest."""
    state.target = resize(state.target, state.h, state.w, nh, nw, state.skip)
    if state.image is not None:
        state.image = F1.resize(state.image, [nh, nw], interpolation=step.obj.interpolation)
    step.resized(state, nh, nw, True)


@dataclass(frozen=True, kw_only=True)
class V1Flip(ReferencesV1, Flip):
    @classmethod
    def lowered(cls, t, prefix):
        prefix.flipped = True
        return cls(name=f"RandomHorizontalFlip(p={t.p})", obj=t, p=float(t.p),
                   slot=prefix.slot())

    def move_target(self, state):
        state.target = flip(self.obj, state.target, state.w, state.skip)


@dataclass(frozen=True, kw_only=True)
class V1ShortestSize(ReferencesV1, Resize):
    ATTRIBUTES = ("min_size", "max_size")

    @classmethod
    def admit_theirs(cls, t, prefix):
        if prefix.not_geometry(t) or prefix.resized or prefix.padded:
            return "after a resize or a padding, or on a float image"
        if not bilinear(t) or t.max_size is None:
            return "not bilinear, or no max_size"
        return None

    @classmethod
    def lowered(cls, t, prefix):
        sizes = tuple(int(s) for s in t.min_size)
        prefix.resized = True
        return cls(name=f"RandomShortestSize({list(sizes)}, max_size={t.max_size})", obj=t,
                   sizes=sizes, max_size=int(t.max_size), shortest=True,
                   slot=prefix.slot() if len(sizes) > 1 else -1)

    def resized_to(self, size, h, w):  # their forward
        r = min(size / min(h, w), self.max_size / max(h, w))
        return int(h * r), int(w * r)

    def resize(self, state, nh, nw):
        _v1_resize(self, state, nh, nw)


@dataclass(frozen=True, kw_only=True)
class V1ScaleJitter(ReferencesV1, ScaleJitter):
    ATTRIBUTES = ("target_size", "scale_range")
    moves_masks: ClassVar[bool] = True

    @classmethod
    def lowered(cls, t, prefix):
        prefix.resized = True
        return cls(name=f"ScaleJitter({list(t.target_size)}, scale_range={t.scale_range})",
                   obj=t)

    def drawn(self, flat, h, w):
        return {"size": jitter_size(self.obj, h, w)}

    def apply(self, state, params, draws, k):
        _v1_resize(self, state, *params["size"])


@dataclass(frozen=True, kw_only=True)
class V1Distort(ReferencesV1, Distort):
    ATTRIBUTES = ("_brightness", "_contrast", "_saturation", "_hue", "p")

    @classmethod
    def lowered(cls, t, prefix):
        prefix.padded = True
        return cls(name="RandomPhotometricDistort", obj=t,
                   arithmetic="v1" if prefix.tensor else "pil")

    def drawn(self, flat, h, w):
        return distort_params(self.obj)


@dataclass(frozen=True, kw_only=True)
class V1ZoomOut(ReferencesV1, ZoomOut):
    ATTRIBUTES = ("fill", "side_range", "p")
    moves_masks: ClassVar[bool] = True  # theirs leaves the masks as they are

    @classmethod
    def canvas_fill(cls, t, prefix):
        return fills.rgb([int(x) for x in t.fill]) if len(t.fill) == 3 else None

    @classmethod
    def lowered(cls, t, prefix):
        prefix.padded = True
        return cls(name=f"RandomZoomOut(side_range={t.side_range}, p={t.p})",
                   obj=t, fill=cls.canvas_fill(t, prefix))

    def drawn(self, flat, h, w):
        return zoom_out_params(self.obj, h, w)

    def move_target(self, state, params):
        state.target = zoom_out(state.target, params)


@dataclass(frozen=True, kw_only=True)
class V1IoUCrop(ReferencesV1, IoUCrop):
    """Its draws depend on its own arithmetic on the target: both in apply."""

    ATTRIBUTES = ("min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio",
                  "options", "trials")

    @classmethod
    def lowered(cls, t, prefix):
        prefix.cropped = True
        return cls(name="RandomIoUCrop", obj=t)

    def drawn(self, flat, h, w):
        return None

    def apply(self, state, params, draws, k):
        params, state.target = iou_crop(self.obj, state.h, state.w, state.target)
        state.window(params)


@dataclass(frozen=True, kw_only=True)
class V1ToTensor(ReferencesV1, OwnToTensor):
    """The references' PILToTensor."""


@dataclass(frozen=True, kw_only=True)
class V1ToDtype(ReferencesV1, ToDtype):
    staged = OnImage


@dataclass(frozen=True, kw_only=True)
class FixedSizeCrop(Step):
    """The references' FixedSizeCrop (transforms.py): a window of the (resized) photo,
    padded right and bottom to its size with the fill its own forward gives a probe
    image; the user's object itself moves the target."""

    size: tuple
    fill: int = 0
    #: masks moved as the references' move them (painted through the maps)
    masks_follow: bool = False
    family: ClassVar[Family] = Family.V1
    draws_own: ClassVar[bool] = True
    pads: ClassVar[bool] = True

    @classmethod
    def admit(cls, t, prefix):
        size = (getattr(t, "crop_height", None), getattr(t, "crop_width", None))
        if not all(isinstance(v, int) and v > 0 for v in size):
            return "no crop_height and crop_width"
        # its padding is right and bottom: mirrored by the C core's last flip
        if prefix.not_geometry() or prefix.padded or prefix.cropped or prefix.flipped:
            return "after a flip, a crop or a padding, or on a float image"
        if getattr(t, "padding_mode", "constant") != "constant":
            return "a padding mode other than constant"
        return None if fills.probed_fill(t, size, prefix.image_type) is not None else \
            "a fill the C core does not paint"

    @classmethod
    def lowered(cls, t, prefix):
        size = (t.crop_height, t.crop_width)
        prefix.padded = True
        return cls(name=f"FixedSizeCrop({list(size)})", obj=t, size=size,
                   fill=fills.probed_fill(t, size, prefix.image_type),
                   masks_follow=fixed_crop_moves_masks(t, size))

    @property
    def moves_masks(self) -> bool:
        return self.masks_follow

    def drawn(self, flat, h, w):
        return fixed_crop_window(self.size, h, w)

    def apply(self, state, params, draws, k):  # the user's object on the target (and image)
        stand_in = state.image if state.image is not None else \
            Image.new("RGB", (state.w, state.h))
        target, skip = state.target, state.skip
        keys, masks = list(target), None
        if state.maps is not None and skip in target:  # painted: the maps follow its window
            keep = fixed_crop_survivors(target["boxes"], params)
            masks = target.pop(skip)[keep]
            state.maps = (window_map(state.maps[0], params["top"], params["height"],
                                      self.size[0]),
                          window_map(state.maps[1], params["left"], params["width"],
                                      self.size[1]))
        with generators_kept():  # it draws what fixed_crop_window drew
            torch.set_rng_state(params["state"])
            out, target = self.obj(stand_in, target)
        if masks is not None:
            target = {k: masks if k == skip else target[k] for k in keys if k in target or
                      k == skip} | {k: v for k, v in target.items() if k not in keys}
        state.target = target
        state.image = None if state.image is None else out
        state.crop = (params["left"], params["top"], *self.size[::-1])
        state.h, state.w = self.size

    def largest(self, areas, h, w):  # its size, always
        return [self.size[0] * self.size[1]]
