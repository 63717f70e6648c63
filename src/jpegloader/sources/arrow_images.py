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

from .file_table import Members
from .shards import EncodedImages


class HuggingFaceImages(EncodedImages):
    """A map-style ``torch.utils.data.Dataset`` over a ``datasets.Dataset`` with an
    ``Image`` feature: ``dataset[i]`` is ``(image, target)``, the image opened by PIL,
    converted to RGB and passed through ``transform``, the target read from
    ``label_column`` and passed through ``target_transform``.  ``datasets`` never
    decodes an image here; jpegloader.DataLoader reads the bytes straight from the
    dataset's Arrow files when it accelerates (NOTE [ Images in Arrow files ]).

    Args:
        ds: the ``datasets.Dataset`` (saved to disk and loaded, or as ``load_dataset``
            gives it, for the loader to read its Arrow files).
        transform: applied to the image, opened by PIL and converted to RGB.
        target_transform: applied to the target.
        image_column: the column with the ``Image`` feature.
        label_column: the column of integer targets; None: no target (-1).
    """

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
        if cell is None:
            raise ValueError(f"sample {index}: its {self.image_column!r} cell is empty (None): "
                             "the dataset holds no image for it; filter such rows out "
                             f"(ds.filter(lambda r: r[{self.image_column!r}] is not None)), "
                             "or pass on_error='skip' to jpegloader.DataLoader")
        if cell.get("bytes") is not None:
            return cell["bytes"]
        if cell.get("path"):
            with open(cell["path"], "rb") as f:
                return f.read()
        raise ValueError(f"sample {index}: the {self.image_column!r} cell holds neither bytes "
                         "nor a path")

    def members(self) -> Members | None:
        """The samples as spans of the Arrow files, or None when the dataset is not
        backed by Arrow files on disk."""
        if self._members is None:
            self._members = arrow_spans(self.raw, self.image_column, self.targets)
        return self._members

    def __repr__(self) -> str:
        return f"HuggingFaceImages({len(self)} samples, transform={self.transform!r})"


def arrow_spans(raw, column: str, targets: np.ndarray):
    """(files, file of each row, (offset, size) of its image's bytes there, targets)
    for a datasets.Dataset whose ``column`` holds undecoded images, or None when it is
    not backed by Arrow files on disk (NOTE [ Images in Arrow files ])."""
    blocks = _file_blocks(raw, column)
    if blocks is None:
        return None
    per_file: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    names: list[str] = []
    file_of, spans = [], []
    for path, start, count in blocks:
        if path not in per_file:
            found = _file_spans(path, column, names)
            if found is None:
                return None
            per_file[path] = found
        f, sp = per_file[path]
        if start + count > len(f):
            return None
        file_of.append(f[start:start + count])
        spans.append(sp[start:start + count])
    file_of = np.concatenate(file_of) if file_of else np.zeros(0, np.int32)
    spans = np.concatenate(spans) if spans else np.zeros((0, 2), np.int64)
    if raw._indices is not None:  # select/shuffle/filter: rows through the index
        rows = np.asarray(raw._indices.column(0).to_numpy(), np.int64)
        file_of, spans = file_of[rows], spans[rows]
    if len(file_of) != len(targets):
        return None
    return Members(names, file_of, spans, targets)


#: datasets' replayed table operations that keep the rows as they are
_ROWS_KEPT = {"cast", "replace_schema_metadata", "drop", "remove_column", "rename_columns",
              "select", "flatten", "combine_chunks", "add_column", "append_column",
              "set_column"}


def _file_blocks(raw, column: str) -> list[tuple[str, int, int]] | None:
    """The dataset's table as (Arrow file, first row, rows) blocks, in order: datasets
    keeps a memory-mapped file's table with the operations it replays on it (a
    contiguous select is a slice).  None when a block is not a file on disk."""
    table = raw.data
    rows = getattr(table, "blocks", None) or [[table]]
    out = []
    for row in rows:
        block = next((b for b in row if column in b.column_names), None)
        path = getattr(block, "path", None)
        if path is None:
            return None
        start, count = 0, None
        for op, args, _ in getattr(block, "replays", None) or ():
            if op == "slice":
                offset, length = args[0], args[1] if len(args) > 1 else None
                start += offset
                count = length if count is None or length is None else \
                    min(length, count - offset)
            elif op not in _ROWS_KEPT:
                return None
        out.append((path, start, len(block) if count is None else count))
        if len(block) != out[-1][2]:
            return None
    return out


def _file_spans(path: str, column: str, names: list[str]):
    """(file of each row, (offset, size) of its image's bytes) for one Arrow file,
    its name (and any image files stored by path) added to ``names``."""
    import pyarrow as pa
    names.append(path)
    k = len(names) - 1
    file_of, spans = [], []
    with pa.memory_map(path) as mm:
        base = mm.read_buffer().address
        mm.seek(0)
        for batch in pa.ipc.open_stream(mm):
            cells = batch.column(batch.schema.get_field_index(column))
            data = cells.flatten()[0] if cells.offset else cells.field("bytes")
            _, offsets, values = data.buffers()
            wide = pa.types.is_large_binary(data.type)
            o = np.frombuffer(offsets, np.int64 if wide else np.int32)[
                data.offset:data.offset + len(data) + 1].astype(np.int64)
            start = (values.address - base) if values is not None else 0
            span = np.stack([start + o[:-1], o[1:] - o[:-1]], axis=1)
            file_col = np.full(len(data), k, np.int32)
            for row in np.flatnonzero(np.asarray(data.is_null(), dtype=bool)):
                cell = cells[int(row)]
                path_cell = cell["path"].as_py() if cell.is_valid else None
                if not path_cell:  # an empty cell: no bytes; read, it says what it is
                    span[row] = (0, 0)
                    continue
                names.append(path_cell)  # an image stored by path
                file_col[row] = len(names) - 1
                span[row] = (0, os.path.getsize(path_cell))
            file_of.append(file_col)
            spans.append(span)
    if not file_of:
        return np.zeros(0, np.int32), np.zeros((0, 2), np.int64)
    return np.concatenate(file_of), np.concatenate(spans)
