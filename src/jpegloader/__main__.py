"""python -m jpegloader COMMAND ...

    run [--decode auto|exact] [--on-error raise|skip] SCRIPT [ARGS...]
        Runs SCRIPT unchanged (as ``python SCRIPT ARGS...`` would) with every
        torch.utils.data.DataLoader it builds replaced by jpegloader.DataLoader;
        each loader says on stderr whether it is accelerated, or why not.
    diagnose [OPTIONS] SCRIPT [ARGS...]
        Runs SCRIPT and reports, for every loader it builds, every eligibility
        rule (python -m jpegloader.diagnose --help).
    benchmark [OPTIONS]
        The benchmark against torch's DataLoader (python -m jpegloader.benchmark --help).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

from ._env import DECODE_ENV, ON_ERROR_ENV
from .pipelines import DECODE_CHOICES, ON_ERROR_CHOICES


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jpegloader run",
        description="Run a training script unchanged, with every torch.utils.data.DataLoader "
                    "it builds accelerated by jpegloader where it can be (one line per loader "
                    "on stderr says which).")
    parser.add_argument("--decode", choices=DECODE_CHOICES,
                        help=f"the loaders' decode= (sets {DECODE_ENV}): exact gives PIL's "
                             "pixels bit for bit; auto (default) may decode large images at a "
                             "reduced DCT scale")
    parser.add_argument("--on-error", choices=ON_ERROR_CHOICES,
                        help=f"the loaders' on_error= (sets {ON_ERROR_ENV}): skip drops "
                             "unreadable samples, logging each; raise (default) stops")
    parser.add_argument("script", type=Path)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    if not options.script.is_file():
        parser.error(f"no such script: {options.script}")
    if options.decode:
        os.environ[DECODE_ENV] = options.decode
    if options.on_error:
        os.environ[ON_ERROR_ENV] = options.on_error
    from .patching import carry_into_children, patch
    carry_into_children()  # NOTE [ The patch follows the script's processes ]
    sys.argv = [str(options.script), *options.args]
    sys.path.insert(0, str(options.script.resolve().parent))
    with patch():
        runpy.run_path(str(options.script), run_name="__main__")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = ("run", "diagnose", "benchmark")
    if not argv or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run(rest)
    if command == "diagnose":
        from .diagnose import main as diagnose
        return diagnose(rest)
    from .benchmark import main as benchmark
    return benchmark(rest)


if __name__ == "__main__":
    sys.exit(main())
