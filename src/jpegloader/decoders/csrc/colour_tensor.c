#include "colour_tensor.h"

#include <math.h>

#include "clip_byte.h"

/* The loops with fused multiply-adds, built for FMA hardware and for any x86-64 (where
 * __builtin_fmaf is libm's correctly rounded fmaf): the same results either way. */
#define JL_FMA_CLONES __attribute__((target_clones("fma", "default")))

/* Grayscale weights as torch holds them (Python floats cast to float32). */
#define JL_WR ((float)0.2989)
#define JL_WG ((float)0.587)
#define JL_WB ((float)0.114)

static void apply_table(uint8_t *r, uint8_t *g, uint8_t *b, size_t n,
                        const uint8_t table[256])
{
    size_t i;
    for (i = 0; i < n; i++) {
        r[i] = table[r[i]];
        g[i] = table[g[i]];
        b[i] = table[b[i]];
    }
}

void jl_tensor_brightness(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f)
{
    /* v2: image.mul(f).clamp_(0, 255).to(uint8); v1: (f * img + (1 - f) * 0) is the
     * same product plus a zero. */
    uint8_t table[256];
    int v;
    for (v = 0; v < 256; v++)
        table[v] = jl_clip_trunc((float)v * f);
    apply_table(r, g, b, n, table);
}

/* v2's _rgb_to_grayscale_image(preserve_dtype=False).floor_():
 * r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114), each add fused. */
__attribute__((always_inline)) static inline float gray_v2(int r, int g, int b)
{
    return floorf(__builtin_fmaf((float)b, JL_WB,
                                 __builtin_fmaf((float)g, JL_WG, (float)r * JL_WR)));
}

/* v1's rgb_to_grayscale: (0.2989 * r + 0.587 * g + 0.114 * b).to(uint8), unfused. */
__attribute__((always_inline)) static inline int gray_v1(int r, int g, int b)
{
    return (int)(((float)r * JL_WR + (float)g * JL_WG) + (float)b * JL_WB);
}

JL_FMA_CLONES static uint64_t gray_sum(const uint8_t *r, const uint8_t *g, const uint8_t *b,
                                       size_t n, int chain)
{
    uint64_t sum = 0;
    size_t i;
    if (chain == JL_TORCH_V1) {
        for (i = 0; i < n; i++)
            sum += (uint64_t)gray_v1(r[i], g[i], b[i]);
    } else {
        for (i = 0; i < n; i++)
            sum += (uint64_t)gray_v2(r[i], g[i], b[i]);
    }
    return sum;
}

JL_FMA_CLONES void jl_tensor_contrast(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f,
                                      int chain)
{
    /* The grayscale's values are whole numbers: their sum is exact here, and torch's
     * mean is that sum / n up to its summation order. */
    const float mean = n ? (float)gray_sum(r, g, b, n, chain) / (float)n : 0.0f;
    const float alpha = (float)(1.0 - (double)f);
    uint8_t table[256];
    int v;
    for (v = 0; v < 256; v++)
        table[v] = jl_clip_trunc(chain == JL_TORCH_V1 ? (float)v * f + alpha * mean
                                              : __builtin_fmaf(mean, alpha, (float)v * f));
    apply_table(r, g, b, n, table);
}

JL_FMA_CLONES void jl_tensor_saturation(uint8_t *restrict r, uint8_t *restrict g,
                                        uint8_t *restrict b, size_t n,
                                        float f, int chain)
{
    /* v2: image.mul(f).add_(gray, alpha=1 - f); v1: f * img + (1 - f) * gray_uint8 */
    const float alpha = (float)(1.0 - (double)f);
    size_t i;
    if (chain == JL_TORCH_V1) {
        for (i = 0; i < n; i++) {
            const float l = alpha * (float)gray_v1(r[i], g[i], b[i]);
            r[i] = jl_clip_trunc((float)r[i] * f + l);
            g[i] = jl_clip_trunc((float)g[i] * f + l);
            b[i] = jl_clip_trunc((float)b[i] * f + l);
        }
        return;
    }
    for (i = 0; i < n; i++) {
        const float l = gray_v2(r[i], g[i], b[i]);
        r[i] = jl_clip_trunc(__builtin_fmaf(l, alpha, (float)r[i] * f));
        g[i] = jl_clip_trunc(__builtin_fmaf(l, alpha, (float)g[i] * f));
        b[i] = jl_clip_trunc(__builtin_fmaf(l, alpha, (float)b[i] * f));
    }
}

__attribute__((always_inline)) static inline float clamp01(float t)
{
    t = t < 0.0f ? 0.0f : t;
    return t > 1.0f ? 1.0f : t;
}

/* torch.aminmax over the channels (no NaN here). */
static inline float max3(float a, float b, float c)
{
    const float m = a > b ? a : b;
    return m > c ? m : c;
}

static inline float min3(float a, float b, float c)
{
    const float m = a < b ? a : b;
    return m < c ? m : c;
}

/* torch.remainder(x, 1.0) for floats: fmod, moved into [0, 1) when negative. */
__attribute__((always_inline)) static inline float remainder1(float x)
{
    float m = x - truncf(x); /* fmodf(x, 1.0f), exactly */
    return m < 0.0f ? m + 1.0f : m;
}

/* i.remainder_(6) of floor(h * 6), h in [0, 1): 6 only when h * 6 rounds up to it. */
__attribute__((always_inline)) static inline int sector(float i6)
{
    const int i = (int)i6;
    return i == 6 ? 0 : i;
}

/* _hsv_to_rgb's choice of (v, p, q, t) by the sector i (torchvision's select table):
 * R = (v, q, p, p, t, v)[i], G = (t, v, v, q, p, p)[i], B = (p, p, t, v, v, q)[i]. */
__attribute__((always_inline)) static inline void select_rgb(int i, float v, float p, float q,
                                                             float t, float out[3])
{
    /* as v1's einsum does it: each value times its 0/1 indicator, summed (exact:
     * one term is the value, the others zero); no branches, so it vectorises */
    const float e0 = (float)(i == 0), e1 = (float)(i == 1), e2 = (float)(i == 2),
                e3 = (float)(i == 3), e4 = (float)(i == 4), e5 = (float)(i == 5);
    out[0] = v * (e0 + e5) + q * e1 + p * (e2 + e3) + t * e4;
    out[1] = t * e0 + v * (e1 + e2) + q * e3 + p * (e4 + e5);
    out[2] = p * (e0 + e1) + t * e2 + v * (e3 + e4) + q * e5;
}

/* What v2's _rgb_to_hsv and v1's _rgb2hsv compute alike for one pixel: V (the
 * largest channel), S, and each channel's distance below V over the range. */
typedef struct {
    float maxc, s, rc, gc, bc;
} hsv_parts;

__attribute__((always_inline)) static inline hsv_parts parts_of(float R, float G, float B)
{
    hsv_parts o;
    const float minc = min3(R, G, B);
    o.maxc = max3(R, G, B);
    {
        const int eqc = o.maxc == minc;
        const float range = o.maxc - minc;
        const float divisor = eqc ? 1.0f : range;
        o.s = range / (eqc ? 1.0f : o.maxc);
        o.rc = (o.maxc - R) / divisor;
        o.gc = (o.maxc - G) / divisor;
        o.bc = (o.maxc - B) / divisor;
    }
    return o;
}

/* v2's _rgb_to_hsv, hue shift and _hsv_to_rgb for one pixel of [0, 1] floats. */
__attribute__((always_inline)) static inline void hue_v2(float R, float G, float B,
                                                         float hue, float out[3])
{
    const hsv_parts c = parts_of(R, G, B);
    const float maxc = c.maxc, s = c.s, rc = c.rc, gc = c.gc, bc = c.bc;
    const int neq_r = maxc != R, eq_g = maxc == G;
    const float hg = ((rc + 2.0f) - bc) * (float)(eq_g & neq_r);
    const float hr = (bc - gc) * (float)!neq_r;
    const float hb = ((gc + 4.0f) - rc) * (float)(neq_r & !eq_g);
    const float h6 = ((hr + hg) + hb) * (float)(1.0 / 6.0) + 1.0f;
    const float h = remainder1(h6 - truncf(h6) + hue); /* fmod_(1.0): h6 >= 0 */
    {
        const float v = maxc, hh = h * 6.0f, i6 = floorf(hh), fr = hh - i6;
        const float sxf = s * fr, oms = 1.0f - s;
        const float q = clamp01((1.0f - sxf) * v), t = clamp01((sxf + oms) * v),
                    p = clamp01(oms * v);
        select_rgb(sector(i6), v, p, q, t, out);
    }
}

/* v1's _rgb2hsv, (h + hue) % 1.0 and _hsv2rgb for one pixel of [0, 1] floats. */
__attribute__((always_inline)) static inline void hue_v1(float R, float G, float B,
                                                         float hue, float out[3])
{
    const hsv_parts c = parts_of(R, G, B);
    const float maxc = c.maxc, s = c.s, rc = c.rc, gc = c.gc, bc = c.bc;
    const float hr = (float)(maxc == R) * (bc - gc);
    const float hg = (float)((maxc == G) & (maxc != R)) * ((2.0f + rc) - bc);
    const float hb = (float)((maxc != G) & (maxc != R)) * ((4.0f + gc) - rc);
    const float h6 = ((hr + hg) + hb) / 6.0f + 1.0f;
    const float h = remainder1(h6 - truncf(h6) + hue); /* torch.fmod(, 1.0): h6 >= 0 */
    {
        const float v = maxc, i6 = floorf(h * 6.0f), fr = h * 6.0f - i6;
        const float p = clamp01(v * (1.0f - s)), q = clamp01(v * (1.0f - s * fr)),
                    t = clamp01(v * (1.0f - s * (1.0f - fr)));
        select_rgb(sector(i6), v, p, q, t, out);
    }
}

JL_FMA_CLONES void jl_tensor_hue(uint8_t *restrict r, uint8_t *restrict g,
                                 uint8_t *restrict b, size_t n, float hue, int chain)
{
    /* to float: v2 multiplies by 1/255 (to_dtype), v1 divides by 255 (convert_image_dtype);
     * back: both multiply by 255.999 and truncate. */
    const float scale = (float)(1.0 / 255.0), back = (float)(255.0 + 1.0 - 1e-3);
    float out[3];
    size_t i;
    if (chain == JL_TORCH_V1) {
        for (i = 0; i < n; i++) {
            hue_v1((float)r[i] / 255.0f, (float)g[i] / 255.0f, (float)b[i] / 255.0f, hue, out);
            r[i] = (uint8_t)(out[0] * back);
            g[i] = (uint8_t)(out[1] * back);
            b[i] = (uint8_t)(out[2] * back);
        }
        return;
    }
    for (i = 0; i < n; i++) {
        hue_v2((float)r[i] * scale, (float)g[i] * scale, (float)b[i] * scale, hue, out);
        r[i] = (uint8_t)(out[0] * back);
        g[i] = (uint8_t)(out[1] * back);
        b[i] = (uint8_t)(out[2] * back);
    }
}
