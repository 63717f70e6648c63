"""Mosaic's partners: drawn from the photos before a batch in the epoch's order, as
many as Ultralytics' buffer holds, whichever worker decoded them.

NOTE [ Mosaic's partners across workers ]
Ultralytics' Mosaic draws each partner from ``dataset.buffer``: the last
``max_buffer_length`` (min(n, 8 x batch, 1000)) photos its worker decoded, so the
partners depend on num_workers.  Here a batch's pool is the photos at the epoch's
last ``max_buffer_length`` positions up to the batch's end (EarlierSamples, sent by
the main process), whoever decoded them: as large, and the same for any num_workers.
Each photo is decoded once, by its batch's worker, into the Workspace slot of its
position (modulo the slots), and read there by the others once published.  A batch
waits only for earlier ones, so nothing deadlocks; the slots cover the window and
every batch in flight, so none is reused while a batch may read it.

NOTE [ A stored photo holds its own pages ]
A slot has room for the largest photo load_image can give (imgsz x imgsz), but most
photos are not square: a 640 x 480 one takes three quarters of it.  Where the kernel
reserves shared pages on request, the store is made without pages; the worker that
decodes a photo hands back its slot's pages past the photo and reserves the photo's
(a full /dev/shm: SharedMemoryError naming the photo, never a SIGBUS), and a reader
maps only the photo's pages.  The store then holds what its photos take, however
long the training runs.
"""
from __future__ import annotations

import time

import numpy as np

from ..._shared_pages import hand_back, map_in, reserve
from ..contract import HEADER_WIDTH, Workspace

_SEED, _POSITION, _STATE, _H0, _W0, _H, _W, _INDEX = range(HEADER_WIDTH)
#: a position's state: its photo is in its slot; it is not in the pool (unreadable);
#: it is, but not in a slot (larger than one, or not 3-channel uint8: read by load_image)
READY, ABSENT, OUTSIZED = 1, 2, 3
_FIRST_PAUSE, _LONGEST_PAUSE = 0.0002, 0.005  # seconds, while a photo is awaited


def seed_tag(seed: int) -> int:
    """The epoch seed as the header holds it (an int64)."""
    return seed & ((1 << 62) - 1)


class PhotoStore:
    """Decoded photos by position in the epoch's order, in a Workspace of ``slots``
    rows of ``capacity`` bytes; the header row of a slot says which epoch (its seed)
    and position it holds, whether it is ready, its index and sizes."""

    def __init__(self, workspace: Workspace, capacity: int, shared: bool = True,
                 sparse: bool = False):
        self.workspace = workspace
        self.capacity = capacity
        #: other processes publish in it: wait for them (else one process decodes
        #: every batch in turn, and what it never published is not in the pool)
        self.shared = shared
        #: made without pages: each photo reserves its own (NOTE [ A stored photo
        #: holds its own pages ])
        self.sparse = sparse
        self.slots = int(workspace.header.shape[0])
        self._views = None
        self._mapped: dict[int, int] = {}  # slot -> its bytes this process has mapped in

    def __getstate__(self):
        return {**self.__dict__, "_views": None, "_mapped": {}}

    def _slot(self, position: int, nbytes: int) -> np.ndarray:
        """Slot ``position``'s row, its first ``nbytes`` mapped into this process in
        one call the first time (NOTE [ A worker maps a slot in one call ]: a new
        worker every epoch); the whole row, unless the store is sparse."""
        slot = position % self.slots
        row = self._arrays()[0][slot]
        if self.shared and self._mapped.get(slot, 0) < nbytes:
            mapped = nbytes if self.sparse else row.nbytes
            map_in((row[:mapped],))
            self._mapped[slot] = mapped
        return row

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._views is None:
            data = self.workspace.data.numpy()
            self._views = (data[:self.slots * self.capacity].reshape(self.slots, self.capacity),
                           self.workspace.header.numpy())
        return self._views

    def out(self, position: int, h: int, w: int, index: int,
            where: object = "") -> np.ndarray | None:
        """Where the h x w BGR photo at ``position`` (the dataset's ``index``, decoded
        ``where``) goes (None: it is larger than a slot); in a sparse store, with the
        slot's pages past it handed back and its own reserved."""
        nbytes = h * w * 3
        if nbytes > self.capacity:
            return None
        if not self.sparse:
            return self._slot(position, nbytes)[:nbytes].reshape(h, w, 3)
        slot = position % self.slots
        data, header = self._arrays()
        with self.workspace.lock:
            kept = _kept_bytes(header[slot])
        if kept is None or kept > nbytes:
            hand_back(data[slot], nbytes, extra=0.0)
        if kept is None or kept < nbytes:
            reserve(data[slot, :nbytes], f"the decoded photo of index {index} (Mosaic's "
                    f"partners) {where}".rstrip())
            self._mapped[slot] = nbytes  # reserved here, so mapped here
        return self._slot(position, nbytes)[:nbytes].reshape(h, w, 3)

    def holds(self, position: int, bgr: np.ndarray) -> bool:
        """Whether ``bgr`` is the photo's place in the slot of ``position`` (``out``)."""
        return np.shares_memory(self._arrays()[0][position % self.slots], bgr)

    def publish(self, seed: int, entries) -> None:
        """entries: (position, index, state, original hw, resized hw), the photos
        written to their ``out`` before."""
        header = self._arrays()[1]
        with self.workspace.lock:  # the photos are seen written before their rows
            for position, index, state, ori, hw in entries:
                header[position % self.slots] = (seed_tag(seed), position, state, *ori, *hw,
                                                  index)

    def wait(self, seed: int, positions: np.ndarray) -> np.ndarray:
        """The header rows of ``positions`` of the epoch seeded ``seed``, once each is
        published (earlier batches publish them; none waits for a later one); in a
        store not ``shared``, a position never published is ABSENT."""
        header = self._arrays()[1]
        rows = positions % self.slots
        tag, pause = seed_tag(seed), _FIRST_PAUSE
        while True:
            with self.workspace.lock:
                got = header[rows]
            ours = (got[:, _SEED] == tag) & (got[:, _POSITION] == positions) & \
                (got[:, _STATE] > 0)
            if ours.all():
                return got
            if not self.shared:
                got[~ours, _STATE] = ABSENT
                return got
            time.sleep(pause)
            pause = min(2 * pause, _LONGEST_PAUSE)

    def grown(self, slots: int, make) -> PhotoStore:
        """A store of ``slots`` rows (``make(slots)`` its Workspace) holding what this
        one holds, each photo at its position's new slot."""
        bigger = PhotoStore(make(slots), self.capacity, self.shared)
        (data, header), (to_data, to_header) = self._arrays(), bigger._arrays()
        for row in header[header[:, _STATE] > 0]:
            to_header[row[_POSITION] % slots] = row
            to_data[row[_POSITION] % slots] = data[row[_POSITION] % self.slots]
        return bigger

    def photo(self, position: int, h: int, w: int) -> np.ndarray:
        return self._slot(position, h * w * 3)[:h * w * 3].reshape(h, w, 3)


def _kept_bytes(row: np.ndarray) -> int | None:
    """The bytes of its slot a sparse store keeps, from the slot's header row: its
    photo's, none before the first, unknown where the last photo did not arrive."""
    if row[_STATE] == READY:
        return int(row[_H]) * int(row[_W]) * 3
    return 0 if row[_STATE] == 0 else None


def held(row: np.ndarray) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """A header row's (index, original hw, resized hw)."""
    return int(row[_INDEX]), (int(row[_H0]), int(row[_W0])), (int(row[_H]), int(row[_W]))


def state_of(row: np.ndarray) -> int:
    return int(row[_STATE])
