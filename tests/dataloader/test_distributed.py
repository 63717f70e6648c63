"""Two ranks under torchrun (gloo, CPU) with DistributedSampler: each rank's batches
equal what torch's loader gives that rank, the shards cover the dataset as
DistributedSampler's padding says, and a rank's checkpoint resumes that rank."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from tests.conftest import REPO, write_image_folder

N = 25  # odd: DistributedSampler pads one index for two ranks


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unresolvable_host_name() -> list[str]:
    """A wrapper giving the ranks a host name that is not in /etc/hosts (a private UTS
    namespace; root only), as on a fresh machine: the ranks must not depend on it."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-u", "true"], capture_output=True, check=False).returncode != 0:
        return []
    return ["unshare", "-u", "sh", "-c", 'hostname jpegloader-unresolvable && exec "$@"', "sh"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="torchrun's gloo on Linux")
def test_two_ranks_under_torchrun(tmp_path):
    root = write_image_folder(tmp_path / "data", N)
    out = tmp_path / "out"
    out.mkdir()
    # Everything on the loopback address: the rendezvous, the agent and gloo's device,
    # so that no rank looks its machine's host name up.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}
    run = subprocess.run(
        [*_unresolvable_host_name(), sys.executable, "-m", "torch.distributed.run",
         "--nnodes=1", "--node-rank=0", "--master-addr=127.0.0.1",
         f"--master-port={_free_port()}", "--local-addr=127.0.0.1", "--nproc_per_node=2",
         "-m", "tests.dataloader.ddp_child", str(root), str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    for r in ranks:
        assert r["eval_labels_equal"] and r["eval_max_mean_abs_diff"] <= 0.5, r
        assert r["train_labels_equal"] and r["shapes_equal"], r
        assert r["resumed_equal"], r
    for epoch in range(2):
        shards = [r["indices"][epoch] for r in ranks]
        assert len(shards[0]) == len(shards[1]) == (N + 1) // 2
        together = sorted(shards[0] + shards[1])
        # every index once, and one of them twice (the padding)
        assert sorted(set(together)) == list(range(N)) and len(together) == N + 1
