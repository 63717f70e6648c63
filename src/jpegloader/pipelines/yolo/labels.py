"""A sample's labels as Ultralytics makes them, computed without its pixels.

NOTE [ YOLO labels replayed ]
Ultralytics' transforms split each step into ``get_params`` (read from the image's
size), ``apply_image`` (the pixels) and ``apply_instances`` (boxes, segments,
keypoints, masks).  The worker has the dataset's own ``get_image_and_label`` build
a sample's label dict, with a stand-in image of the photo's resized size that holds
no pixels left where ``load_image`` finds a cached photo, and runs the user's own
LetterBox and Format objects over it except for ``apply_image``, whose only effects
beside the pixels are done here: the image's new size, and LetterBox's
``resized_shape``.  The dict, boxes, classes, masks and ``ratio_pad`` are therefore
Ultralytics' own arithmetic, whatever its version, or for a verified one this
package's to the same values (NOTE [ Label arithmetic in place ]).
"""
from __future__ import annotations

from ..stand_ins import opencv_image
from .draw import padded_hw
from .recognise import YoloSource


def sample_labels(source: YoloSource, index: int, ori: tuple[int, int],
                  resized: tuple[int, int]) -> dict:
    """Everything of sample ``index``'s dict but ``img`` (NOTE [ YOLO labels replayed ])."""
    dataset = source.dataset
    held = dataset.ims[index], dataset.im_hw0[index], dataset.im_hw[index]
    dataset.ims[index], dataset.im_hw0[index], dataset.im_hw[index] = \
        opencv_image(*resized), ori, resized
    try:
        label = dataset.get_image_and_label(index)
    finally:
        dataset.ims[index], dataset.im_hw0[index], dataset.im_hw[index] = held
    for step in source.steps:
        params = step.get_params(label)
        if step is source.letterbox:
            label["img"] = opencv_image(*padded_hw(params))
            label["resized_shape"] = params["new_shape"]
        else:  # Format: the image is the pixels' business
            label.pop("img", None)
        label = step.apply_instances(label, params)
        label = step.apply_semantic(label, params)
    label.pop("img", None)
    return label
