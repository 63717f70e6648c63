"""Tar shards in object storage against the same shards on the local disk: an S3
server on localhost (moto's server mode) holds the shards, jpegloader's WebDataset
copies them into its cache (the first epoch's download, its rate printed), then the
epochs alternate between the remote dataset and the local one.

    python benchmarks/remote_shards.py DATA_DIR [--files 2000] [--recipe train|eval]
        [--workers 2] [--epochs 5]
"""
from __future__ import annotations

import logging
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import fsspec
from moto.server import ThreadedMotoServer

import jpegloader
from jpegloader.bench import corpora, sources
from jpegloader.bench.measure import alternate_epochs
from jpegloader.bench.recipes import PIPELINES
from jpegloader.sources.shards import shard_list


def main() -> int:
    args = sources.script_arguments(__doc__)
    transform = PIPELINES[args.pipeline][1]()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's access log
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {"key": "bench", "secret": "bench",
               "client_kwargs": {"endpoint_url": endpoint, "region_name": "eu-west-1"}}
    try:
        with tempfile.TemporaryDirectory(prefix="jpegloader-remote-") as tmp:
            tmp = Path(tmp)
            root = corpora.replicate_folder(args.data, args.files, tmp / "folder")
            pattern = sources.write_shards(root, tmp / "shards")
            s3 = fsspec.filesystem("s3", **options)
            s3.mkdir("bench")
            for shard in shard_list(pattern):
                s3.put(shard, f"bench/{Path(shard).name}")
            remote = pattern.replace(str(tmp / "shards"), "s3://bench")
            size = sum(Path(s).stat().st_size for s in shard_list(pattern))
            start = time.perf_counter()
            made = {"remote": jpegloader.datasets.WebDataset(
                        remote, transform, cache_dir=tmp / "cache", storage_options=options),
                    "local": jpegloader.datasets.WebDataset(pattern, transform,
                                                            cache_dir=tmp / "index")}
            took = time.perf_counter() - start
            print(f"first use of {remote}: {size / 1e6:.0f} MB copied and indexed in "
                  f"{took:.1f} s ({size / 1e6 / took:.0f} MB/s, the localhost S3 server)")
            loaders = {name: jpegloader.DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                                                   num_workers=args.workers)
                       for name, ds in made.items()}
            rates = alternate_epochs(loaders, args.epochs)
            local = statistics.median(rates["local"])
            pairs = [r / q for r, q in zip(rates["remote"], rates["local"])]
            print(f"{args.pipeline}: remote {statistics.median(rates['remote']):.0f} img/s, "
                  f"local {local:.0f} img/s: {statistics.median(rates['remote']) / local:.3f} "
                  f"(epoch pairs {min(pairs):.3f}-{max(pairs):.3f})")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
