"""levels_to_float: a [3, H, W] image of levels made float32 through the tensor table
where it is pinned (NOTE [ Levels made float with streaming stores ]) equals the user's
own tensor stage run on the same levels, bit for bit, for every placement of the
output (the streamed middle, the head and tail written one by one)."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.transforms import v2

from jpegloader.decoders import _jpeg, levels_to_float
from jpegloader.pipelines.tensor_stage import lut_array, run_on_ramp
from tests.hostile_jpegs import photo_like

STAGES = {
    "ToDtype": [v2.ToImage(), v2.ToDtype(torch.float32, scale=True)],
    "Normalize": [v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
                  v2.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))],
}


def levels(h: int, w: int, seed: int) -> np.ndarray:
    with Image.open(io.BytesIO(photo_like(w, h, seed=seed))) as im:
        return np.ascontiguousarray(np.asarray(im.convert("RGB")).transpose(2, 0, 1))


@pytest.mark.parametrize("name", list(STAGES))
@pytest.mark.parametrize("h, w", [(480, 640), (37, 53), (1, 3), (2, 2), (333, 517)])
def test_floats_equal_the_users_tensor_stage_wherever_the_output_starts(name, h, w):
    stage = STAGES[name]
    lut = lut_array(run_on_ramp(stage)[1])
    src = levels(h, w, h + w)
    want = torch.from_numpy(src)
    for t in stage[1:]:  # ToImage is the layout the levels already have
        want = t(want)
    for skip in range(4):  # the output at 0-3 floats past a 16-byte boundary
        room = np.empty(src.size + 8, np.float32)
        start = (-(room.ctypes.data // 4)) % 4 + skip
        out = room[start:start + src.size].reshape(src.shape)
        levels_to_float(src, out, lut)
        assert np.array_equal(out.view(np.int32), want.numpy().view(np.int32)), skip


def test_bad_buffers_raise_value_error():
    lut = np.zeros((3, 256), np.float32)
    with pytest.raises(ValueError, match="levels_to_float takes"):
        levels_to_float(np.zeros((4, 2, 2), np.uint8), np.zeros((4, 2, 2), np.float32), lut)
    with pytest.raises(ValueError, match="levels_to_float takes"):
        levels_to_float(np.zeros((3, 2, 2), np.uint8), np.zeros((3, 2, 3), np.float32), lut)
    with pytest.raises(ValueError, match="levels_to_float takes"):
        levels_to_float(np.zeros((3, 2, 2), np.float32), np.zeros((3, 2, 2), np.float32), lut)
    with pytest.raises(ValueError, match="out is a"):  # the binding checks lengths itself
        _jpeg.tensor_stage(np.zeros((3, 2, 2), np.uint8), np.zeros((3, 2, 1), np.float32),
                           1, 2, 2, 0, lut, True)
    with pytest.raises(ValueError, match="lut is a"):
        _jpeg.tensor_stage(np.zeros((3, 2, 2), np.uint8), np.zeros((3, 2, 2), np.float32),
                           1, 2, 2, 0, lut[:2], True)
