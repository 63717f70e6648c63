"""Datasets inside (nested) ``torch.utils.data.Subset``s: the base dataset and the map
from a loader index to its index, as every pipeline reads them, and the verdict's rule
on them."""
from __future__ import annotations

import numpy as np
from torch.utils.data import Subset

from .contract import Check, check


def unwrap_subsets(dataset) -> tuple[object, np.ndarray | None, list[str]]:
    """(base dataset, loader index -> base index or None, problems)."""
    indices = None
    problems = []
    while type(dataset) is Subset:
        try:
            mine = np.asarray(list(dataset.indices), dtype=np.int64)
        except (TypeError, ValueError):
            problems.append("a Subset's indices are not integers")
            mine = np.zeros(0, dtype=np.int64)
        n = len(dataset.dataset)
        if len(mine) and (mine.min() < -n or mine.max() >= n):
            problems.append(f"a Subset index is outside its dataset of {n} samples")
        mine = np.where(mine < 0, mine + n, mine)  # Python's negative indexing
        indices = mine if indices is None else mine[indices]
        dataset = dataset.dataset
    return dataset, indices, problems


def subset_check(indices: np.ndarray | None, problems: list[str]) -> Check:
    """The verdict's ``dataset.subset`` rule on what ``unwrap_subsets`` found."""
    return check("dataset.subset", not problems, "indices map into the dataset"
                 if indices is not None else "not a Subset", "; ".join(problems),
                 "give the Subset valid integer indices")
