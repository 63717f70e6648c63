"""RandomCrop natively, with padding, pad_if_needed and every padding mode (DeiT III's
3-Augment: Resize(224), RandomCrop(224, padding=4, padding_mode="reflect"))."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import stats
from torchvision import datasets
from torchvision import transforms as T
from torchvision.transforms import functional as F
from torchvision.transforms import v2

from jpegloader.pipelines import CLASSIFICATION, DecodeOptions
from jpegloader.pipelines.classification.draw import draw, padded_for_crop
from tests.conftest import decode_natively, lower, photo_folder, replayed

MODES = ["constant", "edge", "reflect", "symmetric"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = photo_folder(tmp_path_factory.mktemp("crop") / "d", 12) / "c0"
    # a photo smaller than the crops below, and one that is tall and narrow
    small = Image.open(sorted(root.iterdir())[0]).convert("RGB")
    small.resize((40, 30), Image.BICUBIC).save(root / "small.jpg", quality=92)
    small.resize((20, 90), Image.BICUBIC).save(root / "narrow.jpg", quality=92)
    return root.parent


def _compare(folder, transform, seed=5):
    ds = datasets.ImageFolder(str(folder), transform)
    decoder, arrays, report = decode_natively(ds, seed)
    assert not decoder.program.hybrid
    for k, ref in enumerate(replayed(decoder.program, ds, seed)):
        assert torch.equal(torch.from_numpy(arrays[0][k]), ref), (k, ds.samples[k][0])
    return report


@pytest.mark.parametrize("mode", MODES)
def test_padded_random_crop_after_resize_equals_torchvision(folder, mode):
    """DeiT III's primary transforms, every mode; the flip mirrors the padded window."""
    transform = T.Compose([T.Resize(48, interpolation=T.InterpolationMode.BICUBIC),
                           T.RandomCrop(48, padding=4, padding_mode=mode, fill=(10, 200, 30)),
                           T.RandomHorizontalFlip(), T.PILToTensor()])
    report = _compare(folder, transform)
    assert report.python_path == 0


@pytest.mark.parametrize("mode", MODES)
def test_pad_if_needed_wider_than_the_image_equals_torchvision(folder, mode):
    """pad_if_needed pads each end of a short side by all it lacks; wider than the image,
    edge, reflect and symmetric repeat as numpy's np.pad does."""
    transform = T.Compose([T.RandomCrop((64, 56), padding=(3, 1, 0, 7), pad_if_needed=True,
                                        padding_mode=mode),
                           T.RandomHorizontalFlip(), T.ColorJitter(0.3, 0.3, 0.3),
                           T.PILToTensor()])
    _compare(folder, transform)


@pytest.mark.parametrize("mode", MODES)
def test_v2_pads_once_and_equals_torchvision(folder, mode):
    """v2's RandomCrop pads once, pad_if_needed's amount and the padding together: the
    C core against the replay, and the replay's padding against v2's own transform."""
    crop = v2.RandomCrop((64, 56), padding=[3, 1, 0, 7], pad_if_needed=True, fill=(9, 8, 7),
                         padding_mode=mode)
    _compare(folder, T.Compose([crop, T.RandomHorizontalFlip(), T.PILToTensor()]))
    op = lower(T.Compose([crop, T.PILToTensor()])).geometry[0]
    assert op.pad_once and op.padding == (3, 1, 0, 7)
    torch.manual_seed(0)
    for path in sorted(folder.glob("*/*"))[:6]:
        image = Image.open(path).convert("RGB")
        params = crop.make_params([image])
        theirs = crop.transform(image, params)
        ours = F.crop(padded_for_crop(image, op), params["top"], params["left"], 64, 56)
        assert np.array_equal(np.asarray(theirs), np.asarray(ours)), path


def test_a_crop_larger_than_the_padded_image_raises_as_torchvision_does(folder):
    ds = datasets.ImageFolder(str(folder), T.Compose([T.RandomCrop(64, padding=2),
                                                      T.PILToTensor()]))
    lowering = CLASSIFICATION.lower(ds, {"batch_size": len(ds)})
    decoder = CLASSIFICATION.decoder(lowering, DecodeOptions())
    small = [k for k, (path, _) in enumerate(ds.samples) if path.endswith("small.jpg")]
    arrays = tuple(np.zeros((1, *shape), dtype=torch.empty((), dtype=dt).numpy().dtype)
                   for shape, dt in decoder.layout)
    with pytest.raises(Exception, match="larger than input image size"):
        decoder.decode(small, 1, arrays, "in the test")
    with pytest.raises(ValueError, match="larger than input image size"):
        ds[small[0]]


def test_crop_positions_follow_torchvisions_distribution():
    crop = T.RandomCrop(224, padding=4, padding_mode="reflect")
    program = lower(T.Compose([T.Resize(224), crop, T.ToTensor()]))
    n, w, h = 4000, 298, 224
    d = draw(program, np.full(n, 400), np.full(n, 300), 2, np.arange(n))
    top, left = d.params[1]
    torch.manual_seed(0)
    padded = torch.empty(3, h + 8, w + 8)
    ref = np.array([T.RandomCrop.get_params(padded, (224, 224))[:2] for _ in range(n)])
    assert stats.ks_2samp(top, ref[:, 0]).pvalue > 0.001
    assert stats.ks_2samp(left, ref[:, 1]).pvalue > 0.001
    assert top.min() == 0 and top.max() == 8 and left.max() == w + 8 - 224


def _yours(transform) -> list[str]:
    return [n for who, names in lower(transform).split if who == "yours" for n in names]


def test_padding_elsewhere_runs_as_your_own_objects():
    """A padded crop after another crop, or followed by a resize, runs as the user's
    object after the native part (a hybrid)."""
    assert _yours(T.Compose([T.CenterCrop(100), T.RandomCrop(64, padding=4),
                             T.ToTensor()])) == ["RandomCrop"]
    assert _yours(T.Compose([T.RandomCrop(64, padding=4), T.Resize(32),
                             T.ToTensor()])) == ["Resize"]
    assert _yours(T.Compose([T.RandomCrop(64), T.Resize((32, 32)), T.ToTensor()])) == []
