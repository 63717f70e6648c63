"""GaussianBlur (alone or in a RandomApply), done natively: NOTE [ Gaussian blur ]."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from torchvision import datasets
from torchvision import transforms as T
from torchvision.transforms import v2

from jpegloader.pipelines.classification import ops
from jpegloader.pipelines.classification.draw import draw
from tests.conftest import blockers, decode_natively, lower, photo_folder, replayed


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return photo_folder(tmp_path_factory.mktemp("blur") / "d", 16)


def _decoded_and_replayed(folder, transform, seed=3):
    ds = datasets.ImageFolder(str(folder), transform)
    decoder, arrays, _ = decode_natively(ds, seed)
    assert not decoder.program.hybrid
    return torch.from_numpy(arrays[0]), torch.stack(replayed(decoder.program, ds, seed))


@pytest.mark.parametrize("blur", [T.GaussianBlur(23, sigma=(0.1, 2.0)),
                                  T.GaussianBlur((5, 9), sigma=(0.5, 5.0)),
                                  v2.GaussianBlur(7, sigma=(0.1, 2.0)),
                                  T.GaussianBlur(3, sigma=(4.0, 4.0))])
def test_blur_equals_torchvisions_within_a_level(folder, blur):
    transform = T.Compose([T.RandomResizedCrop(64), T.RandomHorizontalFlip(), blur,
                           T.PILToTensor()])
    ours, refs = _decoded_and_replayed(folder, transform)
    diff = (ours.int() - refs.int()).abs()
    # NOTE [ Gaussian blur ]: the exact convolution against torch's float32 one
    assert diff.max() <= 1 and (diff > 0).float().mean() < 1e-3, (diff.max(), diff.float().mean())


def test_blur_in_a_random_apply_after_jitter_is_native_and_follows_p(folder):
    transform = T.Compose([T.RandomResizedCrop(48),
                           T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
                           T.RandomGrayscale(0.2),
                           T.RandomApply([T.GaussianBlur(5, sigma=(0.1, 2.0))], p=0.5),
                           T.PILToTensor()])
    ours, refs = _decoded_and_replayed(folder, transform)
    assert (ours.int() - refs.int()).abs().max() <= 1
    d = draw(lower(transform), np.full(400, 500), np.full(400, 375), 3, np.arange(400))
    applied, _ = d.params[-1]
    assert abs(applied.mean() - 0.5) < 0.08


def test_sigma_follows_torchvisions_distribution():
    blur = T.GaussianBlur(23, sigma=(0.1, 2.0))
    program = lower(T.Compose([T.RandomResizedCrop(224), blur, T.ToTensor()]))
    n = 4000
    d = draw(program, np.full(n, 500), np.full(n, 375), 9, np.arange(n))
    _, sigma = d.params[-1]
    assert sigma.dtype == np.float32
    torch.manual_seed(0)
    ref = [blur.get_params(0.1, 2.0) for _ in range(n)]
    assert stats.ks_2samp(sigma, ref).pvalue > 0.001


def test_blur_lowers_to_one_op_and_oversized_kernels_are_named():
    program = lower(T.Compose([T.RandomResizedCrop(32),
                               T.RandomApply([T.GaussianBlur(3)], p=0.3), T.ToTensor()]))
    (op,) = program.colour
    assert isinstance(op, ops.GaussianBlur) and op.p == 0.3 and op.kernel == (3, 3)
    too_large = T.Compose([T.RandomResizedCrop(16), T.GaussianBlur(41), T.ToTensor()])
    assert any("too large for 16x16 images" in m for m in blockers(too_large))
