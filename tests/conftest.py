"""Shared fixtures: the real-image corpus in ../shared/data (skipped cleanly when
absent) and small generated ImageFolders."""
from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms as T

REPO = Path(__file__).resolve().parents[1]
#: The real-image corpus: ../shared/data beside the checkout, or JPEGLOADER_TEST_DATA.
SHARED_DATA = Path(os.environ.get("JPEGLOADER_TEST_DATA") or REPO.parent / "shared" / "data")
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
_CORPUS = {
    "imagenet-sample": "an ImageFolder of real ImageNet JPEGs (class folders of *.JPEG)",
    "coco-sample": "real COCO val2017 JPEGs with their instances JSON",
    "edge-cases": "one folder per kind of unusual JPEG (cmyk, progressive, truncated, ...)",
}


#: The suite's slow tiers, by where their tests live: each gets its marker, so a
#: development run can leave them out (-m "not integration and not packaging"); the
#: default run and CI run them all (docs/reliability.md, "The suite's tiers").  A test
#: elsewhere that runs a trainer in subprocesses carries the marker itself.
TIERS = {"integration": ("tests/integrations/",),
         "packaging": ("tests/test_packaging.py", "tests/test_opencv_versions.py")}


#: a parametrized test's further cases: CI runs them all, the development lane leaves
#: them out (-m "not variant"), keeping the cases given to ``variants`` as ``keep``
VARIANT = pytest.mark.variant


def variants(cases, keep) -> list:
    """``cases`` for ``pytest.mark.parametrize``, each not in ``keep`` marked ``variant``."""
    return [case if case in keep else
            pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=VARIANT)
            for case in cases]


def pytest_collection_modifyitems(items):
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
        for marker, places in TIERS.items():
            if where.startswith(places):
                item.add_marker(marker)


def shared(sub: str) -> Path:
    path = SHARED_DATA / sub
    if not path.exists():
        what = _CORPUS.get(sub.split("/")[0], "part of the real-image corpus")
        pytest.skip(f"needs {path}: {what}. It lives in ../shared/data beside the checkout; "
                    "set JPEGLOADER_TEST_DATA=/path/to/data to use another copy")
    return path


def train_transform():
    return T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


def eval_transform():
    return T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


def to_255(t):
    """Undo Normalize: float pixels on the 0-255 scale."""
    import torch
    mean = torch.tensor(IMAGENET_MEAN).view(3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(3, 1, 1)
    return (t * std + mean) * 255


def whole_image_plans(sizes, out_size=None, scale: int = 1, image_sizes=None) -> np.ndarray:
    """C core plans that resample each whole image to out_size (width, height), or
    to its own size (an identity); sizes: (width, height) per sample as decoded at
    1/scale; image_sizes: the images' own sizes (default: sizes, right at scale 1)."""
    from jpegloader.decoders.jpeg import empty_plans
    plans = empty_plans(len(sizes))
    plans["scale_denom"] = scale
    for i, (w, h) in enumerate(sizes if image_sizes is None else image_sizes):
        plans["image_w"][i], plans["image_h"][i] = w, h
    for i, size in enumerate(sizes):
        for k, axis in enumerate("xy"):
            plans[axis]["in1"][i] = size[k]
            plans[axis]["src_size"][i] = size[k]
            plans[axis]["out_size"][i] = size[k] if out_size is None else out_size[k]
    return plans


def noisy_jpeg(width: int, height: int, seed: int, **save) -> bytes:
    """A JPEG of per-pixel noise (saved with Pillow's options ``save``; quality 95
    unless given): every pixel and chroma sample shows in what is decoded from it."""
    rng = np.random.default_rng(seed)
    out = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8)).save(
        out, "JPEG", quality=save.pop("quality", 95), **save)
    return out.getvalue()


def write_image_folder(root: Path, count: int, classes: int = 3, size=(160, 120),
                       seed: int = 37) -> Path:
    """A small ImageFolder of seeded random-texture JPEGs."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        d = root / f"c{i % classes}"
        d.mkdir(parents=True, exist_ok=True)
        w, h = size if i % 2 == 0 else (size[1], size[0])
        coarse = rng.uniform(0, 255, size=(h // 8 + 2, w // 8 + 2, 3)).astype(np.uint8)
        img = Image.fromarray(coarse).resize((w, h), Image.BICUBIC)
        img.save(d / f"img{i:03d}.jpg", quality=90)
    return root


#: What importing Ultralytics replaces process-wide (its utils/patches.py: PIL's
#: Image.open, which then raises ModuleNotFoundError for an unreadable file and tries to
#: pip-install pi-heif; torch.save); a test that imports it must not change later tests.
_PATCHED_BY_IMPORTS = ((Image, "open"), (torch, "save"))


@pytest.fixture(autouse=True)
def _globals_restored():
    saved = [(owner, name, getattr(owner, name)) for owner, name in _PATCHED_BY_IMPORTS]
    yield
    for owner, name, value in saved:
        setattr(owner, name, value)


@pytest.fixture
def small_folder(tmp_path):
    return write_image_folder(tmp_path / "data", 24)


def shm_entries() -> set[str]:
    """Names in /dev/shm (where a leaked shared-memory segment would show)."""
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def worker_pids() -> set[int]:
    """Live child processes of this test process, leaving out the helpers
    multiprocessing keeps for the whole session (resource tracker, forkserver)."""
    pids = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
        try:
            pids |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    helpers = (b"resource_tracker", b"forkserver")
    live = set()
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if not any(h in cmdline for h in helpers):
            live.add(pid)
    return live


def decode_natively(dataset, seed: int, decode: str = "exact"):
    """The classification pipeline run on all of ``dataset`` as one batch: (decoder, its
    filled arrays, the batch's report)."""
    import torch

    from jpegloader.pipelines import CLASSIFICATION, DecodeOptions
    lowering = CLASSIFICATION.lower(dataset, {"batch_size": len(dataset)})
    assert lowering.ok, lowering.checks
    decoder = CLASSIFICATION.decoder(lowering, DecodeOptions.from_loader(decode))
    n = len(dataset)
    arrays = tuple(np.zeros((n, *shape), dtype=torch.empty((), dtype=dt).numpy().dtype)
                   for shape, dt in decoder.layout)
    report = decoder.decode(list(range(n)), seed, arrays, "in the test")
    return decoder, arrays, report


def photo_folder(root: Path, count: int, classes: int = 1) -> Path:
    """An ImageFolder at ``root`` of the first ``count`` real imagenet-sample photos, dealt
    into ``classes`` classes (skips the test when the corpus is absent)."""
    for k, f in enumerate(sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:count]):
        (root / f"c{k % classes}").mkdir(parents=True, exist_ok=True)
        (root / f"c{k % classes}" / f.name).write_bytes(f.read_bytes())
    return root


def replayed(program, dataset, seed: int) -> list:
    """Each sample of ``dataset`` through ``program``'s draws replayed with torchvision on
    its PIL image (pipelines/classification/draw.py's replay)."""
    from jpegloader.pipelines.classification.draw import draw, replay
    images = [Image.open(path).convert("RGB") for path, _ in dataset.samples]
    d = draw(program, [im.width for im in images], [im.height for im in images], seed,
             list(range(len(images))))
    return [replay(program, d, k, image) for k, image in enumerate(images)]


def lower(transform):
    """The classification program of ``transform``; fails the test, listing every
    blocker, when it does not lower."""
    from jpegloader.pipelines.classification.lower import lower_transform
    program, checks = lower_transform(transform)
    assert program is not None, "\n".join(c.message for c in checks)
    return program


def blockers(transform) -> list[str]:
    """The messages of every failed check lowering ``transform`` gives."""
    from jpegloader.pipelines.classification.lower import lower_transform
    program, checks = lower_transform(transform)
    return [c.message for c in checks if not c.passed]



def assert_resumes_bit_identically(dataset, stop: int, resume_workers: int = 1,
                                   context=None, batch_size: int = 16) -> None:
    """A shuffled epoch interrupted after ``stop`` batches (2 workers) and resumed from
    its state_dict in a new loader (``resume_workers``, ``context``) gives the batches
    of the uninterrupted epoch, bit for bit."""
    import torch

    import jpegloader

    def loader(workers: int, ctx=None):
        return jpegloader.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                     num_workers=workers, multiprocessing_context=ctx,
                                     generator=torch.Generator().manual_seed(5))
    full = [b[0] for b in loader(2)]
    interrupted = loader(2)
    it = iter(interrupted)
    head = [next(it)[0] for _ in range(stop)]
    state = interrupted.state_dict()
    del it
    resumed = loader(resume_workers, context)
    resumed.load_state_dict(state)
    same = [torch.equal(a, b) for a, b in zip(head + [b[0] for b in resumed], full, strict=True)]
    assert all(same), same


# -- processes, for the tests that kill and wait for them ---------------------------------
def alive(pid: int) -> bool:
    """Running (a zombie left for an init that never reaps counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_gone(pids, seconds: float) -> float:
    """Seconds until every pid is gone; fails after ``seconds``."""
    start = time.monotonic()
    while any(alive(p) for p in pids):
        assert time.monotonic() - start < seconds, \
            f"still alive after {seconds} s: {[p for p in pids if alive(p)]}"
        time.sleep(0.05)
    return time.monotonic() - start


def can_mount_private_shm() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True,
                              timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
