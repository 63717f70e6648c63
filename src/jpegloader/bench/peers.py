"""Other projects' own code, fetched when a recipe or a test needs it, never shipped.

DETR's data pipeline is the ``detr`` 0.1.4 wheel on PyPI (facebookresearch/detr's
``datasets/`` and ``util/`` packaged, MIT).  ``detr()`` downloads it once with pip into
a cache (``$JPEGLOADER_PEERS``, else ``~/.cache/jpegloader/peers``), unpacks it and
imports it as ``jpegloader_peer_detr``: its top-level ``datasets`` and ``util`` would
shadow Hugging Face's ``datasets`` if installed, so they never reach site-packages or
``sys.modules`` under those names.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DETR = ("detr", "0.1.4")
DETR_PACKAGE = "jpegloader_peer_detr"
#: DETR's own top-level packages, in the order they import one another
_DETR_TOP = ("util", "datasets")


class PeerMissing(RuntimeError):
    """Another project's code a recipe needs could not be fetched."""


def cache_root() -> Path:
    where = os.environ.get("JPEGLOADER_PEERS")
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jpegloader" / "peers"


def detr():
    """DETR's ``datasets`` and ``util`` as a package: ``detr().datasets.coco``,
    ``.datasets.transforms``, ``.util.misc``, ``.util.box_ops``."""
    if DETR_PACKAGE not in sys.modules:
        folder = _unpacked(*DETR)
        package = folder / DETR_PACKAGE
        if not (package / "__init__.py").exists():
            package.mkdir(exist_ok=True)
            # the package's only file of ours: it adopts DETR's modules when imported,
            # here or in a worker started with spawn (sys.path travels with it)
            (package / "__init__.py").write_text(
                "from jpegloader.bench.peers import _adopt_detr\n_adopt_detr(__name__)\n")
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    return importlib.import_module(DETR_PACKAGE)


def _unpacked(name: str, version: str) -> Path:
    folder = cache_root() / f"{name}-{version}"
    if (folder / "UNPACKED").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as download:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--only-binary=:all:", "--dest", download, f"{name}=={version}"]
        done = subprocess.run(command, capture_output=True, text=True)
        wheels = list(Path(download).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise PeerMissing(
                f"{name} {version} (its own code, from its wheel on PyPI) could not be "
                f"fetched into {folder}: {(done.stderr or done.stdout).strip()[-400:]}\n"
                f"On a machine with the index: python -m pip download --no-deps "
                f"{name}=={version} -d DIR, then unzip the wheel into {folder} and "
                f"create {folder / 'UNPACKED'} (or set JPEGLOADER_PEERS to the folder "
                f"that holds {folder.name}/).")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(folder)
    (folder / "UNPACKED").write_text(f"{wheels[0].name}\n")
    return folder


def _adopt_detr(package_name: str) -> None:
    """Imports DETR's ``util`` and ``datasets`` from beside the package and registers
    them inside it.  Their modules import one another by their top-level names
    (``from util.misc import interpolate``), so those names stand in ``sys.modules``
    while they import and whatever stood there before is put back."""
    package = sys.modules[package_name]
    folder = str(Path(package.__file__).parent.parent)
    ours = [k for k in sys.modules if k.split(".")[0] in _DETR_TOP]
    saved = {k: sys.modules.pop(k) for k in ours}
    sys.path.insert(0, folder)
    try:
        with _torchvision_before_0_7_names():
            for top in _DETR_TOP:
                importlib.import_module(top)
            importlib.import_module("datasets.transforms")
            importlib.import_module("util.box_ops")
        loaded = {k: sys.modules.pop(k) for k in list(sys.modules)
                  if k.split(".")[0] in _DETR_TOP}
    finally:
        sys.path.remove(folder)
        sys.modules.update(saved)
    for old, module in loaded.items():
        new = f"{package_name}.{old}"
        # pickling (spawn workers) finds a class or function by its module's name
        for value in vars(module).values():
            if getattr(value, "__module__", None) == old:
                value.__module__ = new
        module.__name__ = new
        if getattr(module, "__package__", None):
            module.__package__ = new if hasattr(module, "__path__") else new.rsplit(".", 1)[0]
        sys.modules[new] = module
        if "." not in old:
            setattr(package, old, module)


class _torchvision_before_0_7_names:
    """DETR's util/misc.py reads torchvision's version as ``float(__version__[:3])``,
    which takes 0.29 for 0.2, and then imports two helpers torchvision dropped after
    0.6.  While it imports, those two names stand in torchvision, doing what they did:
    the output size of an interpolation, and an empty tensor of a shape."""

    def __enter__(self):
        import torchvision.ops
        import torchvision.ops.misc
        self.places = [(torchvision.ops, "_new_empty_tensor", _new_empty_tensor),
                       (torchvision.ops.misc, "_output_size", _output_size)]
        self.added = []
        for module, name, value in self.places:
            if not hasattr(module, name):
                setattr(module, name, value)
                self.added.append((module, name))
        return self

    def __exit__(self, *exc):
        for module, name in self.added:
            delattr(module, name)


def _new_empty_tensor(x, shape):
    return x.new_empty(shape)


def _output_size(dim, input, size, scale_factor):
    if size is not None:
        return list(size) if isinstance(size, (list, tuple)) else [size] * dim
    factors = scale_factor if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
    return [int(input.size(i + 2) * factors[i]) for i in range(dim)]
