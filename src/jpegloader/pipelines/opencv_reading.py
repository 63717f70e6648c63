"""Photos read as OpenCV reads them (``cv2.imread``/``cv2.imdecode`` with
IMREAD_COLOR), where a dataset reads them so (Ultralytics'): which the C core
decodes alike, and the dataset's own reading for the others."""
from __future__ import annotations

from ..decoders.markers import read_markers


def read_as_opencv(encoded, j: int, known: bool) -> bool:
    """Whether the C core decodes photo ``j`` of a group as ``cv2.imread`` does:
    no EXIF turn, one or three components (not CMYK), a header it could read."""
    if not known or j in encoded.unreadable:
        return False
    a, b = int(encoded.offsets[j]), int(encoded.offsets[j + 1])
    markers = read_markers(memoryview(encoded.data)[a:b])
    return markers.orientation == 1 and markers.components in (1, 3)


class OpenCVReading:
    """A photo as a dataset class whose ``imread(path)`` gives OpenCV's BGR array
    (Ultralytics' ClassificationDataset) makes it an RGB PIL image: its own imread,
    then cv2's BGR to RGB conversion.  OpenCV is imported only here: it comes with
    such a dataset."""

    def __init__(self, dataset_class: type):
        self.dataset_class = dataset_class

    def __call__(self, path: str):
        import cv2
        from PIL import Image

        return Image.fromarray(cv2.cvtColor(self.dataset_class.imread(path), cv2.COLOR_BGR2RGB))
