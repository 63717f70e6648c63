/* A plan's taps (taps.h).  No Python here. */
#include "taps.h"

#include <stdio.h>
#include <string.h>

#include "jpeg_region.h"
#include "padding.h"
#include "resample.h"

int jl_view_taps_make(const jl_plan *p, int out_h, int out_w, jl_view_taps *t, char *msg)
{
    int xlo, xhi, ylo, yhi;
    memset(t, 0, sizeof(*t));
    if (!jl_plan_is_valid(p, out_h, out_w) ||
        jl_axis_part(&p->x, out_w, p->pad_mode, &t->x_start, &t->cols) ||
        jl_axis_part(&p->y, out_h, p->pad_mode, &t->y_start, &t->rows)) {
        snprintf(msg, JL_MSG_LEN, "invalid sample plan");
        return JL_ERROR;
    }
    if (p->filter == JL_FILTER_OPENCV_LINEAR) { /* letterbox.h's plans only */
        snprintf(msg, JL_MSG_LEN, "OpenCV's resize runs in letterbox plans only");
        return JL_ERROR;
    }
    if (p->colour_first) { /* NOTE [ Colour before the padding ] */
        t->x_start = t->y_start = 0;
        t->cols = p->x.out_size;
        t->rows = p->y.out_size;
    }
    if (jl_coeffs_compute(&t->cx, p->filter, p->x.src_size, p->x.in0, p->x.in1, p->x.out_size,
                          t->x_start, t->cols) ||
        jl_coeffs_compute(&t->cy, p->filter, p->y.src_size, p->y.in0, p->y.in1, p->y.out_size,
                          t->y_start, t->rows)) {
        jl_coeffs_free(&t->cx);
        memset(t, 0, sizeof(*t));
        snprintf(msg, JL_MSG_LEN, "out of memory for resample coefficients");
        return JL_NO_MEMORY;
    }
    jl_coeffs_span(&t->cx, &xlo, &xhi);
    jl_coeffs_span(&t->cy, &ylo, &yhi);
    t->x0 = p->x.src_lo + xlo;
    t->x1 = p->x.src_lo + xhi;
    t->y0 = p->y.src_lo + ylo;
    t->y1 = p->y.src_lo + yhi;
    return JL_OK;
}

void jl_view_taps_free(jl_view_taps *t)
{
    jl_coeffs_free(&t->cx);
    jl_coeffs_free(&t->cy);
}
