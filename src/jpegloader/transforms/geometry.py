"""Per-sample random parameters and the fused geometry the C core runs.

``draw`` resolves every random choice of a lowered pipeline for a batch
(vectorised over samples) from the counter-based stream, with torchvision's
distributions.  ``to_plans`` turns the result into C plan records, choosing
DCT-domain downscaling when allowed.  ``replay`` applies the same resolved
parameters through torchvision's functional ops on a PIL image: it is both the
per-sample Python path (files the C core cannot decode) and the reference the
tests compare the C output against.

NOTE [ Flips are applied last ]
A horizontal flip commutes with the tensor stage and with resizing (the
bilinear filter is symmetric), and a crop after a flip equals the mirrored
crop before it.  So the fused geometry applies one pending flip at the very
end and mirrors the x offset of every crop that came after a flip.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F

from ..decoders.jpeg import PLAN_DTYPE
from . import ops
from .lowering import LoweredPipeline
from .random_stream import uniforms


@dataclass
class Geometry:
    """Resolved parameters for n samples (all int64 arrays of length n)."""

    # pre-resize crop in source pixels (the whole image when there is none)
    crop_x: np.ndarray
    crop_y: np.ndarray
    crop_w: np.ndarray
    crop_h: np.ndarray
    # the resize target, and the window of it that is kept
    resize_w: np.ndarray
    resize_h: np.ndarray
    keep_x: np.ndarray
    keep_y: np.ndarray
    flip: np.ndarray             # bool: mirror the output
    needs_padding: np.ndarray    # bool: a crop is larger than the image (Python path)
    # per random op, in pipeline order, what replay needs
    rrc_params: list[np.ndarray]   # each int64[n, 4]: (top, left, height, width)
    flip_draws: list[np.ndarray]   # each bool[n]


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


def draw(pipeline: LoweredPipeline, widths, heights, seed: int, indices) -> Geometry:
    """Resolves the random parameters of ``pipeline`` for images of the given sizes."""
    w0 = np.asarray(widths, dtype=np.int64)
    h0 = np.asarray(heights, dtype=np.int64)
    n = len(w0)
    u = uniforms(seed, indices, max(pipeline.uniforms_per_sample, 1))
    zeros = np.zeros(n, dtype=np.int64)
    crop_x, crop_y, crop_w, crop_h = zeros.copy(), zeros.copy(), w0.copy(), h0.copy()
    resize_w = resize_h = None
    keep_x, keep_y = zeros.copy(), zeros.copy()
    cur_w, cur_h = w0.copy(), h0.copy()
    flip = np.zeros(n, dtype=bool)
    padding = np.zeros(n, dtype=bool)
    rrc_params, flip_draws = [], []
    for op in pipeline.geometry:
        if isinstance(op, ops.HorizontalFlip):
            d = u[:, op.slot] < op.p
            flip_draws.append(d)
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
        elif isinstance(op, ops.RandomResizedCrop):
            p = random_resized_crop_params(cur_w, cur_h, op.scale, op.ratio,
                                           u[:, op.slot:op.slot + 4 * op.ATTEMPTS])
            rrc_params.append(p)
            left = np.where(flip, cur_w - p[:, 1] - p[:, 3], p[:, 1])
            crop_x += left
            crop_y += p[:, 0]
            crop_w, crop_h = p[:, 3].copy(), p[:, 2].copy()
            resize_h, resize_w = (np.full(n, s, dtype=np.int64) for s in op.size)
            cur_w, cur_h = resize_w.copy(), resize_h.copy()
        elif isinstance(op, ops.Resize):
            resize_w, resize_h = resized_size(cur_w, cur_h, op.size, op.max_size)
            cur_w, cur_h = resize_w.copy(), resize_h.copy()
    if resize_w is None:
        resize_w, resize_h = crop_w.copy(), crop_h.copy()
    return Geometry(crop_x, crop_y, crop_w, crop_h, resize_w, resize_h, keep_x, keep_y,
                    flip, padding, rrc_params, flip_draws)


DCT_SCALES = (8, 4, 2)  # libjpeg-turbo has fast IDCTs for these; never the M/8 ones
DCT_MARGIN = 1.25  # measured: worst mean abs diff 1.35 on imagenet-sample (2.0: 0.23)


def to_plans(g: Geometry, widths, heights, allow_dct_scaling: bool,
             skip: np.ndarray | None = None) -> np.ndarray:
    """C plan records for a batch (PLAN_DTYPE[n])."""
    n = len(g.flip)
    w0 = np.asarray(widths, dtype=np.int64)
    h0 = np.asarray(heights, dtype=np.int64)
    scale = np.ones(n, dtype=np.int64)
    if allow_dct_scaling:
        # Downscale in the DCT domain only when the crop is at least `d` times
        # the resize target on both axes, so the resampler still shrinks.
        for d in DCT_SCALES:
            fits = (scale == 1) & (g.crop_w >= DCT_MARGIN * d * g.resize_w) & (g.crop_h >= DCT_MARGIN * d * g.resize_h)
            scale = np.where(fits, d, scale)
    plans = np.zeros(n, dtype=PLAN_DTYPE)
    plans["skip"] = g.needs_padding if skip is None else (g.needs_padding | skip)
    plans["scale_denom"] = scale
    plans["flip"] = g.flip
    for axis, start, length, full, resized, keep in (
            ("x", g.crop_x, g.crop_w, w0, g.resize_w, g.keep_x),
            ("y", g.crop_y, g.crop_h, h0, g.resize_h, g.keep_y)):
        scaled_full = -(-full // scale)  # libjpeg: ceil(size / scale)
        b0 = start / scale
        b1 = (start + length) / scale
        lo = np.floor(b0).astype(np.int64)
        hi = np.minimum(np.ceil(b1).astype(np.int64), scaled_full)
        a = plans[axis]
        a["in0"] = b0 - lo
        a["in1"] = np.minimum(b1, hi) - lo
        a["src_lo"] = lo
        a["src_size"] = np.maximum(hi - lo, 1)
        a["out_size"] = resized
        a["out_start"] = keep
    return plans


def replay(pipeline: LoweredPipeline, g: Geometry, k: int, image: Image.Image) -> torch.Tensor:
    """Sample k of ``g`` applied to a PIL image with torchvision's functional ops:
    what the user's own transform gives with these random parameters."""
    rrc = iter(g.rrc_params)
    flips = iter(g.flip_draws)
    for op in pipeline.geometry:
        if isinstance(op, ops.HorizontalFlip):
            if next(flips)[k]:
                image = F.hflip(image)
        elif isinstance(op, ops.CenterCrop):
            image = F.center_crop(image, list(op.size))
        elif isinstance(op, ops.RandomResizedCrop):
            i, j, h, w = (int(v) for v in next(rrc)[k])
            image = F.resized_crop(image, i, j, h, w, list(op.size),
                                   InterpolationMode.BILINEAR, antialias=True)
        elif isinstance(op, ops.Resize):
            image = F.resize(image, list(op.size), InterpolationMode.BILINEAR,
                             op.max_size, antialias=True)
    for t in pipeline.tensor_stage:
        image = t(image)
    return torch.as_tensor(image)
