"""The benchmark's report: the table and the stage breakdown."""
from __future__ import annotations

from .memory import where_held

STAGE_LABELS = {"read": "read", "decode": "decode", "augment": "augment",
                "python_path": "PIL path", "yours": "yours", "wait": "waited",
                "assembly": "assembly", "pin_copy": "pin/copy"}


#: how the report names each loader (the JSON keeps "native" for torch's)
SHOWN = {"native": "torch", "jpegloader": "jpegloader"}


def table(results: dict, pil: dict) -> str:
    wide = _width(results)
    lines = [f"torch = torch.utils.data.DataLoader, PIL from {pil['distribution']} "
             f"{pil['version']}" + (" (SIMD resize: a faster path than Pillow's)"
                                    if pil["distribution"] == "pillow-simd" else "")
             + "; jpegloader's 'native' steps are the ones its C core runs",
             f"{'pipeline':{wide}s} {'workers':>7s} {'loader':10s} {'img/s':>7s} {'ratio':>6s} "
             f"{'ceiling':>7s} {'CPU ms/img':>10s} {'1st batch s':>11s} "
             f"{'worker RSS MiB':>14s} {'PSS MiB':>7s} {'held MiB':>8s}"]
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            for name in ("native", "jpegloader"):
                s = r[name]
                ratio = f"{r['ratio']:.2f}x" if name == "jpegloader" else ""
                lines.append(f"{pipeline:{wide}s} {workers:>7} {SHOWN[name]:10s} "
                             f"{s['img_per_s']:7.0f} "
                             f"{ratio:>6s} {_maybe(s, 'of_ceiling', '{:.0%}'):>7s} "
                             f"{s['cpu_ms_per_img']:10.2f} {s['first_batch_s']:11.2f} "
                             f"{s['worker_peak_mib']:14.0f} {_maybe(s, 'pss_mib', '{:.0f}'):>7s} "
                             f"{_maybe(s, 'held_mib', '{:.0f}'):>8s}")
    ceilings = [(p, w, r["ceiling"]) for p, by in results.items() for w, r in by.items()
                if "ceiling" in r]
    for pipeline, workers, c in ceilings:
        lines.append(f"ceiling {pipeline} workers={workers}: libjpeg-turbo alone (jpeg_limit "
                     f"{c['mode']}, {c['processes']} at once, files shuffled) "
                     f"{c['img_per_s']:.0f} img/s, "
                     f"{c['cpu_us_per_img'] / 1000:.2f} CPU ms/img, the median of "
                     f"{len(c['img_per_s_per_round'])} passes beside the epochs "
                     f"({min(c['img_per_s_per_round']):.0f}-"
                     f"{max(c['img_per_s_per_round']):.0f})")
    if any("pss_mib" in r["native"] for by in results.values() for r in by.values()):
        runs = max(len(r["native"].get("pss_mib_per_run", ())) for by in results.values()
                   for r in by.values())
        lines.append("PSS: summed over the main process and workers, each loader alone in a "
                     f"new process, the median of {runs} run{'s' * (runs != 1)}; held: PSS plus "
                     "shared memory no process maps (torch's queued batches), see "
                     "jpegloader.bench.memory")
        lines += _memory_parts(results)
    sweep = _sweep(results)
    if sweep:
        lines += ["", *sweep]
    lines.append("")
    lines.append("where jpegloader's time goes, ms per image (worker stages summed over "
                 "workers; 'waited' is the training loop blocked on the next batch):")
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            stages = r["jpegloader"]["stages_ms_per_img"]
            parts = "  ".join(f"{STAGE_LABELS.get(k, k)} {stages[k]:.2f}"
                              for k in STAGE_LABELS if k in stages)
            lines.append(f"  {pipeline:{wide - 5}s} workers={workers}: {parts}")
            lines.append(f"    -> {r['advice']}")
    return "\n".join(lines)


def _memory_parts(results: dict) -> list[str]:
    """Where each loader's held memory is at its peak (bench/memory.py), MiB."""
    lines = ["where the held memory is at its peak (medians over the runs, MiB): the main "
             "process's pages and the workers' (PSS, shared-memory files apart), the "
             "shared-memory files (ring slots, batches in flight), what was held before the "
             "loader; and the /dev/shm pages the machine reserved (Shmem, /proc/meminfo)"]
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            for name in ("native", "jpegloader"):
                s = r[name]
                if "shared_mib" in s:
                    lines.append(f"  {pipeline} workers={workers} {SHOWN[name]}: "
                                 f"{where_held(s)}")
    return lines if len(lines) > 1 else []


def _sweep(results: dict) -> list[str]:
    """The curve against num_workers, one table for every pipeline measured at several
    worker counts: how each loader scales and where jpegloader bends (its img/s per
    worker, its share of libjpeg-turbo's ceiling at that many processes, and how busy
    the main process is, which no number of workers can relieve)."""
    swept = {p: by for p, by in results.items() if len(by) > 1}
    if not swept:
        return []
    wide = _width(swept)
    lines = ["scaling against num_workers (main busy: jpegloader's main process CPU over "
             "wall time, 100% = one core):",
             f"{'pipeline':{wide}s} {'workers':>7s} {'torch img/s':>11s} {'jpegloader':>10s} "
             f"{'ratio':>6s} {'per worker':>10s} {'ceiling':>7s} {'of it':>6s} "
             f"{'CPU ms/img torch/ours':>21s} {'main busy':>9s} {'1st batch s':>11s} "
             f"{'PSS MiB torch/ours':>18s}"]
    for pipeline, by_workers in swept.items():
        for workers, r in sorted(by_workers.items()):
            n, t = r["native"], r["jpegloader"]
            ceiling = f"{r['ceiling']['img_per_s']:.0f}" if "ceiling" in r else "-"
            pss = (f"{n['pss_mib']:.0f}/{t['pss_mib']:.0f}" if "pss_mib" in t else "-")
            lines.append(
                f"{pipeline:{wide}s} {workers:>7} {n['img_per_s']:11.0f} "
                f"{t['img_per_s']:10.0f} "
                f"{r['ratio']:5.2f}x {t['img_per_s'] / max(workers, 1):10.0f} "
                f"{ceiling:>7s} "
                f"{_maybe(t, 'of_ceiling', '{:.0%}'):>6s} "
                f"{n['cpu_ms_per_img']:10.2f}/{t['cpu_ms_per_img']:<10.2f} "
                f"{_maybe(t, 'main_busy', '{:.0%}'):>9s} {t['first_batch_s']:11.2f} "
                f"{pss:>18s}")
    return lines


def _width(results: dict) -> int:
    """The pipeline column's width: its longest name, at least 14."""
    return max(14, *(len(p) for p in results))


def _maybe(summary: dict, key: str, form: str) -> str:
    return form.format(summary[key]) if key in summary else "-"
