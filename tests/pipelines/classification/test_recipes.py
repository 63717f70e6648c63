"""The recipes real training scripts build (tests/recipes.py): each is accelerated or
names every blocker; accelerated ones give batches with the native loader's
structure, dtypes, shapes and labels (eval recipes: its pixels); every alias gives
the same batches as the pipeline it stands for."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets

import jpegloader
from tests.conftest import write_image_folder
from tests.recipes import ALIASES, COLLATES, RECIPES

pytest.importorskip("timm", reason="timm is a test dependency (the [test] extra)")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_image_folder(tmp_path_factory.mktemp("recipes") / "data", 12,
                              size=(300, 230))


def _structure(batch):
    if isinstance(batch, torch.Tensor):
        return (type(batch).__name__ if type(batch) is not torch.Tensor else "Tensor",
                batch.dtype, tuple(batch.shape))
    if isinstance(batch, (list, tuple)):
        return tuple(_structure(b) for b in batch)
    return type(batch).__name__


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_verdict_names_every_blocker(folder, name):
    build, accelerated, blockers = RECIPES[name]
    collate = COLLATES[name]() if name in COLLATES else None
    verdict = jpegloader.explain(datasets.ImageFolder(str(folder), build()), batch_size=4,
                                 collate_fn=collate)
    assert verdict.accelerated == accelerated, verdict.report()
    for blocker in blockers:
        assert blocker in verdict.summary(), (blocker, verdict.report())
    # No hint asks to change the recipe's transforms.
    for reason in verdict.reasons:
        assert "drop" not in reason.hint and "remove" not in reason.hint, reason


@pytest.mark.parametrize("name", [n for n, (_, ok, _) in RECIPES.items() if ok])
def test_accelerated_recipe_batches_match_native(folder, name):
    build = RECIPES[name][0]
    collate = COLLATES[name]() if name in COLLATES else None
    ds = datasets.ImageFolder(str(folder), build())
    ours = list(jpegloader.DataLoader(ds, batch_size=5, num_workers=2, collate_fn=collate))
    native = list(TorchDataLoader(ds, batch_size=5, collate_fn=collate))
    assert len(ours) == len(native)
    for a, b in zip(ours, native, strict=True):
        assert type(a) is type(b)
        assert _structure(a) == _structure(b) or \
            _structure(a) == tuple(("Tensor", *s[1:]) for s in _structure(b)), \
            (_structure(a), _structure(b))
        assert torch.equal(a[1], b[1])
    if "eval" in name:  # deterministic: the pixels themselves
        ours = [list(b) for b in ours]
        native = [list(b) for b in native]
        for a, b in zip(ours, native, strict=True):
            diff = (a[0].double() - b[0].double()).abs()
            scale = 1.0 if a[0].dtype == torch.uint8 else float(
                (b[0].max() - b[0].min()) / 255)
            assert diff.mean().item() / scale <= 1.0, name


@pytest.mark.parametrize("name", ALIASES)
def test_alias_gives_the_same_batches(folder, name):
    alias, original = ALIASES[name]
    runs = []
    for build in (alias, original):
        ds = datasets.ImageFolder(str(folder), build())
        g = torch.Generator().manual_seed(3)
        loader = jpegloader.DataLoader(ds, batch_size=4, shuffle=True, generator=g)
        assert loader.eligibility.accelerated, loader.eligibility.report()
        runs.append([[t.clone() for t in b] for b in loader])
    for a, b in zip(*runs, strict=True):
        # The same draws and pixels; the float conversions themselves may differ in the
        # last bit (v2 ToDtype multiplies by 1/255 where ToTensor divides by 255), and
        # each alias's own table reproduces its own arithmetic exactly.
        assert a[0].dtype == b[0].dtype and torch.equal(a[1], b[1])
        torch.testing.assert_close(a[0], b[0], rtol=0, atol=1e-6)


def test_recipe_count(folder):
    """How many of the recipes accelerate (quoted in the README)."""
    counted = sum(jpegloader.explain(datasets.ImageFolder(str(folder), build()), batch_size=4,
                                     collate_fn=COLLATES[name]() if name in COLLATES
                                     else None).accelerated
                  for name, (build, _, _) in RECIPES.items())
    assert counted == sum(ok for _, ok, _ in RECIPES.values())
    print(f"{counted} of {len(RECIPES)} recipes accelerated")


def test_uint8_batches_are_a_quarter_of_the_bytes(folder):
    ds = datasets.ImageFolder(str(folder), RECIPES["timm-eval-prefetcher"][0]())
    images, labels = next(iter(jpegloader.DataLoader(ds, batch_size=4, num_workers=1)))
    assert images.dtype == torch.uint8 and images.shape == (4, 3, 224, 224)
    native = next(iter(TorchDataLoader(ds, batch_size=4)))[0]
    assert np.abs(images.numpy().astype(int) - native.numpy().astype(int)).mean() <= 1.0


@pytest.mark.parametrize("antialias", [None, False])
def test_a_tensor_resize_without_antialiasing_is_not_resized_as_pillow(folder, antialias):
    # antialias=None is plain interpolation on a tensor, as False: not Pillow's scheme
    from torchvision import transforms as T
    ds = datasets.ImageFolder(str(folder), T.Compose([
        T.PILToTensor(), T.Resize(256, antialias=antialias), T.CenterCrop(224),
        T.ConvertImageDtype(torch.float)]))
    assert not jpegloader.DataLoader(ds, batch_size=4).eligibility.accelerated
    ds.transform.transforms[1].antialias = True
    assert jpegloader.DataLoader(ds, batch_size=4).eligibility.accelerated


def test_tensor_backend_on_real_photos_is_within_a_fraction_of_a_level():
    """NOTE [ The tensor backend ]: torchvision's reference eval preset with
    --backend tensor resizes uint8 tensors with torch's antialiased kernel; the loader
    resizes as Pillow does.  On real photos (decode="exact"), per image within half a
    level on 0-255 of torch's own loader (measured: at most 0.06)."""
    from tests.conftest import shared
    from tests.recipes import ClassificationPresetEval
    ds = datasets.ImageFolder(str(shared("imagenet-sample")),
                              ClassificationPresetEval(crop_size=224, backend="tensor"))
    ds = torch.utils.data.Subset(ds, list(range(0, len(ds), 4)))
    ours = jpegloader.DataLoader(ds, batch_size=16, num_workers=2, decode="exact")
    assert ours.eligibility.accelerated
    assert "PILToTensor" in ours.eligibility.split_text()
    for (a, la), (b, lb) in zip(ours, TorchDataLoader(ds, batch_size=16), strict=True):
        assert torch.equal(la, lb)
        scale = float((b.max() - b.min()) / 255)
        diff = (a.double() - b.double()).abs().mean(dim=(1, 2, 3)) / scale
        assert diff.max() <= 0.5, diff.max()
