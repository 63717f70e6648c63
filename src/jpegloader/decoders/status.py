"""Per-sample status codes of the C core (csrc/jpeg_region.h, exported by the module:
NOTE [ One source of truth across the C boundary ]) and their meaning."""
from ._jpeg import STATUS as _STATUS

OK = _STATUS["OK"]
SKIPPED = _STATUS["SKIPPED"]
UNSUPPORTED = _STATUS["UNSUPPORTED"]
ERROR = _STATUS["ERROR"]
WARNING = _STATUS["WARNING"]
TOO_LARGE = _STATUS["TOO_LARGE"]
NO_MEMORY = _STATUS["NO_MEMORY"]
CHANGED = _STATUS["CHANGED"]

DESCRIPTIONS = {
    OK: "decoded",
    SKIPPED: "handled by the Python path by plan",
    UNSUPPORTED: "not decodable by the fast path",
    ERROR: "libjpeg-turbo could not decode it",
    WARNING: "libjpeg-turbo reported corrupt data",
    TOO_LARGE: "image exceeds the pixel limit",
    NO_MEMORY: "out of memory",
    CHANGED: "the file holds an image of another size than when its size was read",
}
if set(DESCRIPTIONS) != set(_STATUS.values()):
    raise ImportError(f"the C core's status codes {_STATUS} are not the ones described here")
