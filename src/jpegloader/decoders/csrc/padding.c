/* Padded crops: torchvision's RandomCrop padding, as index maps.  No Python here. */
#include "padding.h"

/* NOTE [ Padding a crop ]
 * torchvision's RandomCrop pads by `padding`, pads the result again where
 * pad_if_needed finds a side short, then crops (v2 pads once).  A padded plan
 * carries the paddings and the window; from them the part of the resized
 * image the window shows is derived here (jl_axis_part) and only that part is
 * resampled; each output row and column then takes its source through both
 * paddings (padded_source), or the fill (constant).  Edge, reflect and
 * symmetric repeat periodically where a padding is wider than what it pads,
 * as numpy's np.pad does.  The padding comes before the colour steps, whose image means
 * include the padded pixels, as torchvision's do. */
static int pad_index(int c, int n, int mode)
{
    int period;
    if (c >= 0 && c < n)
        return c;
    switch (mode) {
    case JL_PAD_EDGE:
        return c < 0 ? 0 : n - 1;
    case JL_PAD_REFLECT:
        if (n == 1)
            return 0;
        period = 2 * (n - 1);
        c %= period;
        c += c < 0 ? period : 0;
        return c < n ? c : period - c;
    case JL_PAD_SYMMETRIC:
        period = 2 * n;
        c %= period;
        c += c < 0 ? period : 0;
        return c < n ? c : period - 1 - c;
    default:
        return -1; /* constant: the fill */
    }
}

/* The resized sample that sample k of a padded axis's output shows, or -1 for
 * the fill. */
static int padded_source(const jl_axis *a, int k, int mode)
{
    int first = pad_index(a->pad_start + k, a->pad_len, mode);
    return first < 0 ? -1 : pad_index(first - a->pad_lo, a->out_size, mode);
}

int jl_axis_part(const jl_axis *a, int side, int mode, int *start, int *count)
{
    const int far = 1 << 24;
    int k, lo = -1, hi = -1;
    if (mode == JL_PAD_NONE) {
        *start = a->out_start;
        *count = side;
        return 0;
    }
    if (a->pad_start < -far || a->pad_start > far || a->pad_lo < 0 || a->pad_lo > far ||
        a->pad_len < a->out_size + a->pad_lo || a->pad_len > far)
        return -1;
    for (k = 0; k < side; k++) {
        int i = padded_source(a, k, mode);
        if (i >= 0 && (lo < 0 || i < lo))
            lo = i;
        if (i > hi)
            hi = i;
    }
    *start = lo < 0 ? 0 : lo; /* all fill: any one sample */
    *count = lo < 0 ? 1 : hi - lo + 1;
    return 0;
}

void jl_pad_planes(const uint8_t *src, uint8_t *dst, int32_t *map, const jl_plan *p, int out_h,
                   int out_w, int x_start, int y_start, int cols, int rows)
{
    int x, y, ch;
    int32_t *mx = map, *my = map + out_w;
    size_t plane = (size_t)out_h * out_w, src_plane = (size_t)rows * cols;
    for (x = 0; x < out_w; x++) {
        int i = padded_source(&p->x, x, p->pad_mode);
        mx[x] = i < 0 ? -1 : i - x_start;
    }
    for (y = 0; y < out_h; y++) {
        int i = padded_source(&p->y, y, p->pad_mode);
        my[y] = i < 0 ? -1 : i - y_start;
    }
    for (ch = 0; ch < 3; ch++) {
        const uint8_t *planes = src + ch * src_plane;
        uint8_t fill = (uint8_t)((uint32_t)p->pad_fill >> (8 * ch));
        for (y = 0; y < out_h; y++) {
            uint8_t *row = dst + ch * plane + (size_t)y * out_w;
            const uint8_t *from = my[y] < 0 ? NULL : planes + (size_t)my[y] * cols;
            for (x = 0; x < out_w; x++)
                row[x] = from && mx[x] >= 0 ? from[mx[x]] : fill;
        }
    }
}
