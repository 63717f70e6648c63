#!/usr/bin/env bash
# Sets up (scripts/setup.sh, with the test extra), then runs the test suite, printing
# the 20 slowest tests last.  Tests that need ../shared/data or a GPU skip with their
# reason when those are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh test
exec "$JPEGLOADER_PY" -m pytest -q -m "not slow" -rs --durations=20 "$@"
