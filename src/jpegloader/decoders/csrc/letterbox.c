/* Whole images decoded unresized into a constant-padded letterbox. */
#define _POSIX_C_SOURCE 199309L
#include "letterbox.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "layout.h"

/* NOTE [ Unresized into a letterbox ]
 * A plan that keeps the whole image at its own size (one-to-one on both axes,
 * no DCT scale, flip or colour) and pads it with a constant into uint8 planes
 * is a letterbox: YOLO's validation photos already at imgsz.  Each decoded
 * strip is split straight into the output planes at the padding's offset and
 * the border is filled once; no resampling pass runs (an identity resize
 * gives the same bytes through two passes and two copies). */
enum { LETTERBOX_STRIP_ROWS = 16 }; /* rows split while still in cache */

int jl_is_letterbox(const jl_plan *p, int out_type, int out_h, int out_w)
{
    const jl_axis *x = &p->x, *y = &p->y;
    return out_type == JL_OUT_UINT8 && p->pad_mode == JL_PAD_CONSTANT && p->scale_denom == 1 &&
           !p->flip && !jl_colour_is_active(&p->colour) &&
           x->src_lo == 0 && x->src_size == p->image_w && x->out_size == p->image_w &&
           x->in0 == 0.0 && x->in1 == (double)p->image_w &&
           y->src_lo == 0 && y->src_size == p->image_h && y->out_size == p->image_h &&
           y->in0 == 0.0 && y->in1 == (double)p->image_h &&
           x->pad_start == 0 && y->pad_start == 0 && x->pad_len == out_w && y->pad_len == out_h &&
           x->pad_lo >= 0 && y->pad_lo >= 0 && x->pad_lo + p->image_w <= out_w &&
           y->pad_lo + p->image_h <= out_h;
}

int jl_letterbox_sample(jl_decoder *dec, const uint8_t *data, size_t size,
                            const jl_plan *p, uint8_t *out, int out_h, int out_w,
                            int64_t max_pixels, char *msg, double *decode_seconds)
{
    const size_t plane = (size_t)out_h * out_w;
    const int left = p->x.pad_lo, top = p->y.pad_lo, w = p->image_w, h = p->image_h;
    jl_region r;
    int y, ch, status;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&r, 0, sizeof(r));
    status = jl_jpeg_region_open(dec, data, size, 1, 0, 0, w, h, max_pixels, &r, msg);
    if (status != JL_TOO_LARGE && r.width != 0 && (r.width != w || r.height != h)) {
        if (status == JL_OK)
            jl_jpeg_region_close(dec, NULL);
        snprintf(msg, JL_MSG_LEN, "the image is %dx%d now; its plan was drawn for %dx%d",
                 r.width, r.height, w, h);
        return JL_CHANGED;
    }
    if (status != JL_OK)
        return status;
    for (ch = 0; ch < 3; ch++) {
        uint8_t fill = (uint8_t)(p->pad_fill >> (8 * ch));
        uint8_t *o = out + ch * plane;
        memset(o, fill, (size_t)top * out_w);
        for (y = top; y < top + h; y++) {
            memset(o + (size_t)y * out_w, fill, (size_t)left);
            memset(o + (size_t)y * out_w + left + w, fill, (size_t)(out_w - left - w));
        }
        memset(o + (size_t)(top + h) * out_w, fill, (size_t)(out_h - top - h) * out_w);
    }
    for (y = 0; y < h;) {
        jl_rows strip;
        int k;
        status = jl_jpeg_region_read(dec, LETTERBOX_STRIP_ROWS, &strip, msg);
        if (status != JL_OK)
            break;
        for (k = 0; k < strip.rows; k++)
            jl_split_rgb(strip.pixels + (size_t)k * strip.stride, strip.stride, 1, w, out + (size_t)(top + y + k) * out_w + left, plane);
        y += strip.rows;
    }
    if (status == JL_OK)
        status = jl_jpeg_region_close(dec, msg);
    else
        jl_jpeg_region_close(dec, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *decode_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return status;
}
