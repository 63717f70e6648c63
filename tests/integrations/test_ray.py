"""Ray Train's prepare_data_loader rebuilds a loader as torch's when it adds its
DistributedSampler.  With the real Ray Train, TorchTrainer on 2 CPU workers:
jpegloader's adapter keeps the loader accelerated with its options (persistent_workers
too, which Ray drops), and each worker gets exactly the batches torch's loader gives it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations import script_env, two_class_folder

pytest.importorskip("ray.train", reason="needs Ray Train (a test dependency)")

SCRIPT = Path(__file__).with_name("ray_script.py")


def test_the_adapter_keeps_each_workers_loader_accelerated_with_torchs_batches(tmp_path):
    folder = two_class_folder(tmp_path / "data")
    env = script_env()
    runs = {}
    for how in ("torch", "adapter"):
        done = subprocess.run([sys.executable, str(SCRIPT), str(folder), str(tmp_path), how],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=400)
        assert done.returncode == 0, done.stderr[-4000:]
        runs[how] = [json.loads((tmp_path / f"{how}-rank{r}.json").read_text()) for r in (0, 1)]
    for rank in (0, 1):
        got, want = runs["adapter"][rank], runs["torch"][rank]
        assert got[0] == ["jpegloader.dataloader.loader", True, "exact", True], got[0]
        assert want[0][:2] == ["torch.utils.data.dataloader", False]
        assert got[1:] == want[1:], f"rank {rank}: other batches than torch's loader gives"
    assert runs["adapter"][0][1:] != runs["adapter"][1][1:]
