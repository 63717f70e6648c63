#!/usr/bin/env bash
# Reproduces the README's Reliability figures: the sanitizer fuzz run of the C
# decode core and the 20-epoch soak (see benchmarks/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=benchmarks/results
mkdir -p "$OUT"
PY=${PYTHON:-python3}

"$PY" -m tests.fuzz.run_fuzz --inputs "${FUZZ_INPUTS:-1000000}" --jobs "$(nproc)" \
    --json "$OUT/fuzz.json"
"$PY" -m tests.reliability.soak --epochs 20 --files 3000 --coco-files 1500 \
    --json "$OUT/soak.json"
