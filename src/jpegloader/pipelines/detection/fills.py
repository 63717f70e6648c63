"""The colour a padding step paints, as the user's object resolves it for the image it
is given: a PIL image, a uint8 tensor or a ``tv_tensors.Image`` (the references'
``--backend pil``, ``tensor`` and ``tv_tensor``), as the C core's packed RGB bytes.
None wherever it is not three bytes: that step then runs as the user's."""
from __future__ import annotations

import numpy as np
import torch
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms.v2 import functional as F

from ...decoders.plans import packed_fill


def rgb(values: list[int]) -> int | None:
    """Three bytes packed as the C core's pad_fill, or None."""
    if len(values) != 3 or not all(0 <= v <= 255 for v in values):
        return None
    return packed_fill(values)


def zoom_out_fill(t, image_type: str) -> int | None:
    """A v2 RandomZoomOut's fill for the image type it pads ("pil", "tensor" or
    "image"): its ``_fill`` resolved by torchvision's ``_get_fill`` for that type."""
    try:
        from torchvision.transforms.v2._utils import _get_fill
        fill = _get_fill(t._fill, {"pil": Image.Image, "image": tv_tensors.Image}.get(
            image_type, torch.Tensor))
    except (AttributeError, ImportError, KeyError, TypeError):
        return None
    return _pil_fill(fill) if image_type == "pil" else _tensor_fill(fill, image_type)


def _pil_fill(fill) -> int | None:
    """As Pillow gets it (torchvision's _parse_fill: None is 0, ints by truncation)."""
    fill = 0 if fill is None else fill
    fill = list(fill) if isinstance(fill, (list, tuple)) else [fill]
    fill = fill * 3 if len(fill) == 1 else fill
    try:
        return rgb([int(v) for v in fill])
    except (TypeError, ValueError):
        return None


def _tensor_fill(fill, image_type: str) -> int | None:
    """Read off torchvision's own pad of a one-pixel uint8 probe (its column 0 the
    padding), as RandomZoomOut pads a tensor."""
    probe = torch.zeros((3, 1, 1), dtype=torch.uint8)
    try:
        out = F.pad(tv_tensors.Image(probe) if image_type == "image" else probe, [1, 0, 0, 0],
                    fill=fill)
        return rgb([int(v) for v in out[:, 0, 0]])
    except Exception:  # noqa: BLE001 - a fill torchvision refuses: the step is yours
        return None


def probed_fill(t, size: tuple[int, int], image_type: str) -> int | None:
    """The fill a FixedSizeCrop pads the image type with, read off its own output for
    a small probe image (which it pads and does not crop, drawing nothing); None unless
    that output is the probe at the top left and one colour elsewhere."""
    probe = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 11
    image = Image.fromarray(probe, "RGB") if image_type == "pil" else \
        torch.from_numpy(probe).permute(2, 0, 1).contiguous()
    if image_type == "image":
        image = tv_tensors.Image(image)
    try:
        out = t(image, None)
        out = out[0] if isinstance(out, tuple) else out
        if isinstance(out, Image.Image):
            pixels = np.asarray(out.convert("RGB"))
        elif isinstance(out, torch.Tensor) and out.dtype == torch.uint8 and out.ndim == 3:
            pixels = out.permute(1, 2, 0).numpy()
        else:
            return None
    except Exception:  # noqa: BLE001 - a class of the user's that is not the references'
        return None
    if pixels.shape != (*size, 3) or not np.array_equal(pixels[:2, :3], probe):
        return None
    fill = pixels[-1, -1]
    rest = pixels.copy()
    rest[:2, :3] = fill
    if not (rest == fill).all():
        return None
    return packed_fill(fill)
