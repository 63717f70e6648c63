"""Run by Python at the start of every process a script run under ``python -m jpegloader
run`` starts (NOTE [ The patch follows the script's processes ] in patching.py):
patches it as ``run`` patched the script, once it imports torch, then runs the
sitecustomize this one shadows."""
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _patch() -> None:
    try:
        from jpegloader.patching import patch_this_process
        patch_this_process()
    except Exception as e:  # noqa: BLE001 - a process of the user's must still start
        print(f"jpegloader: this process ({' '.join(sys.argv)[:200]}) runs unpatched: "
              f"{type(e).__name__}: {e}", file=sys.stderr)


def _initializing(name: str) -> bool:
    module = sys.modules.get(name)
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


class _PatchAfterTorch:
    """A meta path finder that finds nothing itself.  When ``torch`` is first imported it
    has the other finders find it and patches once torch's own module has run, before
    the import statement that asked for torch (or any of its submodules) returns; when
    the script imports jpegloader first, once jpegloader's has.  A process that never
    imports torch (a trainer's daemons, a tool the script calls) never imports
    jpegloader either."""

    WATCHED = ("torch", "jpegloader")

    def find_spec(self, name, path=None, target=None):
        if name not in self.WATCHED:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if finder is not self and find else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec

        def exec_module(module, run=loader.exec_module):
            run(module)
            del loader.exec_module  # the loader as it was, for anything that keeps it
            self.imported(name)
        loader.exec_module = exec_module
        return spec

    def imported(self, name: str) -> None:
        if name == "torch" and _initializing("jpegloader"):
            return  # torch imported by jpegloader: patched once jpegloader has run
        if self in sys.meta_path:
            sys.meta_path.remove(self)
            _patch()


def _patch_when_torch_is_imported() -> None:
    if os.environ.get("JPEGLOADER_PATCH") != "1":
        return
    if "torch" in sys.modules:
        _patch()
    else:
        sys.meta_path.insert(0, _PatchAfterTorch())


def _chain() -> None:
    """The next sitecustomize on the path, as Python would have run it."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_patch_when_torch_is_imported()
_chain()
