#!/usr/bin/env bash
# Reproduces the README's performance figures (see benchmarks/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
OUT=benchmarks/results
mkdir -p "$OUT"
PY=${PYTHON:-python3}

LIMIT=src/jpegloader/bench/jpeg_limit.c  # shipped with the package
"$PY" -m jpegloader.benchmark --data "$DATA/imagenet-sample" --files 2000 --epochs 5 \
    --ceiling "$LIMIT" --json "$OUT/imagenet-sample-2000.json"

# The sample's files still in their original encoding (luma DC quantiser above 1).
"$PY" benchmarks/original_encoding.py "$DATA/imagenet-sample" "$OUT/original-encoding"
"$PY" -m jpegloader.benchmark --data "$OUT/original-encoding" --files 2000 --epochs 5 \
    --ceiling "$LIMIT" --json "$OUT/original-encoding-2000.json"

"$PY" -m jpegloader.benchmark --data "$DATA/imagenet-sample" --files 1000 --epochs 3 \
    --workers 0 --no-memory --json "$OUT/imagenet-sample-workers0.json"

# Large photos, half of them progressive (downloaded once, see large_photos.sh).
bash benchmarks/large_photos.sh "$HOME/.cache/jpegloader/large-photos-v1"
"$PY" -m jpegloader.benchmark --data "$HOME/.cache/jpegloader/large-photos-v1" --files 140 \
    --batch-size 14 --epochs 3 --recipe eval,train --json "$OUT/large-photos-140.json"

"$PY" -m jpegloader.benchmark --data "$DATA/imagenet-sample" --files 2000 --epochs 5 \
    --recipe deit-eval,timm-train,eval,eval-uint8 --json "$OUT/recipes-2000.json"

"$PY" -m jpegloader.benchmark --data "$DATA/imagenet-sample" --files 2000 --epochs 4 \
    --recipe deit-train,tv-resnet50-v2,dle-train --json "$OUT/hybrid-2000.json"
"$PY" benchmarks/hybrid_line.py | tee "$OUT/hybrid-line.txt"
"$PY" -m jpegloader.benchmark --data "$DATA/imagenet-sample" --files 2000 --epochs 3 \
    --memory-runs 1 --recipe dino,simclr,deit3-train --json "$OUT/views-2000.json"
"$PY" benchmarks/checkpoint_resume.py "$DATA/imagenet-sample" | tee "$OUT/checkpoint.json"

"$PY" -m jpegloader.benchmark --recipe ssd,ssd-val --data "$DATA/coco-sample" --files 1000 \
    --batch-size 32 --epochs 5 --json "$OUT/coco-sample-1000.json"

# torchvision's detection references: --use-v2 recipes, then the v1 default path
"$PY" -m jpegloader.benchmark --recipe det-hflip,det-multiscale,maskrcnn,det-eval,det-ssdlite,det-ssd,det-lsj \
    --data "$DATA/coco-sample" --files 1000 --batch-size 8 --epochs 3 --memory-runs 1 \
    --ceiling --json "$OUT/detection-1000.json"
"$PY" -m jpegloader.benchmark --recipe det-ssd,det-ssd-tensor,det-multiscale,det-multiscale-tensor \
    --data "$DATA/coco-sample" --files 1000 --batch-size 8 --epochs 3 --memory-runs 1 \
    --json "$OUT/detection-tensor-1000.json"
"$PY" benchmarks/detection_v1.py --data "$DATA/coco-sample" --files 1000 --epochs 3 \
    --json "$OUT/detection-v1-1000.json"

# DETR's and RT-DETR's families: their datasets, transforms and collates
"$PY" -m jpegloader.benchmark --recipe detr,detr-val,rtdetr,rtdetr-val \
    --data "$DATA/coco-sample" --files 1000 --batch-size 8 --epochs 3 --memory-runs 1 \
    --ceiling --json "$OUT/detr-1000.json"

large=$(mktemp -d)
trap 'rm -rf "$large"' EXIT
mkdir -p "$large/photos"
cp "$DATA"/edge-cases/large/*.jpg "$large/photos/"
"$PY" -m jpegloader.benchmark --data "$large" --files 200 --batch-size 16 --epochs 3 \
    --json "$OUT/large-200.json"

cc -O2 -o "$large/jpeg_limit" "$LIMIT" -ljpeg -lm
find "$DATA/imagenet-sample" -name '*.JPEG' | "$large/jpeg_limit" -r 5 full roiful ctr \
    | tee "$OUT/jpeg_limit-imagenet-sample.txt"
find "$DATA/coco-sample" -name '*.jpg' | "$large/jpeg_limit" -r 5 full \
    | tee "$OUT/jpeg_limit-coco-sample.txt"
