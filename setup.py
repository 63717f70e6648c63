"""Builds the C decode core, turboloader.decoders._jpeg, against libjpeg-turbo,
and the SSD box arithmetic, turboloader.transforms._boxes (plain C).

By default it links the system's shared libjpeg (Debian/Ubuntu:
libjpeg62-turbo-dev; Fedora: libjpeg-turbo-devel).  Distributions ship
libjpeg.a without -fPIC, so it cannot go into an extension module; to make
the module self-contained, build libjpeg-turbo with
-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DENABLE_SHARED=0 and point
TURBOLOADER_LIBJPEG_STATIC at its libjpeg.a: it is then linked with its
symbols hidden (-Wl,--exclude-libs,ALL), so the copies torch, torchvision and
Pillow bring into the same process cannot clash with it.
TURBOLOADER_LIBJPEG_PREFIX=/path selects a libjpeg-turbo outside /usr.
"""
import glob
import os
import sysconfig

from setuptools import Extension, setup


common_csrc = "src/turboloader/_csrc"  # headers shared by both bindings


def _libjpeg_settings():
    prefix = os.environ.get("TURBOLOADER_LIBJPEG_PREFIX", "/usr")
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    libdirs = [os.path.join(prefix, "lib", multiarch), os.path.join(prefix, "lib64"),
               os.path.join(prefix, "lib")]
    includes = [common_csrc, os.path.join(prefix, "include", multiarch),
                os.path.join(prefix, "include")]
    static = os.environ.get("TURBOLOADER_LIBJPEG_STATIC")
    if static:
        return dict(include_dirs=includes, extra_objects=[static],
                    extra_link_args=["-Wl,--exclude-libs,ALL"])
    return dict(include_dirs=includes, library_dirs=[d for d in libdirs if os.path.isdir(d)],
                libraries=["jpeg"])


csrc = "src/turboloader/decoders/csrc"
box_csrc = "src/turboloader/transforms/csrc"
_COMMON_FLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                 "-fvisibility=hidden",
                 # Pillow's and torch's float arithmetic is reproduced to the bit: no FMA
                 "-ffp-contract=off"]
setup(
    ext_modules=[
        Extension(
            "turboloader.decoders._jpeg",
            sources=[f"{csrc}/module.c", f"{csrc}/pipeline.c", f"{csrc}/jpeg_region.c",
                     f"{csrc}/resample.c", f"{csrc}/color.c"],
            depends=glob.glob(f"{csrc}/*.h") + glob.glob(f"{common_csrc}/*.h"),
            define_macros=[("Py_LIMITED_API", "0x030B0000")],
            py_limited_api=True,
            extra_compile_args=_COMMON_FLAGS,
            **_libjpeg_settings(),
        ),
        Extension(
            "turboloader.transforms._boxes",
            sources=[f"{box_csrc}/module.c", f"{box_csrc}/boxes.c"],
            depends=[f"{box_csrc}/boxes.h", f"{common_csrc}/buffer_checks.h"],
            include_dirs=[common_csrc],
            define_macros=[("Py_LIMITED_API", "0x030B0000")],
            py_limited_api=True,
            extra_compile_args=_COMMON_FLAGS,
        ),
    ],
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
