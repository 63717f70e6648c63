"""The build explains what is missing, and scripts/wheel.sh makes a self-contained wheel:
its extension finds libjpeg-turbo inside the wheel and decodes a batch in a new virtual
environment that has no jpegloader of its own."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the build checks and auditwheel are Linux-only")


def test_build_names_the_package_to_install_when_jpeglib_h_is_missing(tmp_path):
    # A compiler that cannot find jpeglib.h, as on a machine without the JPEG headers.
    fake_cc = tmp_path / "cc"
    fake_cc.write_text(textwrap.dedent("""\
        #!/bin/sh
        for a in "$@"; do
            case "$a" in *.c) grep -q jpeglib.h "$a" && exit 1 ;; esac
        done
        exec cc "$@"
        """))
    fake_cc.chmod(0o755)
    # --no-index: had the build gone on to resolve dependencies, pip would fail
    # differently ("No matching distribution"), so the message shows it stopped first.
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--dry-run", str(REPO)],
        env={**os.environ, "CC": str(fake_cc)}, capture_output=True, text=True, timeout=300,
        check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "jpegloader cannot be built here" in output, output
    for package in ("libjpeg62-turbo-dev", "libjpeg-turbo8-dev", "libjpeg-turbo-devel"):
        assert package in output
    assert "No matching distribution" not in output
    assert "No such file or directory" not in output  # no raw compiler error


_LOAD_A_BATCH = """
import json, subprocess, sys
import torch
from torchvision import datasets, transforms as T
import jpegloader
from jpegloader.decoders import _jpeg

transform = T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor()])
ds = datasets.ImageFolder(sys.argv[1], transform)
loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=1)
images, labels = next(iter(loader))
native = next(iter(torch.utils.data.DataLoader(ds, batch_size=4)))
print(json.dumps({
    "package": jpegloader.__file__, "extension": _jpeg.__file__,
    "libjpeg_turbo": jpegloader.libjpeg_turbo_version(),
    "accelerated": loader.eligibility.accelerated, "shape": list(images.shape),
    "labels_equal": torch.equal(labels, native[1]),
    "mean_abs_diff": (images - native[0]).abs().mean().item() * 255,
    "ldd": subprocess.run(["ldd", _jpeg.__file__], capture_output=True, text=True).stdout,
}))
"""


def test_wheel_bundles_libjpeg_and_loads_a_batch(tmp_path):
    from tests.conftest import write_image_folder

    dist = tmp_path / "dist"
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix}  # build with this very environment
    subprocess.run(["bash", str(REPO / "scripts" / "wheel.sh"), str(dist)], env=env,
                   check=True, timeout=600, capture_output=True)
    (wheel,) = dist.glob("jpegloader-*.whl")
    assert "-cp311-abi3-manylinux" in wheel.name and wheel.name.endswith("_x86_64.whl") \
        or "aarch64" in wheel.name, wheel.name
    # installable wherever torch's own wheels are (glibc 2.28): no symbol of a newer glibc
    floor = re.search(r"manylinux_2_(\d+)_", wheel.name)
    assert floor and int(floor.group(1)) <= 28, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    bundled = [n for n in names if n.startswith("jpegloader.libs/libjpeg")]
    assert bundled, names
    # The extensions' C sources belong in the sdist only; the one C file in the wheel is
    # the benchmark's ceiling tool, which --ceiling compiles where it runs.
    assert [n for n in names if n.endswith(".c")] == ["jpegloader/bench/jpeg_limit.c"], \
        "C sources belong in the sdist only"
    # every extension (the decoder's, each pipeline's, the loader's host copy) ships with
    # its .pyi contract
    extensions = sorted(n.split(".")[0] for n in names if n.endswith(".abi3.so"))
    assert extensions == [f"jpegloader/{e}" for e in (
        "dataloader/_host_copy", "decoders/_jpeg", "pipelines/classification/_pillow",
        "pipelines/detection/_masks", "pipelines/ssd/_boxes", "pipelines/yolo/_opencv")], \
        extensions
    assert all(f"{e}.pyi" in names for e in extensions), names

    # A new environment that sees this one's torch and numpy, but no jpegloader.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_test_dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-qq", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300)

    data = write_image_folder(tmp_path / "images", 8)
    run = subprocess.run([str(venv / "bin" / "python"), "-c", _LOAD_A_BATCH, str(data)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["package"].startswith(str(venv)), got["package"]
    libjpeg = [line for line in got["ldd"].splitlines() if "libjpeg" in line]
    assert len(libjpeg) == 1, got["ldd"]
    assert "jpegloader.libs/libjpeg-" in libjpeg[0] and str(venv) in libjpeg[0], libjpeg
    assert "not found" not in got["ldd"]
    assert got["accelerated"] and got["shape"] == [4, 3, 56, 56] and got["labels_equal"]
    assert got["mean_abs_diff"] < 1.0, got
