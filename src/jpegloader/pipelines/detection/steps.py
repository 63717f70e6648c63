"""The native steps of a detection program, one class per kind of step, and
torchvision v2's own classes lowered by them.

A step's class says everything the room needs of that kind of step:
``admit(t, prefix)`` (None where ``t`` lowers after the steps so far, else the reason
it stays the user's object: the verdict prints it), ``lowered(t, prefix)`` (the step,
with what it does to the prefix recorded), ``params`` (its draws: NOTE [ Draws by the
transforms' own make_params ] in draw.py), ``apply(state, params, draws, k)`` (its
effect on one sample's SampleState), ``largest`` (the most pixels it may leave, for
sizing the ring) and ``describe`` (its name in the verdict).  The families users copy
(the references' v1 classes, DETR's, RT-DETR's) are subclasses that override only
their arithmetic, each in its family's module (references_v1.py, detr.py, rtdetr.py);
families.py says which class lowers a transform.

NOTE [ One class per step ]
What the room knows of a kind of step lives on its class, never in a list of kinds
kept elsewhere: ``draws_own`` (torch's generators are seeded per sample before it),
``pads`` (the C core pads each photo: NOTE [ Colour before the padding ] in
csrc/pipeline.c), ``moves_masks`` (the maps of masks painted into the slot follow it:
masks.py), ``fill`` (the canvas it pads), ``family`` (whose arithmetic).  A step is a
frozen dataclass: a program is compared and hashed as the key of its lowering.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch
from torchvision import tv_tensors
from torchvision.transforms import v2 as T2
from torchvision.transforms.v2 import functional as F

from . import fills, iou_crop
from .family import Family
from .states import Prefix, SampleState, bilinear, callable_params, image_size, nearest


@dataclass(frozen=True, kw_only=True)
class Step:
    """A native step (NOTE [ One class per step ])."""

    name: str
    obj: object = field(compare=False, default=None)

    draws_own: ClassVar[bool] = False
    pads: ClassVar[bool] = False
    moves_masks: ClassVar[bool] = True
    #: the RGB fill (R | G << 8 | B << 16) of the canvas it pads; None: it pads nothing
    fill: ClassVar[int | None] = None
    #: whose class it is, and so whose arithmetic
    family: ClassVar[Family] = Family.V2
    #: its draws are the transform's make_params (the copies' classes draw with their
    #: forwards' own arithmetic instead)
    has_make_params: ClassVar[bool] = True

    @classmethod
    def admit(cls, t, prefix: Prefix) -> str | None:
        return None

    @classmethod
    def no_params(cls, t) -> str | None:
        """Why ``t`` cannot draw as this step draws (no make_params), or None."""
        return "no make_params" if cls.has_make_params and not callable_params(t) else None

    @classmethod
    def lowered(cls, t, prefix: Prefix) -> Step:
        return cls(name=type(t).__name__, obj=t)

    def inner(self) -> tuple:
        """The steps a group holds (none for others)."""
        return ()

    def describe(self) -> str:
        """Its name in the verdict, with whose class it is where not torchvision's."""
        return self.name + self.family.tag

    def run(self, state: SampleState, draws, k: int) -> None:
        """The step on sample ``k``: its draws, then its effect."""
        params = self.params(state.stand_in(), state.target, state.skip) \
            if self.draws_own else None
        self.apply(state, params, draws, k)

    def params(self, image, target, skip: str | None = None) -> dict | None:
        """NOTE [ Draws by the transforms' own make_params ] (draw.py): the checks its
        forward makes first, then its draws on the sample's stand-ins (the masks'
        stand-in ``skip`` left out: the draws read the boxes and the size).  None:
        the step is not applied."""
        flat = [image, *(v for k_, v in (target.items() if isinstance(target, dict) else ())
                         if isinstance(v, tv_tensors.TVTensor) and k_ != skip)]
        check = getattr(self.obj, "check_inputs", None) or \
            getattr(self.obj, "_check_inputs", None)
        if check is not None:  # as its forward does first (no boxes: TypeError)
            check(flat)
        return self.drawn(flat, *image_size(flat[0]))

    def drawn(self, flat: list, h: int, w: int) -> dict | None:
        make = getattr(self.obj, "make_params", None) or self.obj._get_params
        return make(flat)

    def apply(self, state: SampleState, params, draws, k: int) -> None:
        raise NotImplementedError

    def largest(self, areas: list[int], h: int, w: int) -> list[int]:
        """The pixels each of ``areas`` may become (the photo is h x w)."""
        return areas


@dataclass(frozen=True, kw_only=True)
class Flip(Step):
    """RandomHorizontalFlip: flips when the sample's uniform is below ``p`` (torch:
    ``torch.rand(1) >= p`` skips); the C core flips last."""

    p: float
    slot: int

    @classmethod
    def lowered(cls, t, prefix):
        prefix.flipped = True
        return cls(name=f"RandomHorizontalFlip(p={t.p})", obj=t, p=float(t.p),
                   slot=prefix.slot())

    def flips(self, draws, k: int) -> bool:
        return bool(draws.u[k, self.slot] < self.p)

    def apply(self, state, params, draws, k):
        if not self.flips(draws, k):
            return
        state.flip = not state.flip
        self.move_target(state)
        if state.maps is not None:
            state.maps = (state.maps[0], state.maps[1][::-1])
        if state.image is not None:
            state.image = F.horizontal_flip(state.image)

    def move_target(self, state: SampleState) -> None:
        state.geometric(F.horizontal_flip)


@dataclass(frozen=True, kw_only=True)
class Resize(Step):
    """One resize of the photo (bilinear: Pillow's arithmetic, which the C core
    reproduces): torchvision's Resize (one size) or RandomShortestSize (``sizes``
    drawn with equal odds, ``shortest``).  After a padding (``then``) it resizes the
    C core's output instead, as the user's object would."""

    sizes: tuple
    max_size: int | None = None
    shortest: bool = False
    slot: int = -1
    then: bool = False

    @classmethod
    def admit(cls, t, prefix):
        # a second resize would resample twice
        if prefix.not_geometry(t):
            return "on a float image, or a uint8 tensor without antialias"
        if prefix.resized:
            return "a second resize"
        if not bilinear(t):
            return "not bilinear"
        if type(t) is not T2.RandomShortestSize and t.size is None:
            return "no size"
        return None

    @classmethod
    def lowered(cls, t, prefix):
        prefix.resized = True
        if type(t) is T2.RandomShortestSize:
            sizes = tuple(int(s) for s in t.min_size)
            return cls(name=f"RandomShortestSize({list(sizes)}, max_size={t.max_size})",
                       obj=t, sizes=sizes, max_size=t.max_size, shortest=True,
                       slot=prefix.slot() if len(sizes) > 1 else -1, then=prefix.padded)
        size = (int(t.size),) if isinstance(t.size, int) else tuple(int(s) for s in t.size)
        return cls(name=f"Resize({list(size)}, max_size={t.max_size})", obj=t, sizes=size,
                   max_size=t.max_size, then=prefix.padded)

    @property
    def moves_masks(self) -> bool:
        return not self.then

    def choice(self, draws, k: int) -> int:
        if self.slot < 0:
            return self.sizes[0]
        return self.sizes[min(int(draws.u[k, self.slot] * len(self.sizes)),
                              len(self.sizes) - 1)]

    def resized_to(self, size: int, h: int, w: int) -> tuple[int, int]:
        """The (height, width) it gives an h x w image when it draws ``size``, with
        its own arithmetic."""
        if self.shortest:  # RandomShortestSize.make_params
            r = size / min(h, w)
            if self.max_size is not None:
                r = min(r, self.max_size / max(h, w))
            return int(h * r), int(w * r)
        # Resize: the box kernel resolves the size as the image kernel does
        probe = tv_tensors.BoundingBoxes(torch.zeros(0, 4), format="XYXY", canvas_size=(h, w))
        out = F.resize(probe, list(self.sizes), max_size=self.max_size)
        return tuple(int(s) for s in out.canvas_size)

    def run(self, state, draws, k):
        if self.then:  # the C core's output is the window so far
            state.core = (state.h, state.w)
        super().run(state, draws, k)

    def apply(self, state, params, draws, k):
        nh, nw = self.resized_to(self.choice(draws, k), state.h, state.w)
        self.resize(state, nh, nw)

    def resize(self, state: SampleState, nh: int, nw: int) -> None:
        """The sample resized to nh x nw."""
        changed = (nh, nw) != (state.h, state.w)
        if changed:
            state.geometric(lambda v, s=[nh, nw]: F.resize(v, s))
            if state.image is not None:
                state.image = F.resize(state.image, [nh, nw])
        self.resized(state, nh, nw, changed)

    def resized(self, state: SampleState, nh: int, nw: int, maps_move: bool) -> None:
        if state.maps is not None and maps_move:
            state.maps = (state.maps[0][nearest(state.h, nh)],
                          state.maps[1][nearest(state.w, nw)])
        state.h, state.w = nh, nw
        if state.pad is not None and not self.then:  # before any padding
            state.scaled, state.pad, state.crop = (nh, nw), (0, 0, nw, nh), (0, 0, nw, nh)

    def largest(self, areas, h, w):
        if self.then and not self.shortest and len(self.sizes) == 2:
            return [self.sizes[0] * self.sizes[1]]  # a fixed size, whatever the window
        drawn = self.sizes if self.shortest else self.sizes[:1]  # Resize: its size
        return [a * b for a, b in (self.resized_to(c, h, w) for c in drawn)]


@dataclass(frozen=True, kw_only=True)
class ScaleJitter(Resize):
    """ScaleJitter: a resize its own make_params draws, applied even to the same size."""

    sizes: tuple = ()
    draws_own: ClassVar[bool] = True
    moves_masks: ClassVar[bool] = False  # its masks' resize is not the maps' nearest

    @classmethod
    def admit(cls, t, prefix):
        if prefix.not_geometry(t):
            return "on a float image, or a uint8 tensor without antialias"
        if prefix.resized or prefix.padded or prefix.cropped:
            return "after a resize, a crop or a padding"
        return "not bilinear" if not bilinear(t) else cls.no_params(t)

    @classmethod
    def lowered(cls, t, prefix):
        prefix.resized = True
        return cls(name=f"ScaleJitter({list(t.target_size)}, scale_range={t.scale_range})",
                   obj=t)

    def apply(self, state, params, draws, k):
        nh, nw = params["size"]
        state.geometric(lambda v: self.obj.transform(v, params))
        if state.image is not None:
            state.image = self.obj.transform(state.image, params)
        self.resized(state, nh, nw, (nh, nw) != (state.h, state.w))

    def largest(self, areas, h, w):  # at its largest scale
        t = self.obj
        r = min(t.target_size[1] / w, t.target_size[0] / h) * t.scale_range[1]
        return [int(w * r) * int(h * r)]


@dataclass(frozen=True, kw_only=True)
class IoUCrop(Step):
    """RandomIoUCrop: a window of the decoded photo, drawn by its own make_params from
    the boxes; before any resize, as the C core crops and then resizes."""

    fast: bool = False  # its draws by iou_crop.params (NOTE [ RandomIoUCrop's draws, fast ])
    draws_own: ClassVar[bool] = True

    @classmethod
    def admit(cls, t, prefix):
        if prefix.resized or prefix.cropped:
            return "after a resize or a crop"
        return cls.no_params(t)

    @classmethod
    def lowered(cls, t, prefix):
        prefix.cropped = True
        return cls(name="RandomIoUCrop", obj=t, fast=iou_crop.agrees(t))

    def drawn(self, flat, h, w):
        if self.fast:  # NOTE [ RandomIoUCrop's draws, fast ] (iou_crop.py)
            boxes = next(v for v in flat if isinstance(v, tv_tensors.BoundingBoxes))
            return iou_crop.params(self.obj, iou_crop.xyxy(boxes), h, w)
        return super().drawn(flat, h, w)

    def apply(self, state, params, draws, k):
        if not params:
            return
        apply = getattr(self.obj, "transform", None) or self.obj._transform
        state.geometric(lambda v, p=params: apply(v, p))
        if state.maps is not None:
            top, left = params["top"], params["left"]
            state.maps = (state.maps[0][top:top + params["height"]],
                          state.maps[1][left:left + params["width"]])
        if state.image is not None:
            state.image = apply(state.image, params)
        state.window(params)


#: A zoom-out's canvas has up to side_range[1] squared times the photo's pixels (16
#: for the ssd policy), mostly cropped after: a slot's row holds this many times the
#: photo, and a batch's images are packed into its rows, so only a batch larger than
#: them sends its last images beside it (NOTE [ Detection batches in the ring ]).
ZOOM_ROW_AREA = 2


@dataclass(frozen=True, kw_only=True)
class ZoomOut(Step):
    """RandomZoomOut: the photo padded into a canvas of its fill (the C core's
    padding); nothing before it crops or resizes, so the canvas is all there is."""

    fill: int = 0
    draws_own: ClassVar[bool] = True
    pads: ClassVar[bool] = True
    moves_masks: ClassVar[bool] = False

    @classmethod
    def canvas_fill(cls, t, prefix) -> int | None:
        return fills.zoom_out_fill(t, prefix.image_type)

    @classmethod
    def admit(cls, t, prefix):
        if prefix.not_geometry() or prefix.resized or prefix.cropped:
            return "after a resize or a crop, or on a float image"
        if prefix.has(ZoomOut):
            return "a second zoom-out"
        if cls.canvas_fill(t, prefix) is None:
            return "a fill the C core does not paint"
        return cls.no_params(t)

    @classmethod
    def lowered(cls, t, prefix):
        prefix.padded = True
        return cls(name=f"RandomZoomOut(side_range={t.side_range}, p={t.p})", obj=t,
                   fill=cls.canvas_fill(t, prefix))

    def drawn(self, flat, h, w):
        if torch.rand(1) >= self.obj.p:
            return None
        return super().drawn(flat, h, w)

    def apply(self, state, params, draws, k):
        if params is None:
            return
        left, top, right, bottom = params["padding"]
        self.move_target(state, params)
        if state.image is not None:
            state.image = self.obj.transform(state.image, params)
        state.h, state.w = top + state.h + bottom, left + state.w + right
        # flipped before: the C core pads the photo unflipped, then mirrors the canvas
        state.pad = (right if state.flip else left, top, state.w, state.h)
        state.crop = (0, 0, state.w, state.h)

    def move_target(self, state: SampleState, params: dict) -> None:
        state.geometric(lambda v: self.obj.transform(v, params))

    def largest(self, areas, h, w):
        return [a * ZOOM_ROW_AREA for a in areas]


@dataclass(frozen=True, kw_only=True)
class Distort(Step):
    """RandomPhotometricDistort on the photo, before any geometry: its draws by its
    own make_params, its steps by the C core's colour program on the whole photo
    before padding (NOTE [ Colour before the padding ] in csrc/pipeline.c)."""

    #: Pillow's arithmetic ("pil") or, on a uint8 tensor, torchvision's v2 kernels' or
    #: v1's functional ops' ("v2", "v1": csrc/colour_tensor.h)
    arithmetic: str = "pil"
    draws_own: ClassVar[bool] = True
    pads: ClassVar[bool] = True

    @classmethod
    def admit(cls, t, prefix):
        if prefix.float or prefix.resized or prefix.cropped or prefix.padded:
            return "after geometry or a padding, or on a float image"
        return cls.no_params(t)

    @classmethod
    def lowered(cls, t, prefix):
        prefix.padded = True
        return cls(name="RandomPhotometricDistort", obj=t,
                   arithmetic="v2" if prefix.tensor else "pil")

    def apply(self, state, params, draws, k):  # the pixels only
        if state.image is not None:
            state.image = self.obj.transform(state.image, params)
        state.distort = params


@dataclass(frozen=True, kw_only=True)
class TensorStage(Step):
    """A step of the tensor stage (a table run on a 0..255 ramp: tensor_stage.py): a
    conversion to a tensor, a dtype, a normalisation."""

    @classmethod
    def lowered(cls, t, prefix):
        prefix.stage.append(cls.staged(t))
        return super().lowered(t, prefix)

    @classmethod
    def staged(cls, t):
        """What the tensor stage runs for ``t``."""
        return t

    def apply(self, state, params, draws, k):
        if state.image is not None:
            state.image = self.on_image(state.image)

    def on_image(self, image):
        return self.obj(image)


@dataclass(frozen=True, kw_only=True)
class ToTensor(TensorStage):
    """ToImage, PILToTensor: a uint8 tensor (the first one converts; later ones only
    change the image's type)."""

    @classmethod
    def lowered(cls, t, prefix):
        if not prefix.tensor:
            prefix.tensor = True
            prefix.stage.append(cls.staged(t))
        prefix.image_type = "image" if type(t) is T2.ToImage else "tensor"
        return cls(name=type(t).__name__, obj=t)


@dataclass(frozen=True, kw_only=True)
class ToDtype(TensorStage):
    """ToDtype, ConvertImageDtype."""

    @classmethod
    def admit(cls, t, prefix):
        if not prefix.tensor:
            return "before a conversion to a tensor"
        return None if isinstance(getattr(t, "dtype", None), torch.dtype) else \
            "not one dtype for every tensor"

    @classmethod
    def lowered(cls, t, prefix):
        prefix.stage.append(cls.staged(t))
        prefix.float = t.dtype.is_floating_point
        return cls(name=f"{type(t).__name__}({t.dtype})", obj=t)


@dataclass(frozen=True, kw_only=True)
class Normalize(TensorStage):
    @classmethod
    def admit(cls, t, prefix):
        return None if prefix.float else "not on a float image"


@dataclass(frozen=True, kw_only=True)
class TargetOnly(Step):
    """A step that draws nothing and leaves the pixels alone (ConvertBoundingBoxFormat,
    ClampBoundingBoxes, SanitizeBoundingBoxes, ToPureTensor): the user's own object,
    run on the target beside a stand-in image of the right size."""

    @classmethod
    def lowered(cls, t, prefix):
        if type(t) is T2.ToPureTensor and prefix.image_type == "image":
            prefix.image_type = "tensor"
        return super().lowered(t, prefix)

    def apply(self, state, params, draws, k):
        out, state.target = self.obj(state.stand_in(), state.target)
        state.image = None if state.image is None else out


@dataclass(frozen=True, kw_only=True)
class Group(Step):
    """RandomApply (``draw`` "apply": its steps or none), RandomChoice ("choice": one
    alternative, by ``p``) and DETR's RandomSelect (families.py): each alternative
    lowered from the prefix before it, the alternative drawn as their forwards draw
    it.  A flip or a tensor conversion inside runs the whole group as yours."""

    alternatives: tuple
    p: tuple
    draw: str = "choice"
    draws_own: ClassVar[bool] = True  # the gate: torch's generator

    @classmethod
    def admit(cls, t, prefix):
        return None  # an alternative that does not lower raises Split

    @classmethod
    def lowered(cls, t, prefix):
        if type(t) is T2.RandomApply:
            alternatives, p, draw = [list(t.transforms)], (float(t.p),), "apply"
            name = f"RandomApply(p={t.p})"
        else:
            alternatives, p, draw = [[x] for x in t.transforms], tuple(
                float(v) for v in t.p), "choice"
            name = "RandomChoice"

        def allowed(new):
            if not new:
                return "nothing inside lowers"
            if any(isinstance(s, (Flip, Group)) for s in new):
                return "a flip or a group inside"
            return None
        return cls(name=name, obj=t, alternatives=tuple(prefix.alternatives(alternatives,
                                                                            allowed)),
                   p=p, draw=draw)

    def inner(self):
        return tuple(s for a in self.alternatives for s in a)

    @property
    def moves_masks(self) -> bool:
        return all(s.moves_masks for s in self.inner())

    def describe(self):
        return f"{self.name}: " + " | ".join(", ".join(s.describe() for s in a)
                                              for a in self.alternatives)

    def chosen(self) -> int | None:
        """Which alternative runs (None: none), drawn as the forward draws it
        (``torch.rand(1) >= p`` skips; ``torch.multinomial``)."""
        if self.draw == "apply":
            return None if torch.rand(1) >= self.p[0] else 0
        return int(torch.multinomial(torch.tensor(self.p), 1))

    def run(self, state, draws, k):
        chosen = self.chosen()
        for step in () if chosen is None else self.alternatives[chosen]:
            step.run(state, draws, k)

    def largest(self, areas, h, w):  # the most any alternative (or none) leaves
        out = list(areas)
        for alternative in self.alternatives:
            got = list(areas)
            for step in alternative:
                got = step.largest(got, h, w)
            out += got
        return [max(out)]


class OnImage:
    """A transform of the references' or DETR's, which takes (image, target), on the
    image alone (for the tensor stage's table)."""

    def __init__(self, t):
        self.t = t

    def __call__(self, image):
        return self.t(image, None)[0]

    def __repr__(self) -> str:
        return f"OnImage({self.t!r})"


@dataclass(frozen=True, kw_only=True)
class OwnToTensor(ToTensor):
    """A family's own conversion to a tensor, which takes (image, target): DETR's
    ToTensor, the references' v1 PILToTensor; its object in the tensor stage, once."""

    staged = OnImage

    @classmethod
    def admit(cls, t, prefix):
        return "a second conversion to a tensor" if prefix.tensor else None
