#include "colour.h"

#include "clip_byte.h"
#include "colour_tensor.h"
#include "once.h"

#include <math.h>

/* Pillow computes these without fused multiply-adds; so must we: the build
 * passes -ffp-contract=off (gcc ignores the standard pragma for this). */

/* Image.blend(degenerate, image, alpha) for one byte: degenerate + alpha *
 * (image - degenerate) in float, truncated; clipped only when extrapolating
 * (inside [0, 1] the value cannot leave [0, 255]). */
static inline uint8_t blend(int degenerate, int value, float alpha)
{
    return jl_clip_trunc((float)degenerate + alpha * (float)(value - degenerate));
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

/* NOTE [ Fast exact HSV ]
 * The per-pixel conversions above cost ~25 ns (divisions, libm floor and
 * round).  The hue step uses tables instead, filled once from those very
 * functions, where a result depends on few inputs:
 *   H: only on which channel is the maximum (r, g, b priority), which of the
 *      other two is smaller, the range cr = max - min and the middle
 *      channel's distance to the maximum (every quotient is of differences);
 *   S: only on (max, cr);  p = round(v * (1 - s/255)): only on (v, s);
 *   floor(h * 6 / 255) and the fraction: only on h.
 * q and t depend on (h, s, v) and are computed as Pillow does, with
 * round-half-away done exactly on the non-negative double. */
static uint8_t *h_table;            /* [6][256][256]: case, cr, distance of the middle */
static uint8_t s_table[256][256];   /* [max][cr] */
static uint8_t p_table[256][256];   /* [v][s] */
static int8_t sector[256];
static float frac[256], sat[256];

static void fill_tables(void)
{
    static uint8_t h_storage[6 * 256 * 256];
    int c, cr, d, v, x;
    uint8_t hh, ss, vv;
    /* case: 2 * (index of the max channel) + (1 when the later of the other
     * two channels is the smaller one) */
    for (c = 0; c < 6; c++)
        for (cr = 1; cr < 256; cr++)
            for (d = 0; d <= cr; d++) {
                int ch[3], mx = c / 2, lo, mid;
                int others[2] = {mx == 0 ? 1 : 0, mx == 2 ? 1 : 2};
                lo = others[c & 1];
                mid = others[1 - (c & 1)];
                ch[mx] = cr;
                ch[lo] = 0;
                ch[mid] = cr - d;
                rgb_to_hsv(ch[0], ch[1], ch[2], &hh, &ss, &vv);
                h_storage[((size_t)c * 256 + cr) * 256 + d] = hh;
            }
    for (v = 0; v < 256; v++)
        for (cr = 0; cr <= v; cr++) {
            rgb_to_hsv(v, v - cr, v - cr, &hh, &ss, &vv);
            s_table[v][cr] = ss;
        }
    for (v = 0; v < 256; v++)
        for (x = 0; x < 256; x++) {
            float fs = (float)((float)x / 255.0);
            p_table[v][x] = clip8i((int)round((float)v * (1.0 - fs)));
        }
    for (x = 0; x < 256; x++) {
        sector[x] = (int8_t)((int)floor((float)x * 6.0 / 255.0) % 6);
        frac[x] = (float)((float)x * 6.0 / 255.0 - floor((float)x * 6.0 / 255.0));
        sat[x] = (float)((float)x / 255.0);
    }
    h_table = h_storage;
}

/* Fills the tables once (once.h). */
static void ensure_tables(void)
{
    static int state;
    jl_once(&state, fill_tables);
}

static inline int round_half_away(double x) /* x >= 0 */
{
    int r = (int)x;
    return r + (x - (double)r >= 0.5);
}

/* Pillow's q = round(v * (1 - s * f)) and t = round(v * (1 - s * (1 - f))) */
static inline uint8_t q_of(int v, float fs, float f)
{
    return clip8i(round_half_away((float)v * (1.0 - fs * f)));
}

static inline uint8_t t_of(int v, float fs, float f)
{
    return clip8i(round_half_away((float)v * (1.0 - fs * (1.0 - f))));
}

static void hue(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, int shift)
{
    size_t i;
    ensure_tables();
    for (i = 0; i < n; i++) {
        int R = r[i], G = g[i], B = b[i], mx, mn, c, mid, h, s, v;
        float f, fs;
        uint8_t up;
        /* c: see fill_tables (2 * max channel + 1 when the later channel is the smaller) */
        if (R >= G && R >= B) {
            mx = R;
            c = G <= B ? 0 : 1;
            mid = c == 0 ? B : G;
            mn = c == 0 ? G : B;
        } else if (G >= B) {
            mx = G;
            c = R <= B ? 2 : 3;
            mid = c == 2 ? B : R;
            mn = c == 2 ? R : B;
        } else {
            mx = B;
            c = R <= G ? 4 : 5;
            mid = c == 4 ? G : R;
            mn = c == 4 ? R : G;
        }
        v = mx;
        if (mx == mn) { /* grey: H = S = 0, and back to grey */
            continue;
        }
        h = (uint8_t)(h_table[((size_t)c * 256 + (mx - mn)) * 256 + (mx - mid)] + shift);
        s = s_table[mx][mx - mn];
        if (s == 0) {
            r[i] = g[i] = b[i] = (uint8_t)v;
            continue;
        }
        f = frac[h];
        fs = sat[s];
        up = p_table[v][s];
        /* each sector needs one of q (odd sectors) and t (even ones) */
        switch (sector[h]) {
        case 0: r[i] = (uint8_t)v; g[i] = t_of(v, fs, f); b[i] = up; break;
        case 1: r[i] = q_of(v, fs, f); g[i] = (uint8_t)v; b[i] = up; break;
        case 2: r[i] = up; g[i] = (uint8_t)v; b[i] = t_of(v, fs, f); break;
        case 3: r[i] = up; g[i] = q_of(v, fs, f); b[i] = (uint8_t)v; break;
        case 4: r[i] = t_of(v, fs, f); g[i] = up; b[i] = (uint8_t)v; break;
        default: r[i] = (uint8_t)v; g[i] = up; b[i] = q_of(v, fs, f); break;
        }
    }
}

/* The per-pixel reference of hue(), kept for the self-check below. */
static void hue_reference(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, int shift)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint8_t h, s, v;
        rgb_to_hsv(r[i], g[i], b[i], &h, &s, &v);
        hsv_to_rgb((uint8_t)(h + shift), s, v, &r[i], &g[i], &b[i]);
    }
}

int jl_colour_hue_selfcheck(int shift)
{
    /* Every RGB triple through both hue paths; returns the mismatches. */
    static uint8_t a[3][256], e[3][256];
    int R, G, B, bad = 0, k;
    for (R = 0; R < 256; R++)
        for (G = 0; G < 256; G++) {
            for (B = 0; B < 256; B++) {
                a[0][B] = e[0][B] = (uint8_t)R;
                a[1][B] = e[1][B] = (uint8_t)G;
                a[2][B] = e[2][B] = (uint8_t)B;
            }
            hue(a[0], a[1], a[2], 256, shift);
            hue_reference(e[0], e[1], e[2], 256, shift);
            for (k = 0; k < 256; k++)
                bad += a[0][k] != e[0][k] || a[1][k] != e[1][k] || a[2][k] != e[2][k];
        }
    return bad;
}

static void grayscale(uint8_t *r, uint8_t *g, uint8_t *b, size_t n)
{
    /* convert("L") then the same byte in all three channels. */
    size_t i;
    for (i = 0; i < n; i++)
        r[i] = g[i] = b[i] = (uint8_t)luma(r[i], g[i], b[i]);
}

/* NOTE [ Gaussian blur ]
 * torchvision's GaussianBlur on a PIL image converts it to a uint8 tensor,
 * pads it by half the kernel with reflection, convolves each channel in
 * float32 with the outer product of two 1-D kernels (x = linspace(-(k-1)/2,
 * (k-1)/2, k), exp(-(x / sigma)^2 / 2), normalised) and rounds half to even.
 * The kernels here are computed the same way in float32; the convolution is
 * done separably (rows, then columns) with double sums, so it is the exact
 * convolution where torch's float32 one is within about 1e-4 of it: a pixel
 * differs by one level only where the value falls that close to a half. */
static void gaussian_kernel(int k, float sigma, float *weights)
{
    float pdf[JL_BLUR_MAX_KERNEL];
    double sum = 0.0;
    float half = (float)(k - 1) * 0.5f;
    int i;
    for (i = 0; i < k; i++) {
        float x = (-half + (float)i) / sigma;
        pdf[i] = expf(-0.5f * (x * x));
        sum += pdf[i];
    }
    for (i = 0; i < k; i++)
        weights[i] = (float)(pdf[i] / sum);
}

/* torch's "reflect" padding: the edge is not repeated. */
static int reflect(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * (n - 1) - i;
    return i;
}

/* Each output sample's sum runs over the taps in order, as one double, so the
 * loops over x below (a row padded by reflection, then rows chosen by
 * reflection) vectorise without changing a result. */
static void blur(uint8_t *planes[3], int h, int w, float sigma, int32_t arg, void *scratch)
{
    int kx = arg & 0xFFFF, ky = (arg >> 16) & 0xFFFF, x, y, i, ch;
    float wx[JL_BLUR_MAX_KERNEL], wy[JL_BLUR_MAX_KERNEL];
    /* scratch (jl_colour_scratch_size): the row and the sums, then the rows */
    double *line = scratch, *acc = line + w + JL_BLUR_MAX_KERNEL;
    float *rows = (float *)(acc + w);
    gaussian_kernel(kx, sigma, wx);
    gaussian_kernel(ky, sigma, wy);
    for (ch = 0; ch < 3; ch++) {
        uint8_t *p = planes[ch];
        for (y = 0; y < h; y++) {
            const uint8_t *in = p + (size_t)y * w;
            float *out = rows + (size_t)y * w;
            for (x = 0; x < w + kx - 1; x++)
                line[x] = in[reflect(x - kx / 2, w)];
            for (x = 0; x < w; x++)
                acc[x] = 0.0;
            for (i = 0; i < kx; i++) {
                const double wi = wx[i], *src = line + i;
                for (x = 0; x < w; x++)
                    acc[x] += wi * src[x];
            }
            for (x = 0; x < w; x++)
                out[x] = (float)acc[x];
        }
        for (y = 0; y < h; y++) {
            uint8_t *out = p + (size_t)y * w;
            for (x = 0; x < w; x++)
                acc[x] = 0.0;
            for (i = 0; i < ky; i++) {
                const double wi = wy[i];
                const float *src = rows + (size_t)reflect(y + i - ky / 2, h) * w;
                for (x = 0; x < w; x++)
                    acc[x] += wi * src[x];
            }
            for (x = 0; x < w; x++) {
                double v = nearbyint(acc[x]);
                out[x] = (uint8_t)(v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : v);
            }
        }
    }
}

/* permute_channels: output channel i takes input channel p_i. */
static void permute(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, int32_t arg)
{
    const int p0 = arg & 3, p1 = (arg >> 2) & 3, p2 = (arg >> 4) & 3;
    size_t i;
    for (i = 0; i < n; i++) {
        const uint8_t v[3] = {r[i], g[i], b[i]};
        r[i] = v[p0];
        g[i] = v[p1];
        b[i] = v[p2];
    }
}

/* A permutation of (0, 1, 2), packed as permute reads it. */
static int permutation_ok(int32_t arg)
{
    const int p0 = arg & 3, p1 = (arg >> 2) & 3, p2 = (arg >> 4) & 3;
    return (arg >> 6) == 0 && p0 < 3 && p1 < 3 && p2 < 3 && p0 != p1 && p1 != p2 &&
           p0 != p2;
}

static int blur_kernel_ok(int32_t arg)
{
    int kx = arg & 0xFFFF, ky = (arg >> 16) & 0xFFFF;
    return (arg >> 16) <= 0xFFFF && kx >= 1 && ky >= 1 && kx % 2 == 1 && ky % 2 == 1 &&
           kx <= JL_BLUR_MAX_KERNEL && ky <= JL_BLUR_MAX_KERNEL;
}

int jl_colour_is_valid(const jl_colour *c)
{
    int k;
    for (k = 0; k < JL_COLOUR_STEPS; k++) {
        int op = c->op[k];
        float v = c->value[k];
        if (op < JL_COLOUR_NONE || op > JL_COLOUR_LAST || op == JL_COLOUR_PERMUTE + 1)
            return 0;
        if (op >= JL_COLOUR_TORCH_V2) {
            int kind = (op - JL_COLOUR_TORCH_V2) % 4;
            if (kind == JL_COLOUR_HUE ? !(v >= -0.5f && v <= 0.5f) : !(v >= 0.0f && v < 1e6f))
                return 0;
            continue;
        }
        if (op == JL_COLOUR_PERMUTE && !permutation_ok(c->arg[k]))
            return 0;
        if (op == JL_COLOUR_HUE && !(v >= 0.0f && v < 256.0f && v == (float)(int)v))
            return 0;
        if (op >= JL_COLOUR_BRIGHTNESS && op <= JL_COLOUR_SATURATION &&
            !(v >= 0.0f && v < 1e6f))
            return 0;
        if (op == JL_COLOUR_BLUR && !(v > 0.0f && v < 1e4f && blur_kernel_ok(c->arg[k])))
            return 0;
    }
    return 1;
}

size_t jl_colour_scratch_size(const jl_colour *c, int h, int w)
{
    int k;
    for (k = 0; k < JL_COLOUR_STEPS; k++)
        if (c->op[k] == JL_COLOUR_BLUR)
            return sizeof(double) * (2 * (size_t)w + JL_BLUR_MAX_KERNEL) +
                   sizeof(float) * (size_t)h * w;
    return 0;
}

int jl_colour_fits(const jl_colour *c, int h, int w)
{
    int k;
    for (k = 0; k < JL_COLOUR_STEPS; k++)
        if (c->op[k] == JL_COLOUR_BLUR &&
            ((c->arg[k] & 0xFFFF) / 2 >= w || ((c->arg[k] >> 16) & 0xFFFF) / 2 >= h))
            return 0;
    return 1;
}

int jl_colour_is_active(const jl_colour *c)
{
    int k;
    for (k = 0; k < JL_COLOUR_STEPS; k++)
        if (c->op[k] != JL_COLOUR_NONE)
            return 1;
    return 0;
}

/* A step with torchvision's arithmetic on a uint8 tensor (colour_tensor.h). */
static void torch_step(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, int op, float v)
{
    const int chain = op >= JL_COLOUR_TORCH_V1 ? JL_TORCH_V1 : JL_TORCH_V2;
    if (op < JL_COLOUR_TORCH_V2)
        return;
    switch ((op - JL_COLOUR_TORCH_V2) % 4) {
    case JL_COLOUR_BRIGHTNESS: jl_tensor_brightness(r, g, b, n, v); break;
    case JL_COLOUR_CONTRAST: jl_tensor_contrast(r, g, b, n, v, chain); break;
    case JL_COLOUR_SATURATION: jl_tensor_saturation(r, g, b, n, v, chain); break;
    default: jl_tensor_hue(r, g, b, n, v, chain); break;
    }
}

void jl_colour_apply(uint8_t *r, uint8_t *g, uint8_t *b, int h, int w, const jl_colour *c,
                     void *scratch)
{
    size_t n = (size_t)h * w;
    uint8_t *planes[3] = {r, g, b};
    int k;
    for (k = 0; k < JL_COLOUR_STEPS; k++) {
        float v = c->value[k];
        switch (c->op[k]) {
        case JL_COLOUR_BRIGHTNESS: brightness(r, g, b, n, v); break;
        case JL_COLOUR_CONTRAST: contrast(r, g, b, n, v); break;
        case JL_COLOUR_SATURATION: saturation(r, g, b, n, v); break;
        case JL_COLOUR_HUE: hue(r, g, b, n, (int)v); break;
        case JL_COLOUR_GRAYSCALE: grayscale(r, g, b, n); break;
        case JL_COLOUR_BLUR: blur(planes, h, w, v, c->arg[k], scratch); break;
        case JL_COLOUR_PERMUTE: permute(r, g, b, n, c->arg[k]); break;
        default: torch_step(r, g, b, n, c->op[k], v); break;
        }
    }
}
