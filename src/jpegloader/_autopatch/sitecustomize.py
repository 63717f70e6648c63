"""Run by Python at the start of every process a script run under ``python -m jpegloader
run`` starts (NOTE [ The patch follows the script's processes ] in patching.py):
patches it as ``run`` patched the script, then runs the sitecustomize this one shadows."""
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _patch() -> None:
    if os.environ.get("JPEGLOADER_PATCH") != "1":
        return
    try:
        from jpegloader.patching import patch_this_process
        patch_this_process()
    except Exception as e:  # noqa: BLE001 - a process of the user's must still start
        print(f"jpegloader: this process ({' '.join(sys.argv)[:200]}) runs unpatched: "
              f"{type(e).__name__}: {e}", file=sys.stderr)


def _chain() -> None:
    """The next sitecustomize on the path, as Python would have run it."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_patch()
_chain()
