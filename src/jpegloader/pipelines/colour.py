"""ColorJitter and grayscale draws shared by the pipelines, with torchvision's
distributions: a uniformly random order of the four adjustments (torch.randperm(4)),
each factor uniform in its range; the C core's colour program built from them
(and from RandomPhotometricDistort's own params); and the replay through
torchvision's PIL ops."""
from __future__ import annotations

import numpy as np
from PIL import Image
from torchvision.transforms import functional as F

from ..decoders.jpeg import (BRIGHTNESS, COLOUR_NONE, COLOUR_STEPS, CONTRAST, HUE, PERMUTE,
                             SATURATION, TORCH_V1, TORCH_V2)
from ..decoders.plans import ColourProgram

#: A colour step for a batch: (active bool[n], op int32[n], value float32[n]), and for a
#: blur its kernel size (width | height << 16) as a fourth entry.
Step = tuple[np.ndarray, ...]


def permutations(u: np.ndarray) -> np.ndarray:
    """Uniformly random orders of (0, 1, 2, 3) from 3 uniforms per row (Fisher-Yates)."""
    n = len(u)
    perm = np.tile(np.arange(4, dtype=np.int32), (n, 1))
    rows = np.arange(n)
    for i, col in zip((3, 2, 1), range(3), strict=True):
        j = np.minimum((u[:, col] * (i + 1)).astype(np.int64), i)
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return perm


def hue_shift(hue_factor) -> np.ndarray:
    """The byte torchvision adds to H: uint8(int32(hue_factor * 255))."""
    return (np.asarray(hue_factor, dtype=np.float64) * 255).astype(np.int32).astype(np.uint8)


def jitter_factors(ranges, u: np.ndarray) -> np.ndarray:
    """float32[n, 4] factors (brightness, contrast, saturation, hue; NaN where the
    range is None) from 4 uniforms per sample."""
    factors = np.full((len(u), 4), np.nan, dtype=np.float32)
    for k, rng in enumerate(ranges):
        if rng is not None:
            factors[:, k] = rng[0] + u[:, k] * (rng[1] - rng[0])
    return factors


def jitter_steps(applied: np.ndarray, order: np.ndarray, factors: np.ndarray) -> list[Step]:
    """The four steps of ColorJitter in each sample's order (absent adjustments and
    samples where it is not applied are inactive)."""
    rows = np.arange(len(order))
    steps = []
    for k in range(4):
        kind = order[:, k]
        factor = factors[rows, kind]
        present = ~np.isnan(factor)
        value = np.where(kind == HUE - BRIGHTNESS, hue_shift(np.nan_to_num(factor)),
                         np.nan_to_num(factor)).astype(np.float32)
        steps.append((applied & present, (kind + BRIGHTNESS).astype(np.int32), value))
    return steps


def colour_program(steps: list[Step], n: int) -> ColourProgram:
    """Packs per-sample steps, in order, into the C core's fixed-size program."""
    if len(steps) > COLOUR_STEPS:
        raise ValueError(f"more than {COLOUR_STEPS} colour steps")
    op = np.full((n, COLOUR_STEPS), COLOUR_NONE, dtype=np.int32)
    value = np.zeros((n, COLOUR_STEPS), dtype=np.float32)
    arg = np.zeros((n, COLOUR_STEPS), dtype=np.int32)
    pos = np.zeros(n, dtype=np.int64)
    for active, kind, val, *kernel in steps:
        rows = np.flatnonzero(active)
        op[rows, pos[rows]] = kind[rows]
        value[rows, pos[rows]] = val[rows]
        if kernel:
            arg[rows, pos[rows]] = kernel[0][rows]
        pos[rows] += 1
    return ColourProgram(op, value, arg)


def photometric_program(params: list[dict | None], arithmetic: str = "pil") -> ColourProgram:
    """RandomPhotometricDistort's steps, in its transform's order, from each sample's
    own params (None: no distortion): brightness, contrast (before or after),
    saturation, hue, then the channel permutation.  ``arithmetic``: Pillow's ("pil",
    on a PIL image) or, on a uint8 tensor, torchvision's v2 kernels' ("v2") or v1's
    functional tensor ops' ("v1") (csrc/colour_tensor.h)."""
    base = {"pil": 0, "v2": TORCH_V2 - BRIGHTNESS, "v1": TORCH_V1 - BRIGHTNESS}[arithmetic]
    n = len(params)
    op = np.full((n, COLOUR_STEPS), COLOUR_NONE, dtype=np.int32)
    value = np.zeros((n, COLOUR_STEPS), dtype=np.float32)
    arg = np.zeros((n, COLOUR_STEPS), dtype=np.int32)
    for i, p in enumerate(params):
        if p is None:
            continue
        contrast = p["contrast_factor"]
        before = p["contrast_before"]
        steps = [(BRIGHTNESS, p["brightness_factor"]),
                 (CONTRAST, contrast if before else None),
                 (SATURATION, p["saturation_factor"]),
                 (HUE, None if p["hue_factor"] is None else
                  hue_shift(p["hue_factor"]) if arithmetic == "pil" else p["hue_factor"]),
                 (CONTRAST, None if before else contrast)]
        k = 0
        for kind, v in steps:
            if v is not None:
                op[i, k], value[i, k] = kind + base, v
                k += 1
        perm = p["channel_permutation"]
        if perm is not None:
            a, b, c = (int(x) for x in perm)
            op[i, k], arg[i, k] = PERMUTE, a | b << 2 | c << 4
    return ColourProgram(op, value, arg)


def jitter_image(image: Image.Image, order, factors) -> Image.Image:
    """ColorJitter with one sample's order and factors, as torchvision runs it."""
    adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
    for op in order:
        if not np.isnan(factors[op]):
            image = adjust[op](image, float(factors[op]))
    return image
