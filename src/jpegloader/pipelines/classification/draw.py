"""Per-sample random parameters of a classification program, and their replay.

``draw`` resolves every random choice of a program for a batch (vectorised
over samples) from the counter-based stream, with the reference transforms'
distributions: RandomResizedCrop.get_params (10 attempts, then the centre-crop
fallback), flips, ColorJitter's random order and uniform factors (inside
RandomApply's probability), RandomGrayscale, GaussianBlur's sigma, timm's
random filter choice.  The result is the C core's Geometry and colour program
plus, per op, what ``replay`` needs: replay applies the same parameters through
torchvision's functional ops on a PIL image: it is both the per-sample Python
path (files the C core cannot decode) and the reference the tests compare the C
output against.

NOTE [ Flips are applied last ]
A horizontal flip commutes with the tensor stage, with resizing (the filters
are symmetric), with the colour ops (per pixel, or whole-image means) and a
crop after a flip equals the mirrored crop before it.  So the fused geometry
applies one pending flip at the very end and mirrors the x offset of every
crop that came after a flip.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F

from ...decoders.jpeg import BLUR, FILTERS, GRAYSCALE, PAD_MODES
from ...decoders.plans import ColourProgram, Geometry, packed_fill
from ..colour import (
    colour_program,
    jitter_factors,
    jitter_image,
    jitter_steps,
    permutations,
)
from ..random_stream import PIL_STREAM, TENSOR_STREAM, seed_generators, seeds, uniforms
from . import ops
from .program import ClassificationProgram


@dataclass
class Draws:
    """A batch's resolved parameters: for the C core (geometry, colour) and, per op
    of the program in order, for replay."""

    geometry: Geometry
    colour: ColourProgram | None
    params: list  # one entry per op of program.geometry + program.colour


def random_resized_crop_params(width, height, scale, ratio, u) -> np.ndarray:
    """torchvision's RandomResizedCrop.get_params, vectorised: 10 attempts, then
    the centre-crop fallback.  u: float64[n, 40].  Returns int64[n, 4] (i, j, h, w)."""
    width = np.asarray(width, dtype=np.int64)
    height = np.asarray(height, dtype=np.int64)
    n = len(width)
    area = (width * height).astype(np.float64)
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    out = np.zeros((n, 4), dtype=np.int64)
    chosen = np.zeros(n, dtype=bool)
    for a in range(ops.RandomResizedCrop.ATTEMPTS):
        # Each attempt reads its own columns of u, so stopping once every sample
        # has its crop changes nothing (usually after 3-4 of the 10 attempts).
        if chosen.all():
            break
        target = area * (scale[0] + u[:, 4 * a] * (scale[1] - scale[0]))
        aspect = np.exp(log_lo + u[:, 4 * a + 1] * (log_hi - log_lo))
        w = np.rint(np.sqrt(target * aspect)).astype(np.int64)  # round half to even,
        h = np.rint(np.sqrt(target / aspect)).astype(np.int64)  # as Python's round
        ok = ~chosen & (w > 0) & (w <= width) & (h > 0) & (h <= height)
        i = np.floor(u[:, 4 * a + 2] * (height - h + 1)).astype(np.int64)
        j = np.floor(u[:, 4 * a + 3] * (width - w + 1)).astype(np.int64)
        out[ok] = np.stack([i, j, h, w], axis=1)[ok]
        chosen |= ok
    if not chosen.all():
        rest = ~chosen
        wr, hr = width[rest], height[rest]
        in_ratio = wr / hr
        lo, hi = min(ratio), max(ratio)
        w = np.where(in_ratio < lo, wr, np.where(in_ratio > hi, np.rint(hr * hi), wr))
        h = np.where(in_ratio < lo, np.rint(wr / lo), np.where(in_ratio > hi, hr, hr))
        w, h = w.astype(np.int64), h.astype(np.int64)
        out[rest] = np.stack([(hr - h) // 2, (wr - w) // 2, h, w], axis=1)
    return out


def resized_size(width, height, size, max_size):
    """torchvision's _compute_resized_output_size, vectorised: (new_w, new_h)."""
    width = np.asarray(width, dtype=np.int64)
    height = np.asarray(height, dtype=np.int64)
    if len(size) == 2:
        return np.full_like(width, size[1]), np.full_like(height, size[0])
    short, long = np.minimum(width, height), np.maximum(width, height)
    new_short = np.full_like(short, size[0])
    # int(requested * long / short) with Python's float division and truncation
    new_long = np.trunc(size[0] * long.astype(np.float64) / short).astype(np.int64)
    if max_size is not None:
        if max_size <= size[0]:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                             f"requested size for the smaller edge size = {list(size)}")
        over = new_long > max_size
        new_short = np.where(over, np.trunc(max_size * new_short.astype(np.float64)
                                            / np.maximum(new_long, 1)).astype(np.int64),
                             new_short)
        new_long = np.where(over, max_size, new_long)
    portrait = width <= height
    return np.where(portrait, new_short, new_long), np.where(portrait, new_long, new_short)


def keep_ratio_size(width, height, size, longest):
    """timm's ResizeKeepRatio.get_params without random factors: (new_w, new_h)."""
    width = np.asarray(width, dtype=np.float64)
    height = np.asarray(height, dtype=np.float64)
    ratio_h, ratio_w = height / size[0], width / size[1]
    ratio = np.maximum(ratio_h, ratio_w) * longest + np.minimum(ratio_h, ratio_w) * (1.0 - longest)
    return np.rint(width / ratio).astype(np.int64), np.rint(height / ratio).astype(np.int64)


@dataclass
class _CropWindow:
    top: np.ndarray     # the crop in the padded image, as torchvision draws it
    left: np.ndarray
    x0: np.ndarray      # its start in the unpadded image, or for a padded crop in the
    y0: np.ndarray      # image padded once (mirrored under a flip)
    pad_x: np.ndarray   # int64[n, 2]: the first padding before the image, and its length
    pad_y: np.ndarray
    too_small: np.ndarray  # torchvision raises: the Python path does


def _paddings(op: ops.RandomCrop, width, height) -> tuple[tuple, tuple]:
    """RandomCrop's first padding (left, top, right, bottom) of an image of this size,
    and pad_if_needed's (what each side of the padded image lacks, added to both of its
    ends: (width, height)); v2 adds that to the first padding instead.  Scalars or
    arrays."""
    left, top, right, bottom = op.padding
    extra_w = np.maximum(op.size[1] - (width + left + right), 0) * op.pad_if_needed
    extra_h = np.maximum(op.size[0] - (height + top + bottom), 0) * op.pad_if_needed
    if op.pad_once:
        return (left + extra_w, top + extra_h, right + extra_w, bottom + extra_h), \
            (0 * extra_w, 0 * extra_h)
    return (left, top, right, bottom), (extra_w, extra_h)


def _padded_crop(op: ops.RandomCrop, width, height, u: np.ndarray, flip) -> _CropWindow:
    """RandomCrop's paddings (_paddings) and get_params (torch.randint(0, side - crop + 1)
    for the top, then the left), vectorised."""
    th, tw = op.size
    (left, top, right, bottom), (extra_w, extra_h) = _paddings(op, width, height)
    pw, ph = width + left + right, height + top + bottom
    i = np.floor(u[:, 0] * np.maximum(ph + 2 * extra_h - th + 1, 1)).astype(np.int64)
    j = np.floor(u[:, 1] * np.maximum(pw + 2 * extra_w - tw + 1, 1)).astype(np.int64)
    # NOTE [ Flips are applied last ]: under a flip, the mirrored window of the image
    # padded with its sides swapped
    x0 = np.where(flip, pw + extra_w - j - tw, j - extra_w)
    if op.pads:
        pad_x = np.stack([np.where(flip, right, left) + 0 * pw, pw], axis=1)
        pad_y = np.stack([top + 0 * ph, ph], axis=1)
        y0 = i - extra_h
    else:
        pad_x = pad_y = None
        y0 = i
    return _CropWindow(i, j, x0, y0, pad_x, pad_y,
                       (pw + 2 * extra_w < tw) | (ph + 2 * extra_h < th))


def padded_for_crop(image: Image.Image, op: ops.RandomCrop) -> Image.Image:
    """torchvision's RandomCrop padding of a PIL image."""
    fill = tuple(op.fill)
    first, (extra_w, extra_h) = _paddings(op, image.width, image.height)
    for padding in ([int(v) for v in first], [int(extra_w), 0], [0, int(extra_h)]):
        if any(padding):
            image = F.pad(image, padding, fill, op.mode)
    if image.width < op.size[1] or image.height < op.size[0]:
        raise ValueError(f"Required crop size {op.size} is larger than input image size "
                         f"{(image.height, image.width)}")
    return image


def _filter_choice(filters: tuple[str, ...], u: np.ndarray) -> np.ndarray:
    """Index into ``filters`` per sample (random.choice's equal chances)."""
    if len(filters) == 1:
        return np.zeros(len(u), dtype=np.int64)
    return np.minimum((u * len(filters)).astype(np.int64), len(filters) - 1)


def draw(program: ClassificationProgram, widths, heights, seed: int, indices) -> Draws:
    """Resolves the random parameters of ``program`` for images of the given sizes."""
    w0 = np.asarray(widths, dtype=np.int64)
    h0 = np.asarray(heights, dtype=np.int64)
    n = len(w0)
    u = uniforms(seed, indices, max(program.uniforms_per_sample, 1))
    zeros = np.zeros(n, dtype=np.int64)
    crop_x, crop_y, crop_w, crop_h = zeros.copy(), zeros.copy(), w0.copy(), h0.copy()
    resize_w = resize_h = None
    keep_x, keep_y = zeros.copy(), zeros.copy()
    cur_w, cur_h = w0.copy(), h0.copy()
    flip = np.zeros(n, dtype=bool)
    padding = np.zeros(n, dtype=bool)
    pad_mode = pad_fill = 0
    pad_x = pad_y = None
    filters = np.full(n, FILTERS["bilinear"], dtype=np.int32)
    params: list = []
    for op in program.geometry:
        if isinstance(op, ops.HorizontalFlip):
            d = u[:, op.slot] < op.p
            params.append(d)
            flip ^= d
        elif isinstance(op, ops.CenterCrop):
            oh, ow = op.size
            padding |= (ow > cur_w) | (oh > cur_h)
            top = np.rint((cur_h - oh) / 2.0).astype(np.int64)
            left = np.rint((cur_w - ow) / 2.0).astype(np.int64)
            left = np.where(flip, cur_w - left - ow, left)  # NOTE [ Flips are applied last ]
            if resize_w is None:
                crop_x += left
                crop_y += top
                crop_w[:], crop_h[:] = ow, oh
            else:
                keep_x += left
                keep_y += top
            cur_w[:], cur_h[:] = ow, oh
            params.append(None)
        elif isinstance(op, ops.RandomCrop):
            w = _padded_crop(op, cur_w, cur_h, u[:, op.slot:op.slot + 2], flip)
            params.append((w.top, w.left))
            padding |= w.too_small
            if op.pads:
                pad_mode, pad_fill = PAD_MODES[op.mode], packed_fill(op.fill)
                pad_x, pad_y = w.pad_x, w.pad_y
                if resize_w is None:  # the image itself, resized to its own size
                    resize_w, resize_h = cur_w.copy(), cur_h.copy()
            if resize_w is None:
                crop_x += w.x0
                crop_y += w.y0
                crop_w[:], crop_h[:] = op.size[1], op.size[0]
            else:
                keep_x += w.x0
                keep_y += w.y0
            cur_w[:], cur_h[:] = op.size[1], op.size[0]
        elif isinstance(op, ops.RandomResizedCrop):
            p = random_resized_crop_params(cur_w, cur_h, op.scale, op.ratio,
                                           u[:, op.slot:op.slot + 4 * op.ATTEMPTS])
            choice = _filter_choice(op.filters, u[:, op.slot + 4 * op.ATTEMPTS])
            params.append((p, choice))
            left = np.where(flip, cur_w - p[:, 1] - p[:, 3], p[:, 1])
            crop_x += left
            crop_y += p[:, 0]
            crop_w, crop_h = p[:, 3].copy(), p[:, 2].copy()
            resize_h, resize_w = (np.full(n, s, dtype=np.int64) for s in op.size)
            cur_w, cur_h = resize_w.copy(), resize_h.copy()
            filters = np.asarray([FILTERS[f] for f in op.filters], dtype=np.int32)[choice]
        elif isinstance(op, (ops.Resize, ops.ResizeKeepRatio)):
            if isinstance(op, ops.Resize):
                resize_w, resize_h = resized_size(cur_w, cur_h, op.size, op.max_size)
            else:
                resize_w, resize_h = keep_ratio_size(cur_w, cur_h, op.size, op.longest)
            choice = _filter_choice(op.filters, u[:, op.slot])
            params.append((np.stack([resize_h, resize_w], axis=1), choice))
            cur_w, cur_h = resize_w.copy(), resize_h.copy()
            filters = np.asarray([FILTERS[f] for f in op.filters], dtype=np.int32)[choice]
    if resize_w is None:
        resize_w, resize_h = crop_w.copy(), crop_h.copy()
    geometry = Geometry(crop_x, crop_y, crop_w, crop_h, resize_w, resize_h, keep_x, keep_y,
                        flip, padding, filters, pad_mode, pad_fill, pad_x, pad_y)
    steps = []
    for op in program.colour:
        if isinstance(op, ops.ColorJitter):
            # RandomApply's draw, three for the order, four factors (b, c, s, h)
            ju = u[:, op.slot:op.slot + op.uniforms]
            applied = ju[:, 0] < op.p
            order = permutations(ju[:, 1:4])
            factors = jitter_factors((op.brightness, op.contrast, op.saturation, op.hue),
                                     ju[:, 4:8])
            params.append((applied, order, factors))
            steps += jitter_steps(applied, order, factors)
        elif isinstance(op, ops.Grayscale):
            applied = u[:, op.slot] < op.p
            params.append(applied)
            steps.append((applied, np.full(n, GRAYSCALE, dtype=np.int32),
                          np.zeros(n, dtype=np.float32)))
        elif isinstance(op, ops.GaussianBlur):
            # torchvision draws sigma into a float32 tensor: uniform, float32 values
            applied = u[:, op.slot] < op.p
            lo, hi = op.sigma
            sigma = (lo + u[:, op.slot + 1] * (hi - lo)).astype(np.float32)
            params.append((applied, sigma))
            steps.append((applied, np.full(n, BLUR, dtype=np.int32), sigma,
                          np.full(n, op.kernel[0] | op.kernel[1] << 16, dtype=np.int32)))
    colour = colour_program(steps, n) if steps else None
    return Draws(geometry, colour, params)


_MODES = {name: InterpolationMode(name) for name in FILTERS}


def replay(program: ClassificationProgram, d: Draws, k: int, image: Image.Image,
           seed: int | None = None, index: int | None = None, native_only: bool = False):
    """Sample k of ``d`` applied to a PIL image with torchvision's functional ops: what
    the user's own transform gives with these random parameters (a tensor, or the
    pipeline's own output type).  For a hybrid, the user's objects run seeded as the
    workers seed them (``seed``: the epoch seed, ``index``: the sample's); with
    ``native_only`` only the native part runs (a PIL image for a PIL handover)."""
    params = iter(d.params)
    for op in program.geometry:
        p = next(params)
        if isinstance(op, ops.HorizontalFlip):
            if p[k]:
                image = F.hflip(image)
        elif isinstance(op, ops.CenterCrop):
            image = F.center_crop(image, list(op.size))
        elif isinstance(op, ops.RandomCrop):
            image = F.crop(padded_for_crop(image, op), int(p[0][k]), int(p[1][k]), *op.size)
        elif isinstance(op, ops.RandomResizedCrop):
            box, choice = p
            i, j, h, w = (int(v) for v in box[k])
            image = F.resized_crop(image, i, j, h, w, list(op.size),
                                   _MODES[op.filters[choice[k]]], antialias=True)
        elif isinstance(op, ops.Resize):
            _, choice = p
            image = F.resize(image, list(op.size), _MODES[op.filters[choice[k]]],
                             op.max_size, antialias=True)
        elif isinstance(op, ops.ResizeKeepRatio):
            size, choice = p
            image = F.resize(image, [int(s) for s in size[k]], _MODES[op.filters[choice[k]]],
                             antialias=True)
    for op in program.colour:
        p = next(params)
        if isinstance(op, ops.ColorJitter):
            applied, order, factors = p
            if applied[k]:
                image = jitter_image(image, order[k], factors[k])
        elif isinstance(op, ops.Grayscale) and p[k]:
            image = F.rgb_to_grayscale(image, num_output_channels=3)
        elif isinstance(op, ops.GaussianBlur) and p[0][k]:
            sigma = float(p[1][k])
            image = F.gaussian_blur(image, list(op.kernel), [sigma, sigma])
    if program.handover == "pil":
        if native_only:
            return image
        seed_generators(seeds(seed, [index], PIL_STREAM)[0])
        for t in program.yours_pil:
            image = t(image)
    for t in program.tensor_stage:
        image = t(image)
    if not native_only and program.yours_tensor:
        seed_generators(seeds(seed, [index], TENSOR_STREAM)[0])
        for t in program.yours_tensor:
            image = t(image)
    return torch.as_tensor(np.asarray(image)) if isinstance(image, np.ndarray) else image
