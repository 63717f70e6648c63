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

from dataclasses import dataclass

import numpy as np

from ..random_stream import BOXES_STREAM, generators_kept, seed_generators, seeds, uniforms
from .lower import DetectionProgram
from .states import SampleState

# NOTE [ Draws by the transforms' own make_params ]
# RandomIoUCrop draws until a crop keeps enough of the boxes, so its draws depend on
# them; RandomPhotometricDistort and RandomZoomOut draw with torch's generator too.
# Each runs its own make_params (Step.params, a _RandomApplyTransform's ``torch.rand(1) >= p``
# first, as its forward does) on the sample's stand-ins, in step order, with torch's
# generator seeded once per sample from the (seed, index) stream (and put back
# after: run_steps): the transforms' own distributions and arithmetic, the same for
# any num_workers, and replayed by seeding the same way before calling the user's
# objects (tests/pipelines/detection/).  The masks' stand-in (``skip``) is left
# out: the draws read the boxes and the size.


@dataclass
class Draws:
    """Per sample: each random step's uniform (float64[n, slots]); the epoch's seed and
    the samples' indices, which seed the draws that depend on the boxes."""

    u: np.ndarray
    seed: int = 0
    indices: np.ndarray | None = None


def draw(program: DetectionProgram, seed: int, indices) -> Draws:
    indices = np.asarray(indices, dtype=np.int64)
    return Draws(uniforms(seed, indices, max(program.slots, 1)), seed, indices)


def box_seed(draws: Draws, k: int) -> int:
    """The seed sample k's box-dependent draws start from."""
    return seeds(draws.seed, [int(draws.indices[k])], BOXES_STREAM)[0]


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
    own = program.draws_own
    with generators_kept(own):
        if own:
            seed_generators(box_seed(draws, k))
        state = SampleState(h, w, target, image, skip="masks" if masks_later else None,
                            crop=(0, 0, w, h), pad=(0, 0, w, h) if program.padded else None,
                            scaled=size if program.padded else None,
                            maps=(np.arange(h), np.arange(w)) if masks_later else None)
        for step in program.steps:
            step.run(state, draws, k)
    s = state
    if s.core is not None and s.core != (s.h, s.w):
        # a resize of the C core's output (NOTE [ DETR's geometry in one plan ] in detr.py)
        return Geometry(*s.core, s.flip, s.crop, s.maps, s.pad, s.distort, s.scaled,
                        then=(s.h, s.w)), s.target, s.image
    return Geometry(s.h, s.w, s.flip, s.crop, s.maps, s.pad, s.distort, s.scaled), \
        s.target, s.image


#: A row of the ring (an image's, its masks') reaches at most this many times what
#: the median photo needs: an outsized photo (a camera original among web photos)
#: travels beside the batch instead of sizing every slot
ROW_ROOM = 4


def largest_output(program: DetectionProgram, sizes) -> int:
    """The most pixels the native steps give any of ``sizes`` ((height, width) pairs:
    the annotation file's), over every size a resize step may draw (each step's
    ``largest``)."""
    best = 1
    for h, w in {(int(h), int(w)) for h, w in sizes}:
        if h <= 0 or w <= 0:
            continue
        areas = [h * w]
        for step in program.steps:
            areas = step.largest(areas, h, w)
        best = max(best, *areas)
    return best
