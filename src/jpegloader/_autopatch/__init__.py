"""The folder ``python -m jpegloader run`` puts first on the PYTHONPATH of the processes
a script starts (NOTE [ The patch follows the script's processes ] in patching.py); its
``sitecustomize`` patches each of them.  Not imported by the package."""
