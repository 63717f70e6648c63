"""From resolved per-sample parameters to the C core's plan records.

A pipeline's draws resolve every random choice of a batch into a ``Geometry``
(the window of the source image to resample, the resize target, the part of it
kept, the flip, the filter) and optionally a colour program.  ``to_plans``
turns those into ``PLAN_DTYPE`` records: the decode region in the (possibly
DCT-downscaled) image, the resampler's box, the pass order the installed Pillow
would use, the colour steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import PIL

from .jpeg import COLOUR_STEPS, FILTERS, PLAN_DTYPE, empty_plans


@dataclass
class Geometry:
    """Resolved geometry for n samples (int64 arrays of length n unless noted)."""

    # the source window that is resized (the whole image when there is no crop before
    # the resize), in source pixels
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
    filter: np.ndarray           # int32: decoders.jpeg.FILTERS value
    # A padded crop (NOTE [ Padding a crop ] in csrc/padding.c), in the PAD_MODES mode
    # (constant: the RGB bytes of pad_fill): per axis, int64[n, 2], the padding before
    # the resize and the padded length; the window then starts at keep_x, keep_y in
    # those coordinates, and a second padding reaches as far as it needs
    pad_mode: int = 0
    pad_fill: int = 0
    pad_x: np.ndarray | None = None
    pad_y: np.ndarray | None = None


def packed_fill(rgb) -> int:
    """Three fill bytes (R, G, B) packed as a plan's ``pad_fill``: R | G << 8 | B << 16."""
    return int(rgb[0]) | int(rgb[1]) << 8 | int(rgb[2]) << 16


@dataclass
class ColourProgram:
    """Per-sample colour steps (decoders.jpeg.BRIGHTNESS ... BLUR), run in order."""

    op: np.ndarray     # int32[n, COLOUR_STEPS], COLOUR_NONE where unused
    value: np.ndarray  # float32[n, COLOUR_STEPS]
    arg: np.ndarray    # int32[n, COLOUR_STEPS]: a blur's kernel, width | height << 16


def _pillow_major() -> int:
    try:
        return int(PIL.__version__.split(".")[0])
    except ValueError:
        return 0


#: NOTE [ Pillow's pass order ] (csrc/pipeline.c): Pillow 13 resamples vertically
#: first when the height shrinks by more than twice what the width does; earlier
#: Pillows (and pillow-simd) always go horizontally first.
PILLOW_VERTICAL_FIRST = _pillow_major() >= 13


def vertical_first(in_w, in_h, out_w, out_h) -> np.ndarray:
    """Whether the installed Pillow resizes an in_w x in_h image to out_w x out_h
    with the vertical pass first."""
    dh = np.asarray(in_h) - np.asarray(out_h)
    dw = np.asarray(in_w) - np.asarray(out_w)
    if not PILLOW_VERTICAL_FIRST:
        return np.zeros(np.broadcast(dh, dw).shape, dtype=bool)
    return (dh > 0) & (dh > 2 * dw)


DCT_SCALES = (8, 4, 2)  # libjpeg-turbo has fast IDCTs for these; never the M/8 ones
#: NOTE [ How far to scale in the DCT domain ]
#: The largest 1/d whose scaled crop still covers the filter's margin times the
#: resize target on both axes: the resampler then still reduces by at least that
#: much, and its own filter, not the scaled IDCT's, shapes what is kept.  A smooth
#: kernel needs 2 for the parity bound (mean absolute difference per image <= 3.0)
#: to hold at every output size from 32 to 1024, Hamming's 3; a box's edges add to
#: a 1/d decode's block edges, so it needs 8 (docs/experiments.md has the figures).
DCT_MARGINS = np.array([2.0] * (max(FILTERS.values()) + 1))
DCT_MARGINS[FILTERS["hamming"]] = 3.0
DCT_MARGINS[FILTERS["box"]] = 8.0


def dct_scales(g: Geometry, dct_scaling: bool) -> np.ndarray:
    """int64[n]: each sample's DCT scale denominator (1 when scaling is not allowed)."""
    scale = np.ones(len(g.flip), dtype=np.int64)
    if dct_scaling:
        # NOTE [ How far to scale in the DCT domain ]
        margin = DCT_MARGINS[np.asarray(g.filter)]
        for d in DCT_SCALES:
            fits = (scale == 1) & (g.crop_w / d >= margin * g.resize_w) \
                & (g.crop_h / d >= margin * g.resize_h)
            scale = np.where(fits, d, scale)
    return scale


def to_plans(g: Geometry, widths, heights, dct_scaling: bool,
             skip: np.ndarray | None = None, colour: ColourProgram | None = None,
             scale: np.ndarray | None = None) -> np.ndarray:
    """C plan records for a batch (PLAN_DTYPE[n]); ``scale``: the DCT scale
    denominators to use instead of each sample's own (dct_scales)."""
    n = len(g.flip)
    w0 = np.asarray(widths, dtype=np.int64)
    h0 = np.asarray(heights, dtype=np.int64)
    if scale is None:
        scale = dct_scales(g, dct_scaling)
    plans = empty_plans(n)
    plans["skip"] = g.needs_padding if skip is None else (g.needs_padding | skip)
    plans["scale_denom"] = scale
    plans["flip"] = g.flip
    plans["filter"] = g.filter
    # Decided on the unscaled sizes: the order Pillow uses on this crop.
    plans["vertical_first"] = vertical_first(g.crop_w, g.crop_h, g.resize_w, g.resize_h)
    # NOTE [ A plan fits one image size ] (csrc/pipeline.c): the C core checks it
    plans["image_w"] = np.maximum(w0, 1)
    plans["image_h"] = np.maximum(h0, 1)
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
    if g.pad_mode:
        _padded_window(plans, g)
    if colour is not None:
        assert colour.op.shape == (n, COLOUR_STEPS)
        plans["colour"]["op"] = colour.op
        plans["colour"]["value"] = colour.value
        plans["colour"]["arg"] = colour.arg
    return plans


def _padded_window(plans: np.ndarray, g: Geometry) -> None:
    """A padded crop's plans: the paddings and the window (the C core derives what of
    the resize to make from them)."""
    plans["pad_mode"] = g.pad_mode
    plans["pad_fill"] = g.pad_fill
    for axis, keep, pad in (("x", g.keep_x, g.pad_x), ("y", g.keep_y, g.pad_y)):
        a = plans[axis]
        a["pad_start"] = keep
        a["pad_lo"], a["pad_len"] = pad[:, 0], pad[:, 1]


def view_plans(views: list[tuple[Geometry, ColourProgram | None]], widths, heights,
               dct_scaling: bool, skip: np.ndarray | None = None) -> np.ndarray:
    """Plan records for several views of each sample (PLAN_DTYPE[n, V]), for
    decoders.decode_views: one DCT scale per sample, the finest any of its views
    would take alone, so that every view keeps the detail its own decode gives
    (NOTE [ Several views of one decode ] in csrc/pipeline.c)."""
    scale = np.min([dct_scales(g, dct_scaling) for g, _ in views], axis=0)
    skip = np.any([g.needs_padding for g, _ in views], axis=0) | (
        False if skip is None else skip)
    plans = np.empty((len(scale), len(views)), dtype=PLAN_DTYPE)  # np.stack drops its padding
    for v, (g, colour) in enumerate(views):
        plans[:, v] = to_plans(g, widths, heights, dct_scaling, skip, colour, scale)
    return plans
