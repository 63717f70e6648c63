"""python -m jpegloader.benchmark: jpegloader against torch's DataLoader, side by side
(the benchmark lives in jpegloader.bench; this is its documented entry point)."""
import sys

from .bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
