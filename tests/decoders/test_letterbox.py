"""Letterbox plans (csrc/letterbox.c): a whole photo decoded, at its own size or resized
with OpenCV's INTER_LINEAR (csrc/cv_linear.c), and padded with a constant, equal to
OpenCV's own imdecode + resize + copyMakeBorder bit for bit.  The installed cv2 is the
oracle; it is a test dependency (through Ultralytics), never a runtime one."""
from __future__ import annotations

import numpy as np
import pytest

from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders.jpeg import FILTER_OPENCV_LINEAR, PAD_MODES
from jpegloader.decoders.plans import Geometry, packed_fill, to_plans
from tests.conftest import SHARED_DATA, noisy_jpeg

cv2 = pytest.importorskip("cv2", reason="OpenCV is the oracle for its resize")


def letterbox_plan(size: tuple[int, int], resized: tuple[int, int],
                   pad: tuple[int, int, int, int] = (0, 0, 0, 0), fill=(0, 0, 0)) -> np.ndarray:
    """A letterbox plan for an image of ``size`` (h, w): resized to (rh, rw), padded by
    (top, bottom, left, right)."""
    (h, w), (rh, rw), (top, bottom, left, right) = size, resized, pad
    one, zero = np.ones(1, np.int64), np.zeros(1, np.int64)
    g = Geometry(zero, zero, one * w, one * h, one * rw, one * rh, zero, zero,
                 np.zeros(1, bool), np.zeros(1, bool),
                 np.full(1, FILTER_OPENCV_LINEAR, np.int32), pad_mode=PAD_MODES["constant"],
                 pad_fill=packed_fill(fill), pad_x=np.array([[left, rw + left + right]]),
                 pad_y=np.array([[top, rh + top + bottom]]))
    return to_plans(g, [w], [h], dct_scaling=False)


def letterboxed(data: bytes, size: tuple[int, int], resized: tuple[int, int],
                pad: tuple[int, int, int, int], fill=(114, 114, 114)) -> np.ndarray:
    """The C core's [3, H, W] letterbox: (h, w) resized to (rh, rw), padded by (top,
    bottom, left, right)."""
    (rh, rw), (top, bottom, left, right) = resized, pad
    out = np.zeros((1, 3, rh + top + bottom, rw + left + right), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]),
                                    letterbox_plan(size, resized, pad, fill), out)
    assert status[0] == 0, messages[0]
    return out[0]


def opencv(data: bytes, resized, pad, fill=(114, 114, 114)) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image.shape[:2] != tuple(resized):
        image = cv2.resize(image, resized[::-1], interpolation=cv2.INTER_LINEAR)
    image = cv2.copyMakeBorder(image, *pad, cv2.BORDER_CONSTANT, value=fill[::-1])
    return image[..., ::-1].transpose(2, 0, 1)


def assert_like_opencv(data: bytes, rng, cases: int) -> None:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    h, w = image.shape[:2]
    sizes = [(h, w), (max(h // 2, 1), max(w // 2, 1)), (2 * h, 2 * w), (h // 3 + 1, w // 3 + 1)]
    sizes += [(int(rng.integers(1, 2 * h)), int(rng.integers(1, 2 * w))) for _ in range(cases)]
    for resized in sizes:
        pad = tuple(int(v) for v in rng.integers(0, 20, 4))
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        got = letterboxed(data, (h, w), resized, pad, fill)
        np.testing.assert_array_equal(got, opencv(data, resized, pad, fill),
                                      err_msg=f"{w}x{h} -> {resized[::-1]}, pad {pad}")


@pytest.mark.parametrize("size", [(64, 48), (3, 1), (1, 5), (97, 61)])
def test_noise_photos_like_opencv(size):
    rng = np.random.default_rng(size[0])
    assert_like_opencv(noisy_jpeg(*size, seed=1), rng, cases=6)


def test_real_photos_like_opencv():
    photos = sorted((SHARED_DATA / "coco-sample" / "val2017").glob("*.jpg"))[:12]
    photos += sorted((SHARED_DATA / "imagenet-sample").glob("*/*.JPEG"))[:12]
    if not photos:
        pytest.skip(f"needs the real-image corpus in {SHARED_DATA}")
    rng = np.random.default_rng(0)
    for path in photos:
        assert_like_opencv(path.read_bytes(), rng, cases=3)


def test_a_plan_for_another_size_is_refused():
    data = noisy_jpeg(32, 24, seed=2)
    out = np.zeros((1, 3, 24, 30), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]),
                                    letterbox_plan((24, 30), (24, 30)), out)
    assert status[0] != 0 and "drawn for 30x24" in messages[0]


def bgr_rows(data: bytes, size: tuple[int, int]) -> tuple[int, np.ndarray, str]:
    """decode_batch's uint8[1, h, w, 3] in OpenCV's order (hwc and bgr): its status,
    the rows and the message."""
    out = np.full((1, *size, 3), 7, np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), letterbox_plan(size, size),
                                    out, hwc=True, bgr=True)
    return int(status[0]), out[0], messages[0]


def test_bgr_rows_equal_opencvs_imdecode():
    # YOLO's training photos at their own size: libjpeg-turbo's B, G, R rows, as
    # cv2.imdecode(IMREAD_COLOR) gives them; grey, progressive and 4:2:2 files too
    photos = sorted((SHARED_DATA / "coco-sample" / "val2017").glob("*.jpg"))[:12]
    photos += [SHARED_DATA / "edge-cases" / k for k in (
        "grayscale/hopper_gray.jpg", "progressive/app13-multiple.jpg",
        "subsampling-422/iptc.jpg")]
    photos = [p for p in photos if p.exists()]
    if not photos:
        pytest.skip(f"needs the real-image corpus in {SHARED_DATA}")
    for data in [noisy_jpeg(97, 61, seed=3)] + [p.read_bytes() for p in photos]:
        want = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        status, got, message = bgr_rows(data, want.shape[:2])
        assert status == 0, message
        np.testing.assert_array_equal(got, want)


def test_bgr_rows_are_only_for_a_whole_image_at_its_own_size():
    data, plan = noisy_jpeg(32, 24, seed=4), letterbox_plan((24, 32), (12, 16))
    out = np.full((1, 12, 16, 3), 7, np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plan, out, hwc=True,
                                    bgr=True)
    assert status[0] != 0 and "own size only" in messages[0] and not out.any()
    with pytest.raises(ValueError, match="pass hwc=True"):
        decode_batch(EncodedBatch.from_files([data]), plan, np.zeros((1, 3, 12, 16), np.uint8),
                     bgr=True)
