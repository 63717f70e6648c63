"""A detection sample's random parameters, and its native steps run on the target
(and, for replay and the Python path, on the image) with torchvision's own kernels.

Draws come from the (seed, index) stream (random_stream.py), so a sample gets the
same flip and size with any num_workers.  Each follows its transform's own
distribution: ``RandomHorizontalFlip`` flips when a uniform is below ``p``
(torch: ``torch.rand(1) >= p`` skips), ``RandomShortestSize`` picks each of its
sizes with equal odds (``torch.randint``), and sizes are resolved with the
transform's own arithmetic (Python floats, then int).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms import functional as F1
from torchvision.transforms.v2 import functional as F

from ..random_stream import BOXES_STREAM, generators_kept, seed_generators, seeds, uniforms
from . import detr, iou_crop
from . import references_v1 as v1
from .lower import DetectionProgram, Step, flattened
from .stand_ins import canvas


@dataclass
class Draws:
    """Per sample: each random step's uniform (float64[n, slots]); the epoch's seed and
    the samples' indices, which seed the draws that depend on the boxes."""

    u: np.ndarray
    seed: int = 0
    indices: np.ndarray | None = None

    def flips(self, step: Step, k: int) -> bool:
        return bool(self.u[k, step.slot] < step.p)

    def choice(self, step: Step, k: int) -> int:
        if step.slot < 0:
            return step.sizes[0]
        return step.sizes[min(int(self.u[k, step.slot] * len(step.sizes)),
                              len(step.sizes) - 1)]


def draw(program: DetectionProgram, seed: int, indices) -> Draws:
    indices = np.asarray(indices, dtype=np.int64)
    return Draws(uniforms(seed, indices, max(program.slots, 1)), seed, indices)


def own_params(step: Step, image, target, skip: str | None = None) -> dict | None:
    """NOTE [ Draws by the transforms' own make_params ]
    RandomIoUCrop draws until a crop keeps enough of the boxes, so its draws depend on
    them; RandomPhotometricDistort and RandomZoomOut draw with torch's generator too.
    Each runs its own make_params (a _RandomApplyTransform's ``torch.rand(1) >= p``
    first, as its forward does) on the sample's stand-ins, in step order, with torch's
    generator seeded once per sample from the (seed, index) stream (and put back
    after: run_steps): the transforms' own distributions and arithmetic, the same for
    any num_workers, and replayed by seeding the same way before calling the user's
    objects (tests/pipelines/detection/).  The masks' stand-in (``skip``) is left
    out: the draws read the boxes and the size.  None: the step is not applied."""
    flat = [image, *(v for k_, v in (target.items() if isinstance(target, dict) else ())
                     if isinstance(v, tv_tensors.TVTensor) and k_ != skip)]
    check = getattr(step.obj, "check_inputs", None) or getattr(step.obj, "_check_inputs", None)
    if check is not None:  # as its forward does first (an image without boxes: TypeError)
        check(flat)
    h, w = _size(flat[0])
    if step.v1:  # their forwards' draws (references_v1.py); RandomIoUCrop's: _step
        if step.kind == "jitter":
            return {"size": v1.jitter_size(step.obj, h, w)}
        if step.kind == "distort":
            return v1.distort_params(step.obj)
        return v1.zoom_out_params(step.obj, h, w) if step.kind == "zoomout" else None
    if step.kind == "zoomout" and torch.rand(1) >= step.obj.p:
        return None
    if step.gated and torch.rand(1) >= step.p:  # RT-DETR's RandomIoUCrop: its own p first
        return None
    if step.kind == "fixedcrop":
        return v1.fixed_crop_window(step.size, h, w)
    if step.fast:  # NOTE [ RandomIoUCrop's draws, fast ] (iou_crop.py)
        boxes = next(v for v in flat if isinstance(v, tv_tensors.BoundingBoxes))
        return iou_crop.params(step.obj, iou_crop.xyxy(boxes), h, w)
    make = getattr(step.obj, "make_params", None) or step.obj._get_params
    return make(flat)


def box_seed(draws: Draws, k: int) -> int:
    """The seed sample k's box-dependent draws start from."""
    return seeds(draws.seed, [int(draws.indices[k])], BOXES_STREAM)[0]


def resized(step: Step, draws: Draws, k: int, h: int, w: int) -> tuple[int, int]:
    """The (height, width) a resize step gives sample k's h x w image."""
    return resized_to(step, draws.choice(step, k), h, w)


def resized_to(step: Step, size: int, h: int, w: int) -> tuple[int, int]:
    """The (height, width) a resize step gives an h x w image when it draws ``size``,
    with its own arithmetic."""
    if step.v1:  # the references' v1 RandomShortestSize.forward
        r = min(size / min(h, w), step.max_size / max(h, w))
        return int(h * r), int(w * r)
    if step.shortest:  # RandomShortestSize.make_params
        r = size / min(h, w)
        if step.max_size is not None:
            r = min(r, step.max_size / max(h, w))
        return int(h * r), int(w * r)
    # Resize: the box kernel resolves the size as the image kernel does
    probe = tv_tensors.BoundingBoxes(torch.zeros(0, 4), format="XYXY", canvas_size=(h, w))
    out = F.resize(probe, list(step.sizes), max_size=step.max_size)
    return tuple(int(s) for s in out.canvas_size)


def _geometric(target, fn, skip: str | None = None):
    """``fn`` on every tv_tensor of the target (boxes, masks) but ``skip``, as a v2
    transform applies a geometric kernel beside an image; labels and plain values pass."""
    if isinstance(target, dict):
        return {k: fn(v) if isinstance(v, tv_tensors.TVTensor) and k != skip else v
                for k, v in target.items()}
    return target


@dataclass
class Geometry:
    """What the native steps do to one sample's image: the window of the photo it keeps
    (left, top, width, height), its output size and flip."""

    height: int
    width: int
    flip: bool
    crop: tuple[int, int, int, int]
    #: with masks painted later: the photo's row and column each output pixel takes
    maps: tuple[np.ndarray, np.ndarray] | None = None
    #: padded programs: the zoom-out's canvas (left, top, width, height), where the
    #: photo sits and ``crop`` is taken; the photo itself when it was not applied
    pad: tuple[int, int, int, int] | None = None
    #: RandomPhotometricDistort's params, None when the program has none
    distort: dict | None = None
    #: padded programs: the (height, width) the whole photo is resized to first
    scaled: tuple[int, int] | None = None
    #: the (height, width) the C core's output is resized to after (NOTE [ DETR's
    #: geometry in one plan ] in detr.py)
    then: tuple[int, int] | None = None

    @property
    def output(self) -> tuple[int, int]:
        """The sample's image's (height, width)."""
        return self.then or (self.height, self.width)

    @classmethod
    def whole(cls, size: tuple[int, int]) -> Geometry:
        """The photo as it is (for a sample the C core skips)."""
        return cls(size[0], size[1], False, (0, 0, size[1], size[0]))

    def keeps_the_photo(self, size: tuple[int, int]) -> bool:
        """Whether the output is the whole photo of ``size`` at that size, flipped or
        not (its ``maps``, if any, are then the identity or its mirror)."""
        return self.crop == (0, 0, size[1], size[0]) and (self.height, self.width) == size \
            and self.pad in (None, (0, 0, size[1], size[0]))


def run_steps(program: DetectionProgram, draws: Draws, k: int, size: tuple[int, int],
              target, image=None, masks_later: bool = False):
    """The native steps of sample ``k`` on its ``target`` (and on ``image``, a PIL
    image of ``size``, when given: the reference's own result).  Returns (Geometry,
    target, image).  With ``masks_later`` the target's "masks" is the stand-in of
    masks painted later (NOTE [ Masks painted into the slot ] in masks.py): the
    geometric steps leave it alone, and the Geometry's ``maps`` say which row and
    column of the photo each output pixel takes (crops, flips and nearest resizes)."""
    h, w = size
    flip = False
    crop = (0, 0, w, h)
    pad = (0, 0, w, h) if program.padded else None
    scaled = size if program.padded else None
    distort = None
    skip = "masks" if masks_later else None
    maps = (np.arange(h), np.arange(w)) if masks_later else None
    # NOTE [ Draws by the transforms' own make_params ]
    own = program.detr or any(s.kind in OWN_DRAWS or s.gate for s in program.steps)
    with generators_kept(own):
        if own:
            seed_generators(box_seed(draws, k))
        if program.detr:
            return _detr_steps(program, size, target, image)
        then = None  # NOTE [ DETR's geometry in one plan ] (detr.py): the second resize
        skipped: set[int] = set()  # steps a RandomApply or RandomChoice left out
        for i, step in enumerate(program.steps):
            if step.gate:
                skipped |= gated_out(step.gate, i)
            if i in skipped:
                continue
            if image is not None and step.v1 and step.kind in OWN_DRAWS:
                image, target = step.obj(image, target)  # the Python path: theirs
                h, w = _size(image)
                continue
            if step.then:  # the C core's output is the window so far
                then = (h, w)
            params = own_params(step, image if image is not None else canvas(h, w),
                                target, skip) if step.kind in OWN_DRAWS else None
            h, w, crop, pad, flip, maps, target, image = _step(
                step, params, draws, k, h, w, crop, pad, flip, maps, target, image, skip)
            if step.kind == "distort":
                distort = params
            elif pad is not None and step.kind in ("resize", "jitter") and not step.then:
                scaled, pad, crop = (h, w), (0, 0, w, h), (0, 0, w, h)  # before any padding
    if then is not None and then != (h, w):
        return Geometry(*then, flip, crop, maps, pad, distort, scaled, then=(h, w)), \
            target, image
    return Geometry(h, w, flip, crop, maps, pad, distort, scaled), target, image


def gated_out(gate: tuple, first: int) -> set[int]:
    """The steps a RandomApply or RandomChoice whose steps start at ``first`` leaves
    out, drawn as its forward draws (torch.rand(1) >= p; torch.multinomial)."""
    kind, p, sizes = gate
    if kind == "apply":
        return set(range(first, first + sizes[0])) if torch.rand(1) >= p[0] else set()
    chosen = int(torch.multinomial(torch.tensor(p), 1))
    start = first + sum(sizes[:chosen])
    return set(range(first, first + sum(sizes))) - set(range(start, start + sizes[chosen]))


def _detr_steps(program: DetectionProgram, size: tuple[int, int], target, image):
    """run_steps for DETR's steps: their own objects on an image; else their draws and
    arithmetic on the target (detr.py), as one plan and a second resize."""
    if image is not None:
        for step in program.steps:
            image, target = step.obj(image, target)
        return Geometry.whole(_size(image)), target, image
    s, target = detr.run(program.steps, size, target)
    scaled = s.scaled or size
    window = s.window or (0, 0, scaled[1], scaled[0])
    if not program.padded:  # a resize of the whole photo, the window being all of it
        return Geometry(window[3], window[2], s.flip, (0, 0, size[1], size[0]),
                        then=s.then), target, None
    return Geometry(window[3], window[2], s.flip, window, pad=(0, 0, scaled[1], scaled[0]),
                    scaled=scaled, then=s.then), target, None


def _window(params: dict | None, crop, h: int, w: int, flip: bool):
    """(crop, h, w) after a crop to ``params``' window (None: none) of an image h x w,
    mirrored where it was flipped before (the C core flips last)."""
    if not params:
        return crop, h, w
    left = w - params["left"] - params["width"] if flip else params["left"]
    return (left, params["top"], params["width"], params["height"]), \
        params["height"], params["width"]


def _window_map(index: np.ndarray, start: int, count: int, length: int) -> np.ndarray:
    """A map cropped to [start, start + count) and padded (-1) to ``length``."""
    return np.concatenate([index[start:start + count],
                           np.full(length - count, -1, index.dtype)])


def _size(image) -> tuple[int, int]:
    """(height, width) of a PIL image or a tensor."""
    return (image.height, image.width) if isinstance(image, Image.Image) else \
        tuple(image.shape[-2:])


#: The steps whose draws are their own make_params' (the references' FixedSizeCrop and
#: v1 classes: their forwards').
OWN_DRAWS = ("ioucrop", "distort", "zoomout", "jitter", "fixedcrop")


def _step(step, params, draws, k, h, w, crop, pad, flip, maps, target, image, skip):
    """One native step of run_steps: the new (h, w, crop, pad, flip, maps, target,
    image)."""
    if step.kind == "distort":  # the pixels only (the C core's colour program)
        if image is not None:
            image = step.obj.transform(image, params)
    elif step.kind == "zoomout":
        if params is not None:  # no crop before it (lower.py): the canvas is all there is
            left, top, right, bottom = params["padding"]
            target = v1.zoom_out(target, params) if step.v1 else \
                _geometric(target, lambda v: step.obj.transform(v, params), skip)
            if image is not None:
                image = step.obj.transform(image, params)
            h, w = top + h + bottom, left + w + right
            # flipped before: the C core pads the photo unflipped, then mirrors the canvas
            pad, crop = (right if flip else left, top, w, h), (0, 0, w, h)
    elif step.kind == "fixedcrop":  # the user's object on the target (and image)
        stand_in = image if image is not None else Image.new("RGB", (w, h))
        keys, masks = list(target), None
        if maps is not None and skip in target:  # painted: the maps follow its window
            keep = v1.fixed_crop_survivors(target["boxes"], params)
            masks = target.pop(skip)[keep]
            maps = (_window_map(maps[0], params["top"], params["height"], step.size[0]),
                    _window_map(maps[1], params["left"], params["width"], step.size[1]))
        with generators_kept():  # it draws what v1.fixed_crop_window drew
            torch.set_rng_state(params["state"])
            out, target = step.obj(stand_in, target)
        if masks is not None:
            target = {k: masks if k == skip else target[k] for k in keys if k in target or
                      k == skip} | {k: v for k, v in target.items() if k not in keys}
        image = None if image is None else out
        crop = (params["left"], params["top"], *step.size[::-1])
        h, w = step.size
    elif step.kind == "ioucrop":
        if step.v1:  # its draws depend on its own arithmetic on the target
            params, target = v1.iou_crop(step.obj, h, w, target)
            crop, h, w = _window(params, crop, h, w, flip)
        elif params:
            apply = getattr(step.obj, "transform", None) or step.obj._transform
            target = _geometric(target, lambda v, p=params: apply(v, p), skip)
            if maps is not None:
                top, left = params["top"], params["left"]
                maps = (maps[0][top:top + params["height"]],
                        maps[1][left:left + params["width"]])
            if image is not None:
                image = apply(image, params)
            crop, h, w = _window(params, crop, h, w, flip)
    elif step.kind == "flip":
        if draws.flips(step, k):
            flip = not flip
            target = v1.flip(step.obj, target, w, skip) if step.v1 else \
                _geometric(target, F.horizontal_flip, skip)
            if maps is not None:
                maps = (maps[0], maps[1][::-1])
            if image is not None:
                image = F.horizontal_flip(image)
    elif step.kind in ("resize", "jitter"):
        nh, nw = params["size"] if step.kind == "jitter" else resized(step, draws, k, h, w)
        if step.v1:  # resizes (and scales the boxes) even to the same size
            target = v1.resize(target, h, w, nh, nw, skip)
            if image is not None:
                image = F1.resize(image, [nh, nw], interpolation=step.obj.interpolation)
        elif step.kind == "jitter":  # its own transform, even to the same size
            target = _geometric(target, lambda v: step.obj.transform(v, params), skip)
            if image is not None:
                image = step.obj.transform(image, params)
        elif (nh, nw) != (h, w):
            target = _geometric(target, lambda v, s=[nh, nw]: F.resize(v, s), skip)
            if image is not None:
                image = F.resize(image, [nh, nw])
        if maps is not None and (step.v1 or (nh, nw) != (h, w)):
            maps = (maps[0][nearest(h, nh)], maps[1][nearest(w, nw)])
        h, w = nh, nw
    elif step.kind == "tensor" and step.v1:
        if image is not None:
            image = step.obj(image, None)[0]
    elif step.kind == "target":
        out, target = step.obj(canvas(h, w) if image is None else image, target)
        image = None if image is None else out
    elif image is not None:  # the tensor stage, on the image
        image = step.obj(image)
    return h, w, crop, pad, flip, maps, target, image


@functools.lru_cache(maxsize=4096)
def nearest(n: int, m: int) -> np.ndarray:
    """Which of n pixels each of m takes in a nearest-neighbour resize, as torch's
    interpolate(mode="nearest") picks them (the masks' resize in v1 and v2)."""
    ramp = torch.arange(n, dtype=torch.float32).view(1, 1, n)
    return torch.nn.functional.interpolate(ramp, size=m, mode="nearest").view(-1).long().numpy()


#: A zoom-out's canvas has up to side_range[1] squared times the photo's pixels (16
#: for the ssd policy), mostly cropped after: a slot's row holds this many times the
#: photo, and a batch's images are packed into its rows, so only a batch larger than
#: them sends its last images beside it (NOTE [ Detection batches in the ring ]).
ZOOM_ROW_AREA = 2


#: A row of the ring (an image's, its masks') reaches at most this many times what
#: the median photo needs: an outsized photo (a camera original among web photos)
#: travels beside the batch instead of sizing every slot
ROW_ROOM = 4


def largest_output(program: DetectionProgram, sizes) -> int:
    """The most pixels the native steps give any of ``sizes`` ((height, width) pairs:
    the annotation file's), over every size a resize step may draw; for a zoom-out,
    ZOOM_ROW_AREA times the photo."""
    best = 1
    for h, w in {(int(h), int(w)) for h, w in sizes}:
        if h <= 0 or w <= 0:
            continue
        areas = [h * w]
        if program.detr:  # every size a resize draws, of the photo (a crop's may not fit)
            areas += [a * b for s in flattened(program.steps) if s.kind == "resize"
                      for a, b in (detr.resized_size(h, w, c, s.obj.max_size)
                                   for c in s.obj.sizes)]
            best = max(best, *areas)
            continue
        for step in program.steps:
            if step.kind == "zoomout":  # no resize after it (lower.py)
                areas = [a * ZOOM_ROW_AREA for a in areas]
            if step.kind == "jitter":  # at its largest scale
                t = step.obj
                r = min(t.target_size[1] / w, t.target_size[0] / h) * t.scale_range[1]
                areas = [int(w * r) * int(h * r)]
            if step.kind == "fixedcrop":  # its size, always
                areas = [step.size[0] * step.size[1]]
            if step.kind == "resize" and step.then and not step.shortest and \
                    len(step.sizes) == 2:  # a fixed size, whatever the window
                areas = [step.sizes[0] * step.sizes[1]]
            elif step.kind == "resize":  # one resize at most (lower.py)
                drawn = step.sizes if step.shortest else step.sizes[:1]  # Resize: its size
                areas = [a * b for a, b in (resized_to(step, c, h, w) for c in drawn)]
        best = max(best, *areas)
    return best
