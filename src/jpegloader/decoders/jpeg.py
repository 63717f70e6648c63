"""Python face of the C decode core: buffer layouts and batch calls.

Python owns every buffer; the C side (``_jpeg``) only fills them.  See
``_jpeg.pyi`` for the call contract and ``csrc/`` for the implementation.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _jpeg, thread_pool
from . import status as st

MESSAGE_LENGTH = _jpeg.MESSAGE_LENGTH
COLOUR_STEPS = _jpeg.COLOUR_OPS["STEPS"]


def _record(name: str, fields: list[tuple[str, object]], offsets: dict, sizes: dict,
            itemsize: int) -> np.dtype:
    """A structured dtype with the C struct's own offsets (NOTE [ One source of truth
    across the C boundary ] in csrc/module.c); raises ImportError when a field's
    name, size or the record's size disagree with the C struct."""
    names = [f for f, _ in fields]
    dtype = None
    if set(offsets) == set(names):
        dtype = np.dtype({"names": names, "formats": [t for _, t in fields],
                          "offsets": [offsets[f] for f in names], "itemsize": itemsize})
    if dtype is None or any(dtype.fields[f][0].itemsize != sizes[f] for f, _ in fields):
        raise ImportError(
            f"jpegloader's C core and its Python side disagree on the {name} record "
            f"(C fields {offsets}, sizes {sizes}, {itemsize} bytes; Python expects "
            f"{names}): rebuild the package (pip install -e . or "
            "bash scripts/setup.sh)")
    return dtype


_AXIS = _record("jl_axis", [("in0", "<f8"), ("in1", "<f8"), ("src_lo", "<i4"),
                            ("src_size", "<i4"), ("out_size", "<i4"), ("out_start", "<i4"),
                            ("pad_start", "<i4"), ("pad_lo", "<i4"), ("pad_len", "<i4")],
                _jpeg.AXIS_OFFSETS, _jpeg.AXIS_SIZES, _jpeg.AXIS_SIZE)
_COLOUR = _record("jl_colour", [("op", ("<i4", (COLOUR_STEPS,))),
                                ("value", ("<f4", (COLOUR_STEPS,))),
                                ("arg", ("<i4", (COLOUR_STEPS,)))],
                  _jpeg.COLOUR_OFFSETS, _jpeg.COLOUR_SIZES, _jpeg.COLOUR_SIZE)
#: One record per sample: ``jl_plan`` in csrc/pipeline.h, laid out by the C core's
#: own offsets.
PLAN_DTYPE = _record("jl_plan", [("skip", "<i4"), ("scale_denom", "<i4"), ("flip", "<i4"),
                                 ("filter", "<i4"), ("vertical_first", "<i4"),
                                 ("image_w", "<i4"), ("image_h", "<i4"), ("pad_mode", "<i4"),
                                 ("pad_fill", "<i4"), ("colour_first", "<i4"),
                                 ("x", _AXIS), ("y", _AXIS), ("colour", _COLOUR)],
                     _jpeg.PLAN_OFFSETS, _jpeg.PLAN_SIZES, _jpeg.PLAN_SIZE)

#: ``colour.op`` entries (csrc/colour.h): each step of a sample's colour program.
COLOUR_NONE, BRIGHTNESS, CONTRAST, SATURATION, HUE, GRAYSCALE, BLUR, PERMUTE = (
    _jpeg.COLOUR_OPS[k] for k in ("NONE", "BRIGHTNESS", "CONTRAST", "SATURATION", "HUE",
                                  "GRAYSCALE", "BLUR", "PERMUTE"))
#: Bases of the ops with torchvision's arithmetic on a uint8 tensor, v2's and v1's
#: (csrc/colour_tensor.h): the base plus BRIGHTNESS ... HUE.
TORCH_V2, TORCH_V1 = _jpeg.COLOUR_OPS["TORCH_V2"], _jpeg.COLOUR_OPS["TORCH_V1"]
#: The largest kernel side of a blur step.
BLUR_MAX_KERNEL = _jpeg.COLOUR_OPS["BLUR_MAX_KERNEL"]
#: ``filter`` values (csrc/resample.h): Pillow's convolution filters.
FILTERS = dict(_jpeg.FILTERS)
#: OpenCV's INTER_LINEAR (csrc/cv_linear.h), for letterbox plans only (csrc/letterbox.h).
FILTER_OPENCV_LINEAR = _jpeg.FILTER_OPENCV_LINEAR
#: ``pad_mode`` values (csrc/pipeline.h): torchvision's padding modes, and "none".
PAD_MODES = dict(_jpeg.PAD_MODES)
#: Output element types of ``decode_batch`` (csrc/pipeline.h).
OUT_TYPES = {np.dtype(np.float32): _jpeg.OUT_TYPES["FLOAT32"],
             np.dtype(np.uint8): _jpeg.OUT_TYPES["UINT8"]}
OUT_UINT8_HWC = _jpeg.OUT_TYPES["UINT8_HWC"]
OUT_BGR_HWC = _jpeg.OUT_TYPES["BGR_HWC"]


def empty_plans(n: int) -> np.ndarray:
    """n plan records with nothing set: bilinear, no colour step, no flip."""
    plans = np.zeros(n, dtype=PLAN_DTYPE)
    plans["colour"]["op"] = COLOUR_NONE
    return plans


#: Refuse headers above this many pixels, as PIL's DecompressionBombError does
#: (twice Image.MAX_IMAGE_PIXELS); such samples go to PIL, which raises.
DEFAULT_MAX_PIXELS = 2 * 89_478_485


@dataclass(frozen=True)
class EncodedBatch:
    """The file bytes of a batch, concatenated: sample i is data[offsets[i]:offsets[i+1]]."""

    data: bytes | np.ndarray  # any contiguous buffer of bytes
    offsets: np.ndarray  # int64[n + 1]
    #: why a sample has no bytes, by sample ("cannot open: No such file or directory"),
    #: for the files that could not be read; such samples fail with that message
    unreadable: dict[int, str] = field(default_factory=dict)

    @classmethod
    def from_files(cls, contents: list[bytes], unreadable: dict[int, str] | None = None
                   ) -> EncodedBatch:
        offsets = np.zeros(len(contents) + 1, dtype=np.int64)
        np.cumsum([len(c) for c in contents], out=offsets[1:])
        return cls(b"".join(contents), offsets, unreadable or {})

    def __len__(self) -> int:
        return len(self.offsets) - 1


def _messages_to_text(messages: np.ndarray, batch: EncodedBatch, status: np.ndarray
                      ) -> list[str]:
    """Each sample's message; a file that could not be read fails as ERROR with the
    OS's reason, not as the empty data the C core saw."""
    texts = [""] * len(messages)
    for k in np.flatnonzero(messages[:, 0]):  # most samples have none
        texts[k] = bytes(messages[k]).split(b"\0", 1)[0].decode("utf-8", "replace")
    for k, why in batch.unreadable.items():
        texts[k] = why
        status[k] = st.ERROR
    return texts


def probe(batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Headers of a batch: (info int32[n, 4] = width, height, components,
    progressive; status int32[n]; messages)."""
    n = len(batch)
    info = np.zeros((n, 4), dtype=np.int32)
    status = np.zeros(n, dtype=np.int32)
    messages = np.zeros((n, MESSAGE_LENGTH), dtype=np.uint8)
    _jpeg.probe(batch.data, batch.offsets, info, status, messages)
    return info, status, _messages_to_text(messages, batch, status)


def _output(out: np.ndarray, n: int, lut, norm, hwc: bool, bgr: bool = False) -> tuple:
    """Checks an output buffer: (out, out_type, height, width, lut, norm) as the C core
    takes them."""
    if bgr and not hwc:
        raise ValueError("bgr output is interleaved: pass hwc=True too")
    out_type = OUT_TYPES.get(out.dtype)
    if hwc:
        if out.dtype != np.uint8 or out.ndim != 4 or out.shape[0] != n or out.shape[3] != 3 \
                or not out.flags.c_contiguous:
            raise ValueError(f"out must be C-contiguous uint8[{n}, H, W, 3], got "
                             f"{out.dtype}{out.shape}")
        out_type, height, width = OUT_BGR_HWC if bgr else OUT_UINT8_HWC, *out.shape[1:3]
    elif out_type is None or out.ndim != 4 or out.shape[:2] != (n, 3) \
            or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous float32 or uint8 [{n}, 3, H, W], got "
                         f"{out.dtype}{out.shape}")
    else:
        height, width = out.shape[2], out.shape[3]
    if lut is None:
        if out_type == OUT_TYPES[np.dtype(np.float32)]:
            raise ValueError("float32 output needs a lut (float32[3, 256])")
        lut = _NO_LUT
    lut = np.ascontiguousarray(lut, dtype=np.float32)
    norm = b"" if norm is None else np.ascontiguousarray(norm, dtype=np.float32)
    return out, out_type, height, width, lut, norm


def _seconds(seconds: np.ndarray | None) -> np.ndarray:
    if seconds is None:
        return np.zeros(2)
    if seconds.dtype != np.float64 or seconds.shape != (2,):
        raise ValueError(f"seconds must be float64[2], got {seconds.dtype}{seconds.shape}")
    return seconds


def decode_batch(batch: EncodedBatch, plans: np.ndarray, out: np.ndarray,
                 lut: np.ndarray | None = None, max_pixels: int = DEFAULT_MAX_PIXELS,
                 seconds: np.ndarray | None = None, hwc: bool = False, threads: int = 1,
                 norm: np.ndarray | None = None, bgr: bool = False
                 ) -> tuple[np.ndarray, list[str]]:
    """Runs the fused pipeline for a batch into ``out``: float32[n, 3, H, W]
    (each level through ``lut``, float32[3, 256]; computed instead when ``norm``,
    float32[3, 2], holds a mean and std per channel that give the table exactly:
    see pipelines/tensor_stage.py's division_form), uint8[n, 3, H, W] (the
    levels; no lut), or with ``hwc`` uint8[n, H, W, 3] (interleaved, as a PIL
    image holds them; with ``bgr`` too, B, G, R as cv2.imread gives them, for
    plans that keep the whole image at its own size: others fail as unsupported).
    With ``threads`` > 1 the samples are split over that many threads (the C core
    runs without the GIL); the result is the same.

    Returns (status int32[n], messages).  Failed samples are zero-filled and
    must be completed by the caller; there are no partial results.  When given,
    ``seconds`` (float64[2]) is increased by the time spent decoding and
    augmenting (summed over the threads).
    """
    n = len(batch)
    if plans.dtype != PLAN_DTYPE or plans.shape != (n,):
        raise ValueError(f"plans must be PLAN_DTYPE[{n}], got {plans.dtype}{plans.shape}")
    out, out_type, height, width, lut, norm = _output(out, n, lut, norm, hwc, bgr)
    status = np.zeros(n, dtype=np.int32)
    messages = np.zeros((n, MESSAGE_LENGTH), dtype=np.uint8)
    seconds = _seconds(seconds)
    plans = np.ascontiguousarray(plans)

    def run(a: int, b: int, spent: np.ndarray) -> None:
        _jpeg.decode_batch(batch.data, batch.offsets[a:b + 1], plans[a:b], out[a:b], out_type,
                           height, width, lut, norm, int(max_pixels), status[a:b],
                           messages[a:b], spent)
    _in_threads(run, n, threads, seconds)
    return status, _messages_to_text(messages, batch, status)


def _in_threads(run, n: int, threads: int, seconds: np.ndarray) -> None:
    """run(a, b, spent) over samples [0, n), split over ``threads`` threads."""
    if threads <= 1 or n < 2:
        run(0, n, seconds)
    else:
        seconds += thread_pool.share_out(run, n, threads)


@dataclass(frozen=True)
class Output:
    """One sample's output for decode_each: ``out`` holds it alone, as decode_batch's
    ``out`` holds a batch of one (with ``lut``, ``norm``, ``hwc`` and ``bgr`` as there)."""

    out: np.ndarray
    lut: np.ndarray | None = None
    norm: np.ndarray | None = None
    hwc: bool = False
    bgr: bool = False

    @classmethod
    def skipped(cls) -> Output:
        """The output of a sample whose plan is skipped (``skipped_plans``): a pixel."""
        return cls(np.zeros((1, 3, 1, 1), np.uint8))


def skipped_plans(n: int) -> np.ndarray:
    """n plan records, each skipped (status SKIPPED, nothing decoded) until set."""
    plans = empty_plans(n)
    plans["skip"] = 1
    return plans


def decode_each(batch: EncodedBatch, plans: np.ndarray, outputs: list[Output],
                max_pixels: int = DEFAULT_MAX_PIXELS, seconds: np.ndarray | None = None,
                threads: int = 1) -> tuple[np.ndarray, list[str]]:
    """A batch whose samples each go into an output of their own (images of their own
    sizes and types: detection's, YOLO's) in one call of the C core, as decode_batch
    runs a batch of one for each; with ``threads`` > 1 split over that many threads.
    Returns (status int32[n], messages)."""
    n = len(batch)
    if plans.dtype != PLAN_DTYPE or plans.shape != (n,) or len(outputs) != n:
        raise ValueError(f"plans must be PLAN_DTYPE[{n}] and {n} outputs given, got "
                         f"{plans.dtype}{plans.shape} and {len(outputs)}")
    each = tuple(_output(o.out, 1, o.lut, o.norm, o.hwc, o.bgr) for o in outputs)
    status = np.zeros(n, dtype=np.int32)
    messages = np.zeros((n, MESSAGE_LENGTH), dtype=np.uint8)
    seconds = _seconds(seconds)
    plans = np.ascontiguousarray(plans)

    def run(a: int, b: int, spent: np.ndarray) -> None:
        _jpeg.decode_each(batch.data, batch.offsets[a:b + 1], plans[a:b], each[a:b],
                          int(max_pixels), status[a:b], messages[a:b], spent)
    _in_threads(run, n, threads, seconds)
    return status, _messages_to_text(messages, batch, status)


def decode_views(batch: EncodedBatch, plans: np.ndarray, outs: list[np.ndarray],
                 luts: list[np.ndarray | None], norms: list[np.ndarray | None],
                 hwc: list[bool], max_pixels: int = DEFAULT_MAX_PIXELS,
                 seconds: np.ndarray | None = None, threads: int = 1
                 ) -> tuple[np.ndarray, list[str]]:
    """Several views of each sample, each JPEG decoded once (NOTE [ Several views of
    one decode ] in csrc/pipeline.c): ``plans`` is PLAN_DTYPE[n, V] (decoders.plans
    .view_plans), and view v goes into ``outs[v]`` as decode_batch writes its ``out``
    (with ``luts[v]``, ``norms[v]``, ``hwc[v]``).  Returns (status int32[n],
    messages): one per sample, whose views all fail together."""
    n = len(batch)
    if plans.dtype != PLAN_DTYPE or plans.ndim != 2 or plans.shape[0] != n or \
            plans.shape[1] != len(outs):
        raise ValueError(f"plans must be PLAN_DTYPE[{n}, {len(outs)}], got "
                         f"{plans.dtype}{plans.shape}")
    views = [_output(out, n, lut, norm, h) for out, lut, norm, h in
             zip(outs, luts, norms, hwc, strict=True)]
    status = np.zeros(n, dtype=np.int32)
    messages = np.zeros((n, MESSAGE_LENGTH), dtype=np.uint8)
    seconds = _seconds(seconds)
    plans = np.ascontiguousarray(plans)

    def run(a: int, b: int, spent: np.ndarray) -> None:
        parts = tuple((out[a:b], t, h, w, lut, norm) for out, t, h, w, lut, norm in views)
        _jpeg.decode_views(batch.data, batch.offsets[a:b + 1], plans[a:b], parts,
                           int(max_pixels), status[a:b], messages[a:b], spent)
    _in_threads(run, n, threads, seconds)
    return status, _messages_to_text(messages, batch, status)


def hwc_to_chw(src: np.ndarray, out: np.ndarray, lut: np.ndarray | None = None) -> None:
    """uint8[n, H, W, 3] images into ``out``: float32[n, 3, H, W] through ``lut``
    (float32[3, 256]) or uint8[n, 3, H, W] (the levels)."""
    n, h, w, c = src.shape
    out_type = OUT_TYPES.get(out.dtype)
    if c != 3 or src.dtype != np.uint8 or out_type is None or out.shape != (n, 3, h, w) \
            or not (src.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError(f"hwc_to_chw takes C-contiguous uint8[n, H, W, 3] and float32/uint8"
                         f"[n, 3, H, W], got {src.dtype}{src.shape} and {out.dtype}{out.shape}")
    if lut is None:
        lut = _NO_LUT
    _jpeg.tensor_stage(src, out, n, h, w, out_type, np.ascontiguousarray(lut, dtype=np.float32),
                       False)


_NO_LUT = np.zeros((3, 256), dtype=np.float32)  # uint8 output reads no table


def levels_to_float(levels: np.ndarray, out: np.ndarray, lut: np.ndarray) -> None:
    """uint8[3, H, W] levels into ``out``, float32[3, H, W], through ``lut``
    (float32[3, 256]): the C core's float output made later, where it is pinned
    (its stores bypass the caches on x86-64)."""
    if levels.dtype != np.uint8 or out.dtype != np.float32 or levels.ndim != 3 or \
            levels.shape[0] != 3 or out.shape != levels.shape or \
            not (levels.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError(f"levels_to_float takes C-contiguous uint8[3, H, W] and float32"
                         f"[3, H, W], got {levels.dtype}{levels.shape} and "
                         f"{out.dtype}{out.shape}")
    _, h, w = levels.shape
    _jpeg.tensor_stage(levels, out, 1, h, w, OUT_TYPES[np.dtype(np.float32)],
                       np.ascontiguousarray(lut, dtype=np.float32), True)


def resize_hwc(src: np.ndarray, out: np.ndarray, vertical_first: bool,
               lut: np.ndarray | None = None, norm: np.ndarray | None = None) -> None:
    """uint8[H, W, 3] resized as Pillow's ``Image.resize(..., BILINEAR)`` into ``out``:
    float32[3, h, w] through ``lut`` (computed instead when ``norm`` holds a mean and
    std that give it exactly, as for decode_batch) or uint8[3, h, w] (the levels).
    ``vertical_first``: the installed Pillow's pass order (plans.vertical_first)."""
    h, w, c = src.shape
    out_type = OUT_TYPES.get(out.dtype)
    if c != 3 or src.dtype != np.uint8 or out_type is None or out.ndim != 3 or \
            out.shape[0] != 3 or not (src.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError(f"resize_hwc takes C-contiguous uint8[H, W, 3] and float32/uint8"
                         f"[3, h, w], got {src.dtype}{src.shape} and {out.dtype}{out.shape}")
    oh, ow = out.shape[1:]
    _jpeg.resize_hwc(src, out, h, w, oh, ow, int(bool(vertical_first)), out_type,
                     np.ascontiguousarray(_NO_LUT if lut is None else lut, dtype=np.float32),
                     b"" if norm is None else np.ascontiguousarray(norm, dtype=np.float32))


def libjpeg_turbo_version() -> str:
    """The libjpeg-turbo version the C core was built against."""
    return _jpeg.libjpeg_turbo_version()
