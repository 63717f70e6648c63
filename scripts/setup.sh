#!/usr/bin/env bash
# Installs everything turboloader needs on a fresh Debian/Ubuntu machine:
# libjpeg-turbo's headers (libjpeg62-turbo-dev, or libjpeg-turbo8-dev on Ubuntu),
# a C compiler, torch + torchvision (unless already present), and the package.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! [ -f /usr/include/jpeglib.h ] && ! ls /usr/include/*/jconfig.h >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq libjpeg62-turbo-dev gcc >/dev/null 2>&1 \
        || $SUDO apt-get install -y -qq libjpeg-turbo8-dev gcc >/dev/null
fi
PY="${PYTHON:-python3}"
if ! "$PY" -c "import torch, torchvision" 2>/dev/null; then
    "$PY" -m pip install -q "torch==2.14.1" "torchvision==0.29.1"
fi
"$PY" -m pip install -q "setuptools>=70.1"
"$PY" -m pip install -q --no-build-isolation -e ".[test]"
