"""Accelerate's prepare() rebuilds a loader as torch's, inside its DataLoaderShard.  With
the real Accelerate on 2 CPU processes (torchrun): jpegloader's adapter keeps the loader
accelerated with its options, and `python -m jpegloader run` makes the rebuilt loader
jpegloader's; either way each process gets exactly the batches torch's loader gives it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations import (batch_record, script_dataset, script_env,
                                two_class_folder)

pytest.importorskip("accelerate", reason="needs Accelerate (a test dependency)")

SCRIPT = Path(__file__).with_name("accelerate_script.py")


def _torchs_batches(folder, rank: int) -> list:
    """What torch's loader gives a process after accelerator.prepare(), over the
    script's two epochs: Accelerate's own prepare_data_loader with the arguments
    Accelerator(cpu=True) passes on 2 processes, torch seeded as the script seeds it.
    Made here, in this process, instead of one more torchrun launch (rng_types=[]:
    with one seed everywhere, there is nothing to synchronise); it equalled the
    torchrun of torch's loader side by side."""
    import torch
    from accelerate.data_loader import prepare_data_loader
    ds = script_dataset(folder)
    torch.manual_seed(0)
    loader = prepare_data_loader(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True),
                                 torch.device("cpu"), num_processes=2, process_index=rank,
                                 put_on_device=False, rng_types=[])
    seen = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        seen += [batch_record(images, labels) for images, labels in loader]
    return seen


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("accelerate")
    folder = two_class_folder(root / "data")
    env = script_env()
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node=2"]
    out = {"torch": [_torchs_batches(folder, r) for r in (0, 1)]}
    for name, command in (
            ("adapter", [*torchrun, str(SCRIPT), str(folder), str(root), "adapter"]),
            ("run", [*torchrun, "-m", "jpegloader", "run", "--decode", "exact", str(SCRIPT),
                     str(folder), str(root / "run"), "torch"]),
            # the script's own jpegloader.DataLoader(decode="exact"), plain prepare()
            ("plain", [*torchrun, "-m", "jpegloader", "run", str(SCRIPT), str(folder),
                       str(root / "plain"), "plain"])):
        where = root / name if name in ("run", "plain") else root
        where.mkdir(exist_ok=True)
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-4000:]
        label = "torch" if name == "run" else name
        out[name] = [json.loads((where / f"{label}-rank{r}.json").read_text()) for r in (0, 1)]
    return out


@pytest.mark.parametrize("how", ["adapter", "run", "plain"])
def test_each_process_gets_torchs_batches_accelerated(runs, how):
    for rank in (0, 1):
        got, want = runs[how][rank], runs["torch"][rank]
        assert got[0] == ["jpegloader.dataloader.loader", True, "exact"], (how, rank, got[0])
        assert got[1:] == want, f"{how}, rank {rank}: other batches than torch's"
    assert runs[how][0][1:] != runs[how][1][1:]


def test_a_loader_that_accelerate_rebuilds_as_torchs_is_said_at_the_rebuild(
        small_folder, caplog, monkeypatch):
    # NOTE [ A loader a trainer threw away ]: plain accelerator.prepare() rebuilds ours
    import gc

    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from torchvision import datasets

    import jpegloader
    from jpegloader.dataloader import trainers
    from jpegloader.integrations import accelerate as jl_accelerate
    from tests.conftest import eval_transform
    monkeypatch.setattr(trainers, "_said", False)
    # a process without Ray Train, whichever test imported it into this one before
    monkeypatch.delitem(sys.modules, "ray.train.torch", raising=False)
    ds = datasets.ImageFolder(str(small_folder), eval_transform())

    def said():
        gc.collect()
        return [r.getMessage() for r in caplog.records if "without acceleration" in
                r.getMessage()]

    with caplog.at_level("WARNING", logger="jpegloader"):
        unused = jpegloader.DataLoader(ds, batch_size=4)
        del unused
        assert not said()  # no trainer set up: nothing to say
        accelerator = Accelerator(cpu=True)
        try:
            kept = jl_accelerate.prepare(accelerator, jpegloader.DataLoader(ds, batch_size=4))
            iterated = jpegloader.DataLoader(ds, batch_size=4)
            next(iter(iterated))
            del iterated
            assert not said()  # handed to the adapter, or used
            # the script keeps its loaders: the WARNING comes at prepare(), one per loader
            train = jpegloader.DataLoader(ds, batch_size=4, decode="exact")  # TRAIN
            val = jpegloader.DataLoader(ds, batch_size=2)  # VAL
            rebuilt_train, rebuilt_val = accelerator.prepare(train, val)
            messages = said()
            assert len(messages) == 2, messages
            for message, mark in zip(messages, ("# TRAIN", "# VAL")):
                line = next(k for k, text in enumerate(Path(__file__).read_text()
                                                       .splitlines(), 1) if mark in text)
                assert message.startswith(f"jpegloader.DataLoader built at {__file__}:{line} "
                                          f"over ImageFolder({small_folder}, ")
                assert "accelerator.prepare() rebuilt it as torch's DataLoader" in message
                assert "jpegloader.integrations.accelerate.prepare(accelerator, ...)" in message
                assert not message.startswith("jpegloader: ")  # the logger's name says it
            del train, val
            assert len(said()) == 2  # said at the rebuild, not again when dropped
            assert kept.base_dataloader.eligibility.accelerated
            assert not isinstance(rebuilt_train.base_dataloader, jpegloader.DataLoader)
            assert not isinstance(rebuilt_val.base_dataloader, jpegloader.DataLoader)
        finally:
            AcceleratorState._reset_state(True)
