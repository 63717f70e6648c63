"""python -m jpegloader.diagnose on small training scripts written the way users
write them: argparse, a main() under ``if __name__ == "__main__":``, a
torch.distributed guard, torch's DataLoader or HabanaDataLoader."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from jpegloader import diagnose
from tests.conftest import REPO

IMAGENET_SCRIPT = '''
import argparse
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

def build_loaders(args):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_set = datasets.ImageFolder(args.data, transforms.Compose([
        transforms.RandomResizedCrop(64), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), normalize]))
    val_set = datasets.ImageFolder(args.data, transforms.Compose([
        transforms.GaussianBlur(3), transforms.Resize(72), transforms.CenterCrop(64),
        transforms.ToTensor(), normalize]), target_transform=lambda t: t)
    sampler = None
    if args.distributed:
        sampler = torch.utils.data.distributed.DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None,  # TRAIN
                              sampler=sampler, num_workers=args.workers, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=args.batch_size,  # VAL
                                             num_workers=args.workers,
                                             collate_fn=lambda b: torch.utils.data.default_collate(b))
    return train_loader, val_loader

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    args.distributed = dist.is_available() and dist.is_initialized()
    train_loader, val_loader = build_loaders(args)
    seen = 0
    for epoch in range(args.epochs):
        for images, target in train_loader:
            seen += len(target)
    print("TRAINED", seen)

if __name__ == "__main__":
    main()
'''

HABANA_SCRIPT = '''
import sys
from torchvision import datasets, transforms
import habana_dataloader

if __name__ == "__main__":
    ds = datasets.ImageFolder(sys.argv[1], transforms.Compose([
        transforms.Resize(72), transforms.CenterCrop(64), transforms.ToTensor()]))
    loader = habana_dataloader.HabanaDataLoader(ds, batch_size=4, num_workers=2)  # HABANA
    print("BATCHES", sum(1 for _ in loader))
    sys.exit(0)
'''

NO_LOADER_SCRIPT = '''
import torch
print("nothing to load", torch.ones(2).sum().item())
'''

CRASHING_SCRIPT = '''
import sys
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
ds = datasets.ImageFolder(sys.argv[1], transforms.ToTensor())
loader = DataLoader(ds, batch_size=2)
raise RuntimeError("CUDA out of memory (simulated)")  # CRASH
'''

EXITING_SCRIPT = '''
import sys
sys.exit(3)
'''


def _at(script, marker: str) -> str:
    """file:line of the line holding ``marker`` in ``script``."""
    lines = script.read_text().splitlines()
    return f"{script}:{next(i for i, line in enumerate(lines, 1) if marker in line)}"


@pytest.fixture
def scripts(tmp_path):
    paths = {}
    for name, text in [("train_imagenet.py", IMAGENET_SCRIPT), ("habana.py", HABANA_SCRIPT),
                       ("idle.py", NO_LOADER_SCRIPT), ("crash.py", CRASHING_SCRIPT),
                       ("exit3.py", EXITING_SCRIPT)]:
        paths[name] = tmp_path / name
        paths[name].write_text(textwrap.dedent(text))
    return paths


def _diagnose(capsys, *argv) -> tuple[int, str]:
    code = diagnose.main([str(a) for a in argv])
    return code, capsys.readouterr().out


def test_imagenet_script_no_run_reports_both_loaders(scripts, small_folder, capsys):
    script = scripts["train_imagenet.py"]
    code, out = _diagnose(capsys, "--no-run", "--json", script.with_suffix(".json"), script,
                          small_folder, "--workers", "2")
    assert code == diagnose.EXIT_FALLBACK
    assert "stopped at the first batch request" in out and "TRAINED" not in out
    report = json.loads(script.with_suffix(".json").read_text())
    train, val = report["loaders"]
    assert train["built_at"] == _at(script, "# TRAIN")
    assert val["built_at"] == _at(script, "# VAL")
    assert train["accelerated"] and train["pipeline"] == "classification"
    assert train["class"] == "torch.utils.data.dataloader.DataLoader"
    assert train["arguments"]["num_workers"] == 2 and train["arguments"]["pin_memory"] is True
    assert not val["accelerated"]
    failed = [r for r in val["rules"] if not r["passed"]]
    assert [r["rule"] for r in failed] == ["dataset.target_transform", "dataset.transform"]
    # Every blocker is named, not only the first; no hint changes the recipe.
    assert "GaussianBlur" in failed[1]["detail"] and "decode alone" in failed[1]["detail"]
    assert all("runs on torch's DataLoader" in r["change"] for r in failed)
    assert all(r["change"] is None for r in val["rules"] if r["passed"])
    # the collate_fn would run in the workers
    assert [r for r in val["rules"] if r["rule"] == "loader.collate_fn"][0]["passed"]
    assert train["split"]["native"][:2] == ["decode", "RandomResizedCrop(64x64, bilinear)"]
    # The human report says the same.
    # torch's own class: the verdict says what jpegloader would do, and nothing claims
    # this loader runs accelerated as it stands
    assert "verdict:   ACCELERATES AS jpegloader.DataLoader (classification pipeline); " \
        "built as torch's, it runs on torch's DataLoader" in out
    assert "verdict:   ACCELERATED" not in out and "FALLBACK (2 rules failed)" in out
    assert "to accelerate it: build jpegloader.DataLoader" in out


def test_rates_keep_three_figures_so_the_ratio_can_be_read_off_them():
    assert [diagnose._rate(x) for x in (4.26, 1.28, 0.05, 57.31, 123.4, 1957.2)] == \
        ["4.26", "1.28", "0.05", "57.3", "123", "1,957"]


def test_script_runs_unchanged_to_completion(scripts, small_folder, capsys):
    code, out = _diagnose(capsys, scripts["train_imagenet.py"], small_folder, "--epochs", "2")
    assert "TRAINED 48" in out  # 24 images x 2 epochs through the script's own loader
    assert "the script ran to completion" in out
    assert code == diagnose.EXIT_FALLBACK


def test_habana_loader_is_intercepted_and_measured(scripts, small_folder, capsys):
    script = scripts["habana.py"]
    code, out = _diagnose(capsys, "--batches", "3", "--compare", "--json", "-", script,
                          small_folder)
    assert code == diagnose.EXIT_ACCELERATED
    report = json.loads(out)  # the script's own prints went to stderr
    assert report["schema"] == diagnose.SCHEMA and report["outcome"]["status"] == "completed"
    (loader,) = report["loaders"]
    assert loader["class"] == "habana_dataloader.HabanaDataLoader"
    assert loader["built_at"] == _at(script, "# HABANA")
    m = loader["measured"]
    assert m["batches"] == 3 and m["jpegloader"]["img_per_s"] > 0
    assert m["native"]["img_per_s"] > 0 and m["ratio"] > 0


def test_json_schema_is_stable(scripts, small_folder, capsys):
    code, out = _diagnose(capsys, "--no-run", "--json", "-", scripts["train_imagenet.py"],
                          small_folder)
    report = json.loads(out)
    assert set(report) == {"schema", "script", "argv", "outcome", "loaders", "exit_status"}
    assert set(report["outcome"]) == {"status", "exit_code", "error", "where"}
    for loader in report["loaders"]:
        assert set(loader) == {"index", "built_at", "class", "dataset", "transform", "split",
                               "arguments", "accelerated", "pipeline", "rules", "measured"}
        for rule in loader["rules"]:
            assert set(rule) == {"rule", "passed", "detail", "change"}
    assert report["exit_status"] == code


def test_script_without_a_loader(scripts, capsys):
    code, out = _diagnose(capsys, scripts["idle.py"])
    assert code == diagnose.EXIT_NO_LOADER
    assert "built no DataLoader" in out and "nothing to load 2.0" in out


def test_crashing_script_still_reports_its_loaders(scripts, small_folder, capsys):
    script = scripts["crash.py"]
    code, out = _diagnose(capsys, "--json", "-", script, small_folder)
    assert code == diagnose.EXIT_SCRIPT_FAILED
    report = json.loads(out)
    assert report["outcome"]["status"] == "failed"
    assert report["outcome"]["error"] == "RuntimeError: CUDA out of memory (simulated)"
    assert report["outcome"]["where"] == _at(script, "# CRASH")
    assert len(report["loaders"]) == 1 and report["loaders"][0]["accelerated"] is False


def test_sys_exit_status_is_reported(scripts, capsys):
    code, out = _diagnose(capsys, "--json", "-", scripts["exit3.py"])
    assert code == diagnose.EXIT_SCRIPT_FAILED
    assert json.loads(out)["outcome"]["exit_code"] == 3


def test_the_loader_classes_are_restored(scripts, small_folder, capsys):
    import torch.utils.data

    import habana_dataloader
    import jpegloader
    before = (torch.utils.data.DataLoader, habana_dataloader.HabanaDataLoader,
              jpegloader.DataLoader)
    _diagnose(capsys, scripts["crash.py"], small_folder)
    assert (torch.utils.data.DataLoader, habana_dataloader.HabanaDataLoader,
            jpegloader.DataLoader) == before


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jpegloader.diagnose", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)


def test_cli_help_and_usage_errors(tmp_path, capsys):
    shown = _cli("--help")  # the module runs as a program
    assert shown.returncode == 0 and "--no-run" in shown.stdout and "Exit status" in shown.stdout
    for args, said in (([tmp_path / "nope.py"], "no such script"),
                       (["--compare", tmp_path / "nope.py"], "--compare needs --batches")):
        with pytest.raises(SystemExit) as stop:  # argparse's errors, in this process
            diagnose.main([str(a) for a in args])
        assert stop.value.code == diagnose.EXIT_USAGE and said in capsys.readouterr().err


def test_cli_end_to_end(scripts, small_folder):
    done = _cli("--no-run", scripts["train_imagenet.py"], small_folder)
    assert done.returncode == diagnose.EXIT_FALLBACK, done.stderr
    assert "loader 0: torch.utils.data.dataloader.DataLoader" in done.stdout
    assert "loader 1:" in done.stdout and "FAIL  dataset.target_transform" in done.stdout
