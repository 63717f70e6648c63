/* A plan's taps: the plan checked, its resample coefficients, and the block of
 * the scaled image they read.  What pipeline.c needs before it decodes a sample
 * through a plan.  No Python here. */
#ifndef JL_TAPS_H
#define JL_TAPS_H

#include "coeffs.h"
#include "plan.h"

/* A view: one plan's coefficients, the block of the scaled image they read,
 * [x0, x1) x [y0, y1), and the part of the resize they make, cols x rows from
 * (x_start, y_start): the output itself unless the plan pads (jl_axis_part). */
typedef struct {
    jl_coeffs cx, cy;
    int x0, x1, y0, y1;
    int x_start, y_start, cols, rows;
} jl_view_taps;

/* Validates the plan for an out_h x out_w output and computes its taps; 0, or a
 * status (jpeg_region.h's JL_*) with msg (JL_MSG_LEN bytes). */
int jl_view_taps_make(const jl_plan *p, int out_h, int out_w, jl_view_taps *t, char *msg);
void jl_view_taps_free(jl_view_taps *t);

#endif
