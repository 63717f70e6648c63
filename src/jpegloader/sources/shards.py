"""WebDataset tar shards read where they are, without converting them: a map-style
dataset over the shards' members (public as ``jpegloader.datasets.WebDataset``).

A WebDataset shard is a tar file whose consecutive members sharing a key form one
sample (``n01440764_10026.jpg`` + ``n01440764_10026.cls``); the key is the member's
path up to the first dot of its file name, the rest its extension (webdataset's own
convention).  Shard lists use brace patterns as webdataset writes them
(``shard-{000000..000146}.tar``), globs, or URLs that fsspec reads (``s3://``,
``gs://``, ``https://``): remote shards are copied whole into a local cache
(remote_cache.py), so an epoch reads each shard from the local disk.

NOTE [ A shard's index ]
Each shard's members are listed from its tar headers alone (tarfile seeks past
the data), once: the index (each sample's image offset and size, its target and
key) is cached on disk under the shard's identity, and shared with workers as
compact arrays in the loader's file table, never as Python objects.  The
identity is (device, inode, size, mtime, ctime): a rewrite in place that keeps
the size and the mtime (``rsync -t``, ``cp -p``, ``os.utime``) still moves the
ctime, which no call can set back, and a replacement moves the inode.  The
dataset checks it again at every epoch start (``members``, which the loader
reads) and before each ``__getitem__`` read (one ``stat``), and indexes a changed
shard again: a stale offset or label is never served.  The cache is an
optimisation only: an entry that cannot be read is rebuilt, one that cannot be
written is skipped with one warning.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import itertools
import json
import logging
import os
import re
import sys
import tarfile
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from .file_table import Members, check_span
from .read_files import read_span
from .remote_cache import copy_all, release

IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "ppm", "bmp")
_BRACE = re.compile(r"\{([^{}]*)\}")
#: webdataset's split of a member name into key and extension
_KEY_EXT = re.compile(r"^((?:.*/|)[^./]+)\.([^/]*)$")
INDEX_VERSION = 3  # 3: each entry names the shard and identity it indexes
_LG = logging.getLogger("jpegloader")
#: cache folders whose index could not be written (warned once each)
_UNWRITABLE: set[str] = set()


class ShardError(ValueError):
    """A shard that cannot be read as WebDataset samples; the message names the shard
    (and the member and the sample's index where there is one)."""


def shard_identity(path: str) -> tuple[int, ...]:
    """What changes whenever a local shard's content can have: NOTE [ A shard's index ]."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


#: seconds a shard's timestamps may lag the change that set them: whole seconds on
#: ext4 with 128-byte inodes, ext3, many network filesystems; two on FAT
TIMESTAMP_TICK = 2.0


def racy(identity: tuple[int, ...], indexed_at: float) -> bool:
    """NOTE [ A rewrite within a timestamp's tick ]
    On a filesystem whose timestamps tick in whole seconds, a shard rewritten in
    place at the same size within the tick it was indexed in keeps its whole
    identity (mtime and ctime included), so the identity cannot tell the index is
    stale.  As git does with its racily clean index, an identity is trusted only
    when the shard's last change is at least TIMESTAMP_TICK older than the moment
    indexing began; a racy one is indexed again (at a dataset's construction and
    each epoch start), which costs nothing once the shard has aged past the tick.
    Clocks that differ between a file server and this host by more than the tick
    are not covered: docs/reliability.md."""
    return max(identity[3], identity[4]) >= (indexed_at - TIMESTAMP_TICK) * 1e9


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


class ShardIndex:
    """One shard's samples: image offset and size, target and key, as arrays."""

    def __init__(self, offsets: np.ndarray, sizes: np.ndarray, targets: np.ndarray,
                 keys: list[str], skipped: list[tuple[str, str]] | None = None):
        self.offsets, self.sizes, self.targets, self.keys = offsets, sizes, targets, keys
        self.skipped = skipped or []  # (key, why) of samples left out (on_error="skip")

    def __len__(self) -> int:
        return len(self.offsets)

    @classmethod
    def build(cls, path: str, target: str | None, image_exts: Sequence[str],
              skip_bad: bool = False) -> ShardIndex:
        """From the tar headers: NOTE [ A shard's index ].  With ``skip_bad`` a sample
        whose members cannot be indexed is left out and listed in ``skipped`` (key,
        why) instead of failing the shard."""
        try:
            tar = tarfile.open(path, mode="r:")
        except tarfile.TarError as e:
            raise ShardError(f"{path} is not a tar file ({e}); a WebDataset shard is a tar "
                             "of samples") from None
        offsets, sizes, targets, keys, skipped = [], [], [], [], []
        with tar:
            members, regular = [], {}
            try:
                for info in tar:
                    if info.isfile():
                        regular[info.name] = info
                    if info.isfile() or info.islnk() or info.issym():
                        members.append(info)
            except tarfile.TarError as e:
                raise ShardError(f"{path}: the tar ends early or is damaged after "
                                 f"{len(members)} members ({e})") from None
            end = os.path.getsize(path)
            groups = itertools.groupby(members, key=lambda m: _key_ext(m.name)[0])
            for number, (key, group) in enumerate(groups):
                where = f"shard {path}, sample {key!r} (sample {number} of the shard)"
                try:
                    by_ext = _sample_members(list(group), regular, where)
                    images = [by_ext[e] for e in by_ext if e in image_exts]
                    if len(images) != 1:
                        raise ShardError(f"{where}: {len(images)} image members "
                                         f"({', '.join(sorted(by_ext))}); a sample holds one "
                                         f"image, one of {', '.join(image_exts)}")
                    image = images[0]
                    if image.offset_data + image.size > end:
                        raise ShardError(f"{where}: the image member runs past the end of "
                                         "the shard (truncated)")
                    label = _target(tar, by_ext, target, where)
                except ShardError as e:
                    if not skip_bad:
                        raise
                    skipped.append((key, str(e)))
                    continue
                offsets.append(image.offset_data)
                sizes.append(image.size)
                targets.append(label)
                keys.append(key)
        return cls(np.asarray(offsets, np.int64), np.asarray(sizes, np.int64),
                   np.asarray(targets, np.int64), keys, skipped)

    @classmethod
    def load(cls, path: str, target: str | None, image_exts: Sequence[str],
             cache_dir: Path | None, skip_bad: bool = False,
             name: str | None = None) -> ShardIndex:
        """The cached index when the shard is unchanged (NOTE [ A shard's index ]),
        else built, and cached where the cache can be written.  ``name``: what the
        shard is to its user (a remote shard's URL; default its local path), so that
        the entry of a new version of it replaces the old one's."""
        if cache_dir is None:
            return cls.build(path, target, image_exts, skip_bad)
        folder = cache_dir / "index"
        # one entry per (shard, target, extensions, mode): a new identity replaces the old
        stem = _digest([INDEX_VERSION, name or os.path.abspath(path), target,
                        list(image_exts), skip_bad])
        identity = shard_identity(path)
        cached = folder / f"{stem}-{_digest(identity)}.npz"
        started = time.time()
        try:
            with np.load(cached) as z:
                # an entry names what it indexes: another shard's, copied or restored
                # under this name, is not taken for this one's
                of = json.loads(bytes(z["of"]).decode())
                if of[:2] != [os.path.abspath(path), list(identity)]:
                    raise ValueError(f"it indexes {of[0]} as it was at {of[1]}, not this "
                                     "shard as it is now")
                # NOTE [ A rewrite within a timestamp's tick ]; a remote shard's copy is
                # never rewritten in place (a new version is a new copy)
                if name is not None or not racy(identity, of[2]):
                    return cls(z["offsets"], z["sizes"], z["targets"],
                               bytes(z["keys"]).decode().split("\n") if z["offsets"].size
                               else [],
                               [tuple(x) for x in json.loads(bytes(z["skipped"]).decode())])
        except (FileNotFoundError, NotADirectoryError):
            pass
        except Exception as e:  # noqa: BLE001 - a damaged entry is rebuilt, whatever numpy says
            _LG.warning("jpegloader: the cached index %s of shard %s cannot be read (%s: %s); "
                        "indexing the shard again", cached, path, type(e).__name__, e)
        index = cls.build(path, target, image_exts, skip_bad)
        index._save(cached, stem, [os.path.abspath(path), list(identity), started])
        return index

    def _save(self, cached: Path, stem: str, of: list) -> None:
        partial = cached.with_name(f"{cached.stem}.{os.getpid()}.tmp.npz")
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            np.savez(partial, offsets=self.offsets, sizes=self.sizes, targets=self.targets,
                     keys=np.frombuffer("\n".join(self.keys).encode(), np.uint8),
                     skipped=np.frombuffer(json.dumps(self.skipped).encode(), np.uint8),
                     of=np.frombuffer(json.dumps(of).encode(), np.uint8))
            os.replace(partial, cached)
        except OSError as e:
            if str(cached.parent) not in _UNWRITABLE:
                _UNWRITABLE.add(str(cached.parent))
                _LG.warning("jpegloader: cannot write shard indexes into %s (%s); going on "
                            "without caching them (pass cache_dir= a writable folder, or "
                            "None)", cached.parent, e)
            return
        finally:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
        stale = time.time() - 600  # a temporary file that old lost its writer
        for old in cached.parent.glob(f"{stem}-*.npz"):
            if old != cached and (".tmp." not in old.name or _mtime(old) < stale):
                old.unlink(missing_ok=True)


def _index_name(shard: str, url: str) -> str | None:
    """A remote shard's index is named by its URL (its copies, one per version, come
    and go); a local one's by its path."""
    return url if shard != url and "://" in url else None


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:24]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")


def _identity_or_none(path: str) -> tuple[int, ...] | None:
    try:
        return shard_identity(path)
    except OSError:
        return None


def _sample_members(group: list, regular: dict, where: str) -> dict:
    """A sample's members by extension, a hard link resolved to the member holding its
    data; a repeated member (two samples merged by a repeated key) or a symbolic link
    is an error naming it."""
    by_ext = {}
    for m in group:
        ext = _key_ext(m.name)[1].lower()
        if ext in by_ext:
            raise ShardError(f"{where}: the member {m.name!r} appears twice (duplicate file "
                             "name in the tar: two samples with one key); give each sample "
                             "its own key")
        if m.issym():
            raise ShardError(f"{where}: the member {m.name!r} is a symbolic link (to "
                             f"{m.linkname!r}), which holds no data in the tar; write the "
                             "shard with the files themselves (tar --dereference)")
        if m.islnk():
            data = regular.get(m.linkname)
            if data is None:
                raise ShardError(f"{where}: the member {m.name!r} is a hard link to "
                                 f"{m.linkname!r}, which is not earlier in the shard")
            m = data
        by_ext[ext] = m
    return by_ext


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


def _load_all(shards: list[str], names: list[str | None], target, image_exts, cache,
              skip_bad) -> list[ShardIndex]:
    """Every shard's index, with a progress line on stderr once it takes over a
    second (tqdm's bar when it is installed)."""
    indexes, start, bar = [], time.monotonic(), None
    for k, shard in enumerate(shards):
        indexes.append(ShardIndex.load(shard, target, image_exts, cache, skip_bad, names[k]))
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

    ``dataset[i]`` is ``(image, target)`` as an ImageFolder gives it.  Works with
    torch's DataLoader as it is; jpegloader.DataLoader accelerates it.  A shard
    rewritten or an object replaced since it was indexed or copied is indexed or
    copied again (NOTE [ A shard's index ], NOTE [ Cached copies are revalidated ]).
    ``ShardSampler`` shuffles it keeping locality.

    Args:
        urls: shard paths, brace patterns (``shard-{000000..000146}.tar``), globs, or
            fsspec URLs (``s3://``, ``gs://``, ``https://``; copied whole into the
            cache once, revalidated on each construction).
        transform: applied to the sample's image, opened by PIL and converted to RGB.
        target_transform: applied to the target.
        target: the member holding the target: ``"cls"`` (an integer), or
            ``"json:label"`` for a key of the ``.json`` member; None: no target (-1).
        image_extensions: the members that are a sample's image.
        cache_dir: where shard indexes and remote copies are kept (default
            ``~/.cache/jpegloader/shards``; None: indexes are not cached).  A cache
            that cannot be read or written slows the dataset, never stops it.
        cache_limit: bytes of remote copies kept: the dataset's remote shards must
            fit it (checked before anything is copied), and the least recently used
            copies no running dataset reads are removed to make room.
        storage_options: fsspec's options for remote URLs (an S3 endpoint,
            credentials).
        on_error: "raise" (a sample whose members cannot be indexed fails the
            dataset, naming the shard and the member) or "skip" (it is left out,
            logged, and listed in ``skipped``).
    """

    def __init__(self, urls: str | Sequence[str], transform: Callable | None = None,
                 target_transform: Callable | None = None, *, target: str | None = "cls",
                 image_extensions: Sequence[str] = IMAGE_EXTENSIONS,
                 cache_dir: str | os.PathLike | None = ..., cache_limit: int | None = None,
                 storage_options: dict | None = None, on_error: str = "raise"):
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error should be 'raise' or 'skip', got {on_error!r}")
        self.urls = shard_list(urls)
        self.on_error = on_error
        self.transform = transform
        self.target_transform = target_transform
        self.target = target
        cache = default_cache_dir() if cache_dir is ... else (
            Path(cache_dir) if cache_dir is not None else None)
        # NOTE [ Cached copies are revalidated ] (remote_cache.py); the leases are held
        # as long as this dataset (and its forked workers) lives
        copies = cache or default_cache_dir()
        self.shards, self._leases = copy_all(self.urls, copies, storage_options, cache_limit)
        self._release = weakref.finalize(self, release, self._leases, copies, cache_limit)
        self._cache, self._image_exts = cache, tuple(image_extensions)
        # taken before indexing: a change while indexing shows at the next check
        #: each shard's index name: a remote one's URL, None for a local one
        self._names = [_index_name(s, u) for s, u in zip(self.shards, self.urls)]
        self._indexed_at = [time.time()] * len(self.shards)
        self._identities = [_identity_or_none(s) for s in self.shards]
        self._set_indexes(_load_all(self.shards, self._names, target, self._image_exts,
                                    cache, on_error == "skip"))

    def _set_indexes(self, indexes: list[ShardIndex]) -> None:
        self._indexes = indexes
        #: (shard URL, key, why) of each sample left out with on_error="skip"
        self.skipped = [(self.urls[k], key, why) for k, ix in enumerate(indexes)
                        for key, why in ix.skipped]
        for url, key, why in self.skipped:
            _LG.warning("jpegloader: left out sample %r of shard %s (on_error='skip'): %s",
                        key, url, why)
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

    def refresh(self) -> list[str]:
        """Indexes again every shard whose content changed since it was indexed
        (NOTE [ A shard's index ]); returns their URLs.  A shard that cannot be
        opened now is left as it is: reading its samples says why."""
        started = time.time()
        now = [_identity_or_none(s) for s in self.shards]
        changed = [k for k, (was, is_) in enumerate(zip(self._identities, now))
                   if is_ is not None and (is_ != was or (
                       self._names[k] is None and racy(is_, self._indexed_at[k])))]
        if not changed:
            return []
        indexes = list(self._indexes)
        for k in changed:
            indexes[k] = ShardIndex.load(self.shards[k], self.target, self._image_exts,
                                         self._cache, self.on_error == "skip",
                                         self._names[k])
            how = "changed since it was indexed" if now[k] != self._identities[k] else \
                "was last changed within a timestamp's tick of its indexing"
            _LG.info("jpegloader: shard %s %s; indexed it again: %d samples (were %d)",
                     self.urls[k], how, len(indexes[k]), len(self._indexes[k]))
            self._identities[k], self._indexed_at[k] = now[k], started
        self._set_indexes(indexes)
        return [self.urls[k] for k in changed]

    def members(self) -> Members:
        """The samples as spans of the shards, as the loader reads them at each epoch
        start: changed shards indexed again first."""
        self.refresh()
        return Members(list(self.shards), self.shard_of,
                       np.stack([self.offsets, self.sizes], axis=1), self.targets)

    def __len__(self) -> int:
        return len(self.offsets)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_leases"] = []  # held by the process that built the dataset
        state["_release"] = None
        return state

    def key(self, index: int) -> str:
        """The sample's key (its members' common name in the shard)."""
        a, b = self._key_offsets[index], self._key_offsets[index + 1]
        return bytes(self._keys[a:b]).decode()

    def where(self, index: int) -> str:
        return f"shard {self.urls[self.shard_of[index]]}, sample {self.key(index)!r} " \
               f"(index {index})"

    def read(self, index: int) -> bytes:
        """The sample's image bytes, read at their offset in the shard (indexed again
        first if it changed: NOTE [ A shard's index ])."""
        shard = int(self.shard_of[index])
        if _identity_or_none(self.shards[shard]) not in (None, self._identities[shard]):
            where, count = self.where(index), len(self)
            try:
                self.refresh()
            except ShardError as e:
                raise ShardError(f"{where}: the shard changed since it was indexed and "
                                 f"cannot be indexed again: {e}") from None
            if len(self) != count:
                raise ShardError(f"{where}: the shard was rewritten during the epoch and "
                                 f"the dataset now holds {len(self)} samples, not {count}: "
                                 "the sampler's indices no longer name the same samples; "
                                 "start the epoch again")
        size = int(self.sizes[index])
        try:
            data = read_span(self.shards[self.shard_of[index]], (self.offsets[index], size))
        except OSError as e:
            raise OSError(f"{self.where(index)}: cannot read the shard: {e}") from e
        return check_span(data, size, self.where(index))

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
    DistributedSampler's does, and a loader's checkpoint records it.

    Args:
        dataset: the WebDataset whose samples are drawn.
        shards_per_window: how many shards' samples are shuffled together.
        seed: the shuffle's seed; the epoch is added to it.
    """

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
