"""Getting batches to where the model is: pinned host memory, then the device.

``pin`` mirrors torch: pinned only where an accelerator exists.  ``PinThread``
takes batches from the workers and pins them in a thread of its own, as torch's
loader does, so the training loop's thread only takes finished batches.
``host_copy`` and ``pin_batch`` make the pinned copies (NOTE [ Pinned copies bypass
the caches ]).  ``DeviceFeed`` starts each batch's copy to the device on a side
stream one batch ahead, so the copy overlaps the training step; ``finish`` makes the
consumer's stream wait for it and marks the tensors as used there (so the caching
allocator does not recycle them early).
"""
from __future__ import annotations

import collections.abc
import inspect
import queue
import threading
import weakref

import torch
from torch.utils.data._utils.pin_memory import pin_memory as torch_pin_memory

from ._host_copy import stream_copy


# NOTE [ Pinned in a thread of its own ]
# With pin_memory=True (and no device=), an epoch's batches are received from the
# workers, put in order, copied from their ring slots into pinned memory (torch's
# caching host allocator, so a non_blocking copy is tracked as with torch's loader)
# and their slots given back, all in one thread per epoch; ``next()`` only takes
# the finished batch from a queue of DEPTH.  Only that thread touches the worker
# pool while it runs: the epoch stops and joins it before it gives anything back.
# It holds the epoch only while it makes a batch, so an abandoned epoch is still
# collected, and its finalizer stops the thread.  What it raises (a worker's error,
# a timeout, an error in pinning, wrapped as torch wraps it) is raised by the
# ``next()`` that would have taken that batch; batches it pinned and nobody took
# are not counted as yielded, so a resume makes them again.
class PinThread:
    DEPTH = 2
    _BATCH, _END, _ERROR = range(3)

    def __init__(self, epoch, produce, stop: threading.Event):
        """``produce(epoch, stop)`` makes the epoch's next pinned batch."""
        self.stop = stop
        self.out: queue.Queue = queue.Queue(maxsize=self.DEPTH)
        self.thread = threading.Thread(
            target=_pin_loop, args=(weakref.ref(epoch), produce, self.out, self.stop),
            name="jpegloader pin memory", daemon=True)
        self.thread.start()

    def take(self):
        """The next pinned batch; StopIteration at the epoch's end, or what the thread
        raised."""
        while True:
            try:
                kind, value = self.out.get(timeout=1.0)
                break
            except queue.Empty:
                if not self.thread.is_alive():  # it ends only after putting its last word
                    raise RuntimeError("the pin memory thread exited without a batch") from None
        if kind == self._BATCH:
            return value
        if kind == self._END:
            raise StopIteration
        raise value

    def close(self) -> None:
        """Stops the thread and waits for it (it stops between two polls of the
        workers' results); batches it pinned and nobody took are dropped."""
        self.stop.set()
        if self.thread is not threading.current_thread():
            self.thread.join()
        while not self.out.empty():
            self.out.get_nowait()


def _pin_loop(ref, produce, out: queue.Queue, stop: threading.Event) -> None:
    # as torch's pin thread: its copies take one core, not the intra-op pool the
    # workers' cores are busy with (the setting is this thread's own)
    torch.set_num_threads(1)
    while not stop.is_set():
        epoch = ref()
        if epoch is None:
            return
        try:
            item = (PinThread._BATCH, produce(epoch, stop))
        except StopIteration:
            item = (PinThread._END, None)
        except Stopped:
            return
        except BaseException as e:  # noqa: BLE001 - handed to the thread that takes batches
            item = (PinThread._ERROR, e)
        del epoch
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                break
            except queue.Full:
                continue
        if item[0] != PinThread._BATCH:
            return


#: tensors of at least this many bytes are copied with streaming stores (csrc/host_copy.c)
STREAMED_BYTES = 1 << 16


def host_copy(t: torch.Tensor, pinned: bool) -> torch.Tensor:
    """A contiguous copy of ``t``; with ``pinned``, in pinned memory from torch's
    caching host allocator, a large one copied with streaming stores."""
    out = torch.empty(t.shape, dtype=t.dtype, pin_memory=pinned)
    if pinned and _streamed(t):
        stream_copy(_bytes_of(out), _bytes_of(t))
        return out
    return out.copy_(t)


def pin_batch(batch, own: bool = True):
    """``batch`` pinned as torch's loader pins it: its ``pin_memory`` walk (the
    structure whatever torch's version makes of it).  Where the batch's tensors are
    the loader's ``own`` (made in this process from a slot or a worker's message,
    so no one else holds them), each large one is first moved in place onto a
    pinned copy made by ``host_copy``, which that walk keeps as it is (an already
    pinned tensor's ``pin_memory()`` is itself)."""
    for t in _tensors_in(batch) if own else ():
        if _streamed(t) and not t.is_pinned():
            try:
                t.set_(host_copy(t, pinned=True))
            except RuntimeError:  # a leaf that requires grad, an inference tensor...
                pass              # left to torch's walk
    return torch_pin_memory(batch)


def _streamed(t: torch.Tensor) -> bool:
    return (t.nbytes >= STREAMED_BYTES and t.is_contiguous() and t.layout == torch.strided
            and not (t.is_conj() or t.is_neg() or t.requires_grad))


def _bytes_of(t: torch.Tensor):
    return t.reshape(-1).view(torch.uint8).numpy()


def _tensors_in(batch):
    """The tensors in ``batch``'s mappings and sequences (not in other objects)."""
    if isinstance(batch, torch.Tensor):
        yield batch
    elif isinstance(batch, collections.abc.Mapping):
        for value in batch.values():
            yield from _tensors_in(value)
    elif isinstance(batch, collections.abc.Sequence) and not isinstance(batch, (str, bytes)):
        for value in batch:
            yield from _tensors_in(value)


class Stopped(Exception):
    """The pin thread was asked to stop while it waited for a batch."""


def accelerator_available() -> bool:
    acc = getattr(torch, "accelerator", None)
    return bool(acc and acc.is_available())


class DeviceFeed:
    def __init__(self, device):
        self.device = torch.device(device)
        self.stream = None
        #: whether start() has read the host tensors when it returns (a copy from
        #: pageable memory to a CUDA device, or none): NOTE [ From the slot to the device ]
        self.reads_host_at_once = self.device.type in ("cuda", "cpu")
        if self.device.type == "cuda":
            self.stream = torch.cuda.Stream(self.device)

    def start(self, batch):
        if self.stream is None:
            return to_device(batch, self.device)
        with torch.cuda.stream(self.stream):
            return to_device(batch, self.device)

    def finish(self, moved):
        if self.stream is not None:
            current = torch.cuda.current_stream(self.device)
            current.wait_stream(self.stream)
            map_tensors(moved, lambda t: t.record_stream(current), into_objects=True)
        return moved


def to_device(batch, device: torch.device):
    """``batch`` on ``device``: every tensor in it, and every object with its own
    ``to()`` (DETR's ``NestedTensor``), moved with ``non_blocking=True`` where the
    object's ``to`` takes it."""
    return map_tensors(batch, lambda t: t.to(device, non_blocking=True),
                       lambda obj: _own_to(obj, device))


def map_tensors(batch, fn, on_object=None, into_objects: bool = False):
    """``batch`` with fn applied to every tensor in it, walked as torch's
    ``pin_memory`` walks a batch: mappings (their own type kept where it can be
    built from a dict), namedtuples, other sequences (strings are leaves).  An
    object with its own ``to()`` is handed to ``on_object`` when given; with
    ``into_objects`` fn also reaches the tensors among its attributes (in place)."""
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, (str, bytes)):
        return batch
    if isinstance(batch, collections.abc.Mapping):
        items = {k: map_tensors(v, fn, on_object, into_objects) for k, v in batch.items()}
        try:
            return type(batch)(items)
        except TypeError:  # a mapping that cannot be built from a dict
            return items
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(map_tensors(b, fn, on_object, into_objects) for b in batch))
    if isinstance(batch, collections.abc.Sequence):
        items = [map_tensors(b, fn, on_object, into_objects) for b in batch]
        try:
            return type(batch)(items)
        except TypeError:
            return items
    if callable(getattr(batch, "to", None)):
        if on_object is not None:
            return on_object(batch)
        if into_objects:
            for value in vars(batch).values() if hasattr(batch, "__dict__") else ():
                map_tensors(value, fn, None, True)
    return batch


def _own_to(obj, device: torch.device):
    """``obj.to(device, non_blocking=True)``, or ``obj.to(device)`` where its ``to``
    takes no such keyword (DETR's NestedTensor.to(device))."""
    try:
        params = inspect.signature(obj.to).parameters.values()
    except (TypeError, ValueError):
        params = ()
    takes = any(p.name == "non_blocking" or p.kind is p.VAR_KEYWORD for p in params)
    return obj.to(device, non_blocking=True) if takes else obj.to(device)
