"""The step model (NOTE [ One class per step ]): each step that stays the user's says
why, and a new transform is one class and one line in its family's table.  These
lower transforms alone: no photos needed."""
from dataclasses import dataclass

import pytest
import torch
from torchvision.transforms import InterpolationMode
from torchvision.transforms import v2 as T

from jpegloader.pipelines.detection import lower
from jpegloader.pipelines.detection.families import V2_STEPS
from jpegloader.pipelines.detection.states import flattened
from jpegloader.pipelines.detection.steps import Distort, Group, TargetOnly, ZoomOut


class MyFlip(T.RandomHorizontalFlip):
    pass


SHORTEST = T.RandomShortestSize([480, 512], max_size=800)


@pytest.mark.parametrize("after, reason", [
    (T.Resize(300), "a second resize"),
    (T.RandomIoUCrop(), "after a resize or a crop"),
    (T.RandomPhotometricDistort(), "after geometry or a padding"),
    (T.RandomZoomOut(), "after a resize or a crop"),
    (MyFlip(), "a subclass of RandomHorizontalFlip"),
    (T.RandomApply([T.RandomHorizontalFlip()]), "a flip or a group inside"),
    (T.RandomApply([T.ToImage()]), "it converts the image inside"),
    (T.Normalize([0.5] * 3, [0.2] * 3), "not on a float image"),
    (T.GaussianBlur(3), "no native lowering"),
])
def test_the_verdict_says_why_each_step_stays_yours(after, reason):
    program, checks = lower.lower(T.Compose([SHORTEST, after, T.RandomHorizontalFlip()]))
    name = program.yours_names[0]
    assert len(program.yours) == 2 and program.why_yours.startswith(reason), program.why_yours
    assert f"yours, in the workers: {name}, " in checks[0].message
    assert f"({name} is not native here: {program.why_yours}, and the rest follow it)" in \
        checks[0].message


def test_a_refusal_names_the_step_and_its_reason():
    resize = T.Resize(300, interpolation=InterpolationMode.NEAREST)
    program, checks = lower.lower(T.Compose([resize, T.ToImage()]))
    assert program is None and not checks[0].passed
    assert "it stops at transform 0 Resize: not bilinear" in checks[0].message


def test_groups_hold_their_alternatives_and_the_class_attributes_say_the_rest():
    program, _ = lower.lower(T.Compose([
        T.RandomApply([T.RandomPhotometricDistort(p=1.0)], p=0.5),
        T.RandomChoice([T.RandomZoomOut(fill=0, p=1.0), T.RandomIoUCrop()], p=[0.3, 0.7]),
        T.RandomHorizontalFlip(), T.ToImage()]))
    apply, choice = program.steps[:2]
    assert isinstance(apply, Group) and isinstance(choice, Group)
    assert [type(s) for a in choice.alternatives for s in a][0] is ZoomOut
    assert program.padded and program.draws_own and program.fill == 0
    assert sum(isinstance(s, Distort) for s in flattened(program.steps)) == 1
    assert program.names[1] == "RandomChoice: RandomZoomOut(side_range=(1.0, 4.0), p=1.0) " \
                               "| RandomIoUCrop"
    assert not choice.moves_masks  # a v2 zoom-out's masks are not the painted maps'


def test_a_new_step_is_one_class_and_one_line(monkeypatch):
    # the example in docs/design.md ("Detection's steps")
    @dataclass(frozen=True, kw_only=True)
    class ClampKeyPoints(TargetOnly):
        @classmethod
        def admit(cls, t, prefix):
            return None if prefix.image_type != "pil" else "keypoints need a tensor image"

    transforms = T.Compose([SHORTEST, T.ToImage(), T.ClampKeyPoints()])
    assert lower.lower(transforms)[0].why_yours == "no native lowering"
    monkeypatch.setitem(V2_STEPS, T.ClampKeyPoints, ClampKeyPoints)
    program, _ = lower.lower(transforms)
    assert not program.yours and isinstance(program.steps[-1], ClampKeyPoints)
    first = T.Compose([T.ClampKeyPoints(), SHORTEST])
    assert lower.lower(first)[0] is None  # before the conversion: the decode alone
    assert "keypoints need a tensor image" in lower.lower(first)[1][0].message


def test_steps_compare_and_hash_as_the_lowering_key():
    a = lower.lower(T.Compose([SHORTEST, T.RandomHorizontalFlip(), T.ToImage(),
                               T.ToDtype(torch.float32, scale=True)]))[0]
    b = lower.lower(T.Compose([SHORTEST, T.RandomHorizontalFlip(), T.ToImage(),
                               T.ToDtype(torch.float32, scale=True)]))[0]
    assert a.steps == b.steps and hash(a.steps) == hash(b.steps)
