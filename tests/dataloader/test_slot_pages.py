"""NOTE [ A slot holds what its batch takes ]: a detection slot's /dev/shm pages are
those of the batch in it, counted from the shared-memory file's allocated blocks."""
from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import jpegloader
from jpegloader import _shared_pages
from tests.pipelines.detection.conftest import R, build

PAGE = os.sysconf("SC_PAGE_SIZE")

pytestmark = pytest.mark.skipif(not _shared_pages.can_reserve(),
                                reason="this kernel cannot reserve shared pages on request "
                                       "(MADV_POPULATE_WRITE, Linux 5.14+): slots keep "
                                       "every page")


def _huge_shmem() -> bool:
    setting = Path("/sys/kernel/mm/transparent_hugepage/shmem_enabled")
    return setting.exists() and "[never]" not in setting.read_text() and \
        "[deny]" not in setting.read_text()


#: the allocation's granularity beyond a page where tmpfs may use huge pages
SLACK = (2 << 20) if _huge_shmem() else 0


def _allocated(fd: int) -> int:
    return os.fstat(fd).st_blocks * 512


def _up(n: int) -> int:
    return -(-n // PAGE) * PAGE


def test_reserve_and_hand_back_change_the_files_pages():
    fd = os.memfd_create("slot")
    try:
        os.ftruncate(fd, 64 * PAGE)
        with mmap.mmap(fd, 64 * PAGE) as m:
            a = np.frombuffer(m, np.uint8)
            assert _allocated(fd) == 0
            _shared_pages.reserve(a[PAGE + 10:5 * PAGE], "a test")  # pages 1 to 4
            assert _allocated(fd) == 4 * PAGE
            a[PAGE + 10:5 * PAGE] = 7
            # 2 pages used from page 1, and a quarter more: pages 1 to 3 kept
            _shared_pages.hand_back(a[PAGE:], 2 * PAGE)
            assert _allocated(fd) == 3 * PAGE
            assert (a[PAGE + 10:4 * PAGE] == 7).all() and not a[4 * PAGE:].any()
            _shared_pages.hand_back(a, 0)
            assert _allocated(fd) == 0
            del a
    finally:
        os.close(fd)


def _pages_of(storage: torch.UntypedStorage) -> int:
    return _allocated(storage._share_fd_cpu_()[0])


def _end(storage: torch.UntypedStorage, tensors) -> int:
    """The end of what ``tensors`` take of ``storage``, in bytes."""
    return max((t.storage_offset() + t.numel()) * t.element_size() for t in tensors
               if t.untyped_storage().data_ptr() == storage.data_ptr())


def test_a_detection_slot_holds_the_pages_of_the_batch_in_it():
    """Mask R-CNN's images and masks in the ring, 2 workers: while a batch is held, its
    slot's images field holds exactly the pages up to its last image, and its mask field
    those up to its last sample's masks; far less than the slot's size."""
    ds = build("hflip", with_masks=True)
    ours = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=R.collate_fn,
                      shuffle=True, generator=torch.Generator().manual_seed(3))
    assert ours.eligibility.accelerated, ours.eligibility.report()
    sizes, seen = [], 0
    for images, targets in ours:
        storage = images[0].untyped_storage()
        end = _end(storage, images)
        # a quarter more than the batch used (KEEP_BEYOND_USED), and the slot's last
        # page, when its size is not a whole number of pages
        pages = _pages_of(storage)  # (a failed assert prints no storage, only numbers)
        assert end <= pages <= _up(end * 5 // 4) + PAGE + SLACK, (end, pages)
        sizes.append((pages, storage.nbytes()))
        masks = [t["masks"] for t in targets if t["masks"].numel()]
        if masks:
            field = masks[0].untyped_storage()
            end = _end(field, masks)
            pages = _pages_of(field)
            assert end <= pages <= _up(end * 5 // 4) + PAGE + SLACK, (end, pages)
        seen += 1
    assert seen == len(ours)
    held = sum(p for p, _ in sizes) / sum(n for _, n in sizes)
    assert held < 0.9, f"the images' pages are {held:.0%} of their slots"


def test_a_collated_batch_slot_keeps_recent_batches_pages_not_the_largest_possible():
    """DETR's NestedTensor, made by its collate_fn in the workers (2) and copied into
    the slot (NOTE [ A collate_fn's batch in the slot ]): a slot holds its batch's
    pages and at most those of the largest batch so far (a worker keeps the largest
    of its last KEPT_SIZES batches' pages); far less than the slots, which are sized
    for the largest padded batch the recipe can make."""
    import contextlib
    import io

    from jpegloader.bench import peers
    from tests.coco_fixtures import coco_sample
    try:
        detr = peers.detr()
    except peers.PeerMissing as e:
        pytest.skip(str(e))
    coco = detr.datasets.coco
    with contextlib.redirect_stdout(io.StringIO()):
        ds = coco.CocoDetection(*(str(p) for p in coco_sample()),
                                coco.make_coco_transforms("train"), return_masks=False)
    ours = jpegloader.DataLoader(ds, batch_size=4, num_workers=2,
                                 collate_fn=detr.util.misc.collate_fn, shuffle=True,
                                 generator=torch.Generator().manual_seed(5))
    assert ours.eligibility.accelerated, ours.eligibility.report()
    largest, held, sizes = 0, 0, 0
    for samples, _ in ours:
        storage = samples.tensors.untyped_storage()
        if samples.mask.untyped_storage().data_ptr() != storage.data_ptr():
            continue  # padded beyond the slot's room: it came as torch sends it
        end = _end(storage, [samples.tensors, samples.mask])
        largest = max(largest, end)
        pages = _pages_of(storage)  # (a failed assert prints no storage, only numbers)
        assert end <= pages <= _up(largest) + PAGE + SLACK, (end, pages, largest)
        held, sizes = held + pages, sizes + storage.nbytes()
    assert sizes and held / sizes < 0.9, f"the batches' pages are {held / sizes:.0%} of their slots"
