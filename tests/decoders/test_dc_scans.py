"""NOTE [ DC scans only ]: a 1/8 decode of a progressive file reads only its DC
scans, and its pixels are identical to a full 1/8 decode (Pillow's libjpeg reading
every scan), for files with several DC scans (successive approximation), restart
markers, any subsampling, grey, odd sizes, and real progressive photos."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from jpegloader.decoders import EncodedBatch, _jpeg, decode_batch
from jpegloader.decoders import status as st
from tests.conftest import shared, variants, whole_image_plans


def photo(width, height, seed, mode="RGB", **save) -> bytes:
    """A textured photo-like image with real high frequencies (so AC scans are big)."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(0, 255, (height // 16 + 2, width // 16 + 2, 3)).astype(np.uint8)
    img = np.asarray(Image.fromarray(coarse).resize((width, height), Image.BICUBIC), np.int16)
    img = np.clip(img + rng.normal(0, 18, img.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(img).convert(mode).save(out, "JPEG", **save)
    return out.getvalue()


def scans(data: bytes) -> list[tuple[tuple[int, ...], int, int, int]]:
    """(component ids, Ss, Ah, Al) of each scan, read from the SOS headers."""
    found, p = [], 2
    while p + 4 <= len(data):
        marker, length = data[p + 1], int.from_bytes(data[p + 2:p + 4], "big")
        if marker == 0xD9:
            break
        if marker == 0xDA:
            ns = data[p + 4]
            ss, _, a = data[p + 5 + 2 * ns:p + 8 + 2 * ns]
            found.append((tuple(data[p + 5:p + 5 + 2 * ns:2]), ss, a >> 4, a & 15))
            p = _scan_end(data, p + 2 + length)
        else:
            p += 2 + length
    return found


def _scan_end(data: bytes, p: int) -> int:
    while True:
        p = data.index(b"\xff", p)
        if data[p + 1] != 0 and not 0xD0 <= data[p + 1] <= 0xD7:
            return p
        p += 2


def ours_at_one_eighth(data: bytes) -> tuple[np.ndarray, int]:
    """The C core's 1/8 decode, resampled 1:1 (an identity), as uint8 HWC."""
    with Image.open(io.BytesIO(data)) as im:
        w, h = math.ceil(im.width / 8), math.ceil(im.height / 8)
        full = im.size
    plans = whole_image_plans([(w, h)], scale=8, image_sizes=[full])
    out = np.zeros((1, h, w, 3), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out, hwc=True)
    return out[0], int(status[0])


def pillow_at_one_eighth(data: bytes) -> np.ndarray:
    """Pillow's own 1/8 decode (libjpeg scaling, every scan read)."""
    with Image.open(io.BytesIO(data)) as im:
        w, h = im.size
        im.draft("RGB", (w // 8, h // 8))
        assert im.size == (math.ceil(w / 8), math.ceil(h / 8))
        return np.asarray(im.convert("RGB"))


CASES = {
    "444": dict(subsampling=0), "422": dict(subsampling=1), "420": dict(subsampling=2),
    "restart markers": dict(subsampling=2, restart_marker_blocks=3),
    "restart rows": dict(subsampling=0, restart_marker_rows=1),
    "low quality": dict(subsampling=2, quality=20),
}


@pytest.mark.parametrize("size", [(640, 480), (333, 257), (8, 8), (9, 1201)])
@pytest.mark.parametrize("case", CASES)
def test_dc_only_decode_is_bit_identical_to_a_full_one_eighth_decode(case, size):
    data = photo(*size, seed=size[0] + len(case), progressive=True,
                 **{"quality": 90, **CASES[case]})
    layout = scans(data)
    dc = [s for s in layout if s[1] == 0]
    # libjpeg's standard script: a DC scan at Al=1, AC scans, then a DC refinement.
    assert len(dc) >= 2 and any(ah > 0 for _, _, ah, _ in dc), layout
    stream = _jpeg.dc_scans(data)
    assert stream is not None and len(stream) < len(data)
    # 4:2:0 chroma is decoded at 1/8 through the 2x2 IDCT, which reads AC terms.
    chroma_needs_ac = CASES[case].get("subsampling") == 2
    assert scans(stream) == [s for s in layout
                             if s[1] == 0 or (chroma_needs_ac and s[0] != (1,))]
    if "restart" in case:
        assert b"\xff\xdd" in stream  # DRI kept; its markers sit inside the DC scans
    ours, status = ours_at_one_eighth(data)
    assert status == st.OK
    np.testing.assert_array_equal(ours, pillow_at_one_eighth(data))
    # The shorter stream is an ordinary JPEG to any decoder (Pillow smooths the DC of
    # a stream without AC scans, so only its size is compared).
    assert Image.open(io.BytesIO(stream)).size == Image.open(io.BytesIO(data)).size


def test_grey_progressive_has_one_component_per_dc_scan():
    data = photo(300, 200, seed=5, mode="L", progressive=True, quality=85)
    assert all(len(ids) == 1 for ids, *_ in scans(data))
    ours, status = ours_at_one_eighth(data)
    assert status == st.OK
    np.testing.assert_array_equal(ours, pillow_at_one_eighth(data))


def test_the_ac_scans_are_not_read_at_one_eighth():
    data = bytearray(photo(480, 360, seed=9, progressive=True, quality=90, subsampling=0))
    clean, _ = ours_at_one_eighth(bytes(data))
    # Scramble the entropy-coded bytes of every AC scan (no FF, so markers stay).
    rng = np.random.default_rng(0)
    p = 2
    while data[p + 1] != 0xD9:
        length = int.from_bytes(data[p + 2:p + 4], "big")
        if data[p + 1] != 0xDA:
            p += 2 + length
            continue
        ns = data[p + 4]
        start, end = p + 2 + length, _scan_end(bytes(data), p + 2 + length)
        if data[p + 5 + 2 * ns] != 0:
            data[start:end] = rng.integers(0, 255, end - start, dtype=np.uint8).tobytes()
        p = end
    broken, status = ours_at_one_eighth(bytes(data))
    assert status == st.OK
    np.testing.assert_array_equal(broken, clean)


def test_baseline_and_malformed_files_are_decoded_as_they_are():
    assert _jpeg.dc_scans(photo(64, 48, seed=1)) is None  # baseline
    data = photo(64, 48, seed=1, progressive=True)
    assert _jpeg.dc_scans(data[: len(data) // 2]) is None  # no EOI
    assert _jpeg.dc_scans(b"\xff\xd8\xff\xc2\x00") is None
    assert _jpeg.dc_scans(b"not a jpeg") is None
    assert _jpeg.dc_scans(b"") is None


def test_real_progressive_photos():
    files = [p for p in sorted(shared("edge-cases").rglob("*")) if p.is_file()]
    progressive = [f for f in files if _jpeg.dc_scans(f.read_bytes()) is not None]
    if not progressive:
        pytest.skip("no progressive file with AC scans in ../shared/data/edge-cases")
    for f in progressive:
        data = f.read_bytes()
        ours, status = ours_at_one_eighth(data)
        assert status == st.OK, f
        np.testing.assert_array_equal(ours, pillow_at_one_eighth(data), err_msg=str(f))


@pytest.mark.parametrize("num_workers", variants([0, 2], keep=[2]))
def test_loader_eval_of_large_progressive_photos_within_tolerance(tmp_path, num_workers):
    # End to end: a low-resolution eval's plan scales these by 1/8 (short side 2,400 >=
    # 2 x 8 x 128, NOTE [ How far to scale in the DCT domain ]), so the loader takes the
    # DC-only path; pixels within the auto tolerance.
    import torch
    from torchvision.datasets import ImageFolder

    import jpegloader
    from jpegloader.decoders.plans import to_plans
    from jpegloader.pipelines.classification.draw import draw
    from torchvision import transforms as T

    from tests.conftest import IMAGENET_MEAN, IMAGENET_STD, lower, to_255

    def low_resolution_eval():
        return T.Compose([T.Resize(128), T.CenterCrop(112), T.ToTensor(),
                          T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])

    folder = tmp_path / "photos" / "a"
    folder.mkdir(parents=True)
    # 4:4:4 and 4:2:0 (4:2:2 is left out: scaled, libjpeg-turbo decodes its chroma at half
    # the horizontal resolution, and these images' per-pixel colour noise then differs by
    # 9.5 mean abs diff; the 5 real 4:2:2 large photos stay within 2.23, README).
    sizes = [(3000, 2400, 2), (2400, 3200, 0), (3100, 2500, 2)]
    for i, (w, h, sub) in enumerate(sizes):
        (folder / f"{i}.jpg").write_bytes(
            photo(w, h, seed=20 + i, progressive=True, quality=85, subsampling=sub))
    widths, heights = [w for w, _, _ in sizes], [h for _, h, _ in sizes]
    d = draw(lower(low_resolution_eval()), widths, heights, 0, np.arange(3))
    assert (to_plans(d.geometry, widths, heights, True)["scale_denom"] == 8).all()

    dataset = ImageFolder(str(tmp_path / "photos"), transform=low_resolution_eval())
    loader = jpegloader.DataLoader(dataset, batch_size=3, num_workers=num_workers)
    assert loader.eligibility.accelerated
    (batch, _), = list(loader)
    for k, (path, _) in enumerate(dataset.samples):
        with Image.open(path) as im:
            reference = low_resolution_eval()(im.convert("RGB"))
        diff = (to_255(batch[k]) - to_255(reference)).abs().mean().item()
        assert diff <= 3.0, f"{path}: mean abs diff {diff:.3f}"
    assert torch.isfinite(batch).all()
