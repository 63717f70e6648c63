"""The remote shard cache under pressure (NOTE [ Cached copies are revalidated ] in
sources/remote_cache.py), against moto's real S3 server on localhost: cache_limit
never removes a copy a running dataset reads and is checked before anything is copied;
a dead copier's partial file is cleaned; a server that is down is a clear error (or,
with a copy cached, a warning); a missing object keeps its type.  And shards whose
members cannot be indexed as they are: repeated keys, links, on_error="skip"."""
from __future__ import annotations

import gc
import hashlib
import logging
import os
import tarfile
from pathlib import Path

import fsspec
import pytest
import torch
from torchvision import datasets

import jpegloader
from jpegloader.datasets import CacheLimitError, ShardError, WebDataset
from tests.conftest import eval_transform, write_image_folder
from tests.conftest import can_mount_private_shm
from tests.sources.conftest import add_member, write_shards


def _bucket(tmp_path: Path, options: dict, name: str, count: int, per_shard: int):
    root = write_image_folder(tmp_path / f"{name}-images", count)
    samples = datasets.ImageFolder(str(root)).samples
    shards = write_shards(samples, tmp_path / name, per_shard=per_shard)
    s3 = fsspec.filesystem("s3", **options)
    s3.mkdir(name)
    for shard in shards:
        s3.put(str(shard), f"{name}/{shard.name}")
    return samples, shards


def test_the_limit_never_removes_a_copy_a_running_dataset_reads(tmp_path, s3_server):
    _, options = s3_server
    samples, shards = _bucket(tmp_path, options, "leased", 12, 4)
    size, cache = shards[0].stat().st_size, tmp_path / "cache"
    reading = WebDataset("s3://leased/shard-000000.tar", eval_transform(), cache_dir=cache,
                         storage_options=options)
    # another dataset on the node, with room for one copy: the one in use stays
    other = WebDataset("s3://leased/shard-000001.tar", cache_dir=cache,
                       storage_options=options, cache_limit=size + 100)
    assert Path(reading.shards[0]).is_file() and Path(other.shards[0]).is_file()
    labels = torch.cat([b[1] for b in jpegloader.DataLoader(reading, batch_size=4)]).tolist()
    assert labels == [t for _, t in samples[:4]]
    del reading  # no reader holds it now: the next dataset may evict it
    WebDataset("s3://leased/shard-000002.tar", cache_dir=cache, storage_options=options,
               cache_limit=2 * size + 100)
    assert len(list((cache / "remote").iterdir())) == 2


def test_the_limit_is_checked_before_anything_is_copied(tmp_path, s3_server):
    _, options = s3_server
    _, shards = _bucket(tmp_path, options, "toolarge", 12, 4)
    cache = tmp_path / "cache"
    with pytest.raises(CacheLimitError, match=r"3 remote shards need \d+\.\d KiB .* over "
                                              r"cache_limit=\d+\.\d KiB"):
        WebDataset("s3://toolarge/shard-{000000..000002}.tar", cache_dir=cache,
                   storage_options=options, cache_limit=shards[0].stat().st_size * 2)
    assert not list((cache / "remote").glob("*")) if (cache / "remote").exists() else True


def test_a_dead_copiers_partial_file_is_removed(tmp_path, s3_server):
    _, options = s3_server
    _bucket(tmp_path, options, "partial", 4, 4)
    url = "s3://partial/shard-000000.tar"
    remote = tmp_path / "cache" / "remote"
    remote.mkdir(parents=True)
    name = hashlib.sha256(url.encode()).hexdigest()[:24]
    stale = remote / f"{name}-0123456789abcdef.part99999"
    stale.write_bytes(b"half a shard")
    ds = WebDataset(url, cache_dir=tmp_path / "cache", storage_options=options)
    assert len(ds) == 4 and not stale.exists()
    assert not [p for p in remote.iterdir() if ".part" in p.name]


def test_a_server_that_is_down_is_a_clear_error_or_serves_the_copy(tmp_path, caplog):
    server_mod = pytest.importorskip("moto.server", reason="moto[server] is a test dependency")
    pytest.importorskip("s3fs", reason="s3fs is a test dependency (the [test] extra)")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}",
                                 "region_name": "eu-west-1"},
               "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}}
    try:
        samples, _ = _bucket(tmp_path, options, "down", 4, 4)
        cached = WebDataset("s3://down/shard-000000.tar", cache_dir=tmp_path / "cache",
                            storage_options=options)
        assert len(cached) == 4
    finally:
        server.stop()
    fsspec.filesystem("s3", **options).invalidate_cache()
    with pytest.raises(OSError, match=r"shard s3://down/shard-000000\.tar in object storage: "
                                      r"the store failed 3 times, the last with \w+") as info:
        WebDataset("s3://down/shard-000000.tar", cache_dir=tmp_path / "empty-cache",
                   storage_options=options)
    assert "no copy of it is cached" in str(info.value)
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        ds = WebDataset("s3://down/shard-000000.tar", eval_transform(),
                        cache_dir=tmp_path / "cache", storage_options=options)
    assert "could not check that the cached copy of s3://down/shard-000000.tar" in caplog.text
    assert [ds[k][1] for k in range(4)] == [t for _, t in samples]
    assert not [p for p in (tmp_path / "cache" / "remote").iterdir() if ".part" in p.name]


def test_a_missing_object_is_file_not_found(tmp_path, s3_server):
    _, options = s3_server
    _bucket(tmp_path, options, "missing", 4, 4)
    with pytest.raises(FileNotFoundError, match=r"s3://missing/shard-000009\.tar") as e:
        WebDataset("s3://missing/shard-000009.tar", cache_dir=tmp_path / "cache",
                   storage_options=options)
    # the bucket and the key, and that the object is not there
    assert "bucket 'missing'" in str(e.value) and "key 'shard-000009.tar'" in str(e.value)
    assert "does not exist" in str(e.value), str(e.value)


# -- members that cannot be indexed as they are --------------------------------------------
def _tar(path: Path, members: list) -> str:
    with tarfile.open(path, "w") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                add_member(tar, *member)
    return str(path)


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.fixture
def jpeg(tmp_path) -> bytes:
    return (write_image_folder(tmp_path / "d", 1) / "c0" / "img000.jpg").read_bytes()


def test_a_repeated_key_is_an_error_not_two_samples_merged(tmp_path, jpeg):
    shard = _tar(tmp_path / "dup.tar", [("a.jpg", jpeg), ("a.cls", b"1"), ("a.jpg", jpeg),
                                        ("a.cls", b"2")])
    with pytest.raises(ShardError, match=r"dup\.tar, sample 'a' .*'a\.jpg' appears twice"):
        WebDataset(shard, cache_dir=None)


def test_hard_links_are_read_and_symbolic_links_refused(tmp_path, jpeg):
    # what tar makes of a dataset folder whose files are hard-linked: the data once
    shard = _tar(tmp_path / "hard.tar", [("a.jpg", jpeg), ("a.cls", b"1"),
                                         _link("b.jpg", "a.jpg", tarfile.LNKTYPE),
                                         ("b.cls", b"2")])
    ds = WebDataset(shard, eval_transform(), cache_dir=None)
    assert len(ds) == 2 and [ds[k][1] for k in range(2)] == [1, 2]
    assert torch.equal(ds[0][0], ds[1][0])
    loader = jpegloader.DataLoader(ds, batch_size=2)
    assert loader.eligibility.accelerated
    (images, labels), = list(loader)
    assert labels.tolist() == [1, 2] and torch.equal(images[0], images[1])
    shard = _tar(tmp_path / "sym.tar", [("a.jpg", jpeg), ("a.cls", b"1"),
                                        _link("b.jpg", "/data/b.jpg", tarfile.SYMTYPE),
                                        ("b.cls", b"2")])
    with pytest.raises(ShardError, match=r"sym\.tar, sample 'b' .*'b\.jpg' is a symbolic "
                                         r"link \(to '/data/b\.jpg'\)"):
        WebDataset(shard, cache_dir=None)


def test_on_error_skip_leaves_out_samples_that_cannot_be_indexed(tmp_path, jpeg, caplog):
    shard = _tar(tmp_path / "bad.tar", [("a.jpg", jpeg), ("a.cls", b"1"),
                                        ("b.jpg", jpeg), ("b.cls", b"cat"),
                                        ("c.jpg", jpeg), ("c.png", jpeg), ("c.cls", b"3"),
                                        ("d.jpg", jpeg), ("d.cls", b"4")])
    with pytest.raises(ShardError, match="not an integer"):
        WebDataset(shard, cache_dir=None)
    for cache in (tmp_path / "cache", tmp_path / "cache"):  # built, then from the cache
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="jpegloader"):
            ds = WebDataset(shard, eval_transform(), cache_dir=cache, on_error="skip")
        assert [ds.key(k) for k in range(len(ds))] == ["a", "d"]
        assert [(key, "not an integer" in why or "2 image members" in why)
                for _, key, why in ds.skipped] == [("b", True), ("c", True)]
        assert caplog.text.count("left out sample") == 2
    labels = torch.cat([b[1] for b in jpegloader.DataLoader(ds, batch_size=2)]).tolist()
    assert labels == [1, 4]
    with pytest.raises(ValueError, match="on_error"):
        WebDataset(shard, cache_dir=None, on_error="ignore")


def test_the_index_cache_key_ignores_recent_use(tmp_path):
    """Recent use is recorded on the lock file: a copy's own identity, its index key,
    is left alone (os.utime on a cache hit re-indexed every construction)."""
    root = write_image_folder(tmp_path / "d", 4)
    (shard,) = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s")
    memory = fsspec.filesystem("memory")
    memory.pipe("/recent/shard.tar", shard.read_bytes())
    try:
        cache = tmp_path / "cache"
        first = WebDataset("memory://recent/shard.tar", cache_dir=cache)
        stat = os.stat(first.shards[0])
        WebDataset("memory://recent/shard.tar", cache_dir=cache)
        again = os.stat(first.shards[0])
        assert (again.st_mtime_ns, again.st_ctime_ns) == (stat.st_mtime_ns, stat.st_ctime_ns)
    finally:
        memory.rm("/recent", recursive=True)


def test_versions_of_an_object_leave_one_copy_one_index_and_one_lease(tmp_path):
    """20 versions of one object at one URL: the cache holds the current one's copy,
    its index entry and its lease file, not one of each per version ever seen."""
    root = write_image_folder(tmp_path / "d", 6)
    samples = datasets.ImageFolder(str(root)).samples
    memory = fsspec.filesystem("memory")
    cache = tmp_path / "cache"
    try:
        for version in range(20):
            relabelled = [(path, (t + version) % 3) for path, t in samples]
            (shard,) = write_shards(relabelled, tmp_path / f"v{version}", per_shard=6)
            memory.pipe("/versions/shard.tar", shard.read_bytes())
            ds = WebDataset("memory://versions/shard.tar", cache_dir=cache)
            assert [ds[k][1] for k in range(6)] == [t for _, t in relabelled]
            del ds
            gc.collect()
        for folder in ("remote", "index", "leases"):
            assert len(list((cache / folder).iterdir())) == 1, folder
    finally:
        memory.rm("/versions", recursive=True)


def test_another_shards_index_under_an_entrys_name_is_not_taken(tmp_path, caplog):
    root = write_image_folder(tmp_path / "d", 8)
    samples = datasets.ImageFolder(str(root)).samples
    a = write_shards(samples[:4], tmp_path / "a", per_shard=4)[0]
    b = write_shards([(p, (t + 1) % 3) for p, t in samples[4:]], tmp_path / "b",
                     per_shard=4)[0]
    cache = tmp_path / "cache"
    WebDataset(str(a), cache_dir=cache)
    (entry_a,) = (cache / "index").iterdir()
    WebDataset(str(b), cache_dir=cache)
    (entry_b,) = set((cache / "index").iterdir()) - {entry_a}
    entry_a.write_bytes(entry_b.read_bytes())  # b's valid index under a's name
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        ds = WebDataset(str(a), cache_dir=cache)
    assert [ds[k][1] for k in range(4)] == [t for _, t in samples[:4]]
    assert f"cannot be read (ValueError: it indexes {b}" in caplog.text


_FULL_CACHE_CHILD = """
import json, os, sys
from jpegloader.datasets import WebDataset
cache, url, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
try:
    WebDataset(url, cache_dir=cache, storage_options=options)
    print(json.dumps({"built": True}))
except OSError as e:
    left = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs]
    print(json.dumps({"type": type(e).__name__, "errno": e.errno, "message": str(e),
                      "left": left}))
"""


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to give a child a small private cache disk")
def test_a_full_cache_disk_is_said_as_such_and_leaves_nothing(tmp_path, s3_server):
    """A cache on a 64 KiB disk and a larger shard: an OSError with ENOSPC that says it
    is the cache's disk (not retried as a network error), and no partial file."""
    import errno
    import json
    import subprocess
    import sys
    _, options = s3_server
    _, shards = _bucket(tmp_path, options, "fullcache", 16, 16)
    assert shards[0].stat().st_size > 64 << 10
    cache = tmp_path / "small-disk"
    cache.mkdir()
    wrap = ["unshare", "-m", "sh", "-c",
            f'mount -t tmpfs -o size=64k tmpfs {cache} && exec "$@"', "sh"]
    out = subprocess.run([*wrap, sys.executable, "-c", _FULL_CACHE_CHILD, str(cache),
                          "s3://fullcache/shard-000000.tar", json.dumps(options)],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report.get("errno") == errno.ENOSPC, report
    assert "cannot write into the cache" in report["message"] and "its disk, not the store" \
        in report["message"] and "the store failed" not in report["message"], report
    assert not [p for p in report["left"] if ".part" in p], report


_READ_ONLY_CACHE_CHILD = """
import json, logging, os, sys
import jpegloader
from jpegloader.datasets import WebDataset
logging.basicConfig(level=logging.INFO, format="%(message)s")
cache, options = sys.argv[1], json.loads(sys.argv[2])
report = {}
from torchvision import transforms as T
ds = WebDataset("s3://readonly/shard-00000{0..1}.tar", T.Compose([T.Resize((40, 40)), T.ToTensor()]),
                cache_dir=cache, storage_options=options, cache_limit=1 << 30)
report["labels"] = [ds[k][1] for k in range(len(ds))]
loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
report["accelerated"] = loader.eligibility.accelerated
report["loaded"] = [t for _, labels in loader for t in labels.tolist()]
try:
    WebDataset("s3://readonly/shard-000002.tar", cache_dir=cache, storage_options=options)
except OSError as e:
    report["missing"] = [type(e).__name__, str(e)]
print(json.dumps(report))
"""


@pytest.mark.skipif(not can_mount_private_shm(),
                    reason="needs root and unshare -m to mount the cache read-only for a child")
def test_a_read_only_cache_serves_its_copies_and_says_what_it_cannot_do(tmp_path, s3_server):
    """A cache filled once and mounted read-only (NOTE [ A read-only shard cache ]):
    current copies are served without writing anything; a missing one is a clear error,
    not a bare EROFS on a lock file."""
    import json
    import subprocess
    import sys
    _, options = s3_server
    samples, _ = _bucket(tmp_path, options, "readonly", 12, 4)
    cache = tmp_path / "cache"
    WebDataset("s3://readonly/shard-00000{0..1}.tar", cache_dir=cache, storage_options=options)
    before = sorted(str(p) for p in cache.rglob("*"))
    wrap = ["unshare", "-m", "sh", "-c",
            f'mount --bind {cache} {cache} && mount -o remount,bind,ro {cache} && exec "$@"',
            "sh"]
    out = subprocess.run([*wrap, sys.executable, "-c", _READ_ONLY_CACHE_CHILD, str(cache),
                          json.dumps(options)], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["labels"] == [t for _, t in samples[:8]]
    assert report["accelerated"], out.stderr[-3000:]
    assert report["loaded"] == report["labels"]
    kind, message = report["missing"]
    assert kind == "CacheDiskError" and "s3://readonly/shard-000002.tar" in message
    assert "is read-only" in message and "none can be made there" in message
    assert "is read-only (Read-only file system): serving its current copies" in out.stderr
    assert out.stderr.count("is read-only (Read-only file system): serving") == 1
    assert sorted(str(p) for p in cache.rglob("*")) == before
