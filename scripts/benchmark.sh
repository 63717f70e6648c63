#!/usr/bin/env bash
# The main job: set up, then benchmark turboloader against torch's DataLoader.
# Arguments go to `python -m turboloader.benchmark` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec "${PYTHON:-python3}" -m turboloader.benchmark "$@"
