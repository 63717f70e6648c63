"""python -m jpegloader run: an unchanged training script's loaders accelerated, and
jpegloader.patch() for a notebook (NOTE [ The global swap ] in dataloader/loader.py).
The scripts in tests/scripts reproduce the loader construction of torchvision's
classification reference and of pytorch/examples' ImageNet script."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch.utils.data
from torchvision import datasets

import jpegloader
from tests.conftest import REPO, eval_transform, write_image_folder

SCRIPTS = REPO / "tests" / "scripts"


@pytest.fixture(scope="module")
def split_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("imagenet-like")
    write_image_folder(root / "train", 12)
    write_image_folder(root / "val", 8, seed=5)
    return root


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jpegloader", "run", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("script, data_args", [
    ("torchvision_reference_train.py", ["--data-path", "{root}", "-j", "2"]),
    ("pytorch_examples_imagenet.py", ["{root}", "-j", "0"]),
])
def test_unchanged_scripts_run_accelerated(split_folder, script, data_args):
    args = [a.format(root=split_folder) for a in data_args]
    done = _run(str(SCRIPTS / script), *args)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("jpegloader: loader")]
    assert len(lines) == 2 and all("accelerated (classification pipeline" in x for x in lines), \
        done.stderr
    assert f"{script}:" in lines[0]  # where the script built it
    for record in map(json.loads, done.stdout.splitlines()):
        assert record["class"] == "jpegloader.dataloader.loader.DataLoader", record
        assert record["shape"] == [4, 3, 64, 64] and record["targets"] == 4


def test_run_passes_the_scripts_exit_status_and_options(tmp_path, split_folder):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, torch.utils.data, torchvision\n"
        "from torchvision import transforms as T\n"
        f"ds = torchvision.datasets.ImageFolder({str(split_folder / 'val')!r}, "
        "T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()]))\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=2)\n"
        "print(loader.decode, loader.on_error, sys.argv[1:])\n"
        "sys.exit(3)\n")
    done = _run("--decode", "exact", "--on-error", "skip", str(script), "a", "--b")
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "exact skip ['a', '--b']"
    assert "jpegloader: loader 0 built at" in done.stderr and "accelerated" in done.stderr


def test_a_loader_that_falls_back_says_why_in_one_line(tmp_path, split_folder):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch, torch.utils.data\n"
        "ds = torch.utils.data.TensorDataset(torch.zeros(4, 2))\n"
        "next(iter(torch.utils.data.DataLoader(ds, batch_size=2)))\n")
    done = _run(str(script))
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("jpegloader: loader 0"))
    assert "runs on torch's DataLoader: dataset.type: dataset is " in line


def test_a_loader_the_script_builds_as_jpegloaders_gets_its_line(tmp_path, split_folder):
    """Not only the loaders built through torch's name: the log says of every loader
    whether it accelerates, and over which dataset (two splits built at one line)."""
    script = tmp_path / "train.py"
    script.write_text(
        "import jpegloader, torchvision\n"
        "from torchvision import transforms as T\n"
        "def make(split):\n"
        f"    ds = torchvision.datasets.ImageFolder({str(split_folder)!r} + '/' + split, "
        "T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()]))\n"
        "    return jpegloader.DataLoader(ds, batch_size=2, decode='exact')\n"
        "for split in ('train', 'val'):\n"
        "    next(iter(make(split)))\n")
    done = _run(str(script))
    assert done.returncode == 0, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.startswith("jpegloader: loader")]
    assert len(lines) == 2, done.stderr
    for k, split, count in ((0, "train", 12), (1, "val", 8)):
        assert lines[k].startswith(f"jpegloader: loader {k} built at {script}:5 over "
                                   f"ImageFolder({split_folder / split}, {count} samples): "
                                   "accelerated (classification pipeline"), lines[k]


def test_patch_in_process_and_undo(split_folder):
    ds = datasets.ImageFolder(str(split_folder / "val"), eval_transform())
    original = torch.utils.data.DataLoader
    with jpegloader.patch(announce=False) as patched:
        loader = torch.utils.data.DataLoader(ds, batch_size=4)
        from torch.utils.data.dataloader import DataLoader as from_module
        assert from_module is torch.utils.data.DataLoader
        assert isinstance(loader, jpegloader.DataLoader) and loader.eligibility.accelerated
        assert isinstance(loader, original)
        assert len(loader) == 2 and sum(len(b[1]) for b in loader) == 8
        assert patched.loaders == [loader]
    assert torch.utils.data.DataLoader is original
    assert torch.utils.data.dataloader.DataLoader is original


def test_under_the_patch_every_torch_loader_is_a_torch_dataloader(split_folder):
    # Trainers shard what isinstance(x, torch.utils.data.DataLoader) accepts (Accelerate,
    # Lightning): a jpegloader.DataLoader built by name, and torch's own, must pass.
    ds = datasets.ImageFolder(str(split_folder / "val"), eval_transform())
    original = torch.utils.data.DataLoader
    ours, theirs = jpegloader.DataLoader(ds, batch_size=4), original(ds, batch_size=4)
    with jpegloader.patch(announce=False):
        patched_cls = torch.utils.data.DataLoader
        patched = patched_cls(ds, batch_size=4)
        for loader in (ours, theirs, patched):
            assert isinstance(loader, torch.utils.data.DataLoader)
            assert isinstance(loader, original)
        assert isinstance(patched, jpegloader.DataLoader)
        assert issubclass(jpegloader.DataLoader, patched_cls) and \
            issubclass(original, patched_cls)
        assert not isinstance(ds, patched_cls)


def test_the_patched_class_is_generic_as_torchs_is(split_folder):
    # Libraries imported under the patch subclass DataLoader[T] (torchdata's
    # StatefulDataLoader, which Accelerate imports when it is installed).
    from typing import TypeVar
    T = TypeVar("T")
    ds = datasets.ImageFolder(str(split_folder / "val"), eval_transform())
    with jpegloader.patch(announce=False):
        class StatefulLike(torch.utils.data.DataLoader[T]):
            pass
        loader = StatefulLike(ds, batch_size=4)
        assert loader.eligibility.accelerated and isinstance(loader, jpegloader.DataLoader)
        assert torch.utils.data.DataLoader[int] is not None


def test_the_patched_class_shows_the_real_signature_and_rebuilds_by_name(split_folder):
    # Lightning reads inspect.signature(type(loader).__init__) and rebuilds the loader
    # from its attributes, by name; torch's arguments reach torch's __init__ by keyword.
    import inspect
    ds = datasets.ImageFolder(str(split_folder / "val"), eval_transform())
    with jpegloader.patch(announce=False):
        cls = torch.utils.data.DataLoader
        names = list(inspect.signature(cls.__init__).parameters)
        assert names[:4] == ["self", "dataset", "batch_size", "shuffle"]
        assert {"sampler", "decode", "on_error", "device"} <= set(names)
        loader = cls(ds, batch_size=4, decode="exact")
        kwargs = {n: getattr(loader, n) for n in names[1:]
                  if n not in ("shuffle", "device", "prefetch_factor")
                  and hasattr(loader, n) and n != "batch_size"}
        kwargs["batch_sampler"] = loader.batch_sampler
        kwargs["sampler"] = None
        again = cls(**kwargs)
        assert again.decode == "exact" and again.eligibility.accelerated
        assert [b[1].tolist() for b in again] == [b[1].tolist() for b in loader]


def test_usage_errors(capsys):
    from jpegloader.__main__ import main  # in this process: the other tests run the program
    with pytest.raises(SystemExit) as stop:
        main(["run", "no-such-script.py"])
    assert stop.value.code == 2 and "no such script" in capsys.readouterr().err
    assert main([]) == 2 and "run [--decode" in capsys.readouterr().err


def test_run_patches_the_processes_a_script_starts_and_keeps_their_sitecustomize(tmp_path,
                                                                                 split_folder):
    # NOTE [ The patch follows the script's processes ]: a child Python started by the
    # script (as Lightning's ddp relaunch, spawn and torchrun do) is patched too, and a
    # sitecustomize the user already had still runs in it.
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import os\nos.environ['USERS_SITECUSTOMIZE_RAN'] = '1'\n")
    child = tmp_path / "child.py"
    child.write_text(
        "import os, sys\n"
        "if sys.argv[1:] == ['jpegloader-first']:\n"
        "    import jpegloader\n"
        "import torch.utils.data, torchvision\n"
        "from torchvision import transforms as T\n"
        f"ds = torchvision.datasets.ImageFolder({str(split_folder / 'val')!r}, "
        "T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()]))\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=2)\n"
        "print(type(loader).__module__, loader.decode, "
        "os.environ.get('USERS_SITECUSTOMIZE_RAN'))\n")
    script = tmp_path / "parent.py"
    script.write_text(
        "import subprocess, sys\n"
        "for first in ([], ['jpegloader-first']):\n"
        f"    print(subprocess.run([sys.executable, {str(child)!r}, *first], "
        "capture_output=True, text=True, check=True).stdout, end='')\n"
        # a process that never imports torch (Ray's daemons) does not import jpegloader
        "print(subprocess.run([sys.executable, '-c', 'import sys; "
        "print(sorted(set(sys.modules) & {\\'torch\\', \\'jpegloader\\'}))'], "
        "capture_output=True, text=True, check=True).stdout, end='')\n")
    env = {**__import__("os").environ,
           "PYTHONPATH": str(tmp_path / "site") + ":" + str(REPO / "src")}
    env.pop("JPEGLOADER_PATCH", None)
    done = subprocess.run([sys.executable, "-m", "jpegloader", "run", "--decode", "exact",
                           str(script)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["jpegloader.dataloader.loader", "exact", "1"] * 2 + ["[]"], \
        done.stdout
