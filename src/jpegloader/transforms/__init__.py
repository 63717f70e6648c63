"""Transform recognition ("lowering") into native ops and random-parameter draws."""
from .geometry import Geometry, draw, replay, to_plans
from .lowering import LoweredPipeline, NotLowerable, lower

__all__ = ["Geometry", "LoweredPipeline", "NotLowerable", "draw", "lower", "replay", "to_plans"]
