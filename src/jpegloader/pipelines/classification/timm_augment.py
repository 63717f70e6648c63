"""Your timm RandAugment, with its draws and Pillow's pixels, its photometric steps in C.

NOTE [ Your timm RandAugment in C ]
timm's RandAugment (``rand-m9-mstd0.5`` in DeiT's, ConvNeXt's and Swin's recipes) runs
AugmentOps, each making a new PIL image.  While a worker runs your PIL-stage objects
(yours_in_c.py) its ``__call__`` is the one below: the operations chosen by the same
``np.random.choice`` call; for each AugmentOp whose function is one of timm's
photometric ones, its own draws in its order (its chance, its magnitude's noise, its
level function's sign) and that function's arithmetic on the image's bytes in C
(NOTE [ Pillow's enhancements in C ]); every other operation (warps: Pillow's
transform in C) is the op itself, on an image.  Used only where, at first use, it
gives timm's images on a probe (the generators put back); timm is imported only for
objects of timm's.
"""
from __future__ import annotations

import functools
import random

import numpy as np
from PIL import Image

from . import pil_enhance


def timms():
    """timm's auto_augment module (timm is optional: imported when one of your
    objects is timm's)."""
    from timm.data import auto_augment
    return auto_augment


def is_timms(t) -> bool:
    return type(t).__name__ == "RandAugment" and type(t).__module__ == "timm.data.auto_augment"


@functools.cache
def theirs():
    """timm's own RandAugment.__call__."""
    return timms().RandAugment.__call__


def _posterized(pixels: np.ndarray, bits_to_keep, **_) -> np.ndarray | None:
    if type(bits_to_keep) is not int or bits_to_keep < 1:
        return None  # timm's, on an image: Pillow's own error for 0 bits
    return pixels if bits_to_keep >= 8 else pil_enhance.posterized(pixels, bits_to_keep)


def _enhancement(name: str):
    def on_bytes(pixels: np.ndarray, factor, **_) -> np.ndarray | None:
        if type(factor) not in (int, float) or not abs(factor) < 1e30:
            return None
        return pil_enhance.enhanced(pixels, name, factor)
    return on_bytes


def _added_below(pixels: np.ndarray, add, thresh=128, **_) -> np.ndarray | None:
    if type(add) is not int or type(thresh) not in (int, float):
        return None
    return pil_enhance.added_below(pixels, add, thresh)


@functools.cache
def _on_bytes() -> dict:
    """timm's photometric functions -> the same on an RGB image's bytes (None: do it
    on the image)."""
    aa = timms()
    return {aa.auto_contrast: lambda p, **_: pil_enhance.autocontrasted(p),
            aa.invert: lambda p, **_: pil_enhance.inverted(p),
            aa.equalize: lambda p, **_: pil_enhance.equalized(p),
            aa.solarize: lambda p, thresh, **_: pil_enhance.solarized(p, thresh),
            aa.solarize_add: _added_below,
            aa.posterize: _posterized,
            aa.contrast: _enhancement("Contrast"), aa.color: _enhancement("Color"),
            aa.brightness: _enhancement("Brightness"), aa.sharpness: _enhancement("Sharpness")}


def _level_args(op) -> tuple:
    """An AugmentOp's draws after its chance, in its order: its magnitude's noise (a
    uniform draw for an infinite deviation, else a Gaussian), clamped to [0, its
    maximum or timm's level scale], then its level function's (a sign, for some)."""
    magnitude = op.magnitude
    if op.magnitude_std == float("inf"):
        magnitude = random.uniform(0, magnitude)
    elif op.magnitude_std > 0:
        magnitude = random.gauss(magnitude, op.magnitude_std)
    magnitude = max(0.0, min(magnitude, op.magnitude_max or timms()._LEVEL_DENOM))
    return op.level_fn(magnitude, op.hparams) if op.level_fn is not None else ()


def steps(t, pixels: np.ndarray | None = None, image: Image.Image | None = None):
    """``t``'s operations on an RGB image given as its bytes or as a plain RGB image:
    the bytes the last operation made, or the image an operation on the image made."""
    aa = timms()
    held = pil_enhance.BytesOrImage(pixels, image)
    for op in np.random.choice(t.ops, t.num_layers, replace=t.choice_weights is None,
                               p=t.choice_weights):
        on_bytes = _on_bytes().get(getattr(op, "aug_fn", None)) \
            if type(op).__call__ is aa.AugmentOp.__call__ else None
        if on_bytes is None:  # the op itself, its draws its own
            held.made(op(held.image()))
            continue
        if op.prob < 1.0 and random.random() > op.prob:
            continue
        args = _level_args(op)
        done = on_bytes(held.pixels(), *args)
        held.made(op.aug_fn(held.image(), *args, **op.kwargs) if done is None else done)
    return held.result()


def takes_bytes(t) -> bool:
    """May hybrid.py hand ``t`` an RGB image's bytes (``steps``)?  timm's own
    RandAugment.__call__ (or this one standing in), the probe passed."""
    return is_timms(t) and type(t).__call__ in (theirs(), call) and usable()


def call(self, img):
    """timm's RandAugment.__call__: plain RGB PIL images through ``steps``."""
    if not pil_enhance.plain_rgb(img):
        return theirs()(self, img)
    return pil_enhance.as_image(steps(self, image=img))


def _probe_objects():
    aa = timms()
    hparams = {"translate_const": 14, "img_mean": (124, 116, 104)}
    for config in ("rand-m9-mstd0.5-inc1", "rand-m7-n15-mstd101-mmax14"):
        yield aa.rand_augment_transform(config, dict(hparams))


@functools.cache
def usable() -> bool:
    """Does this __call__ give timm's images, with the installed timm and Pillow?
    (Python's and numpy's generators are put back.)"""
    if not pil_enhance.usable():
        return False
    state = random.getstate(), np.random.get_state()
    try:
        for k, image in enumerate(pil_enhance.probe_images()[:2]):
            for t in _probe_objects():
                for seed in range(5):
                    outs = []
                    for run in (call, theirs()):
                        random.seed(1000 * k + seed)
                        np.random.seed(1000 * k + seed)
                        try:
                            outs.append(np.asarray(run(t, Image.fromarray(image))))
                        except ValueError as e:  # Pillow's refusal (0 bits): the same
                            outs.append(str(e))
                    if not (type(outs[0]) is type(outs[1]) and np.array_equal(*outs)):
                        return False
        return True
    except Exception:  # an unexpected timm: its own stays
        return False
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])
