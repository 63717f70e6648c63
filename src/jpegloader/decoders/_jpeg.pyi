"""The C decode core's contract (see csrc/module.c)."""
from collections.abc import Buffer

MESSAGE_LENGTH: int
"""Bytes per sample in the messages buffer."""
PLAN_SIZE: int
"""Bytes per record in the plans buffer (jpegloader.decoders.jpeg.PLAN_DTYPE)."""
FILTER_OPENCV_LINEAR: int
"""The plan filter for OpenCV's INTER_LINEAR, valid in letterbox plans only (csrc/letterbox.h)."""

def probe(data: Buffer, offsets: Buffer, info: Buffer, status: Buffer, messages: Buffer, /) -> None:
    """Reads each sample's JPEG header.

    data: the concatenated file bytes; offsets: int64[n + 1]; info: int32[n, 4]
    (width, height, components, progressive); status: int32[n];
    messages: uint8[n, MESSAGE_LENGTH].  Raises ValueError only for wrong buffers.
    """

def decode_batch(
    data: Buffer, offsets: Buffer, plans: Buffer, out: Buffer, out_type: int, out_h: int,
    out_w: int, lut: Buffer, norm: Buffer, max_pixels: int, status: Buffer,
    messages: Buffer, seconds: Buffer, /,
) -> None:
    """Decodes n samples into out: Tensor[n, 3, out_h, out_w] of float32 (out_type 0:
    each level through lut, float32[3, 256], or, where norm is float32[3, 2] rather
    than empty, computed as ((level / 255) - mean) / std with each channel's mean and
    std, which must give lut exactly) or uint8 (out_type 1), or uint8[n, out_h,
    out_w, 3] (out_type 2: interleaved, as a PIL image; 3: B, G, R, as cv2.imread
    gives it, for plans that keep the whole image at its own size only).

    plans: n PLAN_DTYPE records.  Runs without the GIL.  A failed sample gets a
    non-zero status, a message and zeroed pixels; there are no partial results.
    seconds (float64[2]) is increased by the time spent decoding and augmenting.
    Raises ValueError only for wrong buffers.
    """

def decode_views(
    data: Buffer, offsets: Buffer, plans: Buffer,
    views: tuple[tuple[Buffer, int, int, int, Buffer, Buffer], ...], max_pixels: int,
    status: Buffer, messages: Buffer, seconds: Buffer, /,
) -> None:
    """Several views of each of n samples, each JPEG decoded once over the union of
    what its views read.  plans: n x V PLAN_DTYPE records (sample-major) sharing a DCT
    scale and an image size per sample; views: V tuples (out, out_type, out_h, out_w,
    lut, norm), each as decode_batch takes them.  One status and message per sample;
    a failed sample's views are zeroed.  Runs without the GIL.  Raises ValueError only
    for wrong buffers (1 to 32 views)."""

def decode_each(
    data: Buffer, offsets: Buffer, plans: Buffer,
    outputs: tuple[tuple[Buffer, int, int, int, Buffer, Buffer], ...], max_pixels: int,
    status: Buffer, messages: Buffer, seconds: Buffer, /,
) -> None:
    """n samples, each into an output of its own: outputs holds n tuples (out, out_type,
    out_h, out_w, lut, norm) as decode_views takes them (out_type 0 to 3, as
    decode_batch's), each out holding its one sample; plans: n PLAN_DTYPE records.  A
    failed sample's output is zeroed.  Runs without the GIL.  Raises ValueError only
    for wrong buffers."""

def libjpeg_turbo_version() -> str: ...

def allow_avx512(allow: bool, /) -> bool:
    """Whether the resampler's 512-bit loops (the last pass by division, the
    horizontal pass on rows) may run where the processor has AVX-512 (the default);
    returns the previous setting.  They give the AVX2 loops' results: the tests
    compare them."""

def cpu_has_avx512() -> bool:
    """Whether this processor runs the 512-bit loops (AVX-512F, AVX-512BW and FMA)."""

def dc_scans(data: Buffer, /) -> bytes | None:
    """A progressive JPEG without its AC scans: what a 1/8 decode reads (the C core
    decodes this stream whenever a plan scales by 1/8; NOTE [ DC scans only ] in
    csrc/dc_scans.h).  None when the data is not a progressive JPEG with AC scans."""

def hue_selfcheck(shift: int) -> int:
    """Runs all 2**24 RGB values through the table-driven hue step and the
    per-pixel Pillow reference with this H shift; returns how many differ."""

def tensor_stage(src: Buffer, out: Buffer, n: int, h: int, w: int, out_type: int, lut: Buffer,
                 planar: bool, /) -> None:
    """n images of uint8 levels, [h, w, 3] or (planar) [3, h, w], to [3, h, w]: float32
    lut[ch][level] (out_type 0; from planes with streaming stores on x86-64) or the
    levels (out_type 1).  Runs without the GIL.  Raises ValueError for wrong buffers."""
