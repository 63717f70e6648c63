"""Soak of the remote shard cache: several processes, two datasets, one cache.

    python -m tests.reliability.shard_cache_soak [--epochs 20] [--processes 3] [--json FILE]

A real S3-compatible server (moto's, on localhost) holds 6 tar shards of generated
JPEGs, each in two variants (other labels, the photos in another order).  Three
processes share one cache directory with a small ``cache_limit``; each runs 20
epochs, building a ``WebDataset`` over dataset A (shards 0-3) or B (shards 2-5) in
turn and reading it through ``jpegloader.DataLoader``.  Meanwhile this process
replaces objects with their other variant at random and stops the server for a
moment at random (copies in flight fail mid-way).

Pass criteria (exit status 1 on failure): every batch equals a fresh, uncached read
of the variant its copy holds (labels and pixels); a dataset that cannot be built
fails with an OSError naming the shard's URL, never anything else; afterwards no
partial file, no temporary index file; the cache never held more than its limit plus
one shard beyond what live readers held.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import json
import logging
import multiprocessing
import random
import socket
import sys
import tarfile
import tempfile
import threading
import time
import traceback
from pathlib import Path

import numpy as np
from PIL import Image

SHARDS, PER_SHARD = 6, 8
DATASETS = {"A": range(0, 4), "B": range(2, 6)}


def _jpeg(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    image = Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


def _variant(shard: int, variant: int) -> bytes:
    """A shard's tar: variant 1 has other labels and its photos in reverse order."""
    photos = [_jpeg(shard * 100 + k) for k in range(PER_SHARD)]
    if variant:
        photos = photos[::-1]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for k, photo in enumerate(photos):
            for name, payload in ((f"s{shard}k{k}.jpg", photo),
                                  (f"s{shard}k{k}.cls", str(10 * variant + k).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
    return out.getvalue()


def _options(port: int) -> dict:
    return {"key": "testing", "secret": "testing",
            "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}",
                              "region_name": "eu-west-1"},
            "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}}


def _reader(rank: int, port: int, cache: str, limit: int, epochs: int, variants: dict,
            out: str) -> None:
    """One process's epochs; writes its report as JSON to ``out``."""
    import torch
    from torchvision import transforms as T

    import jpegloader
    from jpegloader.datasets import WebDataset
    transform = T.Compose([T.Resize(64), T.CenterCrop(64), T.ToTensor()])
    fresh: dict[str, list] = {}
    report = {"rank": rank, "epochs": 0, "batches": 0, "errors": [], "failures": [],
              "served_unchecked": 0}

    class Count(logging.Handler):
        def emit(self, record):
            if "could not check" in record.getMessage():
                report["served_unchecked"] += 1
    logging.getLogger("jpegloader").addHandler(Count())
    pace = random.Random(rank)
    try:
        for epoch in range(epochs):
            time.sleep(pace.uniform(0.0, 0.3))  # spread the epochs over the server's events
            name = "AB"[(epoch + rank) % 2]
            urls = [f"s3://soak/shard-{k}.tar" for k in DATASETS[name]]
            try:
                ds = WebDataset(urls, transform, cache_dir=cache, cache_limit=limit,
                                storage_options=_options(port))
            except OSError as e:
                if not any(u in str(e) for u in urls):
                    report["failures"].append(f"epoch {epoch}: an error naming no shard: {e}")
                report["errors"].append(f"{type(e).__name__}: {str(e)[:200]}")
                continue
            want_labels, want_images = [], []
            for path in ds.shards:  # the variant each copy holds, read afresh
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                if digest not in variants:
                    report["failures"].append(f"epoch {epoch}: {path} holds no variant")
                    continue
                if digest not in fresh:
                    with tempfile.TemporaryDirectory() as tmp:
                        copy = Path(tmp) / "shard.tar"
                        copy.write_bytes(Path(path).read_bytes())
                        plain = WebDataset(str(copy), transform, cache_dir=None)
                        fresh[digest] = [plain[k] for k in range(len(plain))]
                want_labels += [t for _, t in fresh[digest]]
                want_images += [x for x, _ in fresh[digest]]
            loader = jpegloader.DataLoader(ds, batch_size=PER_SHARD, num_workers=0)
            got_labels, got_images = [], []
            for images, labels in loader:
                got_labels += labels.tolist()
                got_images += list(images)
                report["batches"] += 1
            if got_labels != want_labels or not all(
                    torch.allclose(a, b, atol=2 / 255) for a, b in zip(got_images, want_images,
                                                                       strict=True)):
                report["failures"].append(f"epoch {epoch}: dataset {name}'s batches differ "
                                          "from a fresh read of its copies")
            report["epochs"] += 1
            del loader, ds
    except Exception:  # noqa: BLE001 - reported as a failure
        report["failures"].append(traceback.format_exc()[-2000:])
    Path(out).write_text(json.dumps(report))


def _cache_sizes(remote: Path, leases: Path) -> tuple[int, int]:
    """(bytes of copies, bytes of copies a live reader holds)."""
    total = held = 0
    for p in list(remote.glob("*")) if remote.is_dir() else []:
        if ".part" in p.name:
            continue
        try:
            size = p.stat().st_size
        except OSError:
            continue
        total += size
        try:
            with open(leases / p.name, "a") as lease:
                fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held += size
        except OSError:
            pass
    return total, held


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    import fsspec
    from moto.server import ThreadedMotoServer
    rng = random.Random(args.seed)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's access log
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    s3 = fsspec.filesystem("s3", **_options(port))
    # moto's servers in one process share one store: a soak run before this one in
    # the same process (the slow tier's) left the bucket, whose shards are written anew
    s3.makedirs("soak", exist_ok=True)
    tars = {(k, v): _variant(k, v) for k in range(SHARDS) for v in (0, 1)}
    variants = {hashlib.sha256(t).hexdigest(): key for key, t in tars.items()}
    for k in range(SHARDS):
        s3.pipe(f"soak/shard-{k}.tar", tars[(k, 0)])
    shard_size = max(len(t) for t in tars.values())
    limit = 5 * shard_size
    events = {"replaced": 0, "server_stops": 0}
    worst = {"over_limit": 0}
    with tempfile.TemporaryDirectory(prefix="jpegloader-cache-soak-") as tmp:
        cache = Path(tmp) / "cache"
        ctx = multiprocessing.get_context("spawn")
        outs = [Path(tmp) / f"rank{r}.json" for r in range(args.processes)]
        procs = [ctx.Process(target=_reader, args=(r, port, str(cache), limit, args.epochs,
                                                   variants, str(outs[r])))
                 for r in range(args.processes)]
        for proc in procs:
            proc.start()
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                total, held = _cache_sizes(cache / "remote", cache / "leases")
                worst["over_limit"] = max(worst["over_limit"], total - held - limit)
                time.sleep(0.02)
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        deadline = time.monotonic() + 600
        while any(proc.is_alive() for proc in procs) and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.1, 0.4))
            if rng.random() < 0.7:
                k = rng.randrange(SHARDS)
                current = s3.cat(f"soak/shard-{k}.tar")
                v = variants[hashlib.sha256(current).hexdigest()][1]
                s3.pipe(f"soak/shard-{k}.tar", tars[(k, 1 - v)])
                events["replaced"] += 1
            else:
                server.stop()
                time.sleep(rng.uniform(0.2, 3.0))  # past the retries, at times
                server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
                server.start()
                events["server_stops"] += 1
        for proc in procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        stop.set()
        watcher.join()
        hung = [proc.pid for proc in procs if proc.is_alive()]
        for proc in procs:
            proc.kill() if proc.is_alive() else None
        reports = [json.loads(o.read_text()) if o.exists() else {"failures": ["no report"]}
                   for o in outs]
        litter = [str(q.relative_to(cache)) for q in cache.rglob("*")
                  if ".part" in q.name or ".tmp." in q.name]
    server.stop()
    failures = [f for r in reports for f in r["failures"]]
    if hung:
        failures.append(f"processes still running after 600 s: {hung}")
    if litter:
        failures.append(f"left behind: {litter}")
    if worst["over_limit"] > shard_size:
        failures.append(f"the cache held {worst['over_limit']} bytes over its limit beyond "
                        f"what live readers held (one shard is {shard_size})")
    summary = {"epochs": args.epochs, "processes": args.processes, "events": events,
               "limit": limit, "shard_bytes": shard_size,
               "most_over_limit_beyond_readers": worst["over_limit"],
               "ranks": [{k: r.get(k) for k in ("rank", "epochs", "batches",
                                                "served_unchecked")}
                         | {"errors": len(r.get("errors", []))} for r in reports],
               "errors": [e for r in reports for e in r.get("errors", [])][:10],
               "failures": failures}
    text = json.dumps(summary, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
