/* Padded crops (NOTE [ Padding a crop ] in padding.c): torchvision's RandomCrop
 * padding and pad_if_needed, as a map from each output row and column to a
 * resampled one, or to the fill.  No Python here. */
#ifndef JL_PADDING_H
#define JL_PADDING_H

#include <stdint.h>

#include "pipeline.h"

/* The samples an axis resamples: its count, or the output's side. */
int jl_axis_made(const jl_axis *a, int side);

/* Whether every source a padded axis of `side` output samples takes lies in the
 * part it resamples (and its fields are in range). */
int jl_pad_fits(const jl_axis *a, int side, int mode);

/* A padded plan's output planes dst [3][out_h][out_w] from the resampled planes
 * src [3][rows][cols] (each axis's jl_axis_made); map: out_w + out_h ints of
 * scratch. */
void jl_pad_planes(const uint8_t *src, uint8_t *dst, int32_t *map, const jl_plan *p, int out_h,
                   int out_w);

#endif
