"""The C core against hostile JPEGs: every input gets a status, nothing is
written outside the output, and no sample keeps stale (poisoned) pixels.

Each hostile file is decoded between two valid ones into an output poisoned
with NaN and fenced by guard values; plans come from the valid original's
dimensions, as the shared size table would hold them when a file changes
after the dataset was built.
"""
from __future__ import annotations

import numpy as np
import pytest

from jpegloader.decoders import EncodedBatch, decode_batch, probe
from jpegloader.decoders import status as st
from jpegloader.decoders.plans import to_plans
from jpegloader.pipelines.classification.draw import draw
from tests.conftest import eval_transform, lower, train_transform
from tests.hostile_jpegs import (
    byte_flips,
    photo_like,
    truncations,
    with_app_segments,
    with_dimensions,
    with_repeated_last_scan,
)

GUARD = 12345.0
WIDTH, HEIGHT = 320, 240


def _decode(files: list[bytes], transform, sizes=None, seed=5):
    """Decodes ``files`` as one batch into a NaN-poisoned, guarded output."""
    pipeline = lower(transform)
    n = len(files)
    batch = EncodedBatch.from_files(files)
    if sizes is None:
        sizes = np.array([[WIDTH, HEIGHT]] * n)
    d = draw(pipeline, sizes[:, 0], sizes[:, 1], seed, np.arange(n))
    plans = to_plans(d.geometry, sizes[:, 0], sizes[:, 1], dct_scaling=True,
                     colour=d.colour)
    sample = 3 * pipeline.output_size[0] * pipeline.output_size[1]
    fenced = np.full(sample * (n + 2), GUARD, np.float32)
    out = fenced[sample:-sample].reshape(n, 3, *pipeline.output_size)
    out[:] = np.nan
    status, messages = decode_batch(batch, plans, out, pipeline.lut_array)
    assert (fenced[:sample] == GUARD).all() and (fenced[-sample:] == GUARD).all(), \
        "the core wrote outside its output"
    lo, hi = pipeline.lut_array.min(), pipeline.lut_array.max()
    for k in range(n):
        if status[k] == st.OK:
            assert np.isfinite(out[k]).all() and (out[k] >= lo).all() and (out[k] <= hi).all()
        else:
            assert messages[k], f"sample {k}: status {status[k]} without a message"
            assert (out[k] == 0).all(), f"sample {k} kept stale pixels after status {status[k]}"
    return status, messages, out.copy()


@pytest.fixture(scope="module")
def original():
    return photo_like(WIDTH, HEIGHT, seed=3)


@pytest.fixture(scope="module")
def reference(original):
    status, _, out = _decode([original], eval_transform())
    assert status[0] == st.OK
    return out[0]


def _between_valid(original, hostile, transform=eval_transform):
    status, messages, out = _decode([original, hostile, original], transform())
    _, _, clean = _decode([original] * 3, transform())
    assert status[0] == status[2] == st.OK
    assert np.array_equal(out[0], clean[0]) and np.array_equal(out[2], clean[2]), \
        "a hostile sample disturbed its neighbours"
    return int(status[1]), messages[1], out


@pytest.mark.parametrize("transform", [eval_transform, train_transform], ids=["eval", "train"])
def test_truncated_at_every_tenth(original, transform):
    for label, data in truncations(original):
        status, message, _ = _between_valid(original, data, transform)
        assert status in (st.WARNING, st.ERROR), f"{label}: status {status} ({message})"


def test_random_byte_flips_get_a_status(original, reference):
    seen = set()
    for seed in range(300):
        for transform in (eval_transform, train_transform):
            status, _, _ = _between_valid(original, byte_flips(original, seed), transform)
            seen.add(status)
    # CHANGED: a flip in the frame header made it claim another size than planned
    assert seen <= {st.OK, st.WARNING, st.ERROR, st.UNSUPPORTED, st.CHANGED}
    assert st.ERROR in seen or st.WARNING in seen


def test_decompression_bomb_is_refused_from_its_header(original):
    bomb = with_dimensions(original, 65500, 65500)
    info, _, _ = probe(EncodedBatch.from_files([bomb]))
    assert tuple(info[0, :2]) == (65500, 65500)
    status, message, _ = _between_valid(original, bomb)
    assert status == st.TOO_LARGE and "65500x65500" in message
    # Planned for its claimed size, it is refused the same way.
    status, messages, _ = _decode([bomb], eval_transform(), sizes=np.array([[65500, 65500]]))
    assert status[0] == st.TOO_LARGE and "exceeds the limit" in messages[0]


def test_thousands_of_progressive_scans_are_refused():
    progressive = photo_like(WIDTH, HEIGHT, seed=3, progressive=True)
    status, message, _ = _between_valid(progressive, with_repeated_last_scan(progressive, 10))
    assert status in (st.OK, st.WARNING)  # a bogus but short progression decodes
    status, message, _ = _between_valid(progressive, with_repeated_last_scan(progressive, 3000))
    assert status == st.ERROR and "scans" in message


@pytest.mark.parametrize("build", [
    lambda d: with_app_segments(d, 0xE1, 40, b"Exif\0\0"),  # 2.6 MB of EXIF blocks
    lambda d: with_app_segments(d, 0xE2, 40, b"ICC_PROFILE\0"),
    # A 4 MB profile, split over APP2 segments by Pillow (same encoder settings).
    lambda d: photo_like(WIDTH, HEIGHT, seed=3, icc_profile=bytes(4 << 20)),
], ids=["exif-segments", "icc-segments", "icc-4mb"])
def test_huge_metadata_segments_decode_like_the_plain_file(original, reference, build):
    data = build(original)
    assert len(data) > 2_000_000
    status, message, out = _between_valid(original, data)
    assert status == st.OK, message
    assert np.array_equal(out[1], reference)  # metadata never changes pixels


@pytest.mark.parametrize("data", [b"", b"\xff", b"\xff\xd8", b"\xff\xd8\xff\xd9", bytes(1000),
                                  b"\x89PNG\r\n\x1a\n" + bytes(100)],
                         ids=["empty", "one-byte", "soi-only", "soi-eoi", "zeros", "png"])
def test_degenerate_inputs(original, data):
    status, message, _ = _between_valid(original, data)
    assert status in (st.WARNING, st.ERROR), message
