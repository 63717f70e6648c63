"""Per-sample status codes of the C core (csrc/jpeg_region.h) and their meaning."""
OK = 0
SKIPPED = 1
UNSUPPORTED = 2
ERROR = 3
WARNING = 4
TOO_LARGE = 5
NO_MEMORY = 6

DESCRIPTIONS = {
    OK: "decoded",
    SKIPPED: "handled by the Python path by plan",
    UNSUPPORTED: "not decodable by the fast path",
    ERROR: "libjpeg-turbo could not decode it",
    WARNING: "libjpeg-turbo reported corrupt data",
    TOO_LARGE: "image exceeds the pixel limit",
    NO_MEMORY: "out of memory",
}
