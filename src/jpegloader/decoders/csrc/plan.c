/* Checking a plan record before the core trusts it.  No Python here. */
#include "plan.h"

#include "resample.h"

int jl_plan_is_valid(const jl_plan *p, int out_h, int out_w)
{
    const jl_axis *ax[2] = {&p->x, &p->y};
    int n[2] = {out_w, out_h}, i;
    if (p->scale_denom != 1 && p->scale_denom != 2 && p->scale_denom != 4 &&
        p->scale_denom != 8)
        return 0;
    if (p->pad_mode < JL_PAD_NONE || p->pad_mode > JL_PAD_SYMMETRIC)
        return 0;
    if (p->colour_first != 0 && (p->colour_first != 1 || p->pad_mode == JL_PAD_NONE))
        return 0;
    if (p->filter < 0 ||
        (p->filter >= JL_FILTER_COUNT && p->filter != JL_FILTER_OPENCV_LINEAR) ||
        !jl_colour_is_valid(&p->colour) ||
        !(p->colour_first ? jl_colour_fits(&p->colour, p->y.out_size, p->x.out_size)
                          : jl_colour_fits(&p->colour, out_h, out_w)) ||
        p->image_w <= 0 || p->image_h <= 0)
        return 0;
    for (i = 0; i < 2; i++) {
        const jl_axis *a = ax[i];
        if (a->src_lo < 0 || a->src_size <= 0 || a->out_size <= 0 ||
            !(a->in0 >= 0.0) || !(a->in1 > a->in0) || a->in1 > a->src_size)
            return 0;
        if (p->pad_mode == JL_PAD_NONE && (a->out_start < 0 || a->out_start > a->out_size - n[i]))
            return 0;
    }
    return 1;
}
