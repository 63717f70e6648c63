"""Decoders: the libjpeg-turbo C core (``_jpeg``) and its Python wrapper."""
from .jpeg import (
                   DEFAULT_MAX_PIXELS,
                   PLAN_DTYPE,
                   EncodedBatch,
                   Output,
                   decode_batch,
                   decode_each,
                   decode_views,
                   hwc_to_chw,
                   levels_to_float,
                   libjpeg_turbo_version,
                   probe,
                   resize_hwc,
                   skipped_plans,
)

__all__ = ["DEFAULT_MAX_PIXELS", "PLAN_DTYPE", "EncodedBatch", "Output", "decode_batch",
           "decode_each", "decode_views",
           "hwc_to_chw", "levels_to_float",
           "libjpeg_turbo_version", "probe", "resize_hwc", "skipped_plans"]
