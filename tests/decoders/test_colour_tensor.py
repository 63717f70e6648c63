"""The colour program's steps with torchvision's arithmetic on a uint8 tensor
(csrc/colour_tensor.h): brightness, contrast, saturation and hue as v2's kernels and
v1's functional tensor ops compute them, bit for bit, on real COCO photos and on an
image of a million random colours; the contrast against torchvision's own blend with
the exact mean, and within a level of torch's mean, whose summation order depends on
its threads."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.transforms import functional as F1
from torchvision.transforms.v2 import functional as F2

from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders import jpeg as J
from jpegloader.decoders import status as st
from tests.coco_fixtures import coco_sample
from tests.conftest import variants, whole_image_plans

#: (op, v2 kernel, v1 functional, factor range: the distortion's and far beyond it)
OPS = {"brightness": (J.BRIGHTNESS, F2.adjust_brightness, F1.adjust_brightness, (0.0, 3.0)),
       "contrast": (J.CONTRAST, F2.adjust_contrast, F1.adjust_contrast, (0.0, 3.0)),
       "saturation": (J.SATURATION, F2.adjust_saturation, F1.adjust_saturation, (0.0, 3.0)),
       "hue": (J.HUE, F2.adjust_hue, F1.adjust_hue, (-0.5, 0.5))}
CHAINS = {"v2": J.TORCH_V2, "v1": J.TORCH_V1}


def jpegs() -> list[bytes]:
    """Eight COCO photos, and a quality-98 JPEG of a million random colours."""
    folder, _ = coco_sample()
    files = sorted(folder.glob("*.jpg"))[:8]
    noise = np.random.default_rng(3).integers(0, 256, (1000, 1000, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(noise).save(buf, "JPEG", quality=98)
    return [f.read_bytes() for f in files] + [buf.getvalue()]


def decoded(data: bytes, op: int | None = None, value: float = 0.0) -> torch.Tensor:
    """The photo as the C core decodes it (CHW uint8), with one colour step or none."""
    with Image.open(io.BytesIO(data)) as im:
        w, h = im.size
    plans = whole_image_plans([(w, h)])
    if op is not None:
        plans["colour"]["op"][0, 0], plans["colour"]["value"][0, 0] = op, value
    out = np.zeros((1, h, w, 3), np.uint8)
    status, messages = decode_batch(EncodedBatch.from_files([data]), plans, out, hwc=True)
    assert status[0] == st.OK, messages[0]
    return torch.from_numpy(out[0]).permute(2, 0, 1).contiguous()


def exact_mean_contrast(image: torch.Tensor, factor: float, chain: str) -> torch.Tensor:
    """torchvision's contrast with the grayscale's exact mean (rounded once) in place
    of torch.mean's, through torchvision's own grayscale and blend."""
    if chain == "v2":
        from torchvision.transforms.v2.functional._color import (_blend,
                                                                 _rgb_to_grayscale_image)
        gray = _rgb_to_grayscale_image(image, 1, preserve_dtype=False).floor_()
        blend = _blend
    else:
        from torchvision.transforms._functional_tensor import _blend, rgb_to_grayscale
        gray = rgb_to_grayscale(image)
        blend = _blend
    mean = np.float32(gray.double().sum().item()) / np.float32(gray.numel())
    return blend(image, torch.tensor(mean, dtype=torch.float32).reshape(1, 1, 1), factor)


@pytest.fixture(scope="module")
def photos():
    return [(data, decoded(data)) for data in jpegs()]


@pytest.mark.parametrize("chain", variants(CHAINS, keep=["v2"]))
@pytest.mark.parametrize("name", OPS)
def test_a_step_is_torchvisions_tensor_arithmetic(photos, name, chain):
    kind, v2, v1, (lo, hi) = OPS[name]
    rng = np.random.default_rng(len(name) + len(chain))
    for k, (data, src) in enumerate(photos):
        for factor in (lo, hi, *np.float32(rng.uniform(lo, hi, 3))):
            factor = float(np.float32(factor))
            got = decoded(data, CHAINS[chain] + kind, factor)
            if name == "contrast":
                want = exact_mean_contrast(src, factor, chain)
                theirs = (v2 if chain == "v2" else v1)(src, factor)
                assert (got.int() - theirs.int()).abs().max() <= 1, (k, factor)
            else:
                want = (v2 if chain == "v2" else v1)(src, factor)
            assert torch.equal(got, want), (name, chain, k, factor,
                                            int((got != want).sum()))


def test_torch_steps_in_a_program_are_checked():
    data = jpegs()[0]
    for op, value in ((J.TORCH_V2 + J.HUE, 0.7), (J.TORCH_V1 + J.SATURATION, -1.0),
                      (J.TORCH_V1 + J.HUE + 1, 0.0), (J.PERMUTE + 1, 0.0)):
        with Image.open(io.BytesIO(data)) as im:
            w, h = im.size
        plans = whole_image_plans([(w, h)])
        plans["colour"]["op"][0, 0], plans["colour"]["value"][0, 0] = op, value
        status, _ = decode_batch(EncodedBatch.from_files([data]), plans,
                                 np.zeros((1, h, w, 3), np.uint8), hwc=True)
        assert status[0] != st.OK, (op, value)
