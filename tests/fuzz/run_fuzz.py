"""Builds and runs the sanitizer-instrumented fuzz drivers (fuzz_decode.c).

    python -m tests.fuzz.run_fuzz [--target decode|dc_scans] [--inputs N] [--seconds S]
                                  [--jobs J] [--json FILE]

runs N mutated inputs (or S CPU seconds' worth per job) split over J processes
(different mutation seeds) through the target (decode: every input decoded with
plans drawn from its bytes; dc_scans: the progressive DC-only rewrite first) from
the seed corpus: small generated JPEGs (baseline 4:2:0/4:2:2/4:4:4,
progressive, optimized, greyscale, restart markers) plus, when present, the
real files of ../shared/data/edge-cases (all but the multi-megapixel ones)
and the first 24 of ../shared/data/imagenet-sample.  Prints one JSON summary;
exits non-zero on any crash, sanitizer report or leak.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from tests.conftest import REPO, SHARED_DATA
from tests.hostile_jpegs import photo_like

BUILD = REPO / "tests" / "fuzz" / "build.sh"
SANITIZER_ENV = {
    "ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "FAIL:")


class SanitizersUnavailable(RuntimeError):
    pass


def build(out_dir: Path) -> Path:
    """The driver, built into out_dir.  Raises SanitizersUnavailable when the C
    compiler cannot link ASan/UBSan at all (an environment limit, not a bug)."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        raise SanitizersUnavailable(f"no C compiler ({cc})")
    probe = subprocess.run([*cc.split(), "-x", "c", "-fsanitize=address,undefined", "-",
                            "-o", str(out_dir / "probe")], input="int main(void){return 0;}",
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise SanitizersUnavailable(f"{cc} cannot link ASan/UBSan: {probe.stderr.strip()}")
    binary = out_dir / "fuzz_decode"
    subprocess.run(["bash", str(BUILD), str(binary)], check=True, capture_output=True,
                   text=True)
    return binary


TARGETS = ("decode", "dc_scans")


def target(binary: Path, name: str) -> Path:
    """The driver of one target, built beside ``binary`` by build()."""
    return binary if name == "decode" else binary.with_name(f"{binary.name}-{name}")


def write_seeds(seed_dir: Path, target_name: str = "decode") -> list[Path]:
    """The generated seeds, written to seed_dir; returns every seed path to pass.  The
    dc_scans target gets progressive files only: its rewrite takes nothing else."""
    seed_dir.mkdir(parents=True, exist_ok=True)
    if target_name == "dc_scans":
        return _progressive_seeds(seed_dir)
    variants = {"baseline420": {}, "q422": {"subsampling": 1}, "q444": {"subsampling": 0},
                "progressive": {"progressive": True}, "optimized": {"optimize": True}}
    for name, options in variants.items():
        (seed_dir / f"{name}.jpg").write_bytes(photo_like(72, 56, seed=1, **options))
    grey = Image.open(io.BytesIO(photo_like(64, 48, seed=2))).convert("L")
    grey.save(seed_dir / "grey.jpg", quality=90)
    # Photos within the driver's OUT_MAX (48): whole images at their own size, the
    # plans OpenCV's BGR rows take (fuzz_decode.c's ``whole``).
    for name, options in {"small420": {}, "small444": {"subsampling": 0},
                          "smallprogressive": {"progressive": True}}.items():
        (seed_dir / f"{name}.jpg").write_bytes(photo_like(40, 32, seed=8, **options))
    # Restart markers every MCU row: the decoder's resynchronisation paths.
    Image.open(io.BytesIO(photo_like(80, 64, seed=3))).save(
        seed_dir / "restart.jpg", quality=85, restart_marker_rows=1)
    paths = [seed_dir]
    edge = SHARED_DATA / "edge-cases"
    if edge.is_dir():
        paths += [d for d in sorted(edge.iterdir()) if d.is_dir() and d.name != "large"]
    sample = SHARED_DATA / "imagenet-sample"
    if sample.is_dir():
        paths += sorted(sample.glob("*/*.JPEG"))[:24]
    return paths


def _progressive_seeds(seed_dir: Path) -> list[Path]:
    for name, options in {"p420": {}, "p422": {"subsampling": 1}, "p444": {"subsampling": 0},
                          "poptimized": {"optimize": True}}.items():
        (seed_dir / f"{name}.jpg").write_bytes(photo_like(72, 56, seed=5, progressive=True,
                                                          **options))
    grey = Image.open(io.BytesIO(photo_like(64, 48, seed=6))).convert("L")
    grey.save(seed_dir / "pgrey.jpg", quality=90, progressive=True)
    Image.open(io.BytesIO(photo_like(80, 64, seed=7))).save(
        seed_dir / "prestart.jpg", quality=85, progressive=True, restart_marker_rows=1)
    paths = [seed_dir]
    edge = SHARED_DATA / "edge-cases" / "progressive"
    if edge.is_dir():
        paths.append(edge)
    sample = SHARED_DATA / "imagenet-sample"
    if sample.is_dir():  # real photos, made progressive (and small enough to mutate fast)
        for k, path in enumerate(sorted(sample.glob("*/*.JPEG"))[:12]):
            with Image.open(path) as im:
                im.convert("RGB").reduce(2).save(seed_dir / f"real{k}.jpg", quality=90,
                                                 progressive=True)
    return paths


def _check(what: str, returncode: int, stderr: str) -> None:
    """Raises AssertionError with the output on a crash or any sanitizer report."""
    found = [m for m in SANITIZER_MARKS if m in stderr]
    if returncode != 0 or found:
        raise AssertionError(f"{what} failed, exit {returncode}, {found}:\n{stderr[-4000:]}")


def fuzz(binary: Path, seeds: list[Path], *, inputs: int, jobs: int, cwd: Path,
         seconds: float = 0) -> dict:
    """``inputs`` mutated inputs split over ``jobs`` processes (PRNG seeds 1..jobs),
    each stopping early after ``seconds`` of CPU when given; the summed summary.
    Raises AssertionError with the output on any crash or sanitizer report."""
    procs = []
    for j in range(jobs):
        args = [str(binary), "-n", str(inputs // jobs + (j < inputs % jobs)), "-s", str(j + 1)]
        if seconds:
            args += ["-t", str(seconds)]
        procs.append(subprocess.Popen([*args, *map(str, seeds)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, cwd=cwd,
                                      env={**os.environ, **SANITIZER_ENV}))
    total = {"inputs": 0, "seeds": 0, "cpu_seconds": 0.0, "statuses": {}, "rewritten": 0,
             "bgr_rows": 0}
    for j, proc in enumerate(procs):
        out, err = proc.communicate()
        _check(f"fuzz job {j + 1}", proc.returncode, err)
        summary = json.loads(out.strip().splitlines()[-1])
        total["inputs"] += summary["inputs"]
        total["seeds"] = summary["seeds"]
        total["cpu_seconds"] = round(total["cpu_seconds"] + summary["cpu_seconds"], 1)
        total["rewritten"] += summary["rewritten"]
        total["bgr_rows"] += summary["bgr_rows"]
        for k, v in summary["statuses"].items():
            total["statuses"][k] = total["statuses"].get(k, 0) + v
    return total


def replay(binary: Path, paths: list[Path], cwd: Path, seed: int = 1) -> str:
    """Decodes each file once, unmutated, under the sanitizers; returns stdout (its
    last line the JSON summary).  ``seed`` seeds the mutation fuzzer, which a replay
    must not depend on."""
    proc = subprocess.run([str(binary), "-r", "-s", str(seed), *map(str, paths)],
                          capture_output=True, text=True,
                          env={**os.environ, **SANITIZER_ENV}, cwd=cwd, check=False)
    _check("replay", proc.returncode, proc.stderr)
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=TARGETS, default="decode")
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=0,
                        help="stop each job after this much CPU time (inputs is then a cap)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jpegloader-fuzz-") as tmp:
        tmp = Path(tmp)
        binary = target(build(tmp), args.target)
        summary = fuzz(binary, write_seeds(tmp / "seeds", args.target), inputs=args.inputs,
                       jobs=args.jobs, cwd=tmp, seconds=args.seconds)
    summary["target"] = args.target
    summary["sanitizers"] = "address,undefined,leak"
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
