"""Tar shards never serve stale labels or bytes (NOTE [ A shard's index ] in
sources/shards.py, NOTE [ Cached copies are revalidated ] in sources/remote_cache.py):
a shard rewritten in place with its size and mtime kept, an object replaced at the same
URL; and an index cache that can slow a run but never stop it (damaged or unwritable),
nor grow on every construction.  Shards are written here from the real-image corpus."""
from __future__ import annotations

import logging
import os
import tarfile
import time
from pathlib import Path

import fsspec
import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from jpegloader.datasets import WebDataset
from tests.conftest import eval_transform, shared, write_image_folder
from tests.sources.conftest import add_member, write_shards

SAMPLES = 50


@pytest.fixture(scope="module")
def photos():
    """50 real photos of imagenet-sample with their labels."""
    return datasets.ImageFolder(str(shared("imagenet-sample"))).samples[:SAMPLES]


def _rewrite_keeping_size_and_mtime(shard: Path, samples: list[tuple[str, int]]) -> None:
    """The shard rewritten in place as ``rsync -t`` or ``cp -p`` leave it: other
    content, the same size (tar pads every member to 512 bytes) and the old mtime."""
    before = shard.stat()
    tmp = shard.with_suffix(".new")
    write_shards(samples, tmp, per_shard=len(samples))
    shard.write_bytes((tmp / "shard-000000.tar").read_bytes())
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = shard.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _labels(loader) -> list[int]:
    return torch.cat([b[1] for b in loader]).tolist()


@pytest.mark.parametrize("workers", [0, 2])
def test_a_relabelled_shard_with_its_mtime_kept_gives_the_new_labels(tmp_path, photos,
                                                                     workers):
    (shard,) = write_shards(photos, tmp_path / "s", per_shard=SAMPLES)
    cache = tmp_path / "cache"
    ds = WebDataset(str(shard), eval_transform(), cache_dir=cache)
    loader = jpegloader.DataLoader(ds, batch_size=10, num_workers=workers)
    assert loader.eligibility.accelerated
    assert _labels(loader) == [t for _, t in photos]
    relabelled = [(path, (t + 7) % 1000) for path, t in photos]
    _rewrite_keeping_size_and_mtime(shard, relabelled)
    want = [t for _, t in relabelled]
    assert _labels(loader) == want  # the same loader's next epoch
    assert _labels(jpegloader.DataLoader(WebDataset(str(shard), eval_transform(),
                                                    cache_dir=cache), batch_size=10)) == want
    assert [ds[k][1] for k in range(SAMPLES)] == want  # the dataset read as torch reads it


def test_photos_swapped_at_the_same_size_give_the_new_photos(tmp_path, photos):
    (shard,) = write_shards(photos, tmp_path / "s", per_shard=SAMPLES)
    ds = WebDataset(str(shard), eval_transform(), cache_dir=tmp_path / "cache")
    loader = jpegloader.DataLoader(ds, batch_size=10, num_workers=2)
    list(loader)
    swapped = [(path, t) for (path, _), (_, t) in zip(reversed(photos), photos)]
    _rewrite_keeping_size_and_mtime(shard, swapped)
    fresh = WebDataset(str(shard), eval_transform(), cache_dir=None)
    for (a, la), (b, lb) in zip(loader, jpegloader.DataLoader(fresh, batch_size=10),
                                strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)
    # torch's own loader over the dataset built before the rewrite: the new photos too
    for (a, la), (b, lb) in zip(TorchDataLoader(ds, batch_size=10),
                                TorchDataLoader(fresh, batch_size=10), strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)


@pytest.mark.parametrize("change", ["relabel", "swap"])
def test_persistent_workers_serve_a_rewritten_shard_as_torchs_do(tmp_path, photos, change,
                                                                  caplog):
    """torch's persistent workers call ``dataset[i]``, which checks the shard: the
    same loader's next epoch gives the new photos and labels, and the message
    says the workers were started again (NOTE [ Persistent workers and changed
    samples ])."""
    (shard,) = write_shards(photos, tmp_path / "s", per_shard=SAMPLES)
    ds = WebDataset(str(shard), eval_transform(), cache_dir=tmp_path / "cache")
    ours = jpegloader.DataLoader(ds, batch_size=10, num_workers=2, persistent_workers=True,
                                 decode="exact")
    theirs = TorchDataLoader(ds, batch_size=10, num_workers=2, persistent_workers=True)
    assert ours.eligibility.accelerated
    assert _labels(ours) == _labels(theirs) == [t for _, t in photos]
    if change == "relabel":
        rewritten = [(path, (t + 7) % 1000) for path, t in photos]
    else:  # other photos in the same places, other labels
        rewritten = [(path, t) for (path, _), (_, t) in zip(reversed(photos), photos)]
    _rewrite_keeping_size_and_mtime(shard, rewritten)
    fresh = list(jpegloader.DataLoader(WebDataset(str(shard), eval_transform(),
                                                  cache_dir=None), batch_size=10,
                                         decode="exact"))
    with caplog.at_level(logging.INFO, logger="jpegloader"):
        got = list(ours)
    assert "samples changed since the persistent workers started" in caplog.text
    assert "keep the copy of the dataset" not in caplog.text
    for (a, la), (b, lb), (c, lc) in zip(got, fresh, theirs, strict=True):
        assert torch.equal(la, lb) and torch.equal(la, lc)
        assert torch.equal(a, b) and torch.equal(a, c)
    assert torch.cat([b[1] for b in got]).tolist() == [t for _, t in rewritten]
    ours.close()


def test_persistent_workers_keep_the_transform_they_started_with_as_torchs_do(tmp_path,
                                                                             photos, caplog):
    (shard,) = write_shards(photos[:20], tmp_path / "s", per_shard=20)
    ds = WebDataset(str(shard), eval_transform(), cache_dir=None)
    ours = jpegloader.DataLoader(ds, batch_size=10, num_workers=2, persistent_workers=True)
    theirs = TorchDataLoader(ds, batch_size=10, num_workers=2, persistent_workers=True)
    first = [b[0] for b in ours]
    list(theirs)
    ds.transform = T.Compose([T.Resize(180), T.CenterCrop(160), T.ToTensor()])
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        again = [b[0] for b in ours]
    assert [a.shape for a in again] == [b[0].shape for b in theirs] == \
        [a.shape for a in first]
    assert "keep the copy of the dataset they started with" in caplog.text
    ours.close()


def _whole_second_identity(path: str) -> tuple[int, ...]:
    """A shard's identity as a filesystem with 1-second timestamps gives it (ext4 made
    with 128-byte inodes): mtime and ctime in whole seconds, so a rewrite within the
    second that keeps the size (and restores the mtime) keeps it whole."""
    st = os.stat(path)
    second = st.st_mtime_ns // 10**9 * 10**9
    return (st.st_dev, st.st_ino, st.st_size, second, second)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_rewrite_within_a_timestamps_tick_gives_the_new_labels(tmp_path, photos,
                                                                 monkeypatch, workers):
    """NOTE [ A rewrite within a timestamp's tick ] (sources/shards.py): the identity
    cannot see it, so an identity no older than the tick is not trusted."""
    from jpegloader.sources import shards
    monkeypatch.setattr(shards, "shard_identity", _whole_second_identity)
    (shard,) = write_shards(photos[:20], tmp_path / "s", per_shard=20)
    cache = tmp_path / "cache"
    first = WebDataset(str(shard), eval_transform(), cache_dir=cache)
    loader = jpegloader.DataLoader(first, batch_size=10, num_workers=workers)
    assert _labels(loader) == [t for _, t in photos[:20]]
    relabelled = [(path, (t + 7) % 1000) for path, t in photos[:20]]
    _rewrite_keeping_size_and_mtime(shard, relabelled)  # within the same second
    assert _whole_second_identity(str(shard)) == first._identities[0]
    want = [t for _, t in relabelled]
    again = WebDataset(str(shard), eval_transform(), cache_dir=cache)  # over the cached index
    assert [again[k][1] for k in range(20)] == want
    assert _labels(jpegloader.DataLoader(again, batch_size=10, num_workers=workers)) == want
    assert _labels(loader) == want  # the first dataset's next epoch


def test_an_identity_older_than_the_tick_is_trusted(tmp_path, photos, monkeypatch):
    """The check costs nothing once a shard has aged: its cached index is read, not
    built again."""
    from jpegloader.sources import shards
    monkeypatch.setattr(shards, "shard_identity", _whole_second_identity)
    (shard,) = write_shards(photos[:10], tmp_path / "s", per_shard=10)
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(shard, ns=(hour_ago, hour_ago))
    cache = tmp_path / "cache"
    WebDataset(str(shard), cache_dir=cache)
    built = []
    monkeypatch.setattr(shards.ShardIndex, "build",
                        classmethod(lambda cls, *a, **k: built.append(a) or None))
    ds = WebDataset(str(shard), cache_dir=cache)
    ds.members()  # an epoch start
    assert built == [] and len(ds) == 10


def test_an_object_replaced_at_the_same_url_is_copied_again(tmp_path, photos, s3_server,
                                                            caplog):
    _, options = s3_server
    old = write_shards(photos, tmp_path / "old", per_shard=SAMPLES)[0]
    new_samples = [(path, 999 - t) for path, t in photos[:30]]
    new = write_shards(new_samples, tmp_path / "new", per_shard=30)[0]
    s3 = fsspec.filesystem("s3", **options)
    s3.mkdir("replaced")
    s3.put(str(old), "replaced/shard.tar")
    cache = tmp_path / "cache"
    first = WebDataset("s3://replaced/shard.tar", eval_transform(), cache_dir=cache,
                       storage_options=options)
    assert len(first) == SAMPLES
    s3.put(str(new), "replaced/shard.tar")
    with caplog.at_level(logging.INFO, logger="jpegloader"):
        again = WebDataset("s3://replaced/shard.tar", eval_transform(), cache_dir=cache,
                           storage_options=options)
    assert "s3://replaced/shard.tar changed in object storage" in caplog.text
    assert len(again) == 30
    assert _labels(jpegloader.DataLoader(again, batch_size=10)) == [t for _, t in new_samples]
    fresh = WebDataset(str(new), eval_transform(), cache_dir=None)
    for (a, _), (b, _) in zip(jpegloader.DataLoader(again, batch_size=10),
                              jpegloader.DataLoader(fresh, batch_size=10), strict=True):
        assert torch.equal(a, b)


def test_remote_shards_are_indexed_once_however_often_the_dataset_is_built(tmp_path,
                                                                           s3_server):
    _, options = s3_server
    root = write_image_folder(tmp_path / "d", 14)
    shards = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s",
                          per_shard=2)
    s3 = fsspec.filesystem("s3", **options)
    s3.mkdir("indexed")
    for shard in shards:
        s3.put(str(shard), f"indexed/{shard.name}")
    cache = tmp_path / "cache"
    for _ in range(4):
        ds = WebDataset("s3://indexed/shard-{000000..000006}.tar", cache_dir=cache,
                        storage_options=options)
        assert len(ds) == 14
        entries = {p.name: p.stat().st_mtime_ns for p in (cache / "index").iterdir()}
        assert len(entries) == 7  # one per shard, reused, not one more per construction
        if _ == 0:
            first = entries
    assert entries == first


def test_a_damaged_index_entry_is_rebuilt(tmp_path, caplog):
    root = write_image_folder(tmp_path / "d", 12)
    samples = datasets.ImageFolder(str(root)).samples
    write_shards(samples, tmp_path / "s", per_shard=6)
    cache = tmp_path / "cache"
    WebDataset(str(tmp_path / "s" / "*.tar"), cache_dir=cache)
    entries = sorted((cache / "index").iterdir())
    entries[0].write_bytes(b"PK\x03\x04 not a whole zip")
    entries[1].write_bytes(entries[1].read_bytes()[:40])
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        ds = WebDataset(str(tmp_path / "s" / "*.tar"), cache_dir=cache)
    assert [ds[k][1] for k in range(12)] == [t for _, t in samples]
    assert caplog.text.count("cannot be read") == 2 and str(entries[0]) in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        WebDataset(str(tmp_path / "s" / "*.tar"), cache_dir=cache)  # rewritten whole
    assert "cannot be read" not in caplog.text
    assert not list((cache / "index").glob("*.tmp.*"))


def test_an_unwritable_index_cache_warns_once_and_goes_on(tmp_path, caplog):
    root = write_image_folder(tmp_path / "d", 12)
    samples = datasets.ImageFolder(str(root)).samples
    write_shards(samples, tmp_path / "s", per_shard=4)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    with caplog.at_level(logging.WARNING, logger="jpegloader"):
        ds = WebDataset(str(tmp_path / "s" / "*.tar"), eval_transform(),
                        cache_dir=blocker / "cache")
    assert caplog.text.count("cannot write shard indexes") == 1
    assert _labels(jpegloader.DataLoader(ds, batch_size=4)) == [t for _, t in samples]


def test_a_shard_relabelled_during_an_epoch_with_other_counts_is_an_error(tmp_path):
    root = write_image_folder(tmp_path / "d", 8)
    samples = datasets.ImageFolder(str(root)).samples
    (shard,) = write_shards(samples, tmp_path / "s", per_shard=8)
    ds = WebDataset(str(shard), cache_dir=None)
    with tarfile.open(shard, "w") as tar:  # 7 samples now
        for k, (path, t) in enumerate(samples[:7]):
            add_member(tar, f"sample{k:06d}.jpg", Path(path).read_bytes())
            add_member(tar, f"sample{k:06d}.cls", str(t).encode())
    with pytest.raises(Exception, match=r"shard-000000\.tar, sample 'sample000003' "
                                        r"\(index 3\): the shard was rewritten during the "
                                        r"epoch .* 7 samples, not 8"):
        ds[3]
