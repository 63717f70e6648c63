/* Pillow's bilinear and bicubic affine transforms of an RGB image, to the bit
 * (Pillow's libImaging/Geometry.c is the specification; its arithmetic, written
 * here for 3-byte pixels): every output pixel's centre mapped through the matrix
 * in double precision, interpolated from its 2 x 2 (bilinear) or 4 x 4 (bicubic,
 * Pillow's cubic with a = -1) neighbours in double, the rows and columns past the
 * edges as Pillow takes them, the result truncated to a byte (bicubic: clamped
 * first); a centre outside the image keeps the fill.  Four pixels at a time with
 * AVX2 (the same double operations in the same order, a pixel a lane), one at a
 * time elsewhere, and a plain copy where the matrix moves the image by whole
 * pixels.  The build turns FMA contraction off (setup.py), as Pillow's x86-64
 * wheels have none; the Python side checks this copy against the installed Pillow
 * before using it. */
#include "pil_affine.h"

#include <math.h>
#include <stddef.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define JL_X86 1
#endif
#include <stdint.h>
#include <string.h>

/* Pillow's FLOOR of a position, and its clamping of a pixel index */
static inline int floor_int(double v)
{
    int i = (int)v;  /* without a call into libm */
    return v < 0.0 && v < i ? i - 1 : i;
}
static inline int clip(int v, int size) { return v < 0 ? 0 : v < size ? v : size - 1; }

static inline int inside(int v, int size) { return v >= 0 && v < size; }

/* Where output pixel (x, y) lands, less a half pixel: its floor (xi, yi) and weights
 * (dx, dy); 0 when outside the image (the fill stays). */
static inline int position(const double a[6], int x, int y, int sw, int sh, int *xi, int *yi,
                           double *dx, double *dy)
{
    double xc = x + 0.5, yc = y + 0.5;
    double xin = a[0] * xc + a[1] * yc + a[2];
    double yin = a[3] * xc + a[4] * yc + a[5];
    if (xin < 0.0 || xin >= sw || yin < 0.0 || yin >= sh)
        return 0;
    xin -= 0.5;
    yin -= 0.5;
    *xi = floor_int(xin);
    *yi = floor_int(yin);
    *dx = xin - *xi;
    *dy = yin - *yi;
    return 1;
}

/* One output pixel from the neighbours of its position less a half pixel: floor
 * (xi, yi), weights (dx, dy); bilinear or bicubic. */
typedef void (*one_pixel)(const uint8_t *src, int sw, int sh, int xi, int yi, double dx,
                          double dy, uint8_t *out);

static void bilinear_pixel(const uint8_t *src, int sw, int sh, int xi, int yi, double dx,
                           double dy, uint8_t *out)
{
    size_t stride = (size_t)sw * 3;
    const uint8_t *row0 = src + clip(yi, sh) * stride;
    const uint8_t *row1 = inside(yi + 1, sh) ? src + (yi + 1) * stride : NULL;
    int c0 = clip(xi, sw) * 3, c1 = clip(xi + 1, sw) * 3;
    for (int b = 0; b < 3; b++) {
        double top = row0[c0 + b] + (row0[c1 + b] - row0[c0 + b]) * dx;
        double bottom = row1 ? row1[c0 + b] + (row1[c1 + b] - row1[c0 + b]) * dx : top;
        out[b] = (uint8_t)(top + (bottom - top) * dy);
    }
}

/* Pillow's BICUBIC: the cubic through v1..v4 at d in (v2, v3) */
static inline double cubic(double v1, double v2, double v3, double v4, double d)
{
    double p1 = v2, p2 = -v1 + v3, p3 = 2 * (v1 - v2) + v3 - v4, p4 = -v1 + v2 - v3 + v4;
    return p1 + d * (p2 + d * (p3 + d * p4));
}

static inline double row_cubic(const uint8_t *row, const int c[4], int b, double dx)
{
    return cubic(row[c[0] + b], row[c[1] + b], row[c[2] + b], row[c[3] + b], dx);
}

static void bicubic_pixel(const uint8_t *src, int sw, int sh, int xi, int yi, double dx,
                          double dy, uint8_t *out)
{
    size_t stride = (size_t)sw * 3;
    xi--;  /* the 4 x 4 neighbours start a pixel before */
    yi--;
    int c[4] = {clip(xi, sw) * 3, clip(xi + 1, sw) * 3, clip(xi + 2, sw) * 3,
                clip(xi + 3, sw) * 3};
    for (int b = 0; b < 3; b++) {
        /* the first row clamped; a later one past the edge repeats the one before */
        double v1 = row_cubic(src + clip(yi, sh) * stride, c, b, dx);
        double v2 = inside(yi + 1, sh) ? row_cubic(src + (yi + 1) * stride, c, b, dx) : v1;
        double v3 = inside(yi + 2, sh) ? row_cubic(src + (yi + 2) * stride, c, b, dx) : v2;
        double v4 = inside(yi + 3, sh) ? row_cubic(src + (yi + 3) * stride, c, b, dx) : v3;
        double v = cubic(v1, v2, v3, v4, dy);
        out[b] = v <= 0.0 ? 0 : v >= 255.0 ? 255 : (uint8_t)v;
    }
}

/* Output pixels [x0, x1) of row y, one at a time (those landing outside keep the fill). */
static inline void pixels(one_pixel pixel, const uint8_t *src, int sw, int sh, uint8_t *row,
                          int y, int x0, int x1, const double a[6])
{
    uint8_t *out = row + (size_t)x0 * 3;
    for (int x = x0; x < x1; x++, out += 3) {
        int xi, yi;
        double dx, dy;
        if (position(a, x, y, sw, sh, &xi, &yi, &dx, &dy))
            pixel(src, sw, sh, xi, yi, dx, dy, out);
    }
}

static void one_at_a_time(one_pixel pixel, const uint8_t *src, int sw, int sh, uint8_t *dst,
                          int dw, int dh, const double a[6])
{
    for (int y = 0; y < dh; y++)
        pixels(pixel, src, sw, sh, dst + (size_t)y * dw * 3, y, 0, dw, a);
}

#ifdef JL_X86
/* Four 3-byte pixels at byte offsets `at` (at most `last`, the offset of the
 * image's last pixel; the image has two pixels or more), each as a 32-bit lane
 * holding its bytes from the lowest. */
__attribute__((target("avx2"))) static inline __m128i
four_pixels(const uint8_t *src, __m128i at, __m128i last)
{
    /* a 32-bit read at the last pixel would pass the end: read a byte earlier, shift */
    __m128i read_at = _mm_min_epi32(at, _mm_sub_epi32(last, _mm_set1_epi32(1)));
    __m128i shift = _mm_slli_epi32(_mm_sub_epi32(at, read_at), 3);
    return _mm_srlv_epi32(_mm_i32gather_epi32((const int *)src, read_at, 1), shift);
}

__attribute__((target("avx2"))) static inline __m256d band_pd(__m128i pixels, int band)
{
    return _mm256_cvtepi32_pd(_mm_and_si128(_mm_srli_epi32(pixels, 8 * band),
                                            _mm_set1_epi32(255)));
}

/* a + (b - a) * d, Pillow's BILINEAR */
__attribute__((target("avx2"))) static inline __m256d lerp(__m256d a, __m256d b, __m256d d)
{
    return _mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(b, a), d));
}

__attribute__((target("avx2"))) static inline __m128i clip4(__m128i v, int size)
{
    return _mm_min_epi32(_mm_max_epi32(v, _mm_setzero_si128()), _mm_set1_epi32(size - 1));
}

/* Where four output pixels of a row land (both loops' first steps, a pixel a lane):
 * which lanes fall inside the image (mask; 0: none) and, for those, the position less
 * a half pixel, its floor and the weights.  A lane outside is given a position inside,
 * and is not written. */
typedef struct {
    int mask;
    __m256d dx, dy;
    __m128i xi, yi;
} four_positions;

/* x: the first of the four pixels; a1y, a4y: a[1] and a[4] times the row's centre */
__attribute__((target("avx2"))) static inline four_positions
positions(const double a[6], __m256d a1y, __m256d a4y, int x, int sw, int sh)
{
    const __m256d half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
    four_positions p;
    __m256d xc = _mm256_add_pd(_mm256_set_pd(x + 3, x + 2, x + 1, x), half);
    __m256d xin = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a[0]), xc), a1y),
                                _mm256_set1_pd(a[2]));
    __m256d yin = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a[3]), xc), a4y),
                                _mm256_set1_pd(a[5]));
    __m256d inside = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(xin, zero, _CMP_GE_OQ),
                      _mm256_cmp_pd(xin, _mm256_set1_pd(sw), _CMP_LT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(yin, zero, _CMP_GE_OQ),
                      _mm256_cmp_pd(yin, _mm256_set1_pd(sh), _CMP_LT_OQ)));
    p.mask = _mm256_movemask_pd(inside);
    xin = _mm256_sub_pd(_mm256_blendv_pd(half, xin, inside), half);
    yin = _mm256_sub_pd(_mm256_blendv_pd(half, yin, inside), half);
    __m256d xf = _mm256_floor_pd(xin), yf = _mm256_floor_pd(yin);
    p.dx = _mm256_sub_pd(xin, xf);
    p.dy = _mm256_sub_pd(yin, yf);
    p.xi = _mm256_cvttpd_epi32(xf);
    p.yi = _mm256_cvttpd_epi32(yf);
    return p;
}

/* Whether a weight is 0 in every lane: a + (b - a) * 0 == a, and the cubic at 0 is
 * its second value, so what it would weigh need not be read (a shear along x or y). */
__attribute__((target("avx2"))) static inline int all_zero(__m256d d)
{
    return _mm256_movemask_pd(_mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_EQ_OQ)) == 15;
}

/* The lanes in `mask` of bands[b][lane] into the four pixels at out. */
static inline void write_lanes(uint8_t *out, const int32_t bands[3][4], int mask)
{
    for (int k = 0; k < 4; k++)
        if (mask >> k & 1) {
            out[k * 3] = (uint8_t)bands[0][k];
            out[k * 3 + 1] = (uint8_t)bands[1][k];
            out[k * 3 + 2] = (uint8_t)bands[2][k];
        }
}

/* bilinear, four output pixels at a time: the scalar loop's double operations,
 * in its order, one pixel a lane */
__attribute__((target("avx2"))) static void
bilinear_avx2(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
              const double a[6])
{
    const __m128i last = _mm_set1_epi32((sw * sh - 1) * 3), stride = _mm_set1_epi32(sw * 3);
    const __m128i three = _mm_set1_epi32(3), one = _mm_set1_epi32(1);
    int x4 = dw - dw % 4;
    for (int y = 0; y < dh; y++) {
        uint8_t *out = dst + (size_t)y * dw * 3;
        double yc = y + 0.5;
        const __m256d a1y = _mm256_set1_pd(a[1] * yc), a4y = _mm256_set1_pd(a[4] * yc);
        for (int x = 0; x < x4; x += 4) {
            four_positions p = positions(a, a1y, a4y, x, sw, sh);
            if (!p.mask)
                continue;  /* the fill stays */
            __m128i c0 = _mm_mullo_epi32(clip4(p.xi, sw), three);
            __m128i c1 = _mm_mullo_epi32(clip4(_mm_add_epi32(p.xi, one), sw), three);
            __m128i r0 = _mm_mullo_epi32(clip4(p.yi, sh), stride);
            __m128i y1 = _mm_add_epi32(p.yi, one);
            /* Pillow reads a second row only where y + 1 is inside: else v2 = v1 */
            __m256d second = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(
                _mm_cmplt_epi32(y1, _mm_set1_epi32(sh))));
            __m128i r1 = _mm_mullo_epi32(clip4(y1, sh), stride);
            int along_x = all_zero(p.dy), along_y = all_zero(p.dx);
            __m128i p00 = four_pixels(src, _mm_add_epi32(r0, c0), last), p01 = p00, p10 = p00;
            __m128i p11 = p00;
            if (!along_y)
                p01 = four_pixels(src, _mm_add_epi32(r0, c1), last);
            if (!along_x) {
                p10 = four_pixels(src, _mm_add_epi32(r1, c0), last);
                p11 = along_y ? p10 : four_pixels(src, _mm_add_epi32(r1, c1), last);
            }
            int32_t bands[3][4];
            for (int b = 0; b < 3; b++) {
                __m256d top = along_y ? band_pd(p00, b)
                                      : lerp(band_pd(p00, b), band_pd(p01, b), p.dx);
                __m256d v = top;
                if (!along_x) {
                    __m256d below = along_y ? band_pd(p10, b)
                                            : lerp(band_pd(p10, b), band_pd(p11, b), p.dx);
                    v = lerp(top, _mm256_blendv_pd(top, below, second), p.dy);
                }
                _mm_storeu_si128((__m128i *)bands[b], _mm256_cvttpd_epi32(v));
            }
            write_lanes(out + x * 3, bands, p.mask);
        }
        if (x4 < dw)
            pixels(bilinear_pixel, src, sw, sh, out, y, x4, dw, a);
    }
}

__attribute__((target("avx2"))) static inline __m256d
cubic_pd(__m256d v1, __m256d v2, __m256d v3, __m256d v4, __m256d d)
{
    __m256d two = _mm256_set1_pd(2.0);
    __m256d p2 = _mm256_add_pd(_mm256_sub_pd(_mm256_setzero_pd(), v1), v3);
    __m256d p3 = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(two, _mm256_sub_pd(v1, v2)), v3), v4);
    __m256d p4 = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(
        _mm256_sub_pd(_mm256_setzero_pd(), v1), v2), v3), v4);
    return _mm256_add_pd(v2, _mm256_mul_pd(d, _mm256_add_pd(p2, _mm256_mul_pd(
        d, _mm256_add_pd(p3, _mm256_mul_pd(d, p4))))));
}

/* bicubic, four output pixels at a time, as bilinear_avx2 */
__attribute__((target("avx2"))) static void
bicubic_avx2(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
             const double a[6])
{
    const __m256d zero = _mm256_setzero_pd(), top_level = _mm256_set1_pd(255.0);
    const __m128i last = _mm_set1_epi32((sw * sh - 1) * 3), stride = _mm_set1_epi32(sw * 3);
    const __m128i three = _mm_set1_epi32(3), heights = _mm_set1_epi32(sh);
    int x4 = dw - dw % 4;
    for (int y = 0; y < dh; y++) {
        uint8_t *out = dst + (size_t)y * dw * 3;
        double yc = y + 0.5;
        const __m256d a1y = _mm256_set1_pd(a[1] * yc), a4y = _mm256_set1_pd(a[4] * yc);
        for (int x = 0; x < x4; x += 4) {
            four_positions p = positions(a, a1y, a4y, x, sw, sh);
            if (!p.mask)
                continue;  /* the fill stays */
            __m128i xi = _mm_sub_epi32(p.xi, _mm_set1_epi32(1));
            __m128i yi = _mm_sub_epi32(p.yi, _mm_set1_epi32(1));
            int along_x = all_zero(p.dy), along_y = all_zero(p.dx);
            __m128i c[4], rows[4];
            __m256d below[4];  /* row k inside: else it repeats row k - 1 */
            for (int k = 0; k < 4; k++) {
                __m128i yk = _mm_add_epi32(yi, _mm_set1_epi32(k));
                c[k] = _mm_mullo_epi32(clip4(_mm_add_epi32(xi, _mm_set1_epi32(k)), sw), three);
                rows[k] = _mm_mullo_epi32(clip4(yk, sh), stride);
                below[k] = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_and_si128(
                    _mm_cmpgt_epi32(yk, _mm_set1_epi32(-1)), _mm_cmplt_epi32(yk, heights))));
            }
            int r0 = along_x ? 1 : 0, r1 = along_x ? 2 : 4;
            int k0 = along_y ? 1 : 0, k1 = along_y ? 2 : 4;
            __m128i px[4][4];
            for (int r = r0; r < r1; r++)
                for (int k = k0; k < k1; k++)
                    px[r][k] = four_pixels(src, _mm_add_epi32(rows[r], c[k]), last);
            int32_t bands[3][4];
            for (int b = 0; b < 3; b++) {
                __m256d v[4];
                for (int r = r0; r < r1; r++)
                    v[r] = along_y ? band_pd(px[r][1], b)
                                   : cubic_pd(band_pd(px[r][0], b), band_pd(px[r][1], b),
                                              band_pd(px[r][2], b), band_pd(px[r][3], b), p.dx);
                __m256d value = v[1];
                if (!along_x) {
                    v[1] = _mm256_blendv_pd(v[0], v[1], below[1]);
                    v[2] = _mm256_blendv_pd(v[1], v[2], below[2]);
                    v[3] = _mm256_blendv_pd(v[2], v[3], below[3]);
                    value = cubic_pd(v[0], v[1], v[2], v[3], p.dy);
                }
                value = _mm256_max_pd(_mm256_min_pd(value, top_level), zero);
                _mm_storeu_si128((__m128i *)bands[b], _mm256_cvttpd_epi32(value));
            }
            write_lanes(out + x * 3, bands, p.mask);
        }
        if (x4 < dw)
            pixels(bicubic_pixel, src, sw, sh, out, y, x4, dw, a);
    }
}
#endif

/* A warp that moves every pixel by whole pixels (a[0] == a[4] == 1, a[1] == a[3]
 * == 0, a[2] and a[5] integers): each position lands on a pixel's centre, both
 * weights are 0, and Pillow's arithmetic, bilinear or bicubic, gives that pixel's
 * bytes. */
static int whole_shift(const double a[6])
{
    return a[0] == 1.0 && a[1] == 0.0 && a[3] == 0.0 && a[4] == 1.0 &&
           fabs(a[2]) < 1e9 && fabs(a[5]) < 1e9 && a[2] == floor(a[2]) && a[5] == floor(a[5]);
}

static void shifted(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                    const double a[6])
{
    long tx = (long)a[2], ty = (long)a[5];
    long first = tx < 0 ? -tx : 0, end = sw - tx < dw ? sw - tx : dw;  /* x + tx in [0, sw) */
    if (end <= first)
        return;
    for (long y = 0; y < dh; y++) {
        long yin = y + ty;
        if (yin >= 0 && yin < sh)
            memcpy(dst + ((size_t)y * dw + first) * 3, src + ((size_t)yin * sw + first + tx) * 3,
                   (size_t)(end - first) * 3);
    }
}

static int avx2_allowed = 1;

int jl_pil_affine_allow_avx2(int allow)
{
    int before = avx2_allowed;
    avx2_allowed = allow;
    return before;
}

void jl_pil_affine(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                   const double a[6], int filter, const uint8_t fill[3])
{
    /* Pillow's new image of the fill colour, which the transform then paints */
    if (fill[0] == fill[1] && fill[1] == fill[2]) {
        memset(dst, fill[0], (size_t)dw * dh * 3);
    } else {
        for (size_t i = 0; i < (size_t)dw * dh; i++)
            memcpy(dst + i * 3, fill, 3);
    }
    int bicubic = filter == JL_PIL_BICUBIC;
    if (whole_shift(a)) {  /* both weights 0: either filter gives the pixel itself */
        shifted(src, sw, sh, dst, dw, dh, a);
        return;
    }
#ifdef JL_X86
    if (avx2_allowed && (size_t)sw * sh >= 2 && (size_t)sw * sh * 3 < INT32_MAX &&
        __builtin_cpu_supports("avx2")) {
        (bicubic ? bicubic_avx2 : bilinear_avx2)(src, sw, sh, dst, dw, dh, a);
        return;
    }
#endif
    one_at_a_time(bicubic ? bicubic_pixel : bilinear_pixel, src, sw, sh, dst, dw, dh, a);
}
