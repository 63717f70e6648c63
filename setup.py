"""Builds the C decode core, jpegloader.decoders._jpeg, against libjpeg-turbo,
and the pipelines' own arithmetic in plain C: SSD's boxes, COCO's masks, Pillow's
affine transform and enhancements, and YOLO's OpenCV warps
(jpegloader.pipelines.{ssd._boxes,detection._masks,classification._pillow,yolo._opencv}).

By default it links the system's shared libjpeg (Debian: libjpeg62-turbo-dev;
Ubuntu: libjpeg-turbo8-dev; Fedora: libjpeg-turbo-devel).  ``bash
scripts/wheel.sh`` then makes a self-contained wheel: auditwheel copies that
libjpeg into the wheel under a mangled name.  Alternatively, build
libjpeg-turbo with -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DENABLE_SHARED=0
and point JPEGLOADER_LIBJPEG_STATIC at its libjpeg.a: it is then linked in
with its symbols hidden (-Wl,--exclude-libs,ALL), so the copies torch,
torchvision and Pillow bring into the same process cannot clash with it.
JPEGLOADER_LIBJPEG_PREFIX=/path selects a libjpeg-turbo outside /usr.

Before anything is compiled (and before pip downloads the dependencies), the
build checks for a C compiler, Python.h and jpeglib.h and, if one is missing,
stops with the packages that provide it.
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup

common_csrc = "src/jpegloader/_csrc"  # headers shared by both bindings
PREFIX = os.environ.get("JPEGLOADER_LIBJPEG_PREFIX", "/usr")
MULTIARCH = sysconfig.get_config_var("MULTIARCH") or ""
JPEG_INCLUDES = [os.path.join(PREFIX, "include", MULTIARCH), os.path.join(PREFIX, "include")]

# The setup.py commands that lead to compiling (pip runs dist_info to prepare
# a wheel's metadata, before it downloads the dependencies; an sdist needs no compiler).
_BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install",
             "dist_info"}
_PACKAGES = {
    "compiler": "a C compiler (Debian/Ubuntu: gcc; Fedora: gcc)",
    "Python.h": "the Python headers (Debian/Ubuntu: python3-dev, or python3.X-dev for "
                "Python 3.X; Fedora: python3-devel)",
    "jpeglib.h": "libjpeg-turbo's headers (Debian: libjpeg62-turbo-dev; Ubuntu: "
                 "libjpeg-turbo8-dev; Fedora: libjpeg-turbo-devel; or set "
                 "JPEGLOADER_LIBJPEG_PREFIX to a libjpeg-turbo installation)",
}


def _compiler() -> str | None:
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) or shutil.which("cc") or shutil.which("gcc")


def _has_jpeglib(cc: str) -> bool:
    """Does `#include <jpeglib.h>` preprocess with the include dirs the build uses?"""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\n#include <jpeglib.h>\n")
        args = [cc, "-E", src, "-o", os.devnull] + [f"-I{d}" for d in JPEG_INCLUDES]
        return subprocess.run(args, capture_output=True, check=False).returncode == 0


def check_build_requirements() -> None:
    """Stops with the packages to install, instead of a compiler error later."""
    missing = []
    cc = _compiler()
    if cc is None:
        missing.append("compiler")
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        missing.append("Python.h")
    if cc is not None and not _has_jpeglib(cc):
        missing.append("jpeglib.h")
    if missing:
        lines = "\n".join(f"  - {name}: install {_PACKAGES[name]}" for name in missing)
        sys.exit(f"jpegloader cannot be built here; missing:\n{lines}\n"
                 "bash scripts/setup.sh installs them on Debian/Ubuntu and Fedora; or install "
                 "the self-contained wheel from bash scripts/wheel.sh, which needs none of them.")


def _libjpeg_settings():
    libdirs = [os.path.join(PREFIX, "lib", MULTIARCH), os.path.join(PREFIX, "lib64"),
               os.path.join(PREFIX, "lib")]
    includes = [common_csrc, *JPEG_INCLUDES]
    static = os.environ.get("JPEGLOADER_LIBJPEG_STATIC")
    if static:
        return dict(include_dirs=includes, extra_objects=[static], libraries=["m"],
                    extra_link_args=["-Wl,--exclude-libs,ALL"])
    return dict(include_dirs=includes, library_dirs=[d for d in libdirs if os.path.isdir(d)],
                libraries=["jpeg", "m"])


if _BUILDING & set(sys.argv[1:]):
    check_build_requirements()

csrc = "src/jpegloader/decoders/csrc"
_COMMON_FLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                 "-fvisibility=hidden",
                 # an error from GCC 14 on: fail here too, not only on newer compilers
                 "-Werror=implicit-function-declaration",
                 # Pillow's and torch's float arithmetic is reproduced to the bit: no FMA
                 "-ffp-contract=off",
                 # branch-free float selects may be computed on both sides (results unchanged)
                 "-fno-trapping-math"]


def _extension(name: str, folder: str, sources: list[str], depends: list[str],
               shared: tuple[str, ...] = (), **settings):
    """One of the package's C extensions, on the stable ABI (Python 3.11+); ``shared``:
    sources of the common folder compiled into it too."""
    return Extension(name, sources=[f"{folder}/{s}" for s in sources] +
                     [f"{common_csrc}/{s}" for s in shared], depends=depends,
                     define_macros=[("Py_LIMITED_API", "0x030B0000")], py_limited_api=True,
                     extra_compile_args=_COMMON_FLAGS, **settings)


def _pipeline_extension(name: str, folder: str, c_files: list[str],
                        shared: tuple[str, ...] = ()):
    """C of its own beside the decoder (a pipeline's arithmetic, the loader's host
    copy): no libjpeg, the shared buffer checks."""
    return _extension(name, folder, ["module.c", *c_files],
                      glob.glob(f"{folder}/*.h") + glob.glob(f"{common_csrc}/*.h"),
                      shared, include_dirs=[common_csrc])


setup(
    ext_modules=[
        _extension("jpegloader.decoders._jpeg", csrc,
                   ["module.c", "pipeline.c", "jpeg_region.c", "coeffs.c", "resample.c",
                    "layout.c", "gather_rows.c", "colour.c", "colour_tensor.c", "dc_scans.c",
                    "padding.c", "plan.c", "taps.c", "resize_image.c", "letterbox.c",
                    "cv_linear.c", "tensor_stage.c"],
                   glob.glob(f"{csrc}/*.h") + glob.glob(f"{common_csrc}/*.h"),
                   ("avx512.c",), **_libjpeg_settings()),
        _pipeline_extension("jpegloader.pipelines.ssd._boxes",
                            "src/jpegloader/pipelines/ssd/csrc", ["boxes.c"]),
        _pipeline_extension("jpegloader.pipelines.detection._masks",
                            "src/jpegloader/pipelines/detection/csrc", ["masks.c"]),
        _pipeline_extension("jpegloader.pipelines.classification._pillow",
                            "src/jpegloader/pipelines/classification/csrc",
                            ["pil_affine.c", "pil_enhance.c"]),
        _pipeline_extension("jpegloader.pipelines.yolo._opencv",
                            "src/jpegloader/pipelines/yolo/csrc",
                            ["warp.c", "hsv.c", "bgr.c", "polygons.c", "fill.c", "overlap.c"],
                            ("avx512.c",)),
        _pipeline_extension("jpegloader.dataloader._host_copy",
                            "src/jpegloader/dataloader/csrc", ["host_copy.c"]),
    ],
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
