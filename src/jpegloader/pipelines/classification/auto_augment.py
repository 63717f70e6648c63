"""Your RandAugment, TrivialAugmentWide and AutoAugment, with their draws and Pillow's
pixels, their photometric steps in C.

NOTE [ Your RandAugment in C ]
torchvision's RandAugment (Ultralytics' classify augmentation, the references' ``ra``),
TrivialAugmentWide (``ta_wide``) and AutoAugment make a new PIL image for each step
through torchvision's functional API.  While a worker runs your PIL-stage objects
(yours_in_c.py) their ``forward`` is the one below: the same draws from torch's
generator in the same order (no step draws) over your object's own operations;
photometric steps on the image's bytes in C (NOTE [ Pillow's enhancements in C ]),
warps through torchvision's own ``_apply_op`` (Pillow's transform in C: NOTE [ Your
affine warps in C ]), one image made at the end, or none where hybrid.py hands over
the crop's bytes and takes bytes back.  Tensors, images with more than RGB bytes and
operations it does not know are torchvision's.  Used only where, at first use, it
gives torchvision's images on a probe.
"""
from __future__ import annotations

import functools

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image
from torchvision.transforms import autoaugment

from . import pil_enhance

#: torchvision's own forward and operation space, per class
TORCHVISIONS = {cls: cls.forward for cls in (T.RandAugment, T.TrivialAugmentWide,
                                             T.AutoAugment)}
# (private in torchvision: a release without it leaves the policies to torchvision)
_SPACES = {cls: getattr(cls, "_augmentation_space", None) for cls in TORCHVISIONS}
PHOTOMETRIC = frozenset({*pil_enhance.ENHANCEMENTS, "Posterize", "Solarize", "Invert",
                         "AutoContrast", "Equalize"})


def _photometric(pixels: np.ndarray, name: str, magnitude: float) -> np.ndarray:
    """torchvision's photometric operation ``name`` (in PHOTOMETRIC) at ``magnitude`` on
    an RGB image's bytes."""
    if name in pil_enhance.ENHANCEMENTS:
        return pil_enhance.enhanced(pixels, name, 1.0 + magnitude)
    if name == "Posterize":
        return pil_enhance.posterized(pixels, int(magnitude))
    if name == "Solarize":
        return pil_enhance.solarized(pixels, magnitude)
    if name == "Invert":
        return pil_enhance.inverted(pixels)
    if name == "AutoContrast":
        return pil_enhance.autocontrasted(pixels)
    return pil_enhance.equalized(pixels)


def _policy(t) -> type:
    """The torchvision class whose forward ``t`` runs."""
    return next(cls for cls in TORCHVISIONS if isinstance(t, cls))


@functools.lru_cache(maxsize=64)
def _torchvisions_space(cls: type, bins: int, size: tuple[int, int] | None):
    """torchvision's own space of ``cls`` (it reads nothing of the object but the
    arguments), as its names and their (magnitudes, signed)."""
    args = (bins,) if size is None else (bins, size)
    space = _SPACES[cls](cls.__new__(cls), *args)
    return list(space), list(space.values())


def _space(t, bins: int, size: tuple[int, int]):
    cls = _policy(t)
    sized = None if cls is T.TrivialAugmentWide else size
    if type(t)._augmentation_space is _SPACES[cls]:
        return _torchvisions_space(cls, bins, sized)
    space = t._augmentation_space(bins, *(() if sized is None else (sized,)))
    return list(space), list(space.values())


def _signed(magnitude: float, signed: bool) -> float:
    """RandAugment's and TrivialAugmentWide's sign: one draw more where signed."""
    return -magnitude if signed and torch.randint(2, (1,)) else magnitude


def _drawn(t, size: tuple[int, int]) -> list[tuple[str, float]]:
    """The steps (operation, magnitude) ``t``'s forward draws, in its order (its steps
    draw nothing themselves)."""
    if isinstance(t, T.AutoAugment):  # a sub-policy, then each step's chance and sign
        policy, chances, signs = t.get_params(len(t.policies))
        names, ops = _space(t, 10, size)
        steps = []
        for i, (name, p, level) in enumerate(t.policies[policy]):
            if chances[i] <= p:  # in float32, as torchvision compares
                magnitudes, signed = ops[names.index(name)]
                magnitude = float(magnitudes[level].item()) if level is not None else 0.0
                steps.append((name, -magnitude if signed and signs[i] == 0 else magnitude))
        return steps
    names, ops = _space(t, t.num_magnitude_bins, size)
    steps = []
    for _ in range(t.num_ops if isinstance(t, T.RandAugment) else 1):
        index = int(torch.randint(len(names), (1,)).item())
        magnitudes, signed = ops[index]
        if magnitudes.ndim == 0:
            magnitude = 0.0
        elif isinstance(t, T.RandAugment):  # its magnitude, fixed
            magnitude = float(magnitudes[t.magnitude].item())
        else:  # TrivialAugmentWide's: one of the bins, drawn
            magnitude = float(magnitudes[torch.randint(len(magnitudes), (1,),
                                                       dtype=torch.long)].item())
        steps.append((names[index], _signed(magnitude, signed)))
    return steps


def takes_bytes(t) -> bool:
    """May hybrid.py hand ``t`` an RGB image's bytes (``steps``)?  torchvision's own
    RandAugment, TrivialAugmentWide or AutoAugment forward (or this one standing in),
    the probe passed."""
    return isinstance(t, tuple(TORCHVISIONS)) \
        and type(t).forward in (TORCHVISIONS[_policy(t)], forward) and usable()


def steps(t, pixels: np.ndarray | None = None, image: Image.Image | None = None):
    """``t``'s steps on an RGB image given as its bytes or as a plain RGB image: the
    bytes the last step made, or the image a warp made (where the last step was one)."""
    held = pil_enhance.BytesOrImage(pixels, image)
    for name, magnitude in _drawn(t, held.size()):
        if name == "Identity":
            continue
        if name in PHOTOMETRIC and (name != "Posterize" or 1 <= int(magnitude) <= 8):
            held.made(_photometric(held.pixels(), name, magnitude))
        else:
            held.made(autoaugment._apply_op(held.image(), name, magnitude, fill=t.fill,
                                            interpolation=t.interpolation))
    return held.result()


def forward(self, img):
    """The policies' forward: plain RGB PIL images through ``steps``."""
    if not pil_enhance.plain_rgb(img):
        return TORCHVISIONS[_policy(self)](self, img)
    return pil_enhance.as_image(steps(self, image=img))


def _probe_objects():
    yield T.RandAugment(num_ops=14)  # every operation, most draws
    yield T.RandAugment(num_ops=3, magnitude=30, interpolation=T.InterpolationMode.BILINEAR,
                        fill=[90, 17, 230])
    yield T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR)
    yield T.AutoAugment(T.AutoAugmentPolicy.SVHN)  # with Invert


@functools.cache
def usable() -> bool:
    """Does this forward give torchvision's images, with the installed torchvision
    and Pillow?  (The caller's generator is put back.)"""
    if None in _SPACES.values() or not hasattr(autoaugment, "_apply_op"):
        return False
    if not pil_enhance.usable():
        return False
    state = torch.get_rng_state()
    try:
        for k, image in enumerate(pil_enhance.probe_images()[:2]):
            for t in _probe_objects():
                for seed in range(4 if isinstance(t, T.RandAugment) else 16):
                    torch.default_generator.manual_seed(1000 * k + seed)
                    ours = np.asarray(forward(t, Image.fromarray(image)))
                    torch.default_generator.manual_seed(1000 * k + seed)
                    theirs = TORCHVISIONS[_policy(t)](t, Image.fromarray(image))
                    if not np.array_equal(ours, np.asarray(theirs)):
                        return False
        return True
    except Exception:  # an unexpected torchvision: its own stays
        return False
    finally:
        torch.set_rng_state(state)
