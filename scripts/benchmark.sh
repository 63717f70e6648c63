#!/usr/bin/env bash
# The main job: sets up (scripts/setup.sh), then benchmarks jpegloader against torch's
# DataLoader.  Arguments go to `python -m jpegloader.benchmark` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh ""  # no extra (an empty argument: a bare source would pass ours on)
exec "$JPEGLOADER_PY" -m jpegloader.benchmark "$@"
