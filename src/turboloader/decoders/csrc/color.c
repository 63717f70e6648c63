#include "color.h"

#include <math.h>

/* Pillow computes these without fused multiply-adds; so must we. */
#pragma STDC FP_CONTRACT OFF

static inline uint8_t clip_trunc(float t)
{
    if (t <= 0.0f)
        return 0;
    if (t >= 255.0f)
        return 255;
    return (uint8_t)t;
}

/* Image.blend(degenerate, image, alpha) for one byte: degenerate + alpha *
 * (image - degenerate) in float, truncated; clipped only when extrapolating
 * (inside [0, 1] the value cannot leave [0, 255]). */
static inline uint8_t blend(int degenerate, int value, float alpha)
{
    return clip_trunc((float)degenerate + alpha * (float)(value - degenerate));
}

static inline int luma(int r, int g, int b)
{
    return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16;
}

static void blend_constant(uint8_t *p, size_t n, int degenerate, float alpha)
{
    uint8_t table[256];
    int v;
    size_t i;
    for (v = 0; v < 256; v++)
        table[v] = blend(degenerate, v, alpha);
    for (i = 0; i < n; i++)
        p[i] = table[p[i]];
}

static void brightness(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f)
{
    /* ImageEnhance.Brightness: blend with black. */
    blend_constant(r, n, 0, f);
    blend_constant(g, n, 0, f);
    blend_constant(b, n, 0, f);
}

static void contrast(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f)
{
    /* ImageEnhance.Contrast: blend with the mean luma, int(mean + 0.5),
     * the mean taken in double as ImageStat does from the histogram. */
    uint64_t sum = 0;
    size_t i;
    int mean;
    for (i = 0; i < n; i++)
        sum += (uint64_t)luma(r[i], g[i], b[i]);
    mean = n ? (int)((double)sum / (double)n + 0.5) : 0;
    blend_constant(r, n, mean, f);
    blend_constant(g, n, mean, f);
    blend_constant(b, n, mean, f);
}

static void saturation(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f)
{
    /* ImageEnhance.Color: blend with the grey (luma) version of each pixel. */
    size_t i;
    for (i = 0; i < n; i++) {
        int l = luma(r[i], g[i], b[i]);
        r[i] = blend(l, r[i], f);
        g[i] = blend(l, g[i], f);
        b[i] = blend(l, b[i], f);
    }
}

static inline uint8_t clip8i(int v)
{
    return (uint8_t)(v <= 0 ? 0 : v >= 255 ? 255 : v);
}

/* Pillow's RGB -> HSV for one pixel (colorsys' formulas; the mix of float
 * and double below is Pillow's and decides the rounding). */
static void rgb_to_hsv(int r, int g, int b, uint8_t *hh, uint8_t *ss, uint8_t *vv)
{
    int maxc = r > g ? (r > b ? r : b) : (g > b ? g : b);
    int minc = r < g ? (r < b ? r : b) : (g < b ? g : b);
    float h, s, rc, gc, bc, cr;
    double hd;
    *vv = (uint8_t)maxc;
    if (maxc == minc) {
        *hh = 0;
        *ss = 0;
        return;
    }
    cr = (float)(maxc - minc);
    s = cr / (float)maxc;
    rc = (float)(maxc - r) / cr;
    gc = (float)(maxc - g) / cr;
    bc = (float)(maxc - b) / cr;
    if (r == maxc)
        h = bc - gc;
    else if (g == maxc)
        h = (float)(2.0 + rc - bc);
    else
        h = (float)(4.0 + gc - rc);
    /* fmod(x, 1.0) for x in (0, 2): exact either way. */
    hd = h / 6.0 + 1.0;
    h = (float)(hd >= 1.0 ? hd - 1.0 : hd);
    *hh = clip8i((int)(h * 255.0));
    *ss = clip8i((int)(s * 255.0));
}

/* Pillow's HSV -> RGB for one pixel. */
static void hsv_to_rgb(int h, int s, int v, uint8_t *r, uint8_t *g, uint8_t *b)
{
    int i;
    float f, fs;
    uint8_t up, uq, ut;
    if (s == 0) {
        *r = *g = *b = (uint8_t)v;
        return;
    }
    i = (int)floor((float)h * 6.0 / 255.0);
    f = (float)((float)h * 6.0 / 255.0 - (float)i);
    fs = (float)((float)s / 255.0);
    up = clip8i((int)round((float)v * (1.0 - fs)));
    uq = clip8i((int)round((float)v * (1.0 - fs * f)));
    ut = clip8i((int)round((float)v * (1.0 - fs * (1.0 - f))));
    switch (i % 6) {
    case 0: *r = (uint8_t)v; *g = ut; *b = up; break;
    case 1: *r = uq; *g = (uint8_t)v; *b = up; break;
    case 2: *r = up; *g = (uint8_t)v; *b = ut; break;
    case 3: *r = up; *g = uq; *b = (uint8_t)v; break;
    case 4: *r = ut; *g = up; *b = (uint8_t)v; break;
    default: *r = (uint8_t)v; *g = up; *b = uq; break;
    }
}

static void hue(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, int shift)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint8_t h, s, v;
        rgb_to_hsv(r[i], g[i], b[i], &h, &s, &v);
        hsv_to_rgb((uint8_t)(h + shift), s, v, &r[i], &g[i], &b[i]);
    }
}

void tl_color_jitter(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, const tl_jitter *j)
{
    int k;
    for (k = 0; k < 4; k++) {
        switch (j->order[k]) {
        case TL_JITTER_BRIGHTNESS: brightness(r, g, b, n, j->factor[0]); break;
        case TL_JITTER_CONTRAST: contrast(r, g, b, n, j->factor[1]); break;
        case TL_JITTER_SATURATION: saturation(r, g, b, n, j->factor[2]); break;
        case TL_JITTER_HUE: hue(r, g, b, n, j->hue_shift); break;
        default: break;
        }
    }
}
