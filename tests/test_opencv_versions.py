"""The C core's copies of OpenCV's arithmetic against each OpenCV release Ultralytics
takes that differ in it: 4.12 (the 4.x fixed-point warp), 5.0 (its float warp) and
5.1 (a warp the C core has no copy of, and 64-pixel HSV passes on AVX-512), each
installed from the package index into a folder of its own (kept in a cache between
runs) and put ahead of the environment's own cv2.  Every parity test of the YOLO
warp, HSV and letterbox runs against each; the self-check's choice is printed.
Skipped with the reason where the index cannot be reached."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


#: opencv-python-headless releases: the same library as Ultralytics' opencv-python
VERSIONS = ("4.12.0.88", "5.0.0.93", "5.1.0.95")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jpegloader-tests" / "opencv"


def _installed(version: str) -> Path:
    folder = CACHE / version
    if (folder / "cv2").is_dir():
        return folder
    partial = CACHE / f"{version}.partial"
    subprocess.run(["rm", "-rf", str(partial)], check=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
         str(partial), f"opencv-python-headless=={version}"],
        capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        pytest.skip(f"opencv-python-headless=={version} could not be installed from the "
                    f"package index: {result.stderr.strip().splitlines()[-1:]}")
    partial.rename(folder)
    return folder


@pytest.mark.parametrize("version", VERSIONS)
def test_the_c_copies_hold_to_each_opencv(version):
    folder = _installed(version)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}
    probe = subprocess.run(
        [sys.executable, "-c", "import cv2; from jpegloader.pipelines.yolo.opencv import "
         "opencv_match; print(cv2.__version__, opencv_match())"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(version.rsplit(".", 1)[0]), probe.stdout
    print(probe.stdout.strip())
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/pipelines/yolo/test_opencv.py", "tests/decoders/test_letterbox.py"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    print(result.stdout.strip().splitlines()[-1])
