/* An 8-bit RGB image already in memory resized as Pillow's Image.resize does it
 * (resample.h's passes, the installed Pillow's pass order), its last pass written
 * as planes: floats through the tensor table, or bytes.  The second resize of a
 * window the C core has cut and padded (NOTE [ DETR's geometry in one plan ] in
 * pipelines/detection/detr.py).  No Python here. */
#include "resize_image.h"

#include <stdlib.h>

#include "coeffs.h"
#include "layout.h"
#include "resample.h"

/* The last pass of channel ch from rows [h][w] into the output's plane. */
static void last_pass(const uint8_t *src, int row_len, const jl_coeffs *c, int ch,
                      size_t plane, int out_float, const float *lut, const float *norm,
                      void *out, int32_t *acc)
{
    if (out_float)
        jl_filter_rows_lut(src, (size_t)row_len, row_len, c, lut + ch * 256,
                           norm ? norm + 2 * ch : NULL, 0, (float *)out + ch * plane,
                           (size_t)row_len, acc);
    else
        jl_filter_rows(src, (size_t)row_len, row_len, c, 0, (uint8_t *)out + ch * plane,
                       (size_t)row_len, acc);
}

/* Bytes [rows][cols] to the output's plane: through the table, or copied. */
static void store_levels(const uint8_t *src, int rows, int cols, int ch, int out_float,
                         const float *lut, const float *norm, void *out)
{
    size_t plane = (size_t)rows * cols;
    if (out_float)
        jl_levels_to_float(src, rows, cols, lut + ch * 256, norm ? norm + 2 * ch : NULL, 0,
                           (float *)out + ch * plane);
    else
        jl_levels_copy(src, rows, cols, 0, (uint8_t *)out + ch * plane);
}

int jl_resize_hwc(const uint8_t *src, int h, int w, int oh, int ow, int vertical_first,
                  int out_float, const float *lut, const float *norm, void *out)
{
    jl_coeffs cx, cy;
    size_t stride = jl_padded(h > oh ? h : oh), big, plane = (size_t)oh * ow;
    int longest = h > w ? h : w, ch, status = -1;
    uint8_t *a = NULL, *b = NULL, *c = NULL, *strip = NULL;
    int32_t *acc = NULL;

    if (longest < oh)
        longest = oh;
    if (longest < ow)
        longest = ow;
    if (jl_coeffs_compute(&cx, 0, w, 0.0, (double)w, ow, 0, ow))
        return -1;
    if (jl_coeffs_compute(&cy, 0, h, 0.0, (double)h, oh, 0, oh)) {
        jl_coeffs_free(&cx);
        return -1;
    }
    /* room for three planes of the input (transposed and padded, or not) and one
     * channel's intermediate, either way round */
    big = (size_t)(w > ow ? w : ow) * stride;
    if (big < (size_t)h * w)
        big = (size_t)h * w;
    a = malloc(3 * big);
    b = malloc(big + (size_t)oh * jl_padded(w > ow ? w : ow));
    c = malloc(big + (size_t)oh * jl_padded(w > ow ? w : ow));
    strip = malloc((size_t)48 * jl_padded(w));
    acc = malloc(sizeof(int32_t) * (size_t)jl_padded(longest) * 2);
    if (!a || !b || !c || !strip || !acc)
        goto done;
    if (!vertical_first) {
        /* a: planes transposed [w][stride]; b: horizontal pass [ow][stride]; c: b
         * transposed [h][ow]; then the vertical pass into the output */
        jl_split_transpose_rgb(src, (size_t)w * 3, h, w, a, stride, (size_t)w * stride, strip);
        for (ch = 0; ch < 3; ch++) {
            jl_filter_rows(a + ch * (size_t)w * stride, stride, h, &cx, 0, b, stride, acc);
            jl_transpose_u8(b, stride, ow, h, c, (size_t)ow);
            last_pass(c, ow, &cy, ch, plane, out_float, lut, norm, out, acc);
        }
    } else {
        /* a: planes [h][w]; b: vertical pass [oh][w]; c: b transposed [w][oh]; b:
         * horizontal pass [ow][oh]; c: that transposed [oh][ow], then stored */
        jl_split_rgb(src, (size_t)w * 3, h, w, a, (size_t)h * w);
        for (ch = 0; ch < 3; ch++) {
            jl_filter_rows(a + ch * (size_t)h * w, (size_t)w, w, &cy, 0, b, (size_t)w, acc);
            jl_transpose_u8(b, (size_t)w, oh, w, c, (size_t)oh);
            jl_filter_rows(c, (size_t)oh, oh, &cx, 0, b, (size_t)oh, acc);
            jl_transpose_u8(b, (size_t)oh, ow, oh, c, (size_t)ow);
            store_levels(c, oh, ow, ch, out_float, lut, norm, out);
        }
    }
    status = 0;
done:
    free(a);
    free(b);
    free(c);
    free(strip);
    free(acc);
    jl_coeffs_free(&cx);
    jl_coeffs_free(&cy);
    return status;
}
