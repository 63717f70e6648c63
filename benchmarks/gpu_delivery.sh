#!/usr/bin/env bash
# Batches delivered to a CUDA GPU: the tests that need one (pinned batches, device=
# "cuda" on the side stream, detection batches with painted masks), then how fast each
# loader hands batches to the GPU (benchmarks/gpu_delivery.py).  Logs
# and JSON go to $OUT; the table is printed last.
#
# On a machine with the project's build tools (here, before going to a machine that
# has neither a compiler's JPEG headers nor a network):
#   bash benchmarks/gpu_delivery.sh --prepare [DATA]   # fills .gpu-delivery/: the
#        wheel, pycocotools' wheel for Python 3.12, DATA/coco-sample and imagenet-sample
# Then, there, from the repository root with .gpu-delivery carried:
#   OUT=/some/folder bash benchmarks/gpu_delivery.sh
# SCALE=small runs every step on a few files (a dry run of the script: on the CPU
# without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
KIT=.gpu-delivery

if [ "${1:-}" = "--prepare" ]; then
    set -e
    data="${2:-../shared/data}"
    grep -qx "/$KIT/" .git/info/exclude 2>/dev/null || echo "/$KIT/" >> .git/info/exclude
    rm -rf "$KIT" && mkdir -p "$KIT/data"
    bash scripts/wheel.sh "$KIT/dist"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$KIT/dist" "pycocotools>=2.0.6"
    cp -r "$data/coco-sample" "$KIT/data/coco-sample"
    cp -r "$data/imagenet-sample" "$KIT/data/imagenet-sample"
    du -sh "$KIT"
    exit 0
fi

OUT="${OUT:-$(mktemp -d -t jpegloader-gpu-XXXXXX)}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
if [ -d "$KIT/dist" ]; then
    wheels=("$KIT"/dist/jpegloader-*.whl)
    "$PY" -c "import pycocotools" 2>/dev/null || wheels+=("$KIT"/dist/pycocotools-*.whl)
    "$PY" -m pip install -q --no-index --no-deps --target /tmp/jpegloader-site "${wheels[@]}" \
        || exit 1
    export PYTHONPATH=/tmp/jpegloader-site
    export JPEGLOADER_TEST_DATA="$KIT/data"
fi
export PYTHONUNBUFFERED=1
{
    echo "date: $(date -u +%FT%TZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    "$PY" -c "import sys, torch, torchvision, jpegloader; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available(), 'torchvision', torchvision.__version__, 'jpegloader from', jpegloader.__file__)"
} 2>&1 | tee "$OUT/machine.txt"

status=0
"$PY" -m pytest -q -p no:cacheprovider -rs tests/pipelines/detection/test_masks.py \
    tests/dataloader/test_delivery.py \
    "tests/dataloader/test_loader.py::test_cuda_pinned_and_device_feed" \
    2>&1 | tee "$OUT/tests.log" | tail -8
grep -q " passed" "$OUT/tests.log" && ! grep -q " failed\| error" "$OUT/tests.log" || status=1

if [ "${SCALE:-}" = "small" ]; then sizes=(--files 130 --workers 2 --batches 3)
    "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || sizes+=(--device cpu)
else
    sizes=(--files 2000 --workers 14 --batches 200); fi
data="${JPEGLOADER_TEST_DATA:-../shared/data}"
"$PY" benchmarks/gpu_delivery.py --data "$data/coco-sample" --images "$data/imagenet-sample" \
    "${sizes[@]}" --json "$OUT/delivery.json" 2>&1 | tee "$OUT/delivery.log" | tail -12 \
    || status=1
exit $status
