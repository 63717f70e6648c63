#!/usr/bin/env bash
# Builds the decode-core fuzz drivers with AddressSanitizer + UndefinedBehaviorSanitizer:
#   tests/fuzz/build.sh [OUTPUT]        (default build/fuzz/fuzz_decode)
# OUTPUT decodes each input; OUTPUT-dc_scans sends each input through the progressive
# DC-only rewrite first (fuzz_decode.c says more).  With clang, libFuzzer flavours are
# built too (OUTPUT-libfuzzer, OUTPUT-dc_scans-libfuzzer).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-build/fuzz/fuzz_decode}"
mkdir -p "$(dirname "$out")"
csrc=src/jpegloader/decoders/csrc
common=src/jpegloader/_csrc
core=("$common/avx512.c" "$csrc/pipeline.c" "$csrc/jpeg_region.c" "$csrc/dc_scans.c" "$csrc/coeffs.c"
      "$csrc/resample.c" "$csrc/layout.c" "$csrc/gather_rows.c" "$csrc/colour.c"
      "$csrc/colour_tensor.c"
      "$csrc/padding.c" "$csrc/plan.c" "$csrc/taps.c" "$csrc/letterbox.c" "$csrc/cv_linear.c")
flags=(-std=c11 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -fno-trapping-math -I"$csrc" -I"$common"
       -fsanitize=address,undefined -fno-sanitize-recover=all)
libfuzzer=""
if command -v clang >/dev/null && echo 'int LLVMFuzzerTestOneInput(const char*d,long n){return 0;}' \
        | clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    libfuzzer=1
fi
# The core is compiled once, to objects, one file per CPU at a time; both targets link it.
objects="$(dirname "$out")/objects"
mkdir -p "$objects"
printf '%s\n' "${core[@]}" | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c \
    'o="$1" f="$2"; shift 2; exec "$@" -c "$f" -o "$o/$(basename "$f" .c).o"' _ \
    "$objects" {} "${CC:-cc}" "${flags[@]}"
objs=()
for f in "${core[@]}"; do objs+=("$objects/$(basename "$f" .c).o"); done
for target in decode dc_scans; do
    name="$out" define=()
    if [ "$target" = dc_scans ]; then name="$out-dc_scans" define=(-DJL_TARGET_DC_SCANS); fi
    "${CC:-cc}" "${flags[@]}" "${define[@]}" tests/fuzz/fuzz_decode.c "${objs[@]}" -ljpeg -lm \
        -o "$name"
    if [ -n "$libfuzzer" ]; then  # libFuzzer's coverage needs the core built by clang too
        clang "${flags[@]}" "${define[@]}" -fsanitize=fuzzer -DJL_LIBFUZZER \
            tests/fuzz/fuzz_decode.c "${core[@]}" -ljpeg -lm -o "$name-libfuzzer"
    fi
done
