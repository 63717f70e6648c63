"""read_files: a batch's bytes in one buffer, equal to reading each file whole."""
from __future__ import annotations

import os

from jpegloader.sources import read_files as contract
from jpegloader.sources.read_files import read_files


def _samples(batch):
    data = bytes(batch.data)
    return [data[batch.offsets[k]:batch.offsets[k + 1]] for k in range(len(batch))]


def test_bytes_equal_whole_reads_and_unreadable_files_are_empty(tmp_path):
    files = []
    for k, size in enumerate([0, 1, 4095, 4096, 100_001]):
        f = tmp_path / f"{k}.jpg"
        f.write_bytes(os.urandom(size))
        files.append(f)
    locked = tmp_path / "locked.jpg"
    locked.write_bytes(b"secret")
    locked.chmod(0)
    paths = [str(f) for f in files] + [str(tmp_path / "missing.jpg"), str(tmp_path)]
    if os.geteuid() != 0:  # root reads mode-0 files
        paths.append(str(locked))
    samples = _samples(read_files(paths))
    assert samples[:5] == [f.read_bytes() for f in files]
    assert all(s == b"" for s in samples[5:])


def test_a_file_rewritten_while_read_is_read_as_it_is_now(tmp_path, monkeypatch):
    target = tmp_path / "a.jpg"
    target.write_bytes(b"x" * 1000)
    real_readv = os.readv

    def grow_then_read(fd, buffers):  # the file grows between the fstat and the read
        target.write_bytes(b"y" * 3000)
        return real_readv(fd, buffers)
    monkeypatch.setattr(contract.os, "readv", grow_then_read)
    assert _samples(read_files([str(target)])) == [b"y" * 3000]


def test_files_that_cannot_be_opened_say_why(tmp_path):
    good = tmp_path / "good.jpg"
    good.write_bytes(b"\xff\xd8\xff\xd9")
    (tmp_path / "folder.jpg").mkdir()
    (tmp_path / "dangling.jpg").symlink_to(tmp_path / "gone.jpg")
    names = ["good.jpg", "missing.jpg", "folder.jpg", "dangling.jpg"]
    batch = read_files([str(tmp_path / n) for n in names])
    assert batch.unreadable == {1: "cannot open: No such file or directory",
                                2: "cannot open: Is a directory",
                                3: "cannot open: No such file or directory"}


def test_a_missing_file_is_reported_as_missing_not_truncated(tmp_path):
    """The loader's error names the OS's reason, not what the C core made of no bytes."""
    import pytest
    from torchvision import datasets

    import jpegloader
    from tests.conftest import eval_transform, write_image_folder
    root = write_image_folder(tmp_path / "d", 6)
    ds = datasets.ImageFolder(str(root), eval_transform())
    for change, reason in (("missing", "No such file or directory"),
                           ("directory", "Is a directory"),
                           ("dangling", "No such file or directory")):
        path = tmp_path / "d" / "c0" / "img000.jpg"
        if path.is_dir():
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        if change == "directory":
            path.mkdir()
        elif change == "dangling":
            path.symlink_to(tmp_path / "nowhere.jpg")
        with pytest.raises(OSError) as info:
            list(jpegloader.DataLoader(ds, batch_size=6))
        text = str(info.value)
        assert f"fast path: cannot open: {reason}" in text, (change, text)
        assert "truncated" not in text and "EOI" not in text, (change, text)
