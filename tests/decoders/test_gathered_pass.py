"""The horizontal pass runs on the rows themselves where four outputs' taps fit a
16-byte window, and on a transposed plane elsewhere (NOTE [ The horizontal pass
without transposes ] in decoders/csrc/gather_rows.h).  Both must give Pillow's
bytes exactly, for every filter, at row ends that are not a multiple of 8 or 32,
at the window's limits and in both pass orders.  Each image is resampled from the
pixels the core itself decoded, so only the resampler is compared."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.jpeg import FILTERS
from jpegloader.decoders.plans import vertical_first
from tests.conftest import noisy_jpeg, whole_image_plans

PIL_FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "box": Image.BOX,
               "hamming": Image.HAMMING, "lanczos": Image.LANCZOS}

# (source width, height) -> (output width, height), and what each case is for
CASES = {
    "eval-336-to-224": ((336, 336), (224, 224)),     # whole groups of 32 outputs
    "tail-of-8": ((300, 200), (200, 150)),           # 200 = 6 x 32 + 8
    "overlapping-last-group": ((120, 97), (57, 90)),  # 57 % 8 = 1; vertical upscale
    "near-window-limit": ((640, 427), (224, 224)),   # 2.9x: fits for some filters only
    "beyond-window": ((1000, 120), (224, 100)),      # 4.5x: transposed pass
    "sixteen-samples": ((16, 40), (9, 20)),          # the narrowest gathered row
    "fifteen-samples": ((15, 40), (9, 20)),          # too narrow: transposed pass
    "seven-outputs": ((100, 60), (7, 30)),           # fewer than 8: transposed pass
    "upscale-tall-reduction": ((60, 300), (160, 40)),  # vertical first on Pillow 13
}


def _decode(data: bytes, size, out_size, filter_: str) -> np.ndarray:
    plans = whole_image_plans([size], out_size)
    plans["filter"] = FILTERS[filter_]
    if out_size is not None:
        plans["vertical_first"] = vertical_first(*size, *out_size)
    w, h = out_size or size
    out = np.zeros((1, 3, h, w), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out, None)
    assert (status == st.OK).all(), messages
    return out[0]


@pytest.mark.parametrize("filter_", sorted(PIL_FILTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_horizontal_pass_is_pillows_exactly(case, filter_):
    size, out_size = CASES[case]
    # Noise, not smooth texture: every tap's weight shows in the last bit.
    data = noisy_jpeg(*size, seed=len(case))
    decoded = _decode(data, size, None, filter_)  # at its own size: the decoded pixels
    want = np.asarray(Image.fromarray(decoded.transpose(1, 2, 0)).resize(
        out_size, PIL_FILTERS[filter_])).transpose(2, 0, 1)
    got = _decode(data, size, out_size, filter_)
    assert decoded.std() > 50  # noise survived the encoder
    np.testing.assert_array_equal(got, want, err_msg=f"{case} {filter_}")
