"""Fixtures and helpers of the sources' tests: a real S3-compatible server, tar
shards written in WebDataset's layout."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

#: samples per shard, as write_shards writes them by default
PER_SHARD = 100


def add_member(tar: tarfile.TarFile, name: str, payload: bytes) -> None:
    """A member ``name`` holding ``payload``."""
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def write_shards(samples: list[tuple[str, int]], out: Path, per_shard: int = PER_SHARD,
                 label: str = "cls") -> list[Path]:
    """WebDataset shards of (path, target) samples, keys in dataset order."""
    out.mkdir(parents=True, exist_ok=True)
    shards = []
    for s in range(0, len(samples), per_shard):
        shards.append(out / f"shard-{s // per_shard:06d}.tar")
        with tarfile.open(shards[-1], "w") as tar:
            for k, (path, target) in enumerate(samples[s:s + per_shard]):
                key = f"sample{s + k:06d}"
                add_member(tar, f"{key}.jpg", Path(path).read_bytes())
                if label == "cls":
                    add_member(tar, f"{key}.cls", str(target).encode())
                else:
                    add_member(tar, f"{key}.json", json.dumps({"label": target}).encode())
    return shards


@pytest.fixture
def s3_server():
    """A real S3-compatible server on localhost (moto's server mode), for the duration
    of a test: (endpoint URL, fsspec storage options)."""
    server_mod = pytest.importorskip("moto.server", reason="moto[server] is a test "
                                                           "dependency (the [test] extra)")
    pytest.importorskip("s3fs", reason="s3fs is a test dependency (the [test] extra)")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
    except Exception as e:  # noqa: BLE001 - the environment, not the code under test
        pytest.skip(f"the S3 server (moto) could not start on 127.0.0.1: {e}")
    endpoint = f"http://127.0.0.1:{port}"
    # not us-east-1: s3fs names the region when it makes a bucket, which S3 refuses there
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": endpoint, "region_name": "eu-west-1"}}
    try:
        yield endpoint, options
    finally:
        server.stop()
