"""Remote shards copied whole into a local cache shared by the processes of a node.

NOTE [ Cached copies are revalidated ]
A copy is served only while the object is the one copied: each construction
asks the store for the object's size and version (one ``info`` call, a HEAD on
S3), and a copy is kept under a name of that version, so a replaced object is a
new copy and a reader of the old one keeps reading what it indexed.  When the
store cannot be reached the newest copy is served with a warning.  Processes
sharing the cache copy each version once (the others wait on its lock); a
copier that died leaves a partial file the next one removes under that lock.
A dataset holds a shared lease on each copy it reads: ``cache_limit`` evicts
only copies no live reader holds, least recently used first, and is checked
before anything is copied.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import time
from pathlib import Path

_LG = logging.getLogger("jpegloader")
#: fsspec ``info`` fields that change when an object is replaced: its size and the
#: version the store gives (S3's ETag and version id, GCS's generation, HTTP's
#: validators, the memory filesystem's creation time)
_VERSION_FIELDS = ("size", "ETag", "etag", "VersionId", "version_id", "generation",
                   "LastModified", "last_modified", "Last-Modified", "mtime", "created",
                   "md5Hash", "Content-MD5", "crc32c")
#: what opening a file for writing in a read-only cache raises (a read-only mount; a
#: folder the user may not write)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
_READ_ONLY_SAID: set[str] = set()
#: errors of the local disk that no retry mends
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


class CacheLimitError(ValueError):
    """The remote shards a dataset needs do not fit its ``cache_limit``."""


def readable(size: float) -> str:
    """Bytes in the largest unit that keeps a number of at least 1 (1.5 GiB, 300 KiB)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _retried(action, what: str, retries: int):
    """``action()``, tried again with backoff on errors that a retry can mend; a missing
    or forbidden object fails at once (FileNotFoundError, PermissionError, naming
    ``what``), as does the cache's own disk (``CacheDiskError``).  Every failure keeps
    its cause; network errors that are not OSErrors (botocore's, aiohttp's) are
    caught too."""
    for attempt in range(retries):
        try:
            return action()
        except CacheDiskError:
            raise
        except (FileNotFoundError, PermissionError) as e:
            raise type(e)(e.errno, f"{what}: {e}") from e
        except Exception as e:  # noqa: BLE001 - any client's network error
            if attempt + 1 == retries:
                raise OSError(f"{what}: the store failed {retries} times, the last with "
                              f"{type(e).__name__}: {e}") from e
            time.sleep(0.5 * 2 ** attempt)
    raise AssertionError("unreachable")


def _where(fs, path: str) -> str:
    """The bucket and key of an object store's ``path`` (s3, gs, azure), else the path."""
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if protocols & {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl"}:
        bucket, _, key = path.partition("/")
        return f"bucket {bucket!r}, key {key!r}"
    return f"path {path!r}"


class CacheDiskError(OSError):
    """The cache's own disk failed (full, read-only): not the store's fault."""


class RemoteObject:
    """One remote shard as the store describes it now: its fsspec filesystem and path,
    its size and version, and the name its copy has in the cache."""

    def __init__(self, url: str, storage_options: dict | None, retries: int = 3):
        import fsspec
        self.url = url
        self.fs, self.path = fsspec.core.url_to_fs(url, **(storage_options or {}))
        self.name = hashlib.sha256(url.encode()).hexdigest()[:24]
        self.error: OSError | None = None
        self.fs.invalidate_cache(self.path)  # a real HEAD, not a listing remembered
        try:
            info = _retried(lambda: self.fs.info(self.path),
                            f"shard {url} in object storage", retries)
        except FileNotFoundError as e:
            raise FileNotFoundError(errno.ENOENT, f"shard {url} does not exist in object "
                                    f"storage ({_where(self.fs, self.path)}): check the URL, "
                                    "or upload it") from e
        except PermissionError:
            raise
        except OSError as e:  # unreachable: a cached copy may still serve
            self.error, self.size, self.copy_name = e, 0, None
            return
        version = {k: str(info[k]) for k in _VERSION_FIELDS if info.get(k) is not None}
        self.size = int(info.get("size") or 0)
        digest = hashlib.sha256(json.dumps(version, sort_keys=True).encode()).hexdigest()
        self.copy_name = f"{self.name}-{digest[:16]}"


class RemoteCache:
    """The folder of remote copies (``remote/``), their locks and leases."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.copies, self.locks, self.leases = (self.root / "remote", self.root / "locks",
                                                self.root / "leases")

    def _folders(self) -> None:
        for folder in (self.copies, self.locks, self.leases):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise CacheDiskError(e.errno, f"cannot make the shard cache {folder}: "
                                              f"{e.strerror}; pass cache_dir= a writable "
                                              "folder") from e

    def cached(self, obj: RemoteObject) -> bool:
        return obj.copy_name is not None and (self.copies / obj.copy_name).is_file()

    def copy(self, obj: RemoteObject, limit: int | None = None, retries: int = 3):
        """(the object's copy in the cache, made once, and a lease on it taken before
        anyone can evict it: NOTE [ Cached copies are revalidated ]).  With ``limit``,
        room is made under the cache-wide lock as a new copy is put in place, so that
        processes copying at once do not overshoot it together."""
        try:
            self._folders()
            lock = open(self.locks / obj.name, "w")  # noqa: SIM115 - closed by the with
        except OSError as e:
            if e.errno not in _READ_ONLY:
                raise
            return self._read_only(obj, e), None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            os.utime(self.locks / obj.name)  # recently used: kept longest
            for stale in self.copies.glob(f"{obj.name}-*.part*"):  # a dead copier's
                stale.unlink(missing_ok=True)
            if obj.error is not None:
                target = self._offline(obj)
                lease = self._leased(target)
                if lease is None:
                    raise OSError(f"the cached copy {target} of {obj.url} was evicted while "
                                  "the store could not be reached") from obj.error
                return target, lease
            target = self.copies / obj.copy_name
            lease = self._leased(target) if target.is_file() else None
            if lease is not None:
                return target, lease
            older = [p for p in self.copies.glob(f"{obj.name}-*") if ".part" not in p.name]
            if older:
                _LG.info("jpegloader: %s changed in object storage since it was copied: "
                         "copying it again", obj.url)
            partial = target.with_name(f"{target.name}.part{os.getpid()}")
            start = time.monotonic()
            try:
                _retried(lambda: _copy(obj, partial), f"shard {obj.url}", retries)
                lease = self._lease(target)  # taken before the copy is visible
                with self._whole():
                    if limit is not None:
                        self.bound(limit, incoming=_size(partial))
                    os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
            for old in older:  # an old version no reader holds
                self._evict(old)
            took = max(time.monotonic() - start, 1e-9)
            _LG.info("jpegloader: copied %s into the cache: %s at %.1f MB/s", obj.url,
                     readable(obj.size), obj.size / 1e6 / took)
            return target, lease

    def _read_only(self, obj: RemoteObject, e: OSError) -> Path:
        """NOTE [ A read-only shard cache ]
        A cache filled once and shared read-only (an HPC layout) takes no lock, lease
        nor new copy: a copy of the object's current version is served as it is (no
        process can evict it through a read-only mount), the newest copy when the
        store cannot be reached, and a missing one is an error saying that no copy can
        be made there.  Said once per cache folder."""
        if str(self.root) not in _READ_ONLY_SAID:
            _READ_ONLY_SAID.add(str(self.root))
            _LG.info("jpegloader: the shard cache %s is read-only (%s): serving its current "
                     "copies without locks or leases; no new copies can be made there",
                     self.root, e.strerror or e)
        if obj.error is not None:
            return self._offline(obj)
        target = self.copies / obj.copy_name
        if target.is_file():
            return target
        older = [p.name for p in self.copies.glob(f"{obj.name}-*") if ".part" not in p.name] \
            if self.copies.is_dir() else []
        held = f" (it holds an older version: {', '.join(older)})" if older else ""
        raise CacheDiskError(e.errno, f"shard {obj.url}: the shard cache {self.root} is "
                                      f"read-only ({e.strerror or e}) and holds no copy of "
                                      f"the object's current version{held}, and none can be "
                                      "made there: refill the cache where it can be written, "
                                      "or pass cache_dir= a writable folder") from e

    def _whole(self):
        """The cache-wide lock (held while copies are counted, evicted and added)."""
        whole = open(self.locks / ".cache", "w")  # noqa: SIM115 - closed by the caller's with
        fcntl.flock(whole, fcntl.LOCK_EX)
        return whole

    def trim(self, limit: int) -> None:
        """Back within ``limit`` as far as live readers allow (a read-only cache is left
        as it is)."""
        if self.locks.is_dir():
            try:
                whole = self._whole()
            except OSError as e:
                if e.errno in _READ_ONLY:
                    return
                raise
            with whole:
                self.bound(limit)

    def _offline(self, obj: RemoteObject) -> Path:
        found = sorted((p for p in self.copies.glob(f"{obj.name}-*") if ".part" not in p.name),
                       key=lambda p: p.stat().st_mtime)
        if not found:
            raise OSError(f"{obj.error} (and no copy of it is cached in {self.copies})") \
                from obj.error
        _LG.warning("jpegloader: could not check that the cached copy of %s is current (%s); "
                    "serving the copy made %s", obj.url, obj.error,
                    time.strftime("%Y-%m-%d %H:%M", time.localtime(found[-1].stat().st_mtime)))
        return found[-1]

    def _lease(self, copy: Path):
        """A shared lease on ``copy``, held while the returned file stays open (NOTE
        [ A lease file goes with its copy ])."""
        path = self.leases / copy.name
        while True:
            lease = open(path, "a")  # noqa: SIM115 - held by the dataset
            fcntl.flock(lease, fcntl.LOCK_SH)
            try:
                if os.stat(path).st_ino == os.fstat(lease.fileno()).st_ino:
                    return lease
            except FileNotFoundError:
                pass
            lease.close()  # removed by an eviction while this waited: take the new one

    def _leased(self, copy: Path):
        """A lease on an existing copy, or None when an eviction that held the lease
        file first removed the copy meanwhile (once the lease is held, none can)."""
        lease = self._lease(copy)
        if copy.is_file():
            return lease
        lease.close()
        return None

    def _evict(self, copy: Path) -> bool:
        """Removes ``copy`` unless a live reader holds a lease on it."""
        try:
            with open(self.leases / copy.name, "a") as lease:
                try:
                    fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return False
                copy.unlink(missing_ok=True)
                # NOTE [ A lease file goes with its copy ]
                # One lease file per copy ever made would pile up (one per object
                # version): the evictor, holding the lease exclusively, removes it with
                # the copy.  A reader that opened it meanwhile finds, once its shared
                # lock is granted, that the name no longer leads to the file it locked,
                # and opens the name again (_lease).
                (self.leases / copy.name).unlink(missing_ok=True)
                return True
        except OSError:
            return False

    def bound(self, limit: int, incoming: int = 0) -> None:
        """Removes the least recently used copies that no reader holds until the cache
        plus ``incoming`` bytes holds at most ``limit``."""
        if not self.copies.is_dir():
            return
        copies = [p for p in self.copies.glob("*") if ".part" not in p.name]
        total = sum(_size(p) for p in copies) + incoming

        def last_used(p: Path) -> float:
            lock = self.locks / p.name.split("-")[0]
            return _mtime(lock) if lock.exists() else _mtime(p)
        for p in sorted(copies, key=last_used):
            if total <= limit:
                return
            size = _size(p)
            if self._evict(p):
                total -= size
        if total > limit:
            _LG.warning("jpegloader: the shard cache %s holds %s, over cache_limit=%s: the "
                        "rest is read by running jobs", self.copies, readable(total),
                        readable(limit))


def _copy(obj: RemoteObject, partial: Path) -> None:
    """The object's bytes into ``partial``; the cache disk's failures are told apart."""
    with obj.fs.open(obj.path, "rb") as src:
        try:
            dst = open(partial, "wb")  # noqa: SIM115 - closed below
        except OSError as e:
            raise CacheDiskError(e.errno, f"cannot write into the cache {partial.parent}: "
                                          f"{e.strerror}") from e
        with dst:
            while True:
                chunk = src.read(8 << 20)
                if not chunk:
                    break
                try:
                    dst.write(chunk)
                except OSError as e:
                    if e.errno in _DISK_FULL:
                        raise CacheDiskError(e.errno, f"cannot write into the cache "
                                                      f"{partial.parent}: {e.strerror} (its "
                                                      "disk, not the store)") from e
                    raise


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def copy_all(urls: list[str], root: Path, storage_options: dict | None,
             limit: int | None) -> tuple[list[str], list]:
    """Each URL's local path (a remote one's copy in the cache under ``root``) and the
    leases held on the copies.  With ``limit``, the dataset's remote shards must fit
    it, which is checked before anything is copied, and copies no reader holds are
    evicted to make room.  The copies already cached are leased first, so that making
    room for the others cannot evict them."""
    remote = {u: RemoteObject(u, storage_options) for u in urls if _is_remote(u)}
    cache = RemoteCache(root)
    if limit is not None and remote:
        need = sum(o.size for o in remote.values())
        if need > limit:
            raise CacheLimitError(f"the dataset's {len(remote)} remote shards need "
                                  f"{readable(need)} in {cache.copies}, over cache_limit="
                                  f"{readable(limit)}: raise the limit or give cache_dir a "
                                  "larger disk")
    local: dict[str, tuple[Path, object]] = {}
    for u in sorted(remote, key=lambda u: not cache.cached(remote[u])):
        local[u] = cache.copy(remote[u], limit)
    if limit is not None and remote:
        cache.trim(limit)
    paths = [str(local[u][0]) if u in local else
             (u[len("file://"):] if u.startswith("file://") else u) for u in urls]
    return paths, [lease for _, lease in local.values() if lease is not None]


def release(leases: list, root: Path, limit: int | None) -> None:
    """A dataset's leases given up (it is gone), and the cache trimmed back to its
    limit where the copies it read held it over."""
    for lease in leases:
        lease.close()
    leases.clear()
    if limit is not None:
        with contextlib.suppress(OSError):
            RemoteCache(root).trim(limit)


def _is_remote(url: str) -> bool:
    return "://" in url and not url.startswith("file://")
