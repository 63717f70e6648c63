"""The benchmark's pictures (``--plot DIR``): PNGs drawn with matplotlib from the same
results the table reads.

    scaling.png  img/s of both loaders, and libjpeg-turbo's ceiling where it was
                 measured, against num_workers: one panel per pipeline
    stages.png   where jpegloader's time goes, ms per image, as stacked bars: one bar
                 per pipeline and worker count
    ratios.png   jpegloader's img/s over torch's, per pipeline and worker count, with
                 the range over the run's epoch pairs
"""
from __future__ import annotations

from pathlib import Path

from .report import SHOWN, STAGE_LABELS

#: the files ``plot`` writes, in the order it writes them
NAMES = ("scaling.png", "stages.png", "ratios.png")


def plot(results: dict, directory: Path) -> list[Path]:
    """Writes NAMES into ``directory`` (made if missing); returns their paths.  Needs
    matplotlib (pip install 'jpegloader[bench]')."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in zip(NAMES, (_scaling, _stages, _ratios)):
        fig = draw(plt, results)
        fig.tight_layout()
        paths.append(directory / name)
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def _scaling(plt, results: dict):
    panels = len(results)
    columns = min(panels, 3)
    rows = -(-panels // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.5 * rows),
                             squeeze=False)
    for ax, (pipeline, by_workers) in zip(axes.flat, results.items()):
        counts = sorted(by_workers)
        for name, style in (("native", "--o"), ("jpegloader", "-o")):
            ax.plot(counts, [by_workers[w][name]["img_per_s"] for w in counts], style,
                    label=SHOWN[name])
        measured = [w for w in counts if "ceiling" in by_workers[w]]
        if measured:
            ax.plot(measured, [by_workers[w]["ceiling"]["img_per_s"] for w in measured],
                    ":s", color="grey", label="libjpeg-turbo ceiling")
        ax.set_title(pipeline)
        ax.set_xlabel("num_workers")
        ax.set_ylabel("images / s")
        ax.set_xticks(counts)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[panels:]:
        ax.set_visible(False)
    return fig


def _bars(results: dict) -> list[tuple[str, dict]]:
    """(label, result) per pipeline and worker count, in the table's order."""
    return [(f"{pipeline}\nworkers={workers}", r)
            for pipeline, by_workers in results.items()
            for workers, r in sorted(by_workers.items())]


def _stages(plt, results: dict):
    bars = _bars(results)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(bars) + 2), 4))
    x = range(len(bars))
    bottom = [0.0] * len(bars)
    for key, label in STAGE_LABELS.items():
        values = [r["jpegloader"]["stages_ms_per_img"].get(key, 0.0) for _, r in bars]
        if any(values):
            # the main process blocked on the next batch, not a worker's stage
            ax.bar(x, values, bottom=bottom, label=label,
                   hatch="//" if key == "wait" else None)
            bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(list(x), [label for label, _ in bars], fontsize="small")
    ax.set_ylabel("ms per image")
    ax.set_title("where jpegloader's time goes\n(worker stages summed over workers; "
                 "hatched: the main process waiting)", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def _ratios(plt, results: dict):
    bars = _bars(results)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(bars) + 1), 4))
    ratios = [r["ratio"] for _, r in bars]
    pairs = [r.get("ratio_per_epoch_pair") or [r["ratio"]] for _, r in bars]
    spread = [[q - min(p) for q, p in zip(ratios, pairs)],
              [max(p) - q for q, p in zip(ratios, pairs)]]
    x = list(range(len(bars)))
    ax.bar(x, ratios, yerr=spread, capsize=4, color="tab:orange")
    for k, q in zip(x, ratios):
        ax.text(k, q / 2, f"{q:.2f}x", ha="center", fontsize="small")
    ax.axhline(1.0, color="grey", linewidth=1)
    ax.set_xticks(x, [label for label, _ in bars], fontsize="small")
    ax.set_ylabel("jpegloader img/s / torch img/s")
    ax.set_title("side by side, one run (bars: the range over epoch pairs)")
    ax.set_ylim(bottom=0)
    return fig
