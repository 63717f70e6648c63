#!/usr/bin/env bash
# How the CPU path scales with cores: the benchmark's worker sweep (torch's loader and
# jpegloader side by side, libjpeg-turbo's ceiling at each count) for train and eval
# on imagenet-sample, and for DINO's multi-crop, with the machine's CPU use sampled
# from /proc/stat, and the sweep report's tests.  Logs and JSON go to $OUT; the
# tables are printed last.
#
# On a machine with the project's build tools (here, before going to a machine that
# has neither a compiler's JPEG headers nor a network):
#   bash benchmarks/cpu_scaling.sh --prepare [DATA]   # fills .gpu/: the wheel, a
#        jpeg_limit linked with libjpeg-turbo statically, DATA/imagenet-sample's files
# Then, there, from the repository root with .gpu carried:
#   OUT=/some/folder bash benchmarks/cpu_scaling.sh
# SCALE=small runs every step on a few files (a dry run of the script).
set -uo pipefail
cd "$(dirname "$0")/.."
KIT=.gpu

if [ "${1:-}" = "--prepare" ]; then
    set -e
    data="${2:-../shared/data}"
    grep -qx "/$KIT/" .git/info/exclude 2>/dev/null || echo "/$KIT/" >> .git/info/exclude
    rm -rf "$KIT" && mkdir -p "$KIT"
    bash scripts/wheel.sh "$KIT/dist"
    cc -O2 -o "$KIT/jpeg_limit" src/jpegloader/bench/jpeg_limit.c \
        "$(cc -print-file-name=libjpeg.a)" -lm
    cp -r "$data/imagenet-sample" "$KIT/imagenet-sample"
    du -sh "$KIT"
    exit 0
fi

OUT="${OUT:-$(mktemp -d -t jpegloader-scaling-XXXXXX)}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
if [ -d "$KIT/dist" ]; then
    "$PY" -m pip install -q --no-index --no-deps --target /tmp/jpegloader-site "$KIT"/dist/*.whl \
        || exit 1
    export PYTHONPATH=/tmp/jpegloader-site
fi
DATA="${DATA:-$KIT/imagenet-sample}"
LIMIT="${LIMIT:-$KIT/jpeg_limit}"
[ -x "$LIMIT" ] || LIMIT=src/jpegloader/bench/jpeg_limit.c
export PYTHONUNBUFFERED=1
if [ "${SCALE:-}" = "small" ]; then
    few=(--files 200 --workers 1,2 --epochs 1) many=(--files 400 --workers 2)
    dino=(--files 60 --workers 1,2 --epochs 1)
else
    # sized for a 15-minute lease on a sandboxed 16-core host (about 180 img/s per core
    # for torch's loader there): counts 1-4 and 8-14 on their own copies
    few=(--files 1000 --workers 1,2,4 --epochs 2) many=(--files 4000 --workers 8,12,14 --epochs 2)
    dino=(--files 300 --workers 4,8,14 --epochs 1)
fi

{
    echo "date: $(date -u +%FT%TZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
    grep -m1 flags /proc/cpuinfo | grep -o 'avx512[a-z]*\|avx2' | sort -u | tr '\n' ' '; echo
    free -g | head -2
    df -h /dev/shm | tail -1
    "$PY" -c "import sys, torch, torchvision, PIL, jpegloader; print('python', sys.version.split()[0], 'torch', torch.__version__, 'torchvision', torchvision.__version__, 'Pillow', PIL.__version__, 'libjpeg-turbo', jpegloader.libjpeg_turbo_version(), 'jpegloader from', jpegloader.__file__)"
} 2>&1 | tee "$OUT/machine.txt"

# The whole machine's CPU use, once a second: idle against busy shows whether the
# cores or something else bound a run.
( while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 1; done ) > "$OUT/procstat.log" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT

status=0
bench() {  # name, then the benchmark's arguments
    local name="$1"; shift
    echo "== $name: $*" | tee -a "$OUT/bench.log"
    "$PY" -m jpegloader.benchmark --data "$DATA" --warmup 1 --json "$OUT/$name.json" "$@" \
        > "$OUT/$name.txt" 2>> "$OUT/bench.log" || { status=1; tail -20 "$OUT/bench.log"; }
}
bench classification-few "${few[@]}" --recipe train,eval --memory-runs 1 --ceiling "$LIMIT"
bench classification-many "${many[@]}" --recipe train,eval --memory-runs 1 --ceiling "$LIMIT"
bench dino "${dino[@]}" --recipe dino --memory-runs 0
kill $sampler 2>/dev/null
"$PY" -m pytest -q -p no:cacheprovider tests/test_benchmark_cli.py -k "json_schema or advice" 2>&1 | tee "$OUT/tests.log" \
    | tail -3 || status=1
grep -q " passed" "$OUT/tests.log" && ! grep -q " failed\| error" "$OUT/tests.log" || status=1


"$PY" - "$OUT" <<'EOF'
import json, sys
from pathlib import Path
from jpegloader.bench.report import _sweep
out = Path(sys.argv[1])
merged = {}
for name in ("classification-few", "classification-many", "dino"):
    path = out / f"{name}.json"
    if path.exists():
        for pipeline, by in json.loads(path.read_text())["results"].items():
            merged.setdefault(pipeline, {}).update({int(w): r for w, r in by.items()})
for pipeline, by in merged.items():
    for w, r in sorted(by.items()):
        s = r["jpegloader"]["stages_ms_per_img"]
        print(f"{pipeline:6s} w={w:<3d} jpegloader stages ms/img: " + "  ".join(
            f"{k} {v:.2f}" for k, v in s.items()))
print("\n".join(_sweep(merged)))
(out / "scaling.json").write_text(json.dumps(merged, indent=1))
EOF
tail -3 "$OUT/tests.log"
exit $status
