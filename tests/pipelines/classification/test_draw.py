"""Random-parameter draws and transform lowering."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision import transforms as T
from torchvision.transforms import v2

from jpegloader.pipelines.classification.draw import draw, random_resized_crop_params
from jpegloader.pipelines.random_stream import uniforms
from tests.conftest import IMAGENET_MEAN, IMAGENET_STD, blockers, lower, train_transform


def _ks(a, b) -> float:
    """Two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, grid, "right") / len(a)
                         - np.searchsorted(b, grid, "right") / len(b)))


@pytest.mark.parametrize("size", [(500, 375), (120, 900), (64, 64)])
def test_random_resized_crop_distribution_matches_torchvision(size):
    n = 4000
    width, height = size
    torch.manual_seed(0)
    img = torch.empty(3, height, width)
    ref = np.array([T.RandomResizedCrop.get_params(img, [0.08, 1.0], [3 / 4, 4 / 3])
                    for _ in range(n)])
    u = uniforms(1234, np.arange(n), 40)
    ours = random_resized_crop_params(np.full(n, width), np.full(n, height), (0.08, 1.0),
                                      (3 / 4, 4 / 3), u)
    # Critical KS value at alpha=0.001 for two samples of 4000: 1.95*sqrt(2/n) = 0.044
    for col, name in enumerate("ijhw"):
        stat = _ks(ours[:, col], ref[:, col])
        assert stat < 0.044, f"{name}: KS statistic {stat:.3f}"
    assert (ours[:, 2] + ours[:, 0] <= height).all() and (ours[:, 3] + ours[:, 1] <= width).all()


def test_draws_depend_only_on_seed_and_index():
    pipeline = lower(train_transform())
    w, h = np.array([500, 300, 640]), np.array([375, 400, 480])
    g = draw(pipeline, w, h, 99, [5, 17, 3]).geometry
    g_rev = draw(pipeline, w[::-1], h[::-1], 99, [3, 17, 5]).geometry
    assert np.array_equal(g.crop_x, g_rev.crop_x[::-1])
    assert np.array_equal(g.flip, g_rev.flip[::-1])
    assert not np.array_equal(g.crop_x, draw(pipeline, w, h, 100, [5, 17, 3]).geometry.crop_x)


def test_flip_rate_matches_p():
    pipeline = lower(T.Compose([T.CenterCrop(8), T.RandomHorizontalFlip(0.3), T.ToTensor()]))
    g = draw(pipeline, np.full(20000, 10), np.full(20000, 10), 7, np.arange(20000)).geometry
    assert abs(g.flip.mean() - 0.3) < 0.015


def test_v2_pipeline_lowers_to_the_same_ops():
    v2_pipeline = v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), v2.ToImage(),
                              v2.ToDtype(torch.float32, scale=True),
                              v2.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
    a, b = lower(v2_pipeline), lower(train_transform())
    assert a.geometry == b.geometry and a.output_size == b.output_size
    np.testing.assert_allclose(a.lut_array, b.lut_array, atol=1e-6)


@pytest.mark.parametrize("transform, match", [
    (T.Compose([T.RandAugment(), T.RandomResizedCrop(224), T.ToTensor()]), "decode alone"),
    (T.Compose([T.Resize(256), T.ToTensor()]), "output size depends"),
    (T.Compose([T.RandomResizedCrop(224, interpolation=T.InterpolationMode.NEAREST),
                T.ToTensor()]), "nearest"),
    (T.Compose([T.ColorJitter(0.4), T.RandomResizedCrop(224), T.ToTensor()]),
     "colour adjustments are lowered only after"),
    (None, "no transform"),
])
def test_unsupported_pipelines_name_the_problem(transform, match):
    found = blockers(transform)
    assert any(match in b for b in found), found


def test_lookup_table_is_bit_exact_with_to_tensor_normalize():
    pipeline = lower(train_transform())
    ramp = torch.arange(256, dtype=torch.float32).div(255)
    expected = (ramp[None, :] - torch.tensor(IMAGENET_MEAN)[:, None]) \
        / torch.tensor(IMAGENET_STD)[:, None]
    assert torch.equal(torch.from_numpy(pipeline.lut_array.copy()), expected)


def test_colour_draws_follow_torchvisions_distributions():
    from scipy import stats
    n = 24000
    program = lower(T.Compose([T.CenterCrop(8), T.RandomApply([T.ColorJitter(0.4, 0.3, 0.2,
                                                                              0.1)], p=0.8),
                               T.RandomGrayscale(0.2), T.ToTensor()]))
    d = draw(program, np.full(n, 10), np.full(n, 10), 5, np.arange(n))
    (applied, order, factors), gray = d.params[1], d.params[2]
    # RandomApply and RandomGrayscale rates: binomial tests
    assert stats.binomtest(int(applied.sum()), n, 0.8).pvalue > 0.001
    assert stats.binomtest(int(gray.sum()), n, 0.2).pvalue > 0.001
    # torch.randperm(4): the 24 orders equally likely
    codes = order @ np.array([64, 16, 4, 1])
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == 24 and stats.chisquare(counts).pvalue > 0.001
    # each factor uniform in its range (KS against the uniform)
    for k, (lo, hi) in enumerate([(0.6, 1.4), (0.7, 1.3), (0.8, 1.2), (-0.1, 0.1)]):
        assert stats.kstest(factors[:, k], stats.uniform(lo, hi - lo).cdf).pvalue > 0.001


def test_random_interpolation_is_an_even_choice():
    pytest.importorskip("timm", reason="timm is a test dependency (the [test] extra)")
    from scipy import stats
    from timm.data.transforms import RandomResizedCropAndInterpolation
    program = lower(T.Compose([RandomResizedCropAndInterpolation(32, interpolation="random"),
                               T.ToTensor()]))
    n = 20000
    d = draw(program, np.full(n, 64), np.full(n, 48), 1, np.arange(n))
    assert set(np.unique(d.geometry.filter)) == {0, 1}  # bilinear, bicubic
    assert stats.binomtest(int((d.geometry.filter == 1).sum()), n, 0.5).pvalue > 0.001
