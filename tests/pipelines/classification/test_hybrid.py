"""NOTE [ Hybrid pipelines ]: a native prefix, then the user's own transforms and
collate_fn in the workers, seeded per sample (per batch for the collate)."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import random
import typing
from unittest import mock

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps
from scipy import stats
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets
from torchvision import transforms as T
from torchvision.transforms import v2

import jpegloader
from jpegloader.pipelines import CLASSIFICATION, DecodeOptions
from jpegloader.pipelines.classification.draw import draw, replay
from jpegloader.pipelines.random_stream import epoch_seed
from tests.conftest import IMAGENET_MEAN, IMAGENET_STD, shared, variants, write_image_folder
from tests.recipes import dle_fast_collate

timm = pytest.importorskip("timm", reason="timm is a test dependency (the [test] extra)")


class Solarize:
    """A user's own PIL transform."""

    def __call__(self, image):
        return ImageOps.solarize(image, 100)


def _norm():
    return [T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]


def deit_train():
    from timm.data import create_transform
    return create_transform(64, is_training=True, color_jitter=0.4,
                            auto_augment="rand-m9-mstd0.5", interpolation="bicubic",
                            re_prob=0.25)


def tv_v2_train():
    return T.Compose([T.RandomResizedCrop(48), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
                      T.PILToTensor(), T.ConvertImageDtype(torch.float),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD), T.RandomErasing(0.5)])


HYBRIDS = {
    "deit-train": deit_train,
    "tv-resnet50-v2": tv_v2_train,
    "user-class": lambda: T.Compose([T.Resize(56), T.CenterCrop(48), Solarize(), *_norm()]),
    "erasing-only": lambda: T.Compose([T.RandomResizedCrop(48), *_norm(),
                                       T.RandomErasing(0.7, value="random")]),
    "ends-in-user-tensor-op": lambda: T.Compose([T.RandomResizedCrop(40), T.ToTensor(),
                                                 T.Lambda(lambda x: x.flip(1))]),
}


@pytest.fixture(scope="module")
def files():
    return sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:48]


@pytest.mark.parametrize("name", HYBRIDS)
def test_hybrid_batches_equal_the_user_transform_replayed_with_the_same_seeds(files, name,
                                                                                tmp_path):
    root = tmp_path / "d"
    (root / "c").mkdir(parents=True)
    for f in files:
        (root / "c" / f.name).write_bytes(f.read_bytes())
    ds = datasets.ImageFolder(str(root), HYBRIDS[name]())
    lowering = CLASSIFICATION.lower(ds, {"batch_size": len(ds)})
    assert lowering.ok and lowering.split["yours"], lowering.checks
    decoder = CLASSIFICATION.decoder(lowering, DecodeOptions(dct_scaling=False))
    program = decoder.program
    n = len(ds)
    arrays = tuple(np.zeros((n, *shape), dtype=torch.empty((), dtype=dt).numpy().dtype)
                   for shape, dt in decoder.layout)
    seed, indices = epoch_seed(99, 1), list(range(n))
    decoder.decode(indices, seed, arrays, "in the test")
    images = [Image.open(ds.samples[i][0]).convert("RGB") for i in indices]
    assert_replayed(program, arrays[0], images, seed, indices)


def assert_replayed(program, samples, images, seed: int, indices: list[int]) -> None:
    """Each of ``samples`` (the decoded batch's images) is the transform replayed on its
    opened image with the loader's draws: within 0.05 of a level on average, all but at
    most one identical."""
    d = draw(program, [im.width for im in images], [im.height for im in images], seed, indices)
    identical = 0
    for k, image in enumerate(images):
        ref = replay(program, d, k, image, seed, indices[k])
        diff = (torch.from_numpy(samples[k]).double() - ref.double()).abs().mean().item()
        identical += diff == 0
        assert diff < 0.05, (k, diff)
    assert identical >= len(images) - 1, f"{identical} of {len(images)} identical"


def _batches(loader):
    return [[t.clone() for t in b] for b in loader]


def test_hybrid_is_the_same_for_any_num_workers_and_keeps_the_main_rng(small_folder):
    ds = datasets.ImageFolder(str(small_folder), tv_v2_train())
    runs = []
    for workers in (0, 2):
        torch.manual_seed(4)
        state = (random.getstate(), np.random.get_state(), torch.get_rng_state())
        loader = jpegloader.DataLoader(ds, batch_size=5, shuffle=True, num_workers=workers)
        runs.append(_batches(loader))
        # in the main process too, the user's generators are left as they were (apart
        # from the loader's own draws, the same with any num_workers)
        if workers == 0:
            after = (random.getstate(), np.random.get_state()[1], torch.get_rng_state())
            assert after[0] == state[0] and np.array_equal(after[1], state[1][1])
    for a, b in zip(*runs, strict=True):
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def _op_counts(loader, recorder_target, attribute):
    """How often each op ran while iterating ``loader`` (built before: building it runs
    the transform once on a synthetic image)."""
    counts = {}
    real = recorder_target.__dict__[attribute] if isinstance(recorder_target, type) else \
        getattr(recorder_target, attribute)

    def record(*args, **kwargs):
        out = real(*args, **kwargs)
        names = [step[0] for step in out] if attribute == "_drawn" else \
            [op.name for op in out] if attribute == "choice" else \
            [args[0].name if hasattr(args[0], "name") else args[1]]
        for name in names:
            counts[name] = counts.get(name, 0) + 1
        return out
    with mock.patch.object(recorder_target, attribute, record):
        for _ in loader:
            pass
    return counts


def _same_distribution(a: dict, b: dict) -> float:
    names = sorted(set(a) | set(b))
    table = np.array([[a.get(k, 0) for k in names], [b.get(k, 0) for k in names]])
    return stats.chi2_contingency(table)[1]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return write_image_folder(tmp_path_factory.mktemp("tiny") / "d", 600, size=(48, 40))


def test_trivial_augment_op_frequencies_match_native(tiny_folder):
    """Counted as each loader applies them: torchvision's _apply_op in torch's loader;
    in ours, the operations its TrivialAugmentWide draws (NOTE [ Your RandAugment in C ]:
    warps through _apply_op, photometric steps in C)."""
    import torchvision.transforms.autoaugment as aa

    from jpegloader.pipelines.classification import auto_augment
    ds = datasets.ImageFolder(str(tiny_folder), T.Compose([T.RandomResizedCrop(32),
                                                           T.TrivialAugmentWide(),
                                                           T.PILToTensor()]))
    torch.manual_seed(1)
    ours = _op_counts(jpegloader.DataLoader(ds, batch_size=50, num_workers=0), auto_augment,
                      "_drawn")
    torch.manual_seed(1)
    native = _op_counts(TorchDataLoader(ds, batch_size=50, num_workers=0), aa, "_apply_op")
    assert sum(ours.values()) == sum(native.values()) == len(ds)
    assert _same_distribution(ours, native) > 0.001, (ours, native)


def test_timm_rand_augment_op_frequencies_match_native(tiny_folder):
    """Counted as the operations each loader's RandAugment chooses (np.random.choice):
    ours does timm's photometric ones on the bytes, not through AugmentOp.__call__
    (NOTE [ Your timm RandAugment in C ])."""
    from timm.data.auto_augment import rand_augment_transform
    ra = rand_augment_transform("rand-m9-mstd0.5", {"translate_const": 14,
                                                     "img_mean": (124, 116, 104)})
    ds = datasets.ImageFolder(str(tiny_folder), T.Compose([T.RandomResizedCrop(32), ra,
                                                           T.PILToTensor()]))
    torch.manual_seed(2)
    ours = _op_counts(jpegloader.DataLoader(ds, batch_size=50, num_workers=0), np.random,
                      "choice")
    random.seed(2)
    np.random.seed(2)
    native = _op_counts(TorchDataLoader(ds, batch_size=50, num_workers=0), np.random,
                        "choice")
    assert sum(ours.values()) == sum(native.values())
    assert _same_distribution(ours, native) > 0.001, (ours, native)


def test_random_erasing_rate_follows_p(tiny_folder):
    ds = datasets.ImageFolder(str(tiny_folder), T.Compose([
        T.RandomResizedCrop(32), T.ToTensor(), T.RandomErasing(0.3, value=-1.0)]))
    images = torch.cat([b[0] for b in jpegloader.DataLoader(ds, batch_size=100)])
    erased = int((images == -1.0).flatten(1).any(dim=1).sum())
    assert stats.binomtest(erased, len(ds), 0.3).pvalue > 0.001, erased


# -- collate functions ----------------------------------------------------------------------
def _eval_folder(folder, tail):
    return datasets.ImageFolder(str(folder), T.Compose([T.Resize(40), T.CenterCrop(32),
                                                        *tail]))


def _equal_batches(ds, collate, workers=2):
    ours = list(jpegloader.DataLoader(ds, batch_size=6, num_workers=workers, collate_fn=collate,
                                      decode="exact"))
    native = list(TorchDataLoader(ds, batch_size=6, collate_fn=collate))
    assert len(ours) == len(native)
    for a, b in zip(ours, native, strict=True):
        assert type(a) is type(b)
        if isinstance(a, dict):
            a, b = list(a.values()), list(b.values())
        for x, y in zip(a, b, strict=True):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert (x.double() - y.double()).abs().mean() <= 1.0


def test_timm_fast_collate_is_done_natively_and_equals_native(small_folder):
    from timm.data.loader import fast_collate
    ds = _eval_folder(small_folder, [timm.data.transforms.MaybePILToTensor()])
    verdict = jpegloader.explain(ds, batch_size=6, collate_fn=fast_collate)
    assert verdict.accelerated and "done natively" in verdict.report()
    _equal_batches(ds, fast_collate)


def test_nvidia_fast_collate_on_pil_images_is_done_natively(small_folder):
    collate = functools.partial(dle_fast_collate, torch.contiguous_format)
    ds = _eval_folder(small_folder, [])
    assert jpegloader.explain(ds, batch_size=6, collate_fn=collate).split["collate"] \
        == "dle_fast_collate natively"
    _equal_batches(ds, collate)
    # channels_last batches have other strides: that collate_fn is called, in the workers
    last = functools.partial(dle_fast_collate, torch.channels_last)
    assert "in the workers" in jpegloader.explain(ds, batch_size=6,
                                                  collate_fn=last).split["collate"]
    batch = next(iter(jpegloader.DataLoader(ds, batch_size=6, collate_fn=last, num_workers=1)))
    assert batch[0].is_contiguous(memory_format=torch.channels_last)


def dict_collate(batch):
    return {"images": torch.stack([x for x, _ in batch]),
            "labels": torch.tensor([t for _, t in batch])}


def test_a_collate_returning_other_structures_comes_back_through_the_queue(small_folder):
    ds = _eval_folder(small_folder, _norm())
    assert "result queue" in jpegloader.explain(ds, batch_size=6,
                                                collate_fn=dict_collate).report()
    _equal_batches(ds, dict_collate, workers=2)
    _equal_batches(ds, dict_collate, workers=0)


class Pair(typing.NamedTuple):
    image: torch.Tensor
    label: torch.Tensor


def pair_collate(batch):
    return Pair(torch.stack([x for x, _ in batch]), torch.tensor([t for _, t in batch]))


class Batch(list):
    """A list of the user's own kind."""


def own_list_collate(batch):
    return Batch([torch.stack([x for x, _ in batch]), torch.tensor([t for _, t in batch])])


@pytest.mark.parametrize("collate", [pair_collate, own_list_collate])
@pytest.mark.parametrize("context", variants(["fork", "spawn"], keep=["fork"]))
def test_a_collate_returning_a_namedtuple_or_its_own_list_comes_back_as_such(
        small_folder, collate, context):
    # the ring carries its tensors; the batch is rebuilt as the collate_fn's own type,
    # also through device= and pin_memory=True (emulated), as torch's loader gives it
    from jpegloader.bench.pinning import emulated_pinning
    ds = _eval_folder(small_folder, _norm())
    assert "result queue" not in jpegloader.explain(ds, batch_size=6,
                                                    collate_fn=collate).report()
    _equal_batches(ds, collate, workers=0)
    native = list(TorchDataLoader(ds, batch_size=6, collate_fn=collate))
    for kwargs in ({}, {"device": "cpu"}, {"pin_memory": True}):
        with emulated_pinning() if kwargs.get("pin_memory") else contextlib.nullcontext():
            ours = list(jpegloader.DataLoader(ds, batch_size=6, num_workers=2,
                                              collate_fn=collate, decode="exact",
                                              multiprocessing_context=context, **kwargs))
        assert [type(b) for b in ours] == [type(b) for b in native], kwargs
        for a, b in zip(ours, native, strict=True):
            assert torch.equal(a[1], b[1])
            assert (a[0].double() - b[0].double()).abs().mean() <= 1.0
            if isinstance(b, Pair):
                assert torch.equal(a.label, b.label)


@dataclasses.dataclass
class Held:
    images: torch.Tensor
    labels: list


class OwnPin:
    """An object with its own pin_memory and to, as DETR's NestedTensor has."""

    def __init__(self, images, pinned=False):
        self.images, self.pinned = images, pinned

    def pin_memory(self):
        return OwnPin(self.images.pin_memory(), True)

    def to(self, device, non_blocking=False):
        return OwnPin(self.images.to(device), self.pinned)


def _stacked(batch):
    return torch.stack([x for x, _ in batch])


STRUCTURES = {
    "dataclass": lambda b: Held(_stacked(b), [t for _, t in b]),
    "dict of lists": lambda b: {"images": [x for x, _ in b], "labels": [t for _, t in b]},
    "nested tuples": lambda b: ((_stacked(b),), (torch.tensor([t for _, t in b]), "names")),
    "own pin_memory": lambda b: OwnPin(_stacked(b)),
}


def _structure_collate(name, batch):
    return STRUCTURES[name](batch)


def _same_structure(a, b):
    assert type(a) is type(b)
    if isinstance(a, torch.Tensor):
        assert a.shape == b.shape and (a.double() - b.double()).abs().mean() <= 1.0
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_structure(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same_structure(a[k], b[k])
    elif dataclasses.is_dataclass(a) or isinstance(a, OwnPin):
        _same_structure(vars(a), vars(b))
    else:
        assert a == b


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_every_structure_a_collate_returns_comes_back_as_torchs_loader_gives_it(
        small_folder, name):
    from jpegloader.bench.pinning import emulated_pinning
    ds = _eval_folder(small_folder, _norm())
    collate = functools.partial(_structure_collate, name)
    for pinned in (False, True):
        with emulated_pinning() if pinned else contextlib.nullcontext():
            native = list(TorchDataLoader(ds, batch_size=6, num_workers=2, collate_fn=collate,
                                          pin_memory=pinned))
            for workers in (0, 2):
                ours = list(jpegloader.DataLoader(ds, batch_size=6, num_workers=workers,
                                                  collate_fn=collate, decode="exact",
                                                  pin_memory=pinned))
                assert len(ours) == len(native)
                for a, b in zip(ours, native, strict=True):
                    _same_structure(a, b)


class MixCut:
    def __init__(self, classes):
        self.mix = v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=classes),
                                    v2.CutMix(alpha=1.0, num_classes=classes)])

    def __call__(self, batch):
        return self.mix(*torch.utils.data.default_collate(batch))


def test_mixup_cutmix_collate_keeps_structure_and_distribution(tiny_folder):
    ds = datasets.ImageFolder(str(tiny_folder), T.Compose([T.RandomResizedCrop(32), *_norm()]))
    collate = MixCut(len(ds.classes))
    torch.manual_seed(0)
    ours = list(jpegloader.DataLoader(ds, batch_size=20, num_workers=2, collate_fn=collate))
    torch.manual_seed(0)
    native = list(TorchDataLoader(ds, batch_size=20, num_workers=2, collate_fn=collate))
    for a, b in zip(ours, native, strict=True):
        assert [(t.dtype, t.shape) for t in a] == [(t.dtype, t.shape) for t in b]
        assert torch.allclose(a[1].sum(dim=1), torch.ones(len(a[1])))
    top = [torch.cat([b[1].max(dim=1).values for b in run]).numpy() for run in (ours, native)]
    assert stats.ks_2samp(*top).pvalue > 0.001


# -- the split, and where it does not pay ----------------------------------------------------
def test_the_split_is_named_everywhere(small_folder):
    ds = datasets.ImageFolder(str(small_folder), tv_v2_train())
    verdict = jpegloader.explain(ds, batch_size=4, collate_fn=MixCut(3))
    assert verdict.accelerated
    assert verdict.split["yours"] == ["TrivialAugmentWide", "RandomErasing"]
    assert "RandomResizedCrop(48x48, bilinear)" in verdict.split["native"]
    assert verdict.split["collate"] == "MixCut in the workers"
    # in the order they run: the tensor stage runs natively between the two of yours
    assert "; yours: TrivialAugmentWide; native: PILToTensor" in verdict.split_text()
    assert verdict.split_text().endswith("; yours: RandomErasing; collate: MixCut in the "
                                         "workers")


def test_a_plain_function_of_yours_is_named(small_folder):
    def sharpen_a_little(image):
        return image
    ds = datasets.ImageFolder(str(small_folder), T.Compose([
        T.RandomResizedCrop(32), sharpen_a_little, functools.partial(sharpen_a_little),
        T.ToTensor()]))
    verdict = jpegloader.explain(ds, batch_size=2)
    assert verdict.accelerated, verdict.report()
    name = "test_a_plain_function_of_yours_is_named.<locals>.sharpen_a_little"
    assert verdict.split["yours"] == [name, name], verdict.split


def test_decode_alone_native_falls_back_saying_why(small_folder):
    ds = datasets.ImageFolder(str(small_folder), T.Compose([T.RandAugment(),
                                                            T.RandomResizedCrop(32),
                                                            T.ToTensor()]))
    verdict = jpegloader.explain(ds, batch_size=4)
    assert not verdict.accelerated
    assert "decode alone" in verdict.summary() and "RandAugment" in verdict.summary()


class Broken:
    """Works once (the loader's dry run, when it is built), then fails."""

    def __init__(self):
        self.calls = 0

    def __call__(self, image):
        self.calls += 1
        if self.calls > 1:
            raise KeyError("no such thing")
        return image


def test_an_error_in_your_transform_names_it_the_sample_and_the_worker(small_folder):
    ds = datasets.ImageFolder(str(small_folder), T.Compose([T.RandomResizedCrop(32), Broken(),
                                                            T.ToTensor()]))
    with pytest.raises(KeyError) as info:
        list(jpegloader.DataLoader(ds, batch_size=4, num_workers=2))
    assert "your Broken for sample" in str(info.value) and "worker process" in str(info.value)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dle_efficientnet_autoaugment_then_fast_collate(num_workers):
    """NVIDIA DeepLearningExamples' EfficientNet training: RandomResizedCrop(224,
    bicubic), flip and AutoAugment on PIL images, then fast_collate stacking uint8.
    The fast_collate runs as the user's code on the AutoAugment's PIL images (it failed
    at the first batch with "data type 'RGB' not understood"); batches have torch's
    structure, dtypes and labels, for 0 and 2 workers."""
    root = shared("imagenet-sample")
    transform = T.Compose([T.RandomResizedCrop(224, interpolation=T.InterpolationMode.BICUBIC),
                           T.RandomHorizontalFlip(), T.AutoAugment()])
    ds = datasets.ImageFolder(str(root), transform)
    collate = functools.partial(dle_fast_collate, torch.contiguous_format)
    ds_small = torch.utils.data.Subset(ds, list(range(0, 334, 10)))
    loader = jpegloader.DataLoader(ds_small, batch_size=8, num_workers=num_workers,
                                   collate_fn=collate, decode="exact",
                                   generator=torch.Generator().manual_seed(2))
    assert loader.eligibility.accelerated, loader.eligibility.report()
    assert "AutoAugment" in loader.eligibility.split_text()
    ours = list(loader)
    native = list(TorchDataLoader(ds_small, batch_size=8, collate_fn=collate))
    assert len(ours) == len(native)
    for (a, la), (b, lb) in zip(ours, native, strict=True):
        assert a.dtype == b.dtype == torch.uint8 and a.shape == b.shape
        assert torch.equal(la, lb)
