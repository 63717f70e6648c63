"""WebDataset tar shards read in place (sources/shards.py): the dataset as torch's
loader reads it, accelerated with the same batches as the ImageFolder path on the same
images, shard lists, the index cache, remote shards through fsspec, and bad shards
named with their member and index.  Shards are written here from the real-image corpus
(or generated images where the test is about the format)."""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

import fsspec
import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import DistributedSampler
from torchvision import datasets

import jpegloader
from jpegloader.datasets import CacheLimitError, ShardError, WebDataset
from jpegloader.sources.shards import expand_braces
from tests.conftest import (
    assert_resumes_bit_identically,
    eval_transform,
    shared,
    to_255,
    train_transform,
    write_image_folder,
)
from tests.sources.conftest import add_member, write_shards

#: mean absolute difference on 0-255 against torch's loader (PIL) with decode="auto"
TOLERANCE = 3.0


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """(ImageFolder over imagenet-sample, the same images as shards' pattern)."""
    root = shared("imagenet-sample")
    folder = datasets.ImageFolder(str(root))
    out = tmp_path_factory.mktemp("shards")
    shards = write_shards(folder.samples, out)
    return root, str(out / f"shard-{{000000..{len(shards) - 1:06d}}}.tar")


@pytest.mark.parametrize("pipeline", ["eval", "train"])
def test_accelerated_shards_equal_the_image_folder_path(real, pipeline):
    root, pattern = real
    transform = eval_transform if pipeline == "eval" else train_transform
    shards = WebDataset(pattern, transform(), cache_dir=None)
    folder = datasets.ImageFolder(str(root), transform())
    assert len(shards) == len(folder) == 334

    def batches(ds, cls=jpegloader.DataLoader):
        return list(cls(ds, batch_size=32, shuffle=True, num_workers=2,
                        generator=torch.Generator().manual_seed(4)))
    ours = jpegloader.DataLoader(shards, batch_size=32)
    assert ours.eligibility.accelerated, ours.eligibility.report()
    for (a, la), (b, lb) in zip(batches(shards), batches(folder), strict=True):
        assert torch.equal(la, lb)
        assert torch.equal(a, b)  # same bytes, same draws: the same pixels
    if pipeline == "eval":  # against torch's loader over the very same dataset object
        for (a, la), (b, lb) in zip(jpegloader.DataLoader(shards, batch_size=64, num_workers=2),
                                    TorchDataLoader(shards, batch_size=64), strict=True):
            assert torch.equal(la, lb)
            diff = (to_255(a) - to_255(b)).abs().mean(dim=(1, 2, 3))
            assert diff.median() <= 1.0 and diff.max() <= TOLERANCE, diff.max()


def test_distributed_ranks_and_resume_on_shards(real):
    _, pattern = real
    ds = WebDataset(pattern, eval_transform(), cache_dir=None)
    seen = []
    for rank in range(2):
        sampler = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=3)
        labels = [b[1] for b in jpegloader.DataLoader(ds, batch_size=16, sampler=sampler)]
        want = [b[1] for b in TorchDataLoader(ds, batch_size=16, sampler=sampler)]
        assert all(torch.equal(a, b) for a, b in zip(labels, want, strict=True))
        seen += list(sampler)
    assert sorted(set(seen)) == list(range(len(ds)))
    assert_resumes_bit_identically(ds, stop=5)


def test_shard_lists_json_targets_and_the_index_cache(tmp_path):
    root = write_image_folder(tmp_path / "d", 30)
    folder = datasets.ImageFolder(str(root))
    write_shards(folder.samples, tmp_path / "s", per_shard=8, label="json")
    assert expand_braces("a-{000..002}.tar") == ["a-000.tar", "a-001.tar", "a-002.tar"]
    assert expand_braces("{a,b}-{1..2}") == ["a-1", "a-2", "b-1", "b-2"]
    cache = tmp_path / "cache"
    by_glob = WebDataset(str(tmp_path / "s" / "*.tar"), target="json:label", cache_dir=cache)
    by_brace = WebDataset(str(tmp_path / "s" / "shard-{000000..000003}.tar"),
                          target="json:label", cache_dir=cache)
    assert len(by_glob) == len(by_brace) == 30 and by_glob.urls == by_brace.urls
    assert [by_glob[k][1] for k in range(30)] == [t for _, t in folder.samples]
    assert len(list((cache / "index").glob("*.npz"))) == 4  # one per shard, reused
    # a shard rewritten with other members is indexed again (its size and mtime changed)
    write_shards(folder.samples[:5], tmp_path / "s2", per_shard=8, label="json")
    (tmp_path / "s2" / "shard-000000.tar").replace(tmp_path / "s" / "shard-000003.tar")
    again = WebDataset(str(tmp_path / "s" / "*.tar"), target="json:label", cache_dir=cache)
    assert len(again) == 24 + 5


def test_remote_shards_are_copied_once_through_fsspec(tmp_path):
    """fsspec's in-memory filesystem stands for object storage here (a real fsspec
    filesystem, not a patched client); the copy lands in the cache and is reused."""
    root = write_image_folder(tmp_path / "d", 12)
    folder = datasets.ImageFolder(str(root))
    shards = write_shards(folder.samples, tmp_path / "s", per_shard=6)
    memory = fsspec.filesystem("memory")
    for shard in shards:
        memory.pipe(f"/bucket/{shard.name}", shard.read_bytes())
    try:
        cache = tmp_path / "cache"
        ds = WebDataset("memory://bucket/shard-{000000..000001}.tar", eval_transform(),
                        cache_dir=cache)
        assert len(ds) == 12 and ds.urls[0] == "memory://bucket/shard-000000.tar"
        assert len(list((cache / "remote").iterdir())) == 2
        loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
        assert loader.eligibility.accelerated
        assert torch.cat([b[1] for b in loader]).tolist() == [t for _, t in folder.samples]
        with pytest.raises(OSError, match="memory://bucket/missing.tar"):
            WebDataset("memory://bucket/missing.tar", cache_dir=cache)
    finally:
        memory.rm("/bucket", recursive=True)


def _bad(tmp_path: Path, name: str, members: list[tuple[str, bytes]], cut: int = 0) -> str:
    path = tmp_path / name
    with tarfile.open(path, "w") as tar:
        for member, payload in members:
            add_member(tar, member, payload)
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[:cut])
    return str(path)


def test_bad_shards_are_named_with_their_member(tmp_path):
    jpeg = (write_image_folder(tmp_path / "d", 1) / "c0" / "img000.jpg").read_bytes()
    not_tar = tmp_path / "not.tar"
    not_tar.write_bytes(b"this is not a tar file" * 40)
    with pytest.raises(ShardError, match=r"not\.tar is not a tar file"):
        WebDataset(str(not_tar), cache_dir=None)
    no_label = _bad(tmp_path, "nolabel.tar", [("a.jpg", jpeg), ("a.cls", b"1"),
                                              ("b.jpg", jpeg)])
    with pytest.raises(ShardError, match=r"nolabel\.tar, sample 'b' .*no \.cls member"):
        WebDataset(no_label, cache_dir=None)
    two = _bad(tmp_path, "two.tar", [("a.jpg", jpeg), ("a.png", jpeg), ("a.cls", b"0")])
    with pytest.raises(ShardError, match=r"two\.tar, sample 'a' .*2 image members"):
        WebDataset(two, cache_dir=None)
    truncated = _bad(tmp_path, "cut.tar", [("a.jpg", jpeg), ("a.cls", b"0"),
                                           ("b.jpg", jpeg), ("b.cls", b"1")], cut=1536)
    with pytest.raises(ShardError, match=r"cut\.tar"):
        WebDataset(truncated, cache_dir=None)
    bad_label = _bad(tmp_path, "label.tar", [("a.jpg", jpeg), ("a.cls", b"cat")])
    with pytest.raises(ShardError, match=r"label\.tar, sample 'a' .*not an integer"):
        WebDataset(bad_label, cache_dir=None)


def test_each_skipped_sample_is_named_by_its_own_place_in_the_shard(tmp_path):
    jpeg = (write_image_folder(tmp_path / "d", 1) / "c0" / "img000.jpg").read_bytes()
    shard = _bad(tmp_path, "gaps.tar", [("a.jpg", jpeg), ("a.cls", b"0"), ("b.jpg", jpeg),
                                        ("c.jpg", jpeg), ("d.jpg", jpeg), ("d.cls", b"1")])
    ds = WebDataset(shard, cache_dir=None, on_error="skip")
    assert len(ds) == 2
    assert [(key, why.split(": ")[0]) for _, key, why in ds.skipped] == [
        ("b", f"shard {shard}, sample 'b' (sample 1 of the shard)"),
        ("c", f"shard {shard}, sample 'c' (sample 2 of the shard)")]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_zero_byte_member_raises_what_torchs_loader_raises(tmp_path, workers):
    """An ``except PIL.UnidentifiedImageError`` written against torch's loader still
    catches it (it is a ValueError too, as an empty Arrow cell's is)."""
    from PIL import UnidentifiedImageError
    jpeg = (write_image_folder(tmp_path / "d", 1) / "c0" / "img000.jpg").read_bytes()
    shard = _bad(tmp_path, "empty.tar", [("a.jpg", jpeg), ("a.cls", b"0"), ("b.jpg", b""),
                                         ("b.cls", b"1")])
    ds = WebDataset(shard, eval_transform(), cache_dir=None)
    with pytest.raises(UnidentifiedImageError):
        list(TorchDataLoader(ds, batch_size=2, num_workers=workers))
    with pytest.raises(UnidentifiedImageError, match=r"(?s)sample 1 .*no bytes"):
        list(jpegloader.DataLoader(ds, batch_size=2, num_workers=workers))
    with pytest.raises(ValueError):
        list(jpegloader.DataLoader(ds, batch_size=2, num_workers=workers))


def test_a_shard_rewritten_after_indexing_is_an_error_naming_it(tmp_path):
    root = write_image_folder(tmp_path / "d", 8)
    folder = datasets.ImageFolder(str(root))
    (shard,) = write_shards(folder.samples, tmp_path / "s", per_shard=8)
    ds = WebDataset(str(shard), eval_transform(), cache_dir=None)
    shard.write_bytes(shard.read_bytes()[:2048])  # shortened under the dataset
    with pytest.raises(ShardError, match=r"shard-000000\.tar, sample 'sample000007' "
                                         r"\(index 7\): the shard changed since it was "
                                         r"indexed and cannot be indexed again: .*ends early"):
        ds[7]
    with pytest.raises(ShardError, match=r"shard-000000\.tar: the tar ends early"):
        list(jpegloader.DataLoader(ds, batch_size=8))


def test_a_webdataset_pipeline_is_pointed_at_the_map_style_dataset(tmp_path):
    wds = pytest.importorskip("webdataset", reason="webdataset is a test dependency")
    root = write_image_folder(tmp_path / "d", 4)
    (shard,) = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s")
    pipeline = wds.WebDataset(str(shard), shardshuffle=False).decode("pil").to_tuple("jpg", "cls")
    verdict = jpegloader.explain(pipeline, batch_size=2)
    assert not verdict.accelerated
    (reason,) = [c for c in verdict.reasons if c.rule == "dataset.type"]
    assert "jpegloader.datasets.WebDataset(urls, transform)" in reason.hint


def test_timms_wds_reader_is_pointed_at_the_map_style_dataset(tmp_path):
    timm_data = pytest.importorskip("timm.data", reason="timm is a test dependency")
    root = write_image_folder(tmp_path / "d", 4)
    (shard,) = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s")
    (tmp_path / "s" / "_info.json").write_text(json.dumps({"name": "mine", "splits": {
        "train": {"name": "train", "filenames": [shard.name], "shard_lengths": [4],
                  "num_samples": 4}}}))
    ds = timm_data.create_dataset("wds/mine", root=str(tmp_path / "s"), split="train",
                                  is_training=False, batch_size=2)
    verdict = jpegloader.explain(ds, batch_size=2)
    assert not verdict.accelerated
    (reason,) = [c for c in verdict.reasons if c.rule == "dataset.type"]
    assert "jpegloader.datasets.WebDataset(urls, transform)" in reason.hint
    assert "timm's wds reader" in reason.hint


def test_the_shard_sampler_keeps_locality_and_covers_every_sample(tmp_path):
    from jpegloader.datasets import ShardSampler
    root = write_image_folder(tmp_path / "d", 40)
    write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s", per_shard=5)
    ds = WebDataset(str(tmp_path / "s" / "*.tar"), eval_transform(), cache_dir=None)
    sampler = ShardSampler(ds, shards_per_window=2, seed=7)
    order = list(sampler)
    assert sorted(order) == list(range(40)) and len(sampler) == 40
    for w in range(0, 40, 10):  # each window of 10 samples comes from 2 shards
        assert len({int(ds.shard_of[i]) for i in order[w:w + 10]}) == 2
    assert list(ShardSampler(ds, shards_per_window=2, seed=7)) == order  # reproducible
    sampler.set_epoch(1)
    assert list(sampler) != order
    loader = jpegloader.DataLoader(ds, batch_size=8, sampler=sampler, num_workers=2)
    assert loader.eligibility.accelerated
    labels = torch.cat([b[1] for b in loader]).tolist()
    assert labels == [int(ds.targets[i]) for i in sampler]


def test_the_remote_cache_keeps_within_its_bound(tmp_path):
    root = write_image_folder(tmp_path / "d", 12)
    shards = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s", per_shard=4)
    memory = fsspec.filesystem("memory")
    for shard in shards:
        memory.pipe(f"/cachebound/{shard.name}", shard.read_bytes())
    try:
        cache, size = tmp_path / "cache", shards[0].stat().st_size
        WebDataset("memory://cachebound/shard-000000.tar", cache_dir=cache)
        WebDataset("memory://cachebound/shard-000001.tar", cache_dir=cache)
        # a third shard with room for two: the least recently used other one goes
        ds = WebDataset("memory://cachebound/shard-00000{0,2}.tar", cache_dir=cache,
                        cache_limit=2 * size + 100)
        kept = sorted(p.name for p in (cache / "remote").iterdir())
        assert len(kept) == 2 and {Path(s).name for s in ds.shards} == set(kept)
        with pytest.raises(CacheLimitError, match="over cache_limit"):
            WebDataset("memory://cachebound/shard-00000{0..2}.tar", cache_dir=cache,
                       cache_limit=size)
    finally:
        memory.rm("/cachebound", recursive=True)


def test_shards_in_object_storage(tmp_path, s3_server):
    endpoint, options = s3_server
    root = write_image_folder(tmp_path / "d", 16)
    folder = datasets.ImageFolder(str(root), eval_transform())
    shards = write_shards(folder.samples, tmp_path / "s", per_shard=8)
    s3 = fsspec.filesystem("s3", **options)
    s3.mkdir("shards-bucket")
    for shard in shards:
        s3.put(str(shard), f"shards-bucket/{shard.name}")
    cache = tmp_path / "cache"
    ds = WebDataset("s3://shards-bucket/shard-{000000..000001}.tar", eval_transform(),
                    cache_dir=cache, storage_options=options)
    assert ds.urls == ["s3://shards-bucket/shard-000000.tar", "s3://shards-bucket/shard-000001.tar"]
    ours = list(jpegloader.DataLoader(ds, batch_size=8, num_workers=2))
    want = list(jpegloader.DataLoader(folder, batch_size=8, num_workers=2))
    for (a, la), (b, lb) in zip(ours, want, strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)
    # a missing object is an error naming its URL, after the retries
    with pytest.raises(OSError, match=r"s3://shards-bucket/shard-000009\.tar"):
        WebDataset("s3://shards-bucket/shard-000009.tar", cache_dir=cache,
                   storage_options=options)


def test_a_shard_that_vanished_between_epochs_is_named(tmp_path):
    root = write_image_folder(tmp_path / "d", 8)
    (shard,) = write_shards(datasets.ImageFolder(str(root)).samples, tmp_path / "s")
    ds = WebDataset(str(shard), eval_transform(), cache_dir=None)
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    assert sum(len(b[1]) for b in loader) == 8
    shard.unlink()
    with pytest.raises(OSError) as info:
        list(loader)
    text = str(info.value)
    assert str(shard) in text and "sample 0" in text and "cannot open: No such file" in text


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_shards_with_spawned_workers(tmp_path, context):
    """Workers that do not fork get the shard table through torch's shared-memory
    pickling, as they get a folder's."""
    root = write_image_folder(tmp_path / "d", 8)
    folder = datasets.ImageFolder(str(root), eval_transform())
    (shard,) = write_shards(folder.samples, tmp_path / "s")
    ds = WebDataset(str(shard), eval_transform(), cache_dir=None)
    ours = list(jpegloader.DataLoader(ds, batch_size=4, num_workers=2,
                                      multiprocessing_context=context))
    want = list(jpegloader.DataLoader(folder, batch_size=4))
    for (a, la), (b, lb) in zip(ours, want, strict=True):
        assert torch.equal(la, lb) and torch.equal(a, b)


def test_a_span_past_the_end_of_its_file_is_a_span_changed_error(tmp_path):
    """One error for a sample's bytes not where its index says, whoever reads them."""
    import numpy as np

    from jpegloader.datasets import SpanChangedError
    from jpegloader.sources.file_table import FileTable, Members
    path = tmp_path / "file.bin"
    path.write_bytes(b"x" * 50)
    table = FileTable.from_members(Members([str(path)], np.array([0]), np.array([[10, 100]]),
                                           np.array([1])))
    with pytest.raises(SpanChangedError, match=r"file\.bin, sample 0: the file is shorter "
                                               r"than its index says"):
        table.read(0)
    assert issubclass(SpanChangedError, OSError)
