#!/usr/bin/env bash
# Builds the decode-core fuzz driver with AddressSanitizer + UndefinedBehaviorSanitizer:
#   tests/fuzz/build.sh [OUTPUT]        (default build/fuzz/fuzz_decode)
# With clang, a libFuzzer flavour is built too (OUTPUT-libfuzzer).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-build/fuzz/fuzz_decode}"
mkdir -p "$(dirname "$out")"
csrc=src/jpegloader/decoders/csrc
core=("$csrc/pipeline.c" "$csrc/jpeg_region.c" "$csrc/dc_scans.c" "$csrc/resample.c"
      "$csrc/gather_rows.c" "$csrc/color.c")
flags=(-std=c11 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -I"$csrc"
       -fsanitize=address,undefined -fno-sanitize-recover=all)
"${CC:-cc}" "${flags[@]}" tests/fuzz/fuzz_decode.c "${core[@]}" -ljpeg -lm -o "$out"
if command -v clang >/dev/null && echo 'int LLVMFuzzerTestOneInput(const char*d,long n){return 0;}' \
        | clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    clang "${flags[@]}" -fsanitize=fuzzer -DTL_LIBFUZZER tests/fuzz/fuzz_decode.c "${core[@]}" \
        -ljpeg -lm -o "$out-libfuzzer"
fi
