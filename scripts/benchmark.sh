#!/usr/bin/env bash
# The main job: sets up (scripts/setup.sh), then benchmarks jpegloader against torch's
# DataLoader.  Arguments go to `python -m jpegloader.benchmark` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh bench  # the benchmark's tools: progress bars, --plot
exec "$JPEGLOADER_PY" -m jpegloader.benchmark "$@"
