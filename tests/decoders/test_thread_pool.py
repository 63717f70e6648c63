"""num_workers=0 shares each batch's C work over threads: every sample is done
exactly once, an error surfaces only after every chunk stopped writing, and the
batch is the same for any thread count (statuses of bad samples included)."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

import jpegloader
from jpegloader.decoders import EncodedBatch, decode_batch
from jpegloader.decoders import status as st
from jpegloader.decoders.thread_pool import share_out
from tests.conftest import train_transform, whole_image_plans
from tests.hostile_jpegs import photo_like


@pytest.mark.parametrize("n, threads", [(1, 4), (5, 2), (64, 3), (7, 16)])
def test_chunks_cover_every_sample_once(n, threads):
    done = np.zeros(n, int)
    names = set()
    lock = threading.Lock()

    def run(a, b, seconds):
        with lock:
            done[a:b] += 1
            names.add(threading.current_thread().name)
        seconds += (b - a, 1)
    seconds = share_out(run, n, threads)
    assert (done == 1).all()
    assert seconds[0] == n and 1 <= seconds[1] <= min(n, 4 * threads)
    assert len(names) <= threads


def test_an_error_is_raised_after_every_chunk_finished():
    finished = []
    lock = threading.Lock()

    def run(a, b, seconds):
        if a == 0:
            raise RuntimeError("chunk 0 failed")
        time.sleep(0.01)
        with lock:
            finished.append(a)
    with pytest.raises(RuntimeError, match="chunk 0 failed"):
        share_out(run, 16, 2)
    assert len(finished) == 7  # 8 chunks, all but the failed one ran to the end


def _batch_with_a_bad_sample():
    sizes = [(96 + 8 * i, 72 + 4 * (i % 3)) for i in range(11)]
    files = [photo_like(w, h, seed=i) for i, (w, h) in enumerate(sizes)]
    files[4] = files[4][: len(files[4]) // 3]  # truncated: a status, not an exception
    files[8] = b"not a jpeg"
    return EncodedBatch.from_files(files), whole_image_plans(sizes, (32, 32))


def test_decode_batch_is_the_same_for_any_thread_count():
    batch, plans = _batch_with_a_bad_sample()
    lut = np.tile(np.arange(256, dtype=np.float32) / 255, (3, 1))
    results = []
    for threads in (1, 2, 3, 8):
        out = np.full((len(batch), 3, 32, 32), -1, np.float32)
        seconds = np.zeros(2)
        status, messages = decode_batch(batch, plans, out, lut, seconds=seconds,
                                        threads=threads)
        assert seconds.sum() > 0
        results.append((out, status, messages))
    out1, status1, messages1 = results[0]
    assert status1[8] != st.OK and (status1 == st.OK).sum() >= 9
    for out, status, messages in results[1:]:
        np.testing.assert_array_equal(out, out1)
        np.testing.assert_array_equal(status, status1)
        assert messages == messages1


def test_loader_batches_equal_for_any_decode_threads(small_folder):
    from torchvision.datasets import ImageFolder
    dataset = ImageFolder(str(small_folder), transform=train_transform())
    batches = []
    for threads in (1, 2, 3):
        loader = jpegloader.DataLoader(dataset, batch_size=8, shuffle=True, num_workers=0,
                                       generator=torch.Generator().manual_seed(3),
                                       decode_threads=threads)
        assert loader.eligibility.accelerated
        batches.append(list(loader))
    for other in batches[1:]:
        for (x1, y1), (x2, y2) in zip(batches[0], other):
            assert torch.equal(x1, x2) and torch.equal(y1, y2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2"])
def test_decode_threads_must_be_a_positive_integer(small_folder, bad):
    from torchvision.datasets import ImageFolder
    with pytest.raises(ValueError, match="decode_threads"):
        jpegloader.DataLoader(ImageFolder(str(small_folder)), decode_threads=bad)
