"""transformers' Trainer builds its own loader and passes it through Accelerate's
prepare().  With the real transformers on 2 CPU ranks (torchrun), a script run under
`python -m jpegloader run` trains on jpegloader's loader, options kept, each rank on
exactly the batches torch's loader gives it under the same Trainer."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations import script_env, two_class_folder

pytest.importorskip("transformers", reason="needs transformers (a test dependency)")

SCRIPT = Path(__file__).with_name("transformers_script.py")


def test_trainer_under_run_trains_on_jpegloader_with_torchs_batches(tmp_path):
    folder = two_class_folder(tmp_path / "data")
    env = script_env()
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node=2"]
    for label, command in (
            ("torch", [*torchrun, str(SCRIPT)]),
            ("run", [*torchrun, "-m", "jpegloader", "run", "--decode", "exact", str(SCRIPT)])):
        done = subprocess.run([*command, str(folder), str(tmp_path), label], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stderr[-4000:]
    runs = {label: [json.loads((tmp_path / f"{label}-rank{r}.json").read_text())
                    for r in (0, 1)] for label in ("torch", "run")}
    for rank in (0, 1):
        got, want = runs["run"][rank], runs["torch"][rank]
        assert got[0] == ["jpegloader.dataloader.loader", True, "exact"], got[0]
        assert want[0][:2] == ["torch.utils.data.dataloader", False]
        assert got[1:] == want[1:], f"rank {rank}: other batches than torch's loader gives"
    assert runs["run"][0][1:] != runs["run"][1][1:]
