"""Hugging Face ``datasets`` with an ``Image`` column, read without ``datasets``' PIL
decoding: a map-style dataset (public as ``jpegloader.datasets.HuggingFaceImages``).

NOTE [ Images in Arrow files ]
A ``datasets.Dataset`` loaded with ``load_dataset`` or ``load_from_disk`` is backed by
uncompressed Arrow files, memory-mapped, whose ``Image`` column holds structs of
``{bytes, path}``.  Each image's encoded bytes therefore lie contiguous at a fixed
offset in one of those files: the offsets are read from the Arrow buffers' addresses
in the memory map (no copy, no decode), once, and the accelerated path reads each
image's bytes at its span as it reads a tar shard's member (NOTE [ A shard's index ]
in shards.py).  An image stored as a path (no bytes) is its file, whole.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from .shards import EncodedImages


class HuggingFaceImages(EncodedImages):
    """A map-style ``torch.utils.data.Dataset`` over a ``datasets.Dataset`` with an
    ``Image`` feature: ``dataset[i]`` is ``(image, target)``, the image opened by PIL,
    converted to RGB and passed through ``transform``, the target read from
    ``label_column`` and passed through ``target_transform``.  ``datasets`` never
    decodes an image here; jpegloader.DataLoader reads the bytes straight from the
    dataset's Arrow files when it accelerates (NOTE [ Images in Arrow files ])."""

    def __init__(self, ds, transform: Callable | None = None,
                 target_transform: Callable | None = None, image_column: str = "image",
                 label_column: str | None = "label"):
        import datasets
        feature = ds.features.get(image_column)
        if not isinstance(feature, datasets.Image):
            raise ValueError(f"column {image_column!r} of the dataset is "
                             f"{type(feature).__name__ if feature is not None else 'missing'}, "
                             f"not an Image feature (columns: {', '.join(ds.column_names)})")
        if label_column is not None and label_column not in ds.column_names:
            raise ValueError(f"no column {label_column!r} for the targets (columns: "
                             f"{', '.join(ds.column_names)}); pass label_column=None for none")
        self.ds = ds
        self.raw = ds.cast_column(image_column, datasets.Image(decode=False))
        self.transform = transform
        self.target_transform = target_transform
        self.image_column = image_column
        self.label_column = label_column
        self.targets = np.asarray(ds[label_column], dtype=np.int64) if label_column else \
            np.full(len(ds), -1, np.int64)
        self._members = None

    def __len__(self) -> int:
        return len(self.raw)

    def read(self, index: int) -> bytes:
        cell = self.raw[int(index)][self.image_column]
        if cell.get("bytes") is not None:
            return cell["bytes"]
        if cell.get("path"):
            with open(cell["path"], "rb") as f:
                return f.read()
        raise ValueError(f"sample {index}: the {self.image_column!r} cell holds neither bytes "
                         "nor a path")

    def members(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray] | None:
        """(files, file of each sample, (offset, size) of its bytes there, targets), or
        None when the dataset is not backed by Arrow files on disk."""
        if self._members is None:
            self._members = arrow_spans(self.raw, self.image_column, self.targets)
        return self._members

    def __repr__(self) -> str:
        return f"HuggingFaceImages({len(self)} samples, transform={self.transform!r})"


def arrow_spans(raw, column: str, targets: np.ndarray):
    """(files, file of each row, (offset, size) of its image's bytes there, targets)
    for a datasets.Dataset whose ``column`` holds undecoded images, or None when it is
    not backed by Arrow files on disk (NOTE [ Images in Arrow files ])."""
    import pyarrow as pa
    files = [f["filename"] for f in raw.cache_files]
    if not files or sum(_rows(f) for f in files) != len(raw.data):
        return None  # in memory, or not exactly its files' rows
    names, file_of, spans = list(files), [], []
    for k, path in enumerate(files):
        with pa.memory_map(path) as mm:
            base = mm.read_buffer().address
            mm.seek(0)
            for batch in pa.ipc.open_stream(mm):
                cells = batch.column(batch.schema.get_field_index(column))
                data = cells.flatten()[0] if cells.offset else cells.field("bytes")
                validity, offsets, values = data.buffers()
                wide = pa.types.is_large_binary(data.type)
                o = np.frombuffer(offsets, np.int64 if wide else np.int32)[
                    data.offset:data.offset + len(data) + 1].astype(np.int64)
                start = (values.address - base) if values is not None else 0
                span = np.stack([start + o[:-1], o[1:] - o[:-1]], axis=1)
                missing = np.flatnonzero(np.asarray(data.is_null(), dtype=bool))
                file_col = np.full(len(data), k, np.int32)
                for row in missing:  # an image stored as a path: the file, whole
                    path_cell = cells[int(row)]["path"].as_py()
                    if not path_cell:
                        return None
                    names.append(path_cell)
                    file_col[row] = len(names) - 1
                    span[row] = (0, os.path.getsize(path_cell))
                file_of.append(file_col)
                spans.append(span)
    file_of = np.concatenate(file_of)
    spans = np.concatenate(spans)
    if raw._indices is not None:  # select/shuffle/filter: rows through the index
        rows = np.asarray(raw._indices.column(0).to_numpy(), np.int64)
        file_of, spans = file_of[rows], spans[rows]
    return names, file_of, spans, targets


def _rows(path: str) -> int:
    import pyarrow as pa
    with pa.memory_map(path) as mm:
        return sum(len(b) for b in pa.ipc.open_stream(mm))
