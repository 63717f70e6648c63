#!/usr/bin/env bash
# Sets up everything jpegloader needs, on a fresh Debian/Ubuntu (or Fedora) machine too,
# skipping every step already done.  Sourced by benchmark.sh, test.sh and wheel.sh,
# which then run "$JPEGLOADER_PY"; run on its own it only sets up.
#
#   bash scripts/setup.sh [EXTRA]      EXTRA: a pyproject extra to install too (test, plot)
#   bash scripts/setup.sh --tools EXTRA  only what building needs, and EXTRA's requirements
#                                        (no torch, no package; scripts/wheel.sh uses it)
#
# 1. A Python environment: the active virtual environment (or conda environment), else
#    ./.venv, made once with ${PYTHON:-python3}: a system Python that refuses pip
#    (PEP 668, "externally-managed-environment") is never installed into.
# 2. System packages that are missing: libjpeg-turbo's headers, the Python headers, a C
#    compiler, Python's venv module (apt-get or dnf; sudo only when not root).
# 3. torch 2.14.1 + torchvision 0.29.1, only when the environment has no torch: the CUDA
#    build from the package index (a 3 GB download; the environment ends near 6 GB), or,
#    with JPEGLOADER_TORCH_INDEX=https://download.pytorch.org/whl/cpu, the CPU build.
# 4. This package (editable) with EXTRA, rebuilt only when its C sources or build files
#    changed since the last install into this environment.
set -euo pipefail

_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tools_only=""
if [ "${1:-}" = "--tools" ]; then _tools_only=1; shift; fi
_extra="${1:-}"
TORCH_SPEC=(torch==2.14.1 torchvision==0.29.1)

say() { echo "[jpegloader setup] $*" >&2; }
die() { say "error: $*"; exit 1; }

_as_root() {  # runs a package manager as root: directly when root, else through sudo
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "needs root to run: $*  (run it as root, then run this script again)"
    fi
}

_quietly() {  # runs a command with its output kept aside, shown only when it fails
    local log
    log="$(mktemp -t jpegloader-setup-XXXXXX)"
    if "$@" >"$log" 2>&1; then rm -f "$log"; return 0; fi
    cat "$log" >&2
    rm -f "$log"
    return 1
}

_install_system_packages() {  # names, one per missing thing
    [ $# -gt 0 ] || return 0
    if command -v apt-get >/dev/null; then
        say "installing system packages with apt-get: $* ..."
        _quietly _as_root apt-get update || die "apt-get update failed (see above)"
        _quietly _as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y \
            --no-install-recommends "$@" || die "apt-get could not install $* (see above)"
    elif command -v dnf >/dev/null; then
        say "installing system packages with dnf: $* ..."
        _quietly _as_root dnf install -y "$@" || die "dnf could not install $* (see above)"
    else
        die "missing: $*. Install them with your package manager (names given for Debian/Ubuntu), then run this again."
    fi
}

_apt_jpeg_package() {  # Debian ships libjpeg62-turbo-dev, Ubuntu libjpeg-turbo8-dev
    if apt-cache show libjpeg62-turbo-dev >/dev/null 2>&1; then echo libjpeg62-turbo-dev
    else echo libjpeg-turbo8-dev; fi
}

_base_python() {
    local py="${PYTHON:-python3}"
    command -v "$py" >/dev/null || {
        _install_system_packages python3 python3-venv
        command -v "$py" >/dev/null || die "no $py found; set PYTHON=/path/to/python3"
    }
    echo "$py"
}

# -- 1. the environment ----------------------------------------------------------------
_environment() {
    if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
        JPEGLOADER_PY="$VIRTUAL_ENV/bin/python"
        say "using the active virtual environment $VIRTUAL_ENV"
        return
    fi
    if [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then
        JPEGLOADER_PY="$CONDA_PREFIX/bin/python"
        say "using the active conda environment $CONDA_PREFIX"
        return
    fi
    local venv="${JPEGLOADER_VENV:-$_repo/.venv}" base
    if ! [ -x "$venv/bin/python" ]; then
        base="$(_base_python)"
        say "no virtual environment is active: creating $venv with $base (activate your own to use it instead) ..."
        if ! "$base" -m venv "$venv" >/dev/null 2>&1; then
            rm -rf "$venv"  # Debian/Ubuntu keep venv's pip in a separate package
            local minor
            minor="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
            _install_system_packages "python$minor-venv"
            "$base" -m venv "$venv" || die "could not create a virtual environment in $venv"
        fi
    else
        say "no virtual environment is active: using $venv (activate your own to use it instead)"
    fi
    JPEGLOADER_PY="$venv/bin/python"
}

# -- 2. system packages --------------------------------------------------------------------
_system_packages() {
    local missing=() cc="${CC:-cc}"
    if ! command -v "$cc" >/dev/null && ! command -v gcc >/dev/null; then
        missing+=(gcc)
    fi
    if ! "$JPEGLOADER_PY" -c 'import os, sysconfig, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
        if command -v apt-get >/dev/null; then
            missing+=("python$("$JPEGLOADER_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-dev")
        else
            missing+=(python3-devel)
        fi
    fi
    if ! printf '#include <stdio.h>\n#include <jpeglib.h>\n' \
            | "${cc}" -E -x c - >/dev/null 2>&1 \
       && ! printf '#include <stdio.h>\n#include <jpeglib.h>\n' \
            | gcc -E -x c - >/dev/null 2>&1; then
        if command -v apt-get >/dev/null; then missing+=("$(_apt_jpeg_package)")
        else missing+=(libjpeg-turbo-devel); fi
    fi
    if [ ${#missing[@]} -eq 0 ]; then
        say "system packages present (libjpeg-turbo headers, Python headers, C compiler)"
    else
        _install_system_packages "${missing[@]}"
    fi
}

# -- 3. torch ------------------------------------------------------------------------------
_torch() {
    local have  # read from the installed metadata: importing torch takes seconds
    if have="$("$JPEGLOADER_PY" -c 'from importlib.metadata import version
print("torch", version("torch"), "+ torchvision", version("torchvision"))' 2>/dev/null)"; then
        say "$have installed"
        return
    fi
    local index=()
    if [ -n "${JPEGLOADER_TORCH_INDEX:-}" ]; then
        index=(--index-url "$JPEGLOADER_TORCH_INDEX")
        say "installing ${TORCH_SPEC[*]} from $JPEGLOADER_TORCH_INDEX (pip's progress below) ..."
    else
        say "installing ${TORCH_SPEC[*]}, the CUDA build: a 3 GB download, about 6 GB of disk" \
            "for the environment, a few minutes the first time (pip's progress below; on a" \
            "machine without a GPU, JPEGLOADER_TORCH_INDEX=https://download.pytorch.org/whl/cpu" \
            "takes the CPU build) ..."
    fi
    "$JPEGLOADER_PY" -m pip install --progress-bar on "${index[@]}" "${TORCH_SPEC[@]}" >&2 \
        || die "pip could not install ${TORCH_SPEC[*]} (see its message above)"
}

_build_backend() {
    if ! "$JPEGLOADER_PY" -c 'import setuptools, sys
sys.exit(tuple(map(int, setuptools.__version__.split(".")[:2])) < (77, 0))' 2>/dev/null; then
        say "installing setuptools>=77 (the build backend) ..."
        "$JPEGLOADER_PY" -m pip install -qq "setuptools>=77" \
            || die "pip could not install setuptools>=77 (see its message above)"
    fi
}

_extra_requirements() {  # installs what pyproject.toml lists for an extra, not the package
    local reqs
    reqs="$("$JPEGLOADER_PY" -c 'import sys, tomllib
with open(sys.argv[1], "rb") as f:
    extras = tomllib.load(f)["project"]["optional-dependencies"]
print("\n".join(extras[sys.argv[2]]))' "$_repo/pyproject.toml" "$1")"
    if "$JPEGLOADER_PY" -c 'import sys
from importlib.metadata import version, PackageNotFoundError
from packaging.requirements import Requirement
for line in sys.argv[1].split():
    r = Requirement(line)
    try:
        ok = r.specifier.contains(version(r.name), prereleases=True)
    except PackageNotFoundError:
        ok = False
    if not ok:
        sys.exit(1)' "$reqs" 2>/dev/null; then
        say "the $1 tools are installed ($(echo $reqs))"
        return
    fi
    say "installing the $1 tools (downloaded the first time: a few minutes): $(echo $reqs) ..."
    # pip's own lines and progress bars: the one step that may take minutes
    # shellcheck disable=SC2086
    "$JPEGLOADER_PY" -m pip install --progress-bar on $reqs >&2 \
        || die "pip could not install the $1 tools (see its message above)"
}

# -- 4. the package --------------------------------------------------------------------------
_build_fingerprint() {  # what an editable install compiles or reads at install time
    (cd "$_repo" && cat setup.py pyproject.toml MANIFEST.in \
        $(find src -name '*.c' -o -name '*.h' | LC_ALL=C sort) | sha256sum | cut -c1-16)
}

_package() {
    local target=".${_extra:+[$_extra]}" stamp fingerprint
    stamp="$("$JPEGLOADER_PY" -c 'import sys; print(sys.prefix)')/.jpegloader-installed"
    fingerprint="$(_build_fingerprint) $_repo $target"
    # An install with extras also serves a request without them.
    if [ -f "$stamp" ] && { grep -qxF "$fingerprint" "$stamp" \
                              || { [ -z "$_extra" ] && grep -qF "$fingerprint" "$stamp"; }; } \
            && (cd / && "$JPEGLOADER_PY" -c 'import glob, os, sys
from importlib.util import find_spec
spec = find_spec("jpegloader")  # found, not imported (that would import torch)
sys.exit(not (spec and glob.glob(os.path.join(spec.submodule_search_locations[0],
                                              "decoders", "_jpeg*.so"))))') 2>/dev/null; then
        say "jpegloader${_extra:+[$_extra]} is installed and up to date (no C source or build file changed)"
        return
    fi
    _build_backend
    # The extra's packages first, as a step of their own: on a fresh machine this is
    # the download that takes minutes.
    [ -z "$_extra" ] || _extra_requirements "$_extra"
    say "building and installing jpegloader${_extra:+[$_extra]} (editable; compiles the C core: 30 s to 3 minutes on 2 cores) ..."
    (cd "$_repo" && "$JPEGLOADER_PY" -m pip install -qq --no-build-isolation -e "$target") \
        || die "building or installing jpegloader failed (see the message above)"
    grep -vF " $_repo $target" "$stamp" 2>/dev/null > "$stamp.new" || true
    echo "$fingerprint" >> "$stamp.new"
    mv "$stamp.new" "$stamp"
}

if [ -n "$_extra" ] && ! grep -qE "^$_extra = \[" "$_repo/pyproject.toml"; then
    die "no extra '$_extra' in pyproject.toml (setup.sh takes: [--tools] [EXTRA])"
fi
_environment
_system_packages
if [ -n "$_tools_only" ]; then
    _build_backend
    _extra_requirements "$_extra"
else
    _torch
    _package
fi
export JPEGLOADER_PY
say "ready: $JPEGLOADER_PY"
