/* The one scalar helper Pillow's colour arithmetic (colour.c) and torch's
 * (colour_tensor.c) share, in a header of its own so that neither file includes
 * the other's header for it. */
#ifndef JL_CLIP_BYTE_H
#define JL_CLIP_BYTE_H

#include <stdint.h>

/* A blended float to a byte, as Pillow's blend and torch's clamp_(0, 255) then
 * .to(torch.uint8) both take it: clipped to [0, 255], truncated.  Branch-free, so the
 * loops around it vectorise. */
static inline uint8_t jl_clip_trunc(float t)
{
    t = t < 0.0f ? 0.0f : t;
    t = t > 255.0f ? 255.0f : t;
    return (uint8_t)t;
}

#endif
