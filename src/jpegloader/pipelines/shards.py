"""WebDataset tar shards read where they are, without converting them: a map-style
dataset over the shards' members (public as ``jpegloader.datasets.WebDataset``).

A WebDataset shard is a tar file whose consecutive members sharing a key form one
sample (``n01440764_10026.jpg`` + ``n01440764_10026.cls``); the key is the member's
path up to the first dot of its file name, the rest its extension (webdataset's own
convention).  Shard lists use brace patterns as webdataset writes them
(``shard-{000000..000146}.tar``), globs, or URLs that fsspec reads (``s3://``,
``gs://``, ``https://``): remote shards are copied whole into a local cache once,
so an epoch reads each shard from the local disk.

NOTE [ A shard's index ]
Each shard's members are listed from its tar headers alone (tarfile seeks past
the data), once: the index (each sample's image offset and size, its target and
key) is cached on disk under the shard's identity (path, size and modification
time), and shared with workers as compact arrays in the loader's file table,
never as Python objects.  A sample's bytes are then read at their offset in the
shard, by this dataset's ``__getitem__`` (torch's loader) and by the accelerated
path alike.
"""
from __future__ import annotations

import glob
import hashlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from .read_files import read_span

IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "ppm", "bmp")
_BRACE = re.compile(r"\{([^{}]*)\}")
#: webdataset's split of a member name into key and extension
_KEY_EXT = re.compile(r"^((?:.*/|)[^./]+)\.([^/]*)$")
INDEX_VERSION = 1
_LG = logging.getLogger("jpegloader")


class ShardError(ValueError):
    """A shard that cannot be read as WebDataset samples; the message names the shard
    (and the member and the sample's index where there is one)."""


def expand_braces(pattern: str) -> list[str]:
    """``a-{000..002}.tar`` -> a-000.tar, a-001.tar, a-002.tar (zero padding kept);
    ``{a,b}`` lists; several groups multiply, as webdataset's braceexpand does."""
    m = _BRACE.search(pattern)
    if m is None:
        return [pattern]
    body, head, tail = m.group(1), pattern[:m.start()], pattern[m.end():]
    numeric = re.fullmatch(r"(\d+)\.\.(\d+)", body)
    if numeric:
        lo, hi = numeric.groups()
        width = len(lo) if lo.startswith("0") else 0
        step = 1 if int(hi) >= int(lo) else -1
        items = [str(k).zfill(width) for k in range(int(lo), int(hi) + step, step)]
    else:
        items = body.split(",")
    return [head + item + rest for item in items for rest in expand_braces(tail)]


def shard_list(urls: str | Sequence[str]) -> list[str]:
    """Every shard named by ``urls``: brace patterns expanded, local globs matched
    (sorted), in the order given."""
    patterns = [urls] if isinstance(urls, (str, os.PathLike)) else list(urls)
    shards = []
    for pattern in patterns:
        for url in expand_braces(os.fspath(pattern)):
            if "://" not in url and glob.has_magic(url):
                found = sorted(glob.glob(url))
                if not found:
                    raise FileNotFoundError(f"no shard matches {url!r}")
                shards += found
            else:
                shards.append(url)
    if not shards:
        raise ValueError(f"no shards in {urls!r}")
    return shards


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jpegloader" / "shards"


def local_copy(url: str, cache_dir: Path, retries: int = 3,
               storage_options: dict | None = None) -> str:
    """A remote shard copied whole into the cache (once; fsspec reads it), or a local
    path as it is.  Processes sharing the cache (the ranks on one node) download each
    shard once: the others wait on its lock.  Network errors are retried with
    backoff, then raised naming the URL."""
    if "://" not in url or url.startswith("file://"):
        return url[len("file://"):] if url.startswith("file://") else url
    import fcntl

    import fsspec
    name = hashlib.sha256(url.encode()).hexdigest()[:24]
    target, lock_path = cache_dir / "remote" / name, cache_dir / "locks" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            os.utime(target)  # recently used: bound_cache keeps it longest
            return str(target)
        for attempt in range(retries):
            partial = target.with_suffix(f".part{os.getpid()}")
            try:
                start = time.monotonic()
                with fsspec.open(url, "rb", **(storage_options or {})) as src, \
                        open(partial, "wb") as dst:
                    shutil.copyfileobj(src, dst, 8 << 20)
                os.replace(partial, target)
                size, took = target.stat().st_size, max(time.monotonic() - start, 1e-9)
                _LG.info("jpegloader: copied %s into the cache: %.1f MB at %.1f MB/s", url,
                         size / 1e6, size / 1e6 / took)
                return str(target)
            except OSError as e:  # fsspec's network errors are OSErrors (or subclasses)
                partial.unlink(missing_ok=True)
                if attempt + 1 == retries:
                    raise OSError(f"could not read shard {url} after {retries} tries: "
                                  f"{e}") from e
                time.sleep(0.5 * 2 ** attempt)
    raise AssertionError("unreachable")


def bound_cache(cache_dir: Path, limit: int, keep: set[str]) -> None:
    """Removes the least recently used remote copies until the cache holds at most
    ``limit`` bytes, never one in ``keep`` (the shards a dataset reads)."""
    remote = cache_dir / "remote"
    copies = [p for p in remote.glob("*") if ".part" not in p.name] if remote.is_dir() else []
    total = sum(p.stat().st_size for p in copies)
    for p in sorted(copies, key=lambda p: p.stat().st_mtime):
        if total <= limit:
            break
        if str(p) not in keep:
            total -= p.stat().st_size
            p.unlink(missing_ok=True)
    if total > limit:
        raise ShardError(f"the dataset's remote shards need {total / 2**30:.1f} GiB in "
                         f"{remote}, over cache_limit={limit / 2**30:.1f} GiB: raise the limit "
                         "or give cache_dir a larger disk")


class ShardIndex:
    """One shard's samples: image offset and size, target and key, as arrays."""

    def __init__(self, offsets: np.ndarray, sizes: np.ndarray, targets: np.ndarray,
                 keys: list[str]):
        self.offsets, self.sizes, self.targets, self.keys = offsets, sizes, targets, keys

    def __len__(self) -> int:
        return len(self.offsets)

    @classmethod
    def build(cls, path: str, target: str | None, image_exts: Sequence[str]) -> ShardIndex:
        """From the tar headers: NOTE [ A shard's index ]."""
        try:
            tar = tarfile.open(path, mode="r:")
        except tarfile.TarError as e:
            raise ShardError(f"{path} is not a tar file ({e}); a WebDataset shard is a tar "
                             "of samples") from None
        offsets, sizes, targets, keys = [], [], [], []
        with tar:
            members = []
            try:
                for info in tar:
                    if info.isfile():
                        members.append(info)
            except tarfile.TarError as e:
                raise ShardError(f"{path}: the tar ends early or is damaged after "
                                 f"{len(members)} members ({e})") from None
            end = os.path.getsize(path)
            for key, group in itertools.groupby(members, key=lambda m: _key_ext(m.name)[0]):
                group = list(group)
                by_ext = {_key_ext(m.name)[1].lower(): m for m in group}
                images = [by_ext[e] for e in by_ext if e in image_exts]
                where = f"shard {path}, sample {key!r} (sample {len(keys)} of the shard)"
                if len(images) != 1:
                    raise ShardError(f"{where}: {len(images)} image members "
                                     f"({', '.join(sorted(by_ext))}); a sample holds one "
                                     f"image, one of {', '.join(image_exts)}")
                image = images[0]
                if image.offset_data + image.size > end:
                    raise ShardError(f"{where}: the image member runs past the end of the "
                                     "shard (truncated)")
                offsets.append(image.offset_data)
                sizes.append(image.size)
                targets.append(_target(tar, by_ext, target, where))
                keys.append(key)
        return cls(np.asarray(offsets, np.int64), np.asarray(sizes, np.int64),
                   np.asarray(targets, np.int64), keys)

    @classmethod
    def load(cls, path: str, target: str | None, image_exts: Sequence[str],
             cache_dir: Path | None) -> ShardIndex:
        """The cached index when the shard is unchanged, else built and cached."""
        if cache_dir is None:
            return cls.build(path, target, image_exts)
        st = os.stat(path)
        ident = json.dumps([INDEX_VERSION, os.path.abspath(path), st.st_size, st.st_mtime_ns,
                            target, list(image_exts)])
        cached = cache_dir / "index" / (hashlib.sha256(ident.encode()).hexdigest()[:24] + ".npz")
        if cached.exists():
            with np.load(cached) as z:
                return cls(z["offsets"], z["sizes"], z["targets"],
                           bytes(z["keys"]).decode().split("\n") if z["offsets"].size else [])
        index = cls.build(path, target, image_exts)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(partial, offsets=index.offsets, sizes=index.sizes, targets=index.targets,
                 keys=np.frombuffer("\n".join(index.keys).encode(), np.uint8))
        os.replace(partial, cached)
        return index


def _key_ext(name: str) -> tuple[str, str]:
    m = _KEY_EXT.match(name)
    return (m.group(1), m.group(2)) if m else (name, "")


def _target(tar: tarfile.TarFile, by_ext: dict, target: str | None, where: str) -> int:
    if target is None:
        return -1
    field, _, json_key = target.partition(":")
    member = by_ext.get(field)
    if member is None:
        raise ShardError(f"{where}: no .{field} member for the target "
                         f"(members: {', '.join(sorted(by_ext))})")
    text = tar.extractfile(member).read()
    try:
        value = json.loads(text)[json_key] if json_key else int(text.decode().strip())
        return int(value)
    except (ValueError, KeyError, TypeError) as e:
        raise ShardError(f"{where}: the target {target!r} is not an integer "
                         f"({type(e).__name__}: {e})") from None


def _load_all(shards: list[str], target, image_exts, cache) -> list[ShardIndex]:
    """Every shard's index, with a progress line on stderr once it takes over a
    second (tqdm's bar when it is installed)."""
    indexes, start, bar = [], time.monotonic(), None
    for k, shard in enumerate(shards):
        indexes.append(ShardIndex.load(shard, target, image_exts, cache))
        if bar is None and k + 1 < len(shards) and time.monotonic() - start > 1.0:
            try:
                from tqdm import tqdm
                bar = tqdm(total=len(shards), initial=k + 1, unit="shard",
                           desc="jpegloader: indexing shards", leave=False)
            except ImportError:
                bar = _Progress(len(shards), k + 1)
        elif bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return indexes


class _Progress:
    """tqdm's few methods used here, as a line on stderr every few seconds."""

    def __init__(self, total: int, done: int):
        self.total, self.done, self.shown = total, done, 0.0

    def update(self, n: int) -> None:
        self.done += n
        if time.monotonic() - self.shown > 5.0:
            self.shown = time.monotonic()
            print(f"jpegloader: indexing shards: {self.done}/{self.total}", file=sys.stderr,
                  flush=True)

    def close(self) -> None:
        pass


class EncodedImages:
    """What WebDataset and HuggingFaceImages share: ``dataset[i]`` is ``(image,
    target)`` as an ImageFolder gives it, the image decoded by PIL from ``read(i)``'s
    bytes, converted to RGB and passed through ``transform``, ``targets[i]`` through
    ``target_transform``."""

    transform: Callable | None
    target_transform: Callable | None
    targets: np.ndarray

    def read(self, index: int) -> bytes:
        raise NotImplementedError

    def __getitem__(self, index: int):
        image = Image.open(io.BytesIO(self.read(index))).convert("RGB")
        target = int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class WebDataset(EncodedImages):
    """A map-style ``torch.utils.data.Dataset`` over WebDataset tar shards.

    ``dataset[i]`` is ``(image, target)`` as an ImageFolder gives it: the sample's
    image opened by PIL, converted to RGB and passed through ``transform``, and its
    target (from the sample's ``.cls`` member, or ``target="json:label"`` for a key of
    its ``.json``) through ``target_transform``.  ``urls``: paths, brace patterns,
    globs, or fsspec URLs (remote shards are copied once into ``cache_dir``).  The
    shards' indexes are built on first use from their tar headers and cached in
    ``cache_dir`` (default ``~/.cache/jpegloader/shards``; None: not cached).  Works
    with torch's DataLoader as it is; jpegloader.DataLoader accelerates it.
    ``storage_options`` go to fsspec for remote URLs (an S3 endpoint, credentials).
    ``cache_limit`` (bytes) bounds the remote copies kept in the cache: the least
    recently used other ones are removed.  ``ShardSampler`` shuffles it keeping
    locality."""

    def __init__(self, urls: str | Sequence[str], transform: Callable | None = None,
                 target_transform: Callable | None = None, *, target: str | None = "cls",
                 image_extensions: Sequence[str] = IMAGE_EXTENSIONS,
                 cache_dir: str | os.PathLike | None = ..., cache_limit: int | None = None,
                 storage_options: dict | None = None):
        self.urls = shard_list(urls)
        self.transform = transform
        self.target_transform = target_transform
        self.target = target
        cache = default_cache_dir() if cache_dir is ... else (
            Path(cache_dir) if cache_dir is not None else None)
        copies = cache or default_cache_dir()
        self.shards = [local_copy(u, copies, storage_options=storage_options)
                       for u in self.urls]
        if cache_limit is not None:
            bound_cache(copies, cache_limit, set(self.shards))
        indexes = _load_all(self.shards, target, tuple(image_extensions), cache)
        counts = np.array([len(ix) for ix in indexes], np.int64)
        #: per sample: its shard, image offset and size, target; keys for messages
        self.shard_of = np.repeat(np.arange(len(indexes), dtype=np.int32), counts)
        self.offsets = np.concatenate([ix.offsets for ix in indexes] or [np.zeros(0, np.int64)])
        self.sizes = np.concatenate([ix.sizes for ix in indexes] or [np.zeros(0, np.int64)])
        self.targets = np.concatenate([ix.targets for ix in indexes] or [np.zeros(0, np.int64)])
        # keys as one byte blob and offsets (not a list of 1.28 M Python strings)
        keys = [k.encode() for ix in indexes for k in ix.keys]
        self._key_offsets = np.zeros(len(keys) + 1, np.int64)
        np.cumsum([len(k) for k in keys], out=self._key_offsets[1:])
        self._keys = np.frombuffer(b"".join(keys), np.uint8) if keys else np.zeros(0, np.uint8)

    def __len__(self) -> int:
        return len(self.offsets)

    def key(self, index: int) -> str:
        """The sample's key (its members' common name in the shard)."""
        a, b = self._key_offsets[index], self._key_offsets[index + 1]
        return bytes(self._keys[a:b]).decode()

    def where(self, index: int) -> str:
        return f"shard {self.urls[self.shard_of[index]]}, sample {self.key(index)!r} " \
               f"(index {index})"

    def read(self, index: int) -> bytes:
        """The sample's image bytes, read at their offset in the shard."""
        size = int(self.sizes[index])
        try:
            data = read_span(self.shards[self.shard_of[index]], (self.offsets[index], size))
        except OSError as e:
            raise OSError(f"{self.where(index)}: cannot read the shard: {e}") from e
        if len(data) != size:
            raise ShardError(f"{self.where(index)}: the shard is shorter than its index "
                             "(rewritten or truncated since it was indexed)")
        return data

    def __repr__(self) -> str:
        return (f"WebDataset({len(self.urls)} shards, {len(self)} samples, "
                f"transform={self.transform!r})")


class ShardSampler(torch.utils.data.Sampler[int]):
    """A shuffle that keeps locality, as wids' chunked sampler does: the shards are
    shuffled, then the samples within each window of ``shards_per_window`` consecutive
    (shuffled) shards, so a worker reads from a few shards at a time instead of
    seeking over all of them.  The trade-off against ``shuffle=True``'s global
    shuffle: consecutive batches draw from the same few shards, so they are less
    independent; more shards per window mixes more.  ``set_epoch`` reshuffles, as
    DistributedSampler's does, and a loader's checkpoint records it."""

    def __init__(self, dataset: WebDataset, shards_per_window: int = 4, seed: int = 0):
        if shards_per_window < 1:
            raise ValueError(f"shards_per_window should be at least 1, got {shards_per_window}")
        self.starts = np.searchsorted(dataset.shard_of, np.arange(len(dataset.urls) + 1))
        self.shards_per_window = shards_per_window
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return int(self.starts[-1])

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.starts) - 1, generator=g).tolist()
        for w in range(0, len(order), self.shards_per_window):
            window = np.concatenate([np.arange(self.starts[k], self.starts[k + 1])
                                     for k in order[w:w + self.shards_per_window]])
            yield from window[torch.randperm(len(window), generator=g).numpy()].tolist()
