"""read_files: a batch's bytes in one buffer, equal to reading each file whole."""
from __future__ import annotations

import os

from jpegloader.pipelines import contract
from jpegloader.pipelines.contract import read_files


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
