/* OpenCV's warpAffine, INTER_LINEAR with a constant border, on uint8 BGR. */
#include "warp.h"

#include "bgr.h"
#include "simd.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NOTE [ OpenCV's warpAffine ]
 * OpenCV 5.0 warps in float: the forward matrix inverted in double and
 * rounded to float; a row's offset the float y * inv[1] + inv[2]; a pixel's source
 * x fma(inv[0], x, offset) (y likewise) in the columns its vector loop covers (16
 * at a time with AVX2), fma(x, inv[0], y * inv[1]) + inv[2] in the rest (none when
 * the width is a multiple of 32, as YOLO's sizes are).  Integer part floor(), the
 * fraction a float difference; each channel fma(b, v1 - v0, v0) with v0 =
 * fma(a, p01 - p00, p00), v1 likewise, rounded half to even and saturated.  Taps
 * outside read the border; a pixel with every tap outside is the border.  Matched
 * to OpenCV 5.0.0 on random matrices and sizes (tests/pipelines/yolo/test_opencv.py);
 * 4.x: NOTE [ OpenCV 4.x's fixed-point warp ]. */
enum { OPENCV_LANES = 16 };

void jl_warp_inverse(const double m[6], double a[6])
{
    double d = m[0] * m[4] - m[1] * m[3];
    d = d != 0.0 ? 1.0 / d : 0.0;
    a[0] = m[4] * d;
    a[1] = m[1] * -d;
    a[3] = m[3] * -d;
    a[4] = m[0] * d;
    a[2] = -a[0] * m[2] - a[1] * m[5];
    a[5] = -a[3] * m[2] - a[4] * m[5];
}

/* The source a pixel's taps read: ``tiles`` over a plane of ``fill`` (a Mosaic's
 * photos on its canvas of 114; a plain image is one tile, and the border its fill). */
typedef struct {
    const jl_warp_tile *tiles;
    int count;
    const uint8_t *fill;
} source;

static inline const uint8_t *tap(const source *s, int y, int x)
{
    for (int t = 0; t < s->count; t++) {
        const jl_warp_tile *tile = &s->tiles[t];
        if (x >= tile->x0 && x < tile->x1 && y >= tile->y0 && y < tile->y1)
            return tile->src + (ptrdiff_t)(y - tile->y0) * tile->stride + 3 * (x - tile->x0);
    }
    return s->fill;
}

static inline uint8_t saturate(float v)
{
    float r = nearbyintf(v); /* half to even, the default rounding mode */
    return r <= 0.0f ? 0 : r >= 255.0f ? 255 : (uint8_t)r;
}

/* One pixel at source (sx, sy); a tap on no tile reads the fill (where all four do,
 * the blend is the fill itself, as OpenCV's border pixel is). */
static inline void one_pixel(const source *s, float sx, float sy, uint8_t *out)
{
    float fx = floorf(sx), fy = floorf(sy);
    int ix = (int)fx, iy = (int)fy;
    float a = sx - fx, b = sy - fy;
    const uint8_t *q00 = tap(s, iy, ix), *q01 = tap(s, iy, ix + 1), *q10 = tap(s, iy + 1, ix),
                  *q11 = tap(s, iy + 1, ix + 1);
    for (int ch = 0; ch < 3; ch++) {
        float p00 = q00[ch], p01 = q01[ch], p10 = q10[ch], p11 = q11[ch];
        float v0 = fmaf(a, p01 - p00, p00), v1 = fmaf(a, p11 - p10, p10);
        out[ch] = saturate(fmaf(b, v1 - v0, v0));
    }
}

/* Source coordinates outside int32 saturate as OpenCV's do (to INT_MIN), which
 * the bounds checks treat as outside. */
static inline float clamp_coord(float v)
{
    return v > 1e9f ? 1e9f : v < -1e9f ? -1e9f : v;
}

/* The columns OpenCV's scalar loop does: NOTE [ OpenCV's warpAffine ]. */
static void tail(const source *s, uint8_t *row, int y, int x0, int dw, const float *inv)
{
    float ry0 = (float)y * inv[1], ry1 = (float)y * inv[4];
    for (int x = x0; x < dw; x++) {
        float sx = fmaf((float)x, inv[0], ry0) + inv[2];
        float sy = fmaf((float)x, inv[3], ry1) + inv[5];
        one_pixel(s, clamp_coord(sx), clamp_coord(sy), row + 3 * x);
    }
}

static void rows_scalar(const source *s, uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride,
                        const float *inv)
{
    const int vec_end = dw - dw % OPENCV_LANES;
    for (int y = 0; y < dh; y++) {
        uint8_t *row = dst + y * dst_stride;
        float ox = (float)y * inv[1] + inv[2], oy = (float)y * inv[4] + inv[5];
        for (int x = 0; x < vec_end; x++)
            one_pixel(s, clamp_coord(fmaf(inv[0], (float)x, ox)),
                      clamp_coord(fmaf(inv[3], (float)x, oy)), row + 3 * x);
        tail(s, row, y, vec_end, dw, inv);
    }
}

static inline int32_t load4(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Eight pixels whose four taps all lie on one tile, with their bytes read 4 at a
 * time (rows above the tile source's last two, so a read never passes its end). */
__attribute__((target("avx2,fma"))) static void
eight_inside(const uint8_t *src, ptrdiff_t stride, __m256i ix, __m256i iy, __m256 a, __m256 b,
             uint8_t *out)
{
    const __m256i three = _mm256_set1_epi32(3), stride_v = _mm256_set1_epi32((int)stride),
                  byte = _mm256_set1_epi32(0xFF);
    __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(iy, stride_v), _mm256_mullo_epi32(ix, three));
    /* scalar loads: AVX2's gathers are slower on AMD's cores, and no faster on Intel's */
    int32_t offset[8];
    const uint8_t *p[8];
    _mm256_storeu_si256((__m256i *)offset, at);
    for (int k = 0; k < 8; k++)
        p[k] = src + offset[k];
#define TAPS(d) _mm256_setr_epi32(load4(p[0] + (d)), load4(p[1] + (d)), load4(p[2] + (d)),     \
                                  load4(p[3] + (d)), load4(p[4] + (d)), load4(p[5] + (d)),     \
                                  load4(p[6] + (d)), load4(p[7] + (d)))
    __m256i q00 = TAPS(0), q01 = TAPS(3), q10 = TAPS(stride), q11 = TAPS(stride + 3);
#undef TAPS
    __m256i packed = _mm256_setzero_si256();
    for (int ch = 0; ch < 3; ch++) {
        const __m128i shift = _mm_cvtsi32_si128(8 * ch);
#define CHANNEL(q) _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srl_epi32(q, shift), byte))
        __m256 p00 = CHANNEL(q00), p01 = CHANNEL(q01), p10 = CHANNEL(q10), p11 = CHANNEL(q11);
#undef CHANNEL
        __m256 v0 = _mm256_fmadd_ps(a, _mm256_sub_ps(p01, p00), p00);
        __m256 v1 = _mm256_fmadd_ps(a, _mm256_sub_ps(p11, p10), p10);
        __m256i v = _mm256_cvtps_epi32(_mm256_fmadd_ps(b, _mm256_sub_ps(v1, v0), v0));
        v = _mm256_min_epi32(_mm256_max_epi32(v, _mm256_setzero_si256()), byte);
        packed = _mm256_or_si256(packed, _mm256_sll_epi32(v, shift));
    }
    __m128i first, last;
    jl_pack8_bgr(packed, &first, &last);
    _mm_storeu_si128((__m128i *)out, first);
    _mm_storel_epi64((__m128i *)(out + 16), last);
}

/* Which tile holds every tap of a group whose floors span [x0, x1] x [y0, y1]: its
 * index, -1 for none (the group is the fill) or -2 for more than one. */
static inline int group_tile(const source *s, int x0, int x1, int y0, int y1)
{
    int touched = 0;
    for (int t = 0; t < s->count; t++) {
        const jl_warp_tile *tile = &s->tiles[t];
        if (x1 + 1 < tile->x0 || x0 >= tile->x1 || y1 + 1 < tile->y0 || y0 >= tile->y1)
            continue; /* no tap on it */
        if (x0 >= tile->x0 && x1 + 1 < tile->x1 && y0 >= tile->y0 && y1 + 1 < tile->y1 &&
            y1 - tile->y0 <= tile->rows - 3)
            return t;
        touched = 1;
    }
    return touched ? -2 : -1;
}

/* Eight pixels at source (sx, sy), whose taps are all on tile t (t >= 0), on none
 * (-1: the fill) or on several (-2: pixel by pixel). */
__attribute__((target("avx2,fma"))) static void eight_of(const source *s, int t, __m256 sx,
                                                         __m256 sy, uint8_t *out)
{
    if (t >= 0) {
        const jl_warp_tile *tile = &s->tiles[t];
        __m256 fx = _mm256_floor_ps(sx), fy = _mm256_floor_ps(sy);
        eight_inside(tile->src, tile->stride,
                     _mm256_sub_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(tile->x0)),
                     _mm256_sub_epi32(_mm256_cvtps_epi32(fy), _mm256_set1_epi32(tile->y0)),
                     _mm256_sub_ps(sx, fx), _mm256_sub_ps(sy, fy), out);
    } else if (t == -1) {
        for (int k = 0; k < 8; k++)
            memcpy(out + 3 * k, s->fill, 3);
    } else {
        float xs[8], ys[8];
        _mm256_storeu_ps(xs, sx);
        _mm256_storeu_ps(ys, sy);
        for (int k = 0; k < 8; k++)
            one_pixel(s, xs[k], ys[k], out + 3 * k);
    }
}

/* Eight pixels at source (sx, sy): the tile their taps lie on, then eight_of. */
__attribute__((target("avx2,fma"))) static void eight_pixels(const source *s, __m256 sx,
                                                             __m256 sy, uint8_t *out)
{
    __m256i ix = _mm256_cvtps_epi32(_mm256_floor_ps(sx)),
            iy = _mm256_cvtps_epi32(_mm256_floor_ps(sy));
    /* a row's source points are monotone in x (each coordinate is affine in x and
     * rounding keeps order): the group's floors span its first and last lane's */
    int xa = _mm256_cvtsi256_si32(ix), xb = _mm256_extract_epi32(ix, 7),
        ya = _mm256_cvtsi256_si32(iy), yb = _mm256_extract_epi32(iy, 7);
    eight_of(s, group_tile(s, xa < xb ? xa : xb, xa < xb ? xb : xa, ya < yb ? ya : yb,
                           ya < yb ? yb : ya), sx, sy, out);
}

__attribute__((target("avx2,fma"))) static void
rows_avx2(const source *s, uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride, const float *inv)
{
    const int vec_end = dw - dw % OPENCV_LANES;
    const __m256 m0 = _mm256_set1_ps(inv[0]), m3 = _mm256_set1_ps(inv[3]);
    const __m256 lanes = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), lim = _mm256_set1_ps(1e9f);
    for (int y = 0; y < dh; y++) {
        uint8_t *row = dst + y * dst_stride;
        const __m256 ox = _mm256_set1_ps((float)y * inv[1] + inv[2]);
        const __m256 oy = _mm256_set1_ps((float)y * inv[4] + inv[5]);
        for (int x = 0; x < vec_end; x += 8) {
            __m256 xs = _mm256_add_ps(lanes, _mm256_set1_ps((float)x));
            __m256 sx = _mm256_fmadd_ps(m0, xs, ox), sy = _mm256_fmadd_ps(m3, xs, oy);
            sx = _mm256_max_ps(_mm256_min_ps(sx, lim), _mm256_sub_ps(_mm256_setzero_ps(), lim));
            sy = _mm256_max_ps(_mm256_min_ps(sy, lim), _mm256_sub_ps(_mm256_setzero_ps(), lim));
            eight_pixels(s, sx, sy, row + 3 * x);
        }
        tail(s, row, y, vec_end, dw, inv);
    }
}

/* NOTE [ A warp with AVX-512 ]
 * Sixteen pixels a pass, the AVX2 loop's arithmetic lane by lane.  Where the 16
 * pixels' taps lie on two rows of one tile and within 42 pixels (RandomPerspective
 * without rotation or shear keeps a row's source row; its scale keeps 16 pixels'
 * taps within 34), each tap row is read as one 128-byte window and every channel of
 * every tap picked from it with VBMI's byte permutes, instead of 64 scalar loads.
 * Elsewhere the group takes the AVX2 loop's ways.  Plain loads and stores only. */
enum { WINDOW = 128 };

/* the window's bytes at the 16 byte offsets idx, as int32 lanes */
JL_AVX512 static inline __m512i pick(__m512i lo, __m512i hi, __m512i idx)
{
    return _mm512_cvtepu8_epi32(_mm512_castsi512_si128(_mm512_permutex2var_epi8(lo, idx, hi)));
}

/* Sixteen pixels whose taps lie on rows iy, iy + 1 of the tile from column ix0 on
 * (at most WINDOW bytes): rel the lanes' byte offsets 3 * (ix - ix0). */
JL_AVX512 static void sixteen_in_window(const uint8_t *row0, ptrdiff_t stride, __m512i rel,
                                        __m512 a, __m512 b, uint8_t *out)
{
    const __m512i lo0 = _mm512_loadu_si512(row0), hi0 = _mm512_loadu_si512(row0 + 64),
                  lo1 = _mm512_loadu_si512(row0 + stride),
                  hi1 = _mm512_loadu_si512(row0 + stride + 64);
    const __m512i zero = _mm512_setzero_si512(), byte = _mm512_set1_epi32(0xFF);
    __m512i packed = zero;
    for (int ch = 0; ch < 3; ch++) {
        __m512i i0 = jl_low_bytes16(_mm512_add_epi32(rel, _mm512_set1_epi32(ch))),
                i1 = jl_low_bytes16(_mm512_add_epi32(rel, _mm512_set1_epi32(ch + 3)));
        __m512 p00 = _mm512_cvtepi32_ps(pick(lo0, hi0, i0)),
               p01 = _mm512_cvtepi32_ps(pick(lo0, hi0, i1)),
               p10 = _mm512_cvtepi32_ps(pick(lo1, hi1, i0)),
               p11 = _mm512_cvtepi32_ps(pick(lo1, hi1, i1));
        __m512 v0 = _mm512_fmadd_ps(a, _mm512_sub_ps(p01, p00), p00);
        __m512 v1 = _mm512_fmadd_ps(a, _mm512_sub_ps(p11, p10), p10);
        __m512i v = _mm512_cvtps_epi32(_mm512_fmadd_ps(b, _mm512_sub_ps(v1, v0), v0));
        v = _mm512_min_epi32(_mm512_max_epi32(v, zero), byte);
        packed = _mm512_or_si512(packed, _mm512_slli_epi32(v, 8 * ch));
    }
    jl_store48_bgr(out, jl_pack16_bgr(packed));
}

/* Where a group of floors [xa, xb] x [ya, ya] on tile t may be read by windows: the
 * first tap row's window start, or NULL. */
static inline const uint8_t *window_of(const jl_warp_tile *tile, int xa, int xb, int ya)
{
    ptrdiff_t start = (ptrdiff_t)(ya - tile->y0) * tile->stride + 3 * (xa - tile->x0);
    /* the tile's source is readable to its last row's tile width at least */
    ptrdiff_t end = (ptrdiff_t)(tile->rows - 1) * tile->stride + 3 * (tile->x1 - tile->x0);
    if (3 * (xb - xa) + 6 > WINDOW || start + tile->stride + WINDOW > end)
        return NULL;
    return tile->src + start;
}

JL_AVX512 static void rows_avx512(const source *s, uint8_t *dst, int dh, int dw,
                                  ptrdiff_t dst_stride, const float *inv)
{
    const int vec_end = dw - dw % OPENCV_LANES;
    const __m512 m0 = _mm512_set1_ps(inv[0]), m3 = _mm512_set1_ps(inv[3]);
    const __m512 lanes = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                 lim = _mm512_set1_ps(1e9f), nlim = _mm512_set1_ps(-1e9f);
    const __m512i three = _mm512_set1_epi32(3);
    uint8_t fill16[48];
    for (int k = 0; k < 16; k++)
        memcpy(fill16 + 3 * k, s->fill, 3);
    for (int y = 0; y < dh; y++) {
        uint8_t *row = dst + y * dst_stride;
        const __m512 ox = _mm512_set1_ps((float)y * inv[1] + inv[2]);
        const __m512 oy = _mm512_set1_ps((float)y * inv[4] + inv[5]);
        for (int x = 0; x < vec_end; x += 16) {
            __m512 xs = _mm512_add_ps(lanes, _mm512_set1_ps((float)x));
            __m512 sx = _mm512_fmadd_ps(m0, xs, ox), sy = _mm512_fmadd_ps(m3, xs, oy);
            sx = _mm512_max_ps(_mm512_min_ps(sx, lim), nlim);
            sy = _mm512_max_ps(_mm512_min_ps(sy, lim), nlim);
            __m512 fx = _mm512_roundscale_ps(sx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
                   fy = _mm512_roundscale_ps(sy, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
            __m512i ix = _mm512_cvtps_epi32(fx), iy = _mm512_cvtps_epi32(fy);
            /* monotone in x, as in rows_avx2: the first and last lanes span the group */
            int xa = _mm_cvtsi128_si32(_mm512_castsi512_si128(ix)),
                xb = _mm_extract_epi32(_mm512_extracti32x4_epi32(ix, 3), 3),
                ya = _mm_cvtsi128_si32(_mm512_castsi512_si128(iy)),
                yb = _mm_extract_epi32(_mm512_extracti32x4_epi32(iy, 3), 3);
            int x0 = xa < xb ? xa : xb, x1 = xa < xb ? xb : xa, y0 = ya < yb ? ya : yb,
                y1 = ya < yb ? yb : ya;
            int t = group_tile(s, x0, x1, y0, y1);
            const uint8_t *window = t >= 0 && y0 == y1 && xa <= xb
                                        ? window_of(&s->tiles[t], x0, x1, y0) : NULL;
            if (window) { /* NOTE [ A warp with AVX-512 ] */
                __m512i rel = _mm512_mullo_epi32(_mm512_sub_epi32(ix, _mm512_set1_epi32(x0)),
                                                 three);
                sixteen_in_window(window, s->tiles[t].stride, rel, _mm512_sub_ps(sx, fx),
                                  _mm512_sub_ps(sy, fy), row + 3 * x);
            } else if (t == -1) {
                memcpy(row + 3 * x, fill16, 48);
            } else { /* in halves, as the AVX2 loop does them */
                float xs_[16], ys_[16];
                _mm512_storeu_ps(xs_, sx);
                _mm512_storeu_ps(ys_, sy);
                for (int h = 0; h < 16; h += 8) {
                    __m256 hx = _mm256_loadu_ps(xs_ + h), hy = _mm256_loadu_ps(ys_ + h);
                    if (t >= 0) /* every tap on tile t */
                        eight_of(s, t, hx, hy, row + 3 * (x + h));
                    else
                        eight_pixels(s, hx, hy, row + 3 * (x + h));
                }
            }
        }
        tail(s, row, y, vec_end, dw, inv);
    }
}

/* cvRound of a double into int32: half to even, out of range (or NaN) the
 * conversion's INT_MIN, as OpenCV's SSE2 build gives. */
static inline int32_t cv_round(double v)
{
    double r = nearbyint(v);
    return r >= -2147483648.0 && r < 2147483648.0 ? (int32_t)r : INT32_MIN;
}

static inline int16_t to_short(int32_t v)
{
    return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

/* NOTE [ OpenCV 4.x's fixed-point warp ]
 * The 4.x releases (4.7 to 4.14) warp in fixed point: the inverse kept in double;
 * a row's start cvRound((inv[1] * y + inv[2]) * 1024) + 16 and a column's step
 * cvRound(inv[0] * x * 1024) (y likewise), their int sum shifted right by 5: 5
 * fractional bits, the integer part saturated to int16; the four taps weighted
 * (32 - fx)(32 - fy), fx(32 - fy), ... times 32 (OpenCV's 15-bit table, exact for
 * these weights), rounded by + 2^14 >> 15; a tap outside reads the border.  Held
 * to 4.10, 4.12 and 4.14.  OpenCV 5.1 samples otherwise again (not reproduced:
 * pipelines/yolo/opencv.py keeps its warp on cv2).  Each pixel's taps are read
 * straight from the tile the last pixel's were on where they all lie on it. */
static int rows_fixed(const source *s, uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride,
                      const double *inv)
{
    int32_t *step = malloc(sizeof(int32_t) * 2 * (size_t)dw);
    if (!step)
        return -1;
    for (int x = 0; x < dw; x++) {
        step[2 * x] = cv_round(inv[0] * x * 1024);
        step[2 * x + 1] = cv_round(inv[3] * x * 1024);
    }
    int last = 0;
    for (int y = 0; y < dh; y++) {
        uint8_t *out = dst + y * dst_stride;
        /* OpenCV adds in int32 and wraps; unsigned arithmetic does the same here */
        uint32_t x0 = (uint32_t)cv_round((inv[1] * y + inv[2]) * 1024) + 16u;
        uint32_t y0 = (uint32_t)cv_round((inv[4] * y + inv[5]) * 1024) + 16u;
        for (int x = 0; x < dw; x++, out += 3) {
            int32_t X = (int32_t)(x0 + (uint32_t)step[2 * x]) >> 5;
            int32_t Y = (int32_t)(y0 + (uint32_t)step[2 * x + 1]) >> 5;
            int ix = to_short(X >> 5), iy = to_short(Y >> 5), fx = X & 31, fy = Y & 31;
            const int w00 = (32 - fx) * (32 - fy), w01 = fx * (32 - fy), w10 = (32 - fx) * fy,
                      w11 = fx * fy;
            const uint8_t *q00, *q01, *q10, *q11;
            const jl_warp_tile *t = s->count ? &s->tiles[last] : NULL;
            if (t && ix >= t->x0 && ix + 1 < t->x1 && iy >= t->y0 && iy + 1 < t->y1) {
                q00 = t->src + (ptrdiff_t)(iy - t->y0) * t->stride + 3 * (ix - t->x0);
                q01 = q00 + 3;
                q10 = q00 + t->stride;
                q11 = q10 + 3;
            } else {
                for (int k = 0; k < s->count; k++) {
                    const jl_warp_tile *u = &s->tiles[k];
                    if (ix >= u->x0 && ix + 1 < u->x1 && iy >= u->y0 && iy + 1 < u->y1)
                        last = k;
                }
                q00 = tap(s, iy, ix);
                q01 = tap(s, iy, ix + 1);
                q10 = tap(s, iy + 1, ix);
                q11 = tap(s, iy + 1, ix + 1);
            }
            for (int ch = 0; ch < 3; ch++) {
                /* the weights times 32 sum to 2^15: (sum * 32 + 2^14) >> 15 */
                out[ch] = (uint8_t)((q00[ch] * w00 + q01[ch] * w01 + q10[ch] * w10 + q11[ch] * w11 + 512)
                                    >> 10);
            }
        }
    }
    free(step);
    return 0;
}

int jl_warp_tiles_u8c3(const jl_warp_tile *tiles, int count, uint8_t *dst, int dh, int dw,
                       ptrdiff_t dst_stride, const double inv[6], const uint8_t fill[3],
                       jl_warp_arithmetic arithmetic)
{
    const source s = {tiles, count, fill};
    if (arithmetic == JL_WARP_FIXED)
        return rows_fixed(&s, dst, dh, dw, dst_stride, inv);
    float f[6];
    for (int i = 0; i < 6; i++)
        f[i] = (float)inv[i];
    if (jl_avx512_on(JL_AVX512_VBMI))
        rows_avx512(&s, dst, dh, dw, dst_stride, f);
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        rows_avx2(&s, dst, dh, dw, dst_stride, f);
    else
        rows_scalar(&s, dst, dh, dw, dst_stride, f);
    return 0;
}

int jl_warp_affine_u8c3(const uint8_t *src, int sh, int sw, ptrdiff_t src_stride,
                        uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride,
                        const double inv[6], const uint8_t border[3],
                        jl_warp_arithmetic arithmetic)
{
    const jl_warp_tile whole = {src, src_stride, 0, 0, sw, sh, sh};
    return jl_warp_tiles_u8c3(&whole, 1, dst, dh, dw, dst_stride, inv, border, arithmetic);
}
