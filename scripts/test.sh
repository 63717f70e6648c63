#!/usr/bin/env bash
# Set up, then run the test suite (tests needing ../shared/data or a GPU skip
# with a reason when those are absent).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec "${PYTHON:-python3}" -m pytest -q -m "not slow" -rs "$@"
