#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include "pipeline.h"
#include "letterbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "gather_rows.h"
#include "padding.h"
#include "resample.h"
#include "taps.h"

typedef struct {
    uint8_t *a, *b, *c, *d, *e, *strip, *gather, *colour;
    size_t a_size, b_size, c_size, d_size, e_size, strip_size, gather_size, colour_size;
    int32_t *acc, *map;
    size_t acc_size, map_size;
} jl_scratch;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void scratch_free(jl_scratch *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->d);
    free(s->e);
    free(s->colour);
    free(s->strip);
    free(s->gather);
    free(s->acc);
    free(s->map);
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The vertical pass of channel ch from c [rows][out_w] (row-major, the
 * horizontal pass done): straight into the output when nothing follows (floats
 * through the table, or bytes), else into d. */
static void vertical_pass(jl_scratch *s, const uint8_t *c, const jl_coeffs *cy, int ch,
                          int out_h, int out_w, const float *lut, const float *norm, int flip,
                          int out_type, void *fused_out)
{
    size_t plane = (size_t)out_h * out_w;
    if (fused_out && out_type == JL_OUT_FLOAT32)
        jl_filter_rows_lut(c, (size_t)out_w, out_w, cy, lut + ch * 256,
                           norm ? norm + 2 * ch : NULL, flip,
                           (float *)fused_out + ch * plane, (size_t)out_w, s->acc);
    else if (fused_out)
        jl_filter_rows(c, (size_t)out_w, out_w, cy, flip, (uint8_t *)fused_out + ch * plane,
                       (size_t)out_w, s->acc);
    else
        jl_filter_rows(c, (size_t)out_w, out_w, cy, 0, s->d + ch * plane, (size_t)out_w,
                       s->acc);
}

/* NOTE [ Pillow's pass order ]
 * Pillow resamples in two passes with an 8-bit image between them, so the
 * order of the passes shows in the last bit.  Up to Pillow 12 the horizontal
 * pass always ran first; Pillow 13 runs the vertical one first when the
 * height shrinks by more than twice what the width does.  Python decides
 * (decoders/plans.py knows the installed Pillow) and sets vertical_first.
 *
 * Both orders run the same "filter down the rows" primitive on planes laid
 * out so that it reads contiguous memory: the horizontal pass runs on a
 * transposed plane (one row per source column), or, where it applies, on the
 * rows themselves (NOTE [ The horizontal pass without transposes ]). */
static void resample_planes(jl_scratch *s, const jl_rows *r, int cols, const jl_coeffs *cx,
                            const jl_gather *g, const jl_coeffs *cy, int vertical_first,
                            int out_h, int out_w, const float *lut, const float *norm,
                            int flip, int out_type, void *fused_out)
{
    int rows = r->rows, ch;
    size_t plane_a = (size_t)cols * rows, plane = (size_t)out_h * out_w;
    if (!vertical_first) {
        /* a: region planes transposed [cols][rows]; b: horizontal pass
         * [out_w][rows] (both with rows padded, jl_padded); c: b transposed
         * [rows][out_w]. */
        size_t stride = jl_padded(rows), plane_t = (size_t)cols * stride;
        jl_split_transpose_rgb(r->pixels, r->stride, rows, cols, s->a, stride, plane_t,
                               s->strip);
        for (ch = 0; ch < 3; ch++) {
            uint8_t *b = s->b, *c = s->c; /* one channel at a time: reused */
            jl_filter_rows(s->a + ch * plane_t, stride, rows, cx, 0, b, stride, s->acc);
            jl_transpose_u8(b, stride, out_w, rows, c, (size_t)out_w);
            vertical_pass(s, c, cy, ch, out_h, out_w, lut, norm, flip, out_type, fused_out);
        }
        return;
    }
    /* a: region planes [rows][cols]; b: vertical pass [out_h][cols]; then the
     * horizontal pass on b's rows -> d, or on b transposed ([cols][out_h], in c)
     * -> b again [out_w][out_h], transposed -> d. */
    jl_split_rgb(r->pixels, r->stride, rows, cols, s->a, plane_a);
    for (ch = 0; ch < 3; ch++) {
        uint8_t *b = s->b, *c = s->c;
        jl_filter_rows(s->a + ch * plane_a, (size_t)cols, cols, cy, 0, b, (size_t)cols, s->acc);
        if (g) {
            jl_gather_rows(g, b, (size_t)cols, out_h, s->d + ch * plane, (size_t)out_w);
            continue;
        }
        jl_transpose_u8(b, (size_t)cols, out_h, cols, c, (size_t)out_h);
        jl_filter_rows(c, (size_t)out_h, out_h, cx, 0, b, (size_t)out_h, s->acc);
        jl_transpose_u8(b, (size_t)out_h, out_w, out_h, s->d + ch * plane, (size_t)out_w);
    }
}

/* NOTE [ Decoding in strips ]
 * When the horizontal pass runs first and on rows (jl_gather_rows), each
 * strip of STRIP_ROWS decoded rows is split into planes and resampled across
 * at once, while it is still in the L1 cache: the decoder's buffer holds one
 * strip, reused, instead of the whole block, and the block and its planes
 * (about 1 MB of scratch per decoder) are never allocated.  The same bytes
 * out; about as fast, less memory (docs/experiments.md). */
enum { STRIP_ROWS = 16 };

/* Closes the decode after a read: its warning, if the reads went well. */
static int close_after(jl_decoder *dec, int status, char *msg)
{
    if (status == JL_OK)
        return jl_jpeg_region_close(dec, msg);
    jl_jpeg_region_close(dec, NULL);
    return status;
}

/* The block's rows decoded strip by strip into c: three planes [rows][out_w],
 * the horizontal pass done.  The decoder's time is added to *decode_seconds. */
static int decode_strips(jl_decoder *dec, jl_scratch *s, const jl_gather *g, int rows,
                         int cols, int out_w, char *msg, double *decode_seconds)
{
    size_t plane = (size_t)rows * out_w, strip_plane = (size_t)STRIP_ROWS * cols;
    int y, ch, status = JL_OK;
    for (y = 0; y < rows;) {
        jl_rows strip;
        double start = now();
        status = jl_jpeg_region_read(dec, STRIP_ROWS, &strip, msg);
        *decode_seconds += now() - start;
        if (status != JL_OK)
            break;
        jl_split_rgb(strip.pixels, strip.stride, strip.rows, cols, s->strip, strip_plane);
        for (ch = 0; ch < 3; ch++)
            jl_gather_rows(g, s->strip + ch * strip_plane, (size_t)cols, strip.rows,
                           s->c + ch * plane + (size_t)y * out_w, (size_t)out_w);
        y += strip.rows;
    }
    return close_after(dec, status, msg);
}

/* The whole block decoded at once into the decoder's buffer. */
static int decode_block(jl_decoder *dec, int rows, jl_rows *block, char *msg,
                        double *decode_seconds)
{
    double start = now();
    int status = close_after(dec, jl_jpeg_region_read(dec, rows, block, msg), msg);
    *decode_seconds += now() - start;
    return status;
}

/* After jl_jpeg_region_open: the status the sample goes on with.  Closes the
 * decode when it does not go on. */
static int check_opened(jl_decoder *dec, int status, const jl_region *r, const jl_plan *p,
                        const jl_view_taps *t, int views, char *msg)
{
    int v;
    /* NOTE [ A plan fits one image size ]
     * A plan's crop window, resize and DCT scale were drawn for the image size
     * the caller knew (its size table remembers headers across epochs), so a
     * file rewritten since with another image must not be decoded through it:
     * a larger image would silently give a window of the wrong place and
     * scale.  The header is read here anyway; when it names another size the
     * sample is JL_CHANGED and the caller draws it again for the real size.
     * A header over the pixel limit stays JL_TOO_LARGE, whatever was planned. */
    if (status != JL_TOO_LARGE && r->width != 0 &&
        (r->width != p->image_w || r->height != p->image_h)) {
        if (status == JL_OK)
            jl_jpeg_region_close(dec, NULL);
        snprintf(msg, JL_MSG_LEN, "the image is %dx%d now; its plan was drawn for %dx%d",
                 r->width, r->height, p->image_w, p->image_h);
        return JL_CHANGED;
    }
    if (status != JL_OK)
        return status;
    for (v = 0; v < views; v++) {
        if (p[v].x.src_lo + p[v].x.src_size > r->scaled_width ||
            p[v].y.src_lo + p[v].y.src_size > r->scaled_height ||
            t[v].x0 < r->x0 || t[v].x1 > r->x0 + r->cols ||
            t[v].y0 < r->y0 || t[v].y1 > r->y0 + r->rows) {
            jl_jpeg_region_close(dec, NULL);
            snprintf(msg, JL_MSG_LEN, "sample plan does not fit the %dx%d decoded image",
                     r->scaled_width, r->scaled_height);
            return JL_ERROR;
        }
    }
    return JL_OK;
}

/* Grows the scratch buffers for a block of rows x cols resampled to out_h x
 * out_w; 0, or -1 when out of memory. */
static int grow_scratch(jl_scratch *s, const jl_coeffs *cx, int strips, int fused, int rows,
                        int cols, int out_h, int out_w)
{
    size_t plane = (size_t)out_h * out_w;
    size_t work = max_size(max_size((size_t)out_w * jl_padded(rows), (size_t)out_h * cols),
                           max_size(plane, 1)); /* one channel at a time */
    if (jl_grow((void **)&s->gather, &s->gather_size, jl_gather_size(cx)) ||
        (!strips && jl_grow((void **)&s->a, &s->a_size, 3 * (size_t)cols * jl_padded(rows))) ||
        (!strips && jl_grow((void **)&s->b, &s->b_size, work)) ||
        jl_grow((void **)&s->c, &s->c_size, strips ? 3 * (size_t)rows * out_w : work) ||
        jl_grow((void **)&s->strip, &s->strip_size,
                strips ? 3 * (size_t)STRIP_ROWS * cols : (size_t)48 * jl_padded(cols)) ||
        (!fused && jl_grow((void **)&s->d, &s->d_size, 3 * plane)) ||
        jl_grow((void **)&s->acc, &s->acc_size,
                sizeof(int32_t) * max_size(max_size((size_t)rows, (size_t)cols),
                                           max_size((size_t)out_w, (size_t)out_h))))
        return -1;
    return 0;
}

/* The last pass writes the output itself (float32 through the table, or uint8
 * planes) unless 8-bit planes are needed first (colour ops, interleaved
 * output, vertical-first order). */
static int fuses_output(const jl_plan *p, int out_type)
{
    return (out_type == JL_OUT_FLOAT32 || out_type == JL_OUT_UINT8) &&
           !jl_colour_is_active(&p->colour) && !p->vertical_first && p->pad_mode == JL_PAD_NONE;
}

/* The colour program on three h x w planes at d. */
static int apply_colour(jl_scratch *s, const jl_colour *c, int h, int w, uint8_t *d, char *msg)
{
    size_t plane = (size_t)h * w;
    if (jl_grow((void **)&s->colour, &s->colour_size, jl_colour_scratch_size(c, h, w))) {
        snprintf(msg, JL_MSG_LEN, "out of memory for the blur");
        return JL_NO_MEMORY;
    }
    jl_colour_apply(d, d + plane, d + 2 * plane, h, w, c, s->colour);
    return JL_OK;
}

/* From the resampled planes in s->d (padded into s->e first where the plan
 * pads): colour, flip, and the output: sample `out` of view `o`. */
static int write_output(jl_scratch *s, const jl_plan *p, const jl_view_taps *t, void *out,
                        const jl_view_out *o, char *msg)
{
    const int out_type = o->out_type, out_h = o->out_h, out_w = o->out_w;
    const float *lut = o->lut, *norm = o->norm;
    size_t plane = (size_t)out_h * out_w;
    uint8_t *d = s->d;
    int ch, colour = jl_colour_is_active(&p->colour);
    /* NOTE [ Colour before the padding ]
     * RandomPhotometricDistort runs before RandomZoomOut pads the photo and
     * RandomIoUCrop crops it: its contrast mean is the whole photo's and the fill
     * keeps its bytes.  Such a plan (colour_first, padded) resamples the whole
     * resize, runs the colour program on it, then pads and keeps the window. */
    if (colour && p->colour_first) {
        if (apply_colour(s, &p->colour, t->rows, t->cols, s->d, msg) != JL_OK)
            return JL_NO_MEMORY;
        colour = 0;
    }
    if (p->pad_mode != JL_PAD_NONE) { /* NOTE [ Padding a crop ] */
        if (jl_grow((void **)&s->e, &s->e_size, 3 * plane) ||
            jl_grow((void **)&s->map, &s->map_size, sizeof(int32_t) * ((size_t)out_w + out_h))) {
            snprintf(msg, JL_MSG_LEN, "out of memory for the padding");
            return JL_NO_MEMORY;
        }
        jl_pad_planes(s->d, s->e, s->map, p, out_h, out_w, t->x_start, t->y_start, t->cols,
                      t->rows);
        d = s->e;
    }
    /* Every colour op is per pixel, uses a whole-image mean or is a blur with a
     * symmetric kernel and mirrored edges, so it commutes with the flip, which
     * stays last (as in the Python draws). */
    if (colour && apply_colour(s, &p->colour, out_h, out_w, d, msg) != JL_OK)
        return JL_NO_MEMORY;
    if (out_type == JL_OUT_UINT8_HWC) {
        jl_planes_interleave(d, plane, out_h, out_w, p->flip, (uint8_t *)out);
        return JL_OK;
    }
    for (ch = 0; ch < 3; ch++) {
        if (out_type == JL_OUT_FLOAT32)
            jl_levels_to_float(d + ch * plane, out_h, out_w, lut + ch * 256,
                               norm ? norm + 2 * ch : NULL, p->flip, (float *)out + ch * plane);
        else
            jl_levels_copy(d + ch * plane, out_h, out_w, p->flip, (uint8_t *)out + ch * plane);
    }
    return JL_OK;
}

/* One view resampled from a decoded block (rows of the scaled image starting at
 * (bx0, by0)) into sample `out` of view `o`: its taps re-based onto the part of
 * the block it reads. */
static int resample_view(jl_scratch *s, const jl_rows *block, int bx0, int by0,
                         jl_view_taps *t, const jl_plan *p, void *out, const jl_view_out *o,
                         char *msg)
{
    jl_gather g;
    jl_rows part;
    int rows = t->y1 - t->y0, cols = t->x1 - t->x0, fused = fuses_output(p, o->out_type);
    int gathered;
    /* Taps index the source window; make them index the part. */
    jl_coeffs_shift(&t->cx, p->x.src_lo - t->x0);
    jl_coeffs_shift(&t->cy, p->y.src_lo - t->y0);
    if (grow_scratch(s, &t->cx, 0, fused, rows, cols, t->rows, t->cols)) {
        snprintf(msg, JL_MSG_LEN, "out of memory for resample buffers");
        return JL_NO_MEMORY;
    }
    part.pixels = block->pixels + (size_t)(t->y0 - by0) * block->stride + (size_t)3 * (t->x0 - bx0);
    part.stride = block->stride;
    part.rows = rows;
    gathered = jl_gather_build(&g, &t->cx, cols, s->gather);
    resample_planes(s, &part, cols, &t->cx, gathered ? &g : NULL, &t->cy, p->vertical_first,
                    t->rows, t->cols, o->lut, o->norm, p->flip, o->out_type,
                    fused ? out : NULL);
    return fused ? JL_OK : write_output(s, p, t, out, o, msg);
}

/* One sample of one view (the strip path where it can run): into `out`, sample
 * of view `o`. */
static int run_sample(jl_decoder *dec, jl_scratch *s, const uint8_t *data,
                      size_t size, const jl_plan *p, void *out, const jl_view_out *o,
                      int64_t max_pixels, char *msg, double *decode_seconds)
{
    const int out_type = o->out_type, out_h = o->out_h, out_w = o->out_w;
    const float *lut = o->lut, *norm = o->norm;
    jl_view_taps t;
    jl_region r;
    jl_gather g;
    jl_rows block;
    int status, rows, cols, ch, fused, strips;
    double start;

    if (jl_is_letterbox(p, out_type, out_h, out_w)) /* NOTE [ A letterbox ] */
        return jl_letterbox_sample(dec, data, size, p, out_type, (uint8_t *)out, out_h, out_w,
                                   max_pixels, msg, decode_seconds);
    if (out_type == JL_OUT_BGR_HWC) {
        snprintf(msg, JL_MSG_LEN, "OpenCV's BGR rows are written for a whole image at its "
                                  "own size only");
        return JL_UNSUPPORTED;
    }
    status = jl_view_taps_make(p, out_h, out_w, &t, msg);
    if (status != JL_OK)
        return status;
    start = now();
    memset(&r, 0, sizeof(r));
    status = jl_jpeg_region_open(dec, data, size, p->scale_denom, t.x0, t.y0, t.x1, t.y1,
                                 max_pixels, 0, &r, msg);
    *decode_seconds = now() - start;
    status = check_opened(dec, status, &r, p, &t, 1, msg);
    if (status != JL_OK)
        goto done;
    rows = r.rows;
    cols = r.cols;
    fused = fuses_output(p, out_type);
    if (jl_grow((void **)&s->gather, &s->gather_size, jl_gather_size(&t.cx))) {
        jl_jpeg_region_close(dec, NULL);
        snprintf(msg, JL_MSG_LEN, "out of memory for resample buffers");
        status = JL_NO_MEMORY;
        goto done;
    }
    /* NOTE [ Decoding in strips ]: whether the horizontal pass can run on rows is
     * known from the taps re-based onto the whole block. */
    jl_coeffs_shift(&t.cx, p->x.src_lo - r.x0);
    strips = jl_gather_build(&g, &t.cx, cols, s->gather) && !p->vertical_first;
    if (!strips) {
        jl_coeffs_shift(&t.cx, r.x0 - p->x.src_lo);
        status = decode_block(dec, rows, &block, msg, decode_seconds);
        if (status == JL_OK)
            status = resample_view(s, &block, r.x0, r.y0, &t, p, out, o, msg);
        goto done;
    }
    jl_coeffs_shift(&t.cy, p->y.src_lo - r.y0);
    if (grow_scratch(s, &t.cx, 1, fused, rows, cols, t.rows, t.cols)) {
        jl_jpeg_region_close(dec, NULL);
        snprintf(msg, JL_MSG_LEN, "out of memory for resample buffers");
        status = JL_NO_MEMORY;
        goto done;
    }
    status = decode_strips(dec, s, &g, rows, cols, t.cols, msg, decode_seconds);
    if (status != JL_OK)
        goto done;
    for (ch = 0; ch < 3; ch++)
        vertical_pass(s, s->c + ch * (size_t)rows * t.cols, &t.cy, ch, t.rows, t.cols, lut,
                      norm, p->flip, out_type, fused ? out : NULL);
    if (!fused)
        status = write_output(s, p, &t, out, o, msg);
done:
    jl_view_taps_free(&t);
    return status;
}

/* Sample i of a view's output, and its size in bytes. */
static uint8_t *view_sample(const jl_view_out *o, size_t i, size_t *bytes)
{
    *bytes = (size_t)3 * o->out_h * o->out_w * (o->out_type == JL_OUT_FLOAT32 ? sizeof(float) : 1);
    return (uint8_t *)o->out + i * *bytes;
}

/* NOTE [ Several views of one decode ]
 * Self-supervised recipes cut several views from each image.  Their plans
 * share the image size and the DCT scale (the caller picks the finest that any
 * view needs); the union of the blocks their taps read is decoded once, and
 * each view is resampled from its own part of it.  A region decode gives every
 * pixel as a full decode does (NOTE [ Exact pixels at a cropped edge ]), so
 * each view is byte for byte what jl_decode_batch gives for its plan alone. */
static int run_views(jl_decoder *dec, jl_scratch *s, const uint8_t *data, size_t size,
                     const jl_plan *p, int views, const jl_view_out *outs, size_t index,
                     int64_t max_pixels, char *msg, double *decode_seconds)
{
    jl_view_taps t[JL_MAX_VIEWS];
    jl_region r;
    jl_rows block;
    int v, x0, y0, x1, y1, made = 0, status = JL_OK;
    double start;

    if (views < 1 || views > JL_MAX_VIEWS) {
        snprintf(msg, JL_MSG_LEN, "invalid sample plan: %d views", views);
        return JL_ERROR;
    }
    for (v = 0; v < views && status == JL_OK; v++) {
        if (p[v].scale_denom != p[0].scale_denom || p[v].image_w != p[0].image_w ||
            p[v].image_h != p[0].image_h) {
            snprintf(msg, JL_MSG_LEN, "invalid sample plan: view %d's scale or image size "
                     "differs from view 0's", v);
            status = JL_ERROR;
        } else if ((status = jl_view_taps_make(&p[v], outs[v].out_h, outs[v].out_w, &t[v],
                                               msg)) == JL_OK) {
            made++;
        }
    }
    if (status != JL_OK)
        goto done;
    x0 = t[0].x0, x1 = t[0].x1, y0 = t[0].y0, y1 = t[0].y1;
    for (v = 1; v < views; v++) {
        x0 = t[v].x0 < x0 ? t[v].x0 : x0;
        y0 = t[v].y0 < y0 ? t[v].y0 : y0;
        x1 = t[v].x1 > x1 ? t[v].x1 : x1;
        y1 = t[v].y1 > y1 ? t[v].y1 : y1;
    }
    start = now();
    memset(&r, 0, sizeof(r));
    status = jl_jpeg_region_open(dec, data, size, p[0].scale_denom, x0, y0, x1, y1, max_pixels,
                                 0, &r, msg);
    *decode_seconds = now() - start;
    status = check_opened(dec, status, &r, p, t, views, msg);
    if (status != JL_OK)
        goto done;
    status = decode_block(dec, r.rows, &block, msg, decode_seconds);
    for (v = 0; v < views && status == JL_OK; v++) {
        const jl_view_out *o = &outs[v];
        size_t bytes;
        uint8_t *dst = view_sample(o, index, &bytes);
        status = resample_view(s, &block, r.x0, r.y0, &t[v], &p[v], dst, o, msg);
    }
done:
    for (v = 0; v < made; v++)
        jl_view_taps_free(&t[v]);
    return status;
}

/* The batch calls: each sample through run_sample (one view: the strip path) or
 * run_views, its status and message, and its time.  With `each`, outs holds one
 * output per sample (views is 1), each of that sample alone. */
static void decode_samples(const uint8_t *data, const int64_t *offsets, const jl_plan *plans,
                           int n, int views, int each, const jl_view_out *outs,
                           int64_t max_pixels, int32_t *status, char *messages,
                           double *seconds)
{
    jl_scratch s;
    jl_decoder *dec = jl_decoder_new();
    size_t bytes;
    int i, v;

    memset(&s, 0, sizeof(s));
    for (i = 0; i < n; i++) {
        char *msg = messages + (size_t)i * JL_MSG_LEN;
        const jl_plan *p = plans + (size_t)i * views;
        const uint8_t *file = data + offsets[i];
        size_t size = (size_t)(offsets[i + 1] - offsets[i]);
        const jl_view_out *o = each ? outs + i : outs;
        size_t at = each ? 0 : (size_t)i;
        msg[0] = '\0';
        if (p[0].skip) {
            status[i] = JL_SKIPPED;
        } else if (!dec) {
            snprintf(msg, JL_MSG_LEN, "out of memory for the JPEG decoder");
            status[i] = JL_NO_MEMORY;
        } else {
            double start = now(), decoding = 0.0;
            if (views == 1)
                status[i] = run_sample(dec, &s, file, size, p, view_sample(o, at, &bytes), o,
                                       max_pixels, msg, &decoding);
            else
                status[i] = run_views(dec, &s, file, size, p, views, outs, (size_t)i,
                                      max_pixels, msg, &decoding);
            seconds[0] += decoding;
            seconds[1] += now() - start - decoding;
        }
        /* Never leave a previous batch's pixels in a failed sample's slot. */
        for (v = 0; status[i] != JL_OK && v < views; v++) {
            uint8_t *dst = view_sample(&o[v], at, &bytes);
            memset(dst, 0, bytes);
        }
    }
    scratch_free(&s);
    jl_decoder_free(dec);
}

void jl_decode_batch(const uint8_t *data, const int64_t *offsets,
                     const jl_plan *plans, int n, void *out, int out_type, int out_h,
                     int out_w, const float *lut, const float *norm, int64_t max_pixels,
                     int32_t *status, char *messages, double *seconds)
{
    jl_view_out o;
    o.out = out;
    o.lut = lut;
    o.norm = norm;
    o.out_type = out_type;
    o.out_h = out_h;
    o.out_w = out_w;
    decode_samples(data, offsets, plans, n, 1, 0, &o, max_pixels, status, messages, seconds);
}

void jl_decode_views(const uint8_t *data, const int64_t *offsets, const jl_plan *plans,
                     int n, int views, const jl_view_out *outs, int64_t max_pixels,
                     int32_t *status, char *messages, double *seconds)
{
    decode_samples(data, offsets, plans, n, views, 0, outs, max_pixels, status, messages,
                   seconds);
}

void jl_decode_each(const uint8_t *data, const int64_t *offsets, const jl_plan *plans, int n,
                    const jl_view_out *outs, int64_t max_pixels, int32_t *status,
                    char *messages, double *seconds)
{
    decode_samples(data, offsets, plans, n, 1, 1, outs, max_pixels, status, messages, seconds);
}
