"""A cropped region decode gives, at every pixel the resampler reads, what a full
decode gives (NOTE [ Exact pixels at a cropped edge ] in
decoders/csrc/jpeg_region.c): the region decoder widens the columns by one where
chroma is upsampled across them and the rows not at all.  Windows are placed at
every column and row phase of the iMCU grid, at each DCT scale, on noisy images
(every chroma sample shows in the decoded pixels), and checked against the same
core's decode of the whole image, so only the cropping is compared."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import empty_plans
from tests.conftest import noisy_jpeg, shared, whole_image_plans

SIZE = (203, 157)  # neither a multiple of 16: partial iMCUs on the right and bottom
SCALES = (1, 2, 4, 8)


def _decode(data: bytes, plans: np.ndarray, width: int, height: int) -> np.ndarray:
    out = np.zeros((len(plans), 3, height, width), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data] * len(plans)), plans,
                                    out, None)
    assert (status == st.OK).all(), messages
    return out


def _window_plans(x0s, y0s, width: int, height: int, scale: int,
                  image_size: tuple[int, int]) -> np.ndarray:
    # An identity resample of the window [x0, x0 + width) x [y0, y0 + height)
    # of an image of image_size decoded at 1/scale
    plans = empty_plans(len(x0s))
    plans["scale_denom"] = scale
    plans["image_w"], plans["image_h"] = image_size
    for axis, starts, size in (("x", x0s, width), ("y", y0s, height)):
        plans[axis]["src_lo"] = starts
        plans[axis]["src_size"] = size
        plans[axis]["in1"] = size
        plans[axis]["out_size"] = size
    return plans


def _check_windows(data: bytes, label: str) -> int:
    with Image.open(io.BytesIO(data)) as im:
        full_w, full_h = im.size
    compared = 0
    for scale in SCALES:
        w, h = -(-full_w // scale), -(-full_h // scale)  # libjpeg's scaled size
        whole = _decode(data, whole_image_plans([(w, h)], scale=scale,
                                                 image_sizes=[(full_w, full_h)]), w, h)[0]
        for win_w, win_h in ((w // 3, h // 4), (w // 2 + 1, 5), (3, h // 2)):
            if win_w < 1 or win_h < 1:
                continue
            # every phase of the 16-pixel iMCU grid on both axes (rows in another
            # order: 7 is prime to 34), then the far corners
            phases = range(34)
            x0s = [min(p, w - win_w) for p in phases] + [w - win_w, w - win_w, 0]
            y0s = [min(7 * p % 34, h - win_h) for p in phases] + [h - win_h, 0, h - win_h]
            plans = _window_plans(x0s, y0s, win_w, win_h, scale, (full_w, full_h))
            got = _decode(data, plans, win_w, win_h)
            for i, (x0, y0) in enumerate(zip(x0s, y0s)):
                want = whole[:, y0:y0 + win_h, x0:x0 + win_w]
                if not np.array_equal(got[i], want):
                    bad = np.argwhere((got[i] != want).any(axis=0))
                    pytest.fail(f"{label} at 1/{scale}: window {win_w}x{win_h} at "
                                f"({x0}, {y0}) differs from the full decode at rows/columns "
                                f"{bad[:4].tolist()} (of {len(bad)})")
                compared += 1
    return compared


@pytest.mark.parametrize("progressive", [False, True], ids=["baseline", "progressive"])
@pytest.mark.parametrize("subsampling", [0, 1, 2], ids=["444", "422", "420"])
def test_region_matches_full_decode(subsampling, progressive):
    # quality 92: at 95 Pillow cannot write progressive 4:4:4 noise ("broken data stream")
    data = noisy_jpeg(*SIZE, seed=subsampling + 3 * progressive, quality=92,
                      subsampling=subsampling, progressive=progressive)
    assert _check_windows(data, f"{subsampling=} {progressive=}") > 300


@pytest.mark.parametrize("folder", ["subsampling-440", "subsampling-422", "grayscale",
                                    "progressive"])
def test_region_matches_full_decode_on_real_files(folder):
    files = sorted(p for p in shared(f"edge-cases/{folder}").iterdir() if p.is_file())
    assert files, folder
    for path in files[:2]:
        assert _check_windows(path.read_bytes(), str(path)) > 0
