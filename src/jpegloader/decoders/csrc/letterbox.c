/* Whole images decoded into a constant-padded letterbox, at their own size or
 * resized with OpenCV's INTER_LINEAR. */
#define _POSIX_C_SOURCE 199309L
#include "letterbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coeffs.h"
#include "cv_linear.h"
#include "layout.h"

/* NOTE [ A letterbox ]
 * A plan that keeps the whole image (no DCT scale, flip or colour), at its own
 * size or resized with OpenCV's INTER_LINEAR (JL_FILTER_OPENCV_LINEAR), and
 * pads it with a constant into uint8 planes is a letterbox: YOLO's validation
 * photos.  The border is filled once; at its own size each decoded strip is
 * split straight into the planes at the padding's offset (an identity resize
 * would give the same bytes through two passes and two copies); resized, the
 * whole image is decoded and each output row made from two horizontal rows,
 * kept as they are reused, and split into the planes.  YOLO's training photos at
 * their own size go into OpenCV's B, G, R rows instead (JL_OUT_BGR_HWC): libjpeg-
 * turbo writes them in that order (JCS_EXT_BGR) and the rows are copied. */
enum { LETTERBOX_STRIP_ROWS = 16 }; /* rows split while still in cache */

static int whole_axis(const jl_axis *a, int size, int resized)
{
    return a->src_lo == 0 && a->src_size == size && a->in0 == 0.0 && a->in1 == (double)size &&
           (resized || a->out_size == size) && a->out_size > 0 && a->pad_start == 0 &&
           a->pad_lo >= 0 && a->pad_lo + a->out_size <= a->pad_len;
}

int jl_is_letterbox(const jl_plan *p, int out_type, int out_h, int out_w)
{
    int resized = p->filter == JL_FILTER_OPENCV_LINEAR;
    if (out_type == JL_OUT_BGR_HWC) /* OpenCV's rows: the whole image, as it is */
        return p->pad_mode == JL_PAD_CONSTANT && p->scale_denom == 1 && !p->flip &&
               !jl_colour_is_active(&p->colour) && whole_axis(&p->x, p->image_w, 0) &&
               whole_axis(&p->y, p->image_h, 0) && p->x.pad_len == p->image_w &&
               p->y.pad_len == p->image_h && out_w == p->image_w && out_h == p->image_h &&
               jl_plan_is_valid(p, out_h, out_w);
    return out_type == JL_OUT_UINT8 && p->pad_mode == JL_PAD_CONSTANT && p->scale_denom == 1 &&
           !p->flip && !jl_colour_is_active(&p->colour) &&
           (resized || p->filter == JL_FILTER_BILINEAR) &&
           whole_axis(&p->x, p->image_w, resized) && whole_axis(&p->y, p->image_h, resized) &&
           p->x.pad_len == out_w && p->y.pad_len == out_h && jl_plan_is_valid(p, out_h, out_w);
}

static void fill_border(uint8_t *out, int out_h, int out_w, int top, int left, int h, int w,
                        int32_t fill)
{
    const size_t plane = (size_t)out_h * out_w;
    int y, ch;
    for (ch = 0; ch < 3; ch++) {
        uint8_t v = (uint8_t)(fill >> (8 * ch)), *o = out + ch * plane;
        memset(o, v, (size_t)top * out_w);
        for (y = top; y < top + h; y++) {
            memset(o + (size_t)y * out_w, v, (size_t)left);
            memset(o + (size_t)y * out_w + left + w, v, (size_t)(out_w - left - w));
        }
        memset(o + (size_t)(top + h) * out_w, v, (size_t)(out_h - top - h) * out_w);
    }
}

/* The decoded rows as they come: split into the planes at the padding's offset, or
 * (bgr: libjpeg-turbo's B, G, R rows, the image unpadded) copied into OpenCV's rows. */
static int copy_rows(jl_decoder *dec, uint8_t *out, size_t plane, int out_w, int top, int left,
                     int h, int w, int bgr, char *msg)
{
    int y, k, status = JL_OK;
    for (y = 0; y < h;) {
        jl_rows strip;
        status = jl_jpeg_region_read(dec, LETTERBOX_STRIP_ROWS, &strip, msg);
        if (status != JL_OK)
            return status;
        for (k = 0; k < strip.rows; k++) {
            const uint8_t *row = strip.pixels + (size_t)k * strip.stride;
            if (bgr)
                memcpy(out + (size_t)(y + k) * 3 * w, row, (size_t)3 * w);
            else
                jl_split_rgb(row, strip.stride, 1, w, out + (size_t)(top + y + k) * out_w + left,
                             plane);
        }
        y += strip.rows;
    }
    return status;
}

/* The whole image decoded, then resized row by row into the planes: each source row
 * a resize reads is split into planes and resampled across once, into one of two
 * kept rows (NOTE [ A letterbox ]). */
static int resize_rows(jl_decoder *dec, const jl_plan *p, uint8_t *out, size_t plane,
                       int out_w, char *msg)
{
    const int w = p->image_w, h = p->image_h, rw = p->x.out_size, rh = p->y.out_size;
    const int top = p->y.pad_lo, left = p->x.pad_lo;
    const size_t padded = (size_t)w + 4; /* the horizontal pass reads 4 bytes at a time */
    int32_t *axes = malloc(sizeof(int32_t) * 3 * ((size_t)rw + rh));
    int32_t *rows = malloc(sizeof(int32_t) * 2 * 3 * (size_t)rw); /* [slot][ch][rw] */
    uint8_t *split = calloc(3, padded);
    int have[2] = {-1, -1}, y, ch, status;
    jl_rows block;

    if (!axes || !rows || !split) {
        free(axes), free(rows), free(split);
        snprintf(msg, JL_MSG_LEN, "out of memory for the resize");
        return JL_NO_MEMORY;
    }
    int32_t *xofs = axes, *xw0 = axes + rw, *xw1 = axes + 2 * rw;
    int32_t *yofs = axes + 3 * rw, *yw0 = yofs + rh, *yw1 = yofs + 2 * rh;
    jl_cv_linear_axis(w, rw, 1, xofs, xw0, xw1);
    jl_cv_linear_axis(h, rh, 0, yofs, yw0, yw1);
    status = jl_jpeg_region_read(dec, h, &block, msg);
    for (y = 0; status == JL_OK && y < rh; y++) {
        int sy = yofs[y], k;
        int src[2] = {sy < 0 ? 0 : sy >= h ? h - 1 : sy,
                      sy + 1 < 0 ? 0 : sy + 1 >= h ? h - 1 : sy + 1};
        int32_t *made[2];
        for (k = 0; k < 2; k++) { /* a horizontal row, made once and reused */
            int slot = have[0] == src[k] ? 0 : have[1] == src[k] ? 1 : -1;
            if (slot < 0) {
                slot = have[0] == src[1 - k] ? 1 : 0; /* keep the other row needed */
                jl_split_rgb(block.pixels + (size_t)src[k] * block.stride, block.stride, 1, w,
                             split, padded);
                for (ch = 0; ch < 3; ch++)
                    jl_cv_linear_row(split + ch * padded, xofs, xw0, xw1, rw,
                                     rows + ((size_t)slot * 3 + ch) * rw);
                have[slot] = src[k];
            }
            made[k] = rows + (size_t)slot * 3 * rw;
        }
        for (ch = 0; ch < 3; ch++)
            jl_cv_linear_column(made[0] + (size_t)ch * rw, made[1] + (size_t)ch * rw, yw0[y],
                                yw1[y], rw, out + ch * plane + (size_t)(top + y) * out_w + left);
    }
    free(axes), free(rows), free(split);
    return status;
}

int jl_letterbox_sample(jl_decoder *dec, const uint8_t *data, size_t size, const jl_plan *p,
                        int out_type, uint8_t *out, int out_h, int out_w, int64_t max_pixels,
                        char *msg, double *decode_seconds)
{
    const int w = p->image_w, h = p->image_h, bgr = out_type == JL_OUT_BGR_HWC;
    jl_region r;
    int status;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&r, 0, sizeof(r));
    status = jl_jpeg_region_open(dec, data, size, 1, 0, 0, w, h, max_pixels, bgr, &r, msg);
    if (status != JL_TOO_LARGE && r.width != 0 && (r.width != w || r.height != h)) {
        if (status == JL_OK)
            jl_jpeg_region_close(dec, NULL);
        snprintf(msg, JL_MSG_LEN, "the image is %dx%d now; its plan was drawn for %dx%d",
                 r.width, r.height, w, h);
        return JL_CHANGED;
    }
    if (status != JL_OK)
        return status;
    if (!bgr)
        fill_border(out, out_h, out_w, p->y.pad_lo, p->x.pad_lo, p->y.out_size, p->x.out_size,
                    p->pad_fill);
    if (!bgr && p->filter == JL_FILTER_OPENCV_LINEAR && (p->x.out_size != w || p->y.out_size != h))
        status = resize_rows(dec, p, out, (size_t)out_h * out_w, out_w, msg);
    else /* cv::resize to the same size copies */
        status = copy_rows(dec, out, (size_t)out_h * out_w, out_w, p->y.pad_lo, p->x.pad_lo, h,
                           w, bgr, msg);
    if (status == JL_OK)
        status = jl_jpeg_region_close(dec, msg);
    else
        jl_jpeg_region_close(dec, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *decode_seconds =
        (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return status;
}
