/* OpenCV's 8-bit HSV conversions with a table between. */
#include "hsv.h"

#include "bgr.h"
#include "once.h"
#include "simd.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NOTE [ OpenCV's HSV ]
 * BGR -> HSV (8-bit, hue range 180) is integer: v = max, s and h from 12-bit
 * reciprocal tables rounded half to even, the hue wrapped into 0..179.  HSV ->
 * BGR (8-bit) is float, as OpenCV's vector loop does it (every 32 pixels of a
 * row, or 64 where OpenCV 4.14 and 5.1 take AVX-512; YOLO's widths are multiples
 * of 32): hue * (6/180), its sector from
 * truncations, s and v * (1/255), the four candidates v, v(1 - s),
 * v * fma(-s, f, 1) and v * fma(-s, 1 - f, 1) (the vector build fuses these),
 * each channel a candidate picked by the sector, * 255 and truncated.
 * The last (width mod block) pixels of a row take OpenCV's scalar code instead:
 * the sector from fmod and floor, the same fused candidates, v itself where
 * s is 0, * 255 rounded half to even.  Each was matched to OpenCV 5.0.0 on all
 * 2^24 inputs (tests/pipelines/yolo/test_opencv.py). */
static int sdiv[256], hdiv[256];
static int tables_state; /* jl_once (once.h) */

static void tables(void)
{
    sdiv[0] = hdiv[0] = 0;
    for (int i = 1; i < 256; i++) {
        sdiv[i] = (int)nearbyint((double)(255 << 12) / (1.0 * i));
        hdiv[i] = (int)nearbyint((double)(180 << 12) / (6.0 * i));
    }
}

static inline void to_hsv(int b, int g, int r, int *h, int *s, int *v)
{
    int hi = b > g ? b : g, lo = b < g ? b : g;
    hi = hi > r ? hi : r;
    lo = lo < r ? lo : r;
    int diff = hi - lo, vr = hi == r ? -1 : 0, vg = hi == g ? -1 : 0;
    int hue = (vr & (g - b)) + (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    hue = (hue * hdiv[diff] + (1 << 11)) >> 12;
    *h = hue + (hue < 0 ? 180 : 0);
    *s = (diff * sdiv[hi] + (1 << 11)) >> 12;
    *v = hi;
}

static inline uint8_t to_byte(float x)
{
    float t = truncf(x * 255.0f);
    return t <= 0.0f ? 0 : t >= 255.0f ? 255 : (uint8_t)t;
}

static inline void to_bgr(int h, int s, int v, uint8_t *out)
{
    const float hscale = 6.0f / 180;
    float hf = (float)h * hscale, sf = (float)s * (1.0f / 255.0f), vf = (float)v * (1.0f / 255.0f);
    float pre = truncf(hf), f = hf - pre;
    float t0 = vf, t1 = vf * (1.0f - sf), t2 = vf * fmaf(-sf, f, 1.0f),
          t3 = vf * fmaf(-sf, 1.0f - f, 1.0f);
    int sector = (int)(pre - truncf(pre * (1.0f / 6.0f)) * 6.0f);
    float b, g, r;
    switch (sector) {
    case 0: b = t1, g = t3, r = t0; break;
    case 1: b = t1, g = t0, r = t2; break;
    case 2: b = t3, g = t0, r = t1; break;
    case 3: b = t0, g = t2, r = t1; break;
    case 4: b = t0, g = t1, r = t3; break;
    default: b = t2, g = t1, r = t0; break;
    }
    out[0] = to_byte(b);
    out[1] = to_byte(g);
    out[2] = to_byte(r);
}

/* OpenCV's scalar HSV -> BGR, for a row's last pixels. */
static inline void to_bgr_rounded(int h, int s, int v, uint8_t *out)
{
    static const int sectors[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1},
                                      {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    float sf = (float)s * (1.0f / 255.0f), vf = (float)v * (1.0f / 255.0f), bgr[3];
    if (sf == 0.0f) {
        bgr[0] = bgr[1] = bgr[2] = vf;
    } else {
        float hf = fmodf((float)h * (6.0f / 180), 6.0f);
        int sector = (int)floorf(hf);
        float f = hf - (float)sector, tab[4];
        if ((unsigned)sector >= 6u)
            sector = 0, f = 0.0f;
        tab[0] = vf;
        tab[1] = vf * (1.0f - sf);
        tab[2] = vf * fmaf(-sf, f, 1.0f);
        tab[3] = vf * fmaf(-sf, 1.0f - f, 1.0f);
        for (int c = 0; c < 3; c++)
            bgr[c] = tab[sectors[sector][c]];
    }
    for (int c = 0; c < 3; c++) {
        float r = nearbyintf(bgr[c] * 255.0f);
        out[c] = r <= 0.0f ? 0 : r >= 255.0f ? 255 : (uint8_t)r;
    }
}

static inline void pixels(uint8_t *img, size_t n, const uint8_t *lut, int rounded)
{
    for (size_t i = 0; i < n; i++, img += 3) {
        int h, s, v;
        to_hsv(img[0], img[1], img[2], &h, &s, &v);
        if (rounded)
            to_bgr_rounded(lut[h * 3], lut[s * 3 + 1], lut[v * 3 + 2], img);
        else
            to_bgr(lut[h * 3], lut[s * 3 + 1], lut[v * 3 + 2], img);
    }
}

/* Eight table entries (a table of int32_t or of uint8_t): scalar loads, which AMD's
 * cores do faster than AVX2's gathers. */
#define LOOKUP8(table, at)                                                                    \
    __extension__({                                                                           \
        int32_t i_[8];                                                                        \
        _mm256_storeu_si256((__m256i *)i_, (at));                                             \
        _mm256_setr_epi32((table)[i_[0]], (table)[i_[1]], (table)[i_[2]], (table)[i_[3]],     \
                          (table)[i_[4]], (table)[i_[5]], (table)[i_[6]], (table)[i_[7]]);    \
    })

/* The table's saturation of every (v, v - min): s from OpenCV's reciprocal, then the
 * table; one lookup a pixel instead of two and a multiply.  Built once an image. */
static void saturation_of(const uint8_t *lut, uint8_t table[256 * 256])
{
    for (int v = 0; v < 256; v++)
        for (int diff = 0; diff <= v; diff++)
            table[v * 256 + diff] = lut[((diff * sdiv[v] + (1 << 11)) >> 12) * 3 + 1];
}

/* Eight pixels at a time: the same arithmetic, lane by lane. */
__attribute__((target("avx2,fma"))) static size_t pixels_avx2(uint8_t *img, size_t n,
                                                              const uint8_t *lut,
                                                              const uint8_t *s_of)
{
    int32_t lh[256], lv[256];
    for (int i = 0; i < 256; i++)
        lh[i] = lut[i * 3], lv[i] = lut[i * 3 + 2];
    const __m128i pick_b0 = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pick_b1 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1),
                  pick_g0 = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pick_g1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1),
                  pick_r0 = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pick_r1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i half = _mm256_set1_epi32(1 << 11), zero = _mm256_setzero_si256(),
                  h180 = _mm256_set1_epi32(180), byte = _mm256_set1_epi32(255);
    const __m256 hscale = _mm256_set1_ps(6.0f / 180), inv255 = _mm256_set1_ps(1.0f / 255.0f),
                 one = _mm256_set1_ps(1.0f), sixth = _mm256_set1_ps(1.0f / 6.0f),
                 six = _mm256_set1_ps(6.0f), f255 = _mm256_set1_ps(255.0f);
    size_t i = 0;
    /* the last group's input and output: a run of equal groups (Mosaic's and the
     * warp's 114 border) is converted once */
    __m128i last0 = _mm_set1_epi8(-1), last1 = last0, out0 = _mm_setzero_si128(), out1 = out0;
    int have_last = 0;
    for (; i + 8 <= n; i += 8, img += 24) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)img),
                x1 = _mm_loadu_si128((const __m128i *)(img + 8));
        if (have_last && _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x0, last0),
                                                         _mm_cmpeq_epi8(x1, last1))) == 0xFFFF) {
            _mm_storeu_si128((__m128i *)img, out0);
            _mm_storel_epi64((__m128i *)(img + 16), out1);
            continue;
        }
        last0 = x0, last1 = x1;
        __m256i b = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(x0, pick_b0),
                                                      _mm_shuffle_epi8(x1, pick_b1)));
        __m256i g = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(x0, pick_g0),
                                                      _mm_shuffle_epi8(x1, pick_g1)));
        __m256i r = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(x0, pick_r0),
                                                      _mm_shuffle_epi8(x1, pick_r1)));
        /* to HSV: integers */
        __m256i v = _mm256_max_epi32(b, _mm256_max_epi32(g, r));
        __m256i diff = _mm256_sub_epi32(v, _mm256_min_epi32(b, _mm256_min_epi32(g, r)));
        __m256i vr = _mm256_cmpeq_epi32(v, r), vg = _mm256_cmpeq_epi32(v, g);
        __m256i gb = _mm256_sub_epi32(g, b);
        __m256i br = _mm256_add_epi32(_mm256_sub_epi32(b, r), _mm256_slli_epi32(diff, 1));
        __m256i rg = _mm256_add_epi32(_mm256_sub_epi32(r, g), _mm256_slli_epi32(diff, 2));
        __m256i h = _mm256_add_epi32(
            _mm256_and_si256(vr, gb),
            _mm256_andnot_si256(vr, _mm256_add_epi32(_mm256_and_si256(vg, br),
                                                     _mm256_andnot_si256(vg, rg))));
        h = _mm256_srai_epi32(_mm256_add_epi32(
            _mm256_mullo_epi32(h, LOOKUP8(hdiv, diff)), half), 12);
        h = _mm256_add_epi32(h, _mm256_and_si256(_mm256_cmpgt_epi32(zero, h), h180));
        /* the table */
        __m256i s = LOOKUP8(s_of, _mm256_add_epi32(_mm256_slli_epi32(v, 8), diff));
        h = LOOKUP8(lh, h);
        v = LOOKUP8(lv, v);
        /* to BGR: floats */
        __m256 hf = _mm256_mul_ps(_mm256_cvtepi32_ps(h), hscale);
        __m256 sf = _mm256_mul_ps(_mm256_cvtepi32_ps(s), inv255);
        __m256 vf = _mm256_mul_ps(_mm256_cvtepi32_ps(v), inv255);
        __m256 pre = _mm256_round_ps(hf, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __m256 f = _mm256_sub_ps(hf, pre);
        __m256 t0 = vf, t1 = _mm256_mul_ps(vf, _mm256_sub_ps(one, sf));
        __m256 t2 = _mm256_mul_ps(vf, _mm256_fnmadd_ps(sf, f, one));
        __m256 t3 = _mm256_mul_ps(vf, _mm256_fnmadd_ps(sf, _mm256_sub_ps(one, f), one));
        __m256 sector = _mm256_sub_ps(pre, _mm256_mul_ps(_mm256_round_ps(
            _mm256_mul_ps(pre, sixth), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), six));
#define IS(k) _mm256_cmp_ps(sector, _mm256_set1_ps(k), _CMP_EQ_OQ)
#define PICK(a0, a1, a2, a3, a4, a5)                                                          \
    _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(    \
        a5, a4, IS(4)), a3, IS(3)), a2, IS(2)), a1, IS(1)), a0, IS(0))
        __m256 ob = PICK(t1, t1, t3, t0, t0, t2), og = PICK(t3, t0, t0, t2, t1, t1),
               orr = PICK(t0, t2, t1, t1, t3, t0);
#undef PICK
#undef IS
        __m256i qb = _mm256_cvttps_epi32(_mm256_mul_ps(ob, f255)),
                qg = _mm256_cvttps_epi32(_mm256_mul_ps(og, f255)),
                qr = _mm256_cvttps_epi32(_mm256_mul_ps(orr, f255));
#define CLAMP(q) _mm256_min_epi32(_mm256_max_epi32(q, zero), byte)
        __m256i words = _mm256_or_si256(CLAMP(qb), _mm256_or_si256(
            _mm256_slli_epi32(CLAMP(qg), 8), _mm256_slli_epi32(CLAMP(qr), 16)));
#undef CLAMP
        jl_pack8_bgr(words, &out0, &out1);
        _mm_storeu_si128((__m128i *)img, out0);
        _mm_storel_epi64((__m128i *)(img + 16), out1);
        have_last = 1;
    }
    return i;
}

/* NOTE [ HSV with AVX-512 ]
 * Sixteen pixels a pass, the AVX2 loop's arithmetic lane by lane.  Its five tables
 * (OpenCV's two reciprocals, 24-bit values split into three bytes, and the hue,
 * saturation and value columns of the image's table) are 256 bytes each, read by
 * VBMI's two-register byte permutes rather than by gathers, slower on AMD's
 * cores.  Pixels move by plain 16- and 32-byte loads and stores: AMD's masked
 * AVX-512 loads and stores made the loop slower than AVX2's. */
/* A table of 256 bytes in registers: entries 0..127 in lo, 128..255 in hi. */
typedef struct {
    __m512i lo[2], hi[2];
} table256;

/* The loop's tables as bytes: OpenCV's reciprocals (three bytes each, low first) and
 * the image's table by channel; built once an image. */
typedef struct {
    uint8_t hdiv[3][256], sdiv[3][256], h[256], s[256], v[256];
} hsv_bytes;

static void hsv_bytes_of(const uint8_t *lut, hsv_bytes *t)
{
    for (int j = 0; j < 256; j++) {
        for (int k = 0; k < 3; k++) {
            t->hdiv[k][j] = (uint8_t)(hdiv[j] >> (8 * k));
            t->sdiv[k][j] = (uint8_t)(sdiv[j] >> (8 * k));
        }
        t->h[j] = lut[j * 3], t->s[j] = lut[j * 3 + 1], t->v[j] = lut[j * 3 + 2];
    }
}

JL_AVX512 static inline table256 table_of(const uint8_t *bytes)
{
    table256 t = {{_mm512_loadu_si512(bytes), _mm512_loadu_si512(bytes + 64)},
                  {_mm512_loadu_si512(bytes + 128), _mm512_loadu_si512(bytes + 192)}};
    return t;
}

/* t[idx] for 16 int32 lanes idx of 0..255, given as bytes: idx8 (its low 16 bytes) */
JL_AVX512 static inline __m512i lookup16(const table256 *t, __m512i idx8, __mmask64 high)
{
    __m512i r = _mm512_mask_blend_epi8(high, _mm512_permutex2var_epi8(t->lo[0], idx8, t->lo[1]),
                                       _mm512_permutex2var_epi8(t->hi[0], idx8, t->hi[1]));
    return _mm512_cvtepu8_epi32(_mm512_castsi512_si128(r));
}

JL_AVX512 static inline __m512i lookup_u8(const table256 *t, __m512i idx)
{
    __m512i b = jl_low_bytes16(idx);
    return lookup16(t, b, _mm512_movepi8_mask(b));
}

/* a 24-bit value from three byte tables (low byte first) */
JL_AVX512 static inline __m512i lookup_u24(const table256 t[3], __m512i idx)
{
    __m512i b = jl_low_bytes16(idx);
    __mmask64 high = _mm512_movepi8_mask(b);
    return _mm512_or_si512(_mm512_or_si512(lookup16(&t[0], b, high),
                                           _mm512_slli_epi32(lookup16(&t[1], b, high), 8)),
                           _mm512_slli_epi32(lookup16(&t[2], b, high), 16));
}

JL_AVX512 static size_t pixels_avx512(uint8_t *img, size_t n, const hsv_bytes *tb)
{
    /* the B, G and R bytes of 16 pixels (48 bytes in three 16-byte loads) */
    const __m128i pb0 = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pb1 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1),
                  pb2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13),
                  pg0 = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pg1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1),
                  pg2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14),
                  pr0 = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                  pr1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1),
                  pr2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
    const __m512i half = _mm512_set1_epi32(1 << 11), h180 = _mm512_set1_epi32(180),
                  zero = _mm512_setzero_si512(), byte = _mm512_set1_epi32(255);
    const __m512 hscale = _mm512_set1_ps(6.0f / 180), inv255 = _mm512_set1_ps(1.0f / 255.0f),
                 one = _mm512_set1_ps(1.0f), sixth = _mm512_set1_ps(1.0f / 6.0f),
                 six = _mm512_set1_ps(6.0f), f255 = _mm512_set1_ps(255.0f);
    const table256 hd[3] = {table_of(tb->hdiv[0]), table_of(tb->hdiv[1]), table_of(tb->hdiv[2])},
                   sd[3] = {table_of(tb->sdiv[0]), table_of(tb->sdiv[1]), table_of(tb->sdiv[2])},
                   th = table_of(tb->h), ts = table_of(tb->s), tv = table_of(tb->v);
    size_t i = 0;
    /* a run of equal groups (Mosaic's and the warp's 114 border) is converted once;
     * plain 16- and 32-byte loads and stores (AMD's masked ones are slow) */
    __m128i last0 = _mm_set1_epi8(-1), last1 = last0, last2 = last0;
    __m512i out = zero;
    int have_last = 0;
    for (; i + 16 <= n; i += 16, img += 48) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)img),
                x1 = _mm_loadu_si128((const __m128i *)(img + 16)),
                x2 = _mm_loadu_si128((const __m128i *)(img + 32));
        if (have_last &&
            _mm_movemask_epi8(_mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(x0, last0),
                                                          _mm_cmpeq_epi8(x1, last1)),
                                            _mm_cmpeq_epi8(x2, last2))) == 0xFFFF) {
            jl_store48_bgr(img, out);
            continue;
        }
        last0 = x0, last1 = x1, last2 = x2;
#define CHANNEL(p0, p1, p2)                                                                   \
    _mm512_cvtepu8_epi32(_mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(x0, p0),                 \
                                                   _mm_shuffle_epi8(x1, p1)),                \
                                      _mm_shuffle_epi8(x2, p2)))
        __m512i b = CHANNEL(pb0, pb1, pb2), g = CHANNEL(pg0, pg1, pg2), r = CHANNEL(pr0, pr1, pr2);
#undef CHANNEL
        /* to HSV: integers */
        __m512i v = _mm512_max_epi32(b, _mm512_max_epi32(g, r));
        __m512i diff = _mm512_sub_epi32(v, _mm512_min_epi32(b, _mm512_min_epi32(g, r)));
        __mmask16 vr = _mm512_cmpeq_epi32_mask(v, r), vg = _mm512_cmpeq_epi32_mask(v, g);
        __m512i br = _mm512_add_epi32(_mm512_sub_epi32(b, r), _mm512_slli_epi32(diff, 1));
        __m512i rg = _mm512_add_epi32(_mm512_sub_epi32(r, g), _mm512_slli_epi32(diff, 2));
        __m512i h = _mm512_mask_blend_epi32(vr, _mm512_mask_blend_epi32(vg, rg, br),
                                            _mm512_sub_epi32(g, b));
        h = _mm512_srai_epi32(_mm512_add_epi32(
            _mm512_mullo_epi32(h, lookup_u24(hd, diff)), half), 12);
        h = _mm512_mask_add_epi32(h, _mm512_cmplt_epi32_mask(h, zero), h, h180);
        /* the table */
        __m512i s = _mm512_srai_epi32(_mm512_add_epi32(
            _mm512_mullo_epi32(diff, lookup_u24(sd, v)), half), 12);
        s = lookup_u8(&ts, s);
        h = lookup_u8(&th, h);
        v = lookup_u8(&tv, v);
        /* to BGR: floats */
        __m512 hf = _mm512_mul_ps(_mm512_cvtepi32_ps(h), hscale);
        __m512 sf = _mm512_mul_ps(_mm512_cvtepi32_ps(s), inv255);
        __m512 vf = _mm512_mul_ps(_mm512_cvtepi32_ps(v), inv255);
        __m512 pre = _mm512_roundscale_ps(hf, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __m512 f = _mm512_sub_ps(hf, pre);
        __m512 t0 = vf, t1 = _mm512_mul_ps(vf, _mm512_sub_ps(one, sf));
        __m512 t2 = _mm512_mul_ps(vf, _mm512_fnmadd_ps(sf, f, one));
        __m512 t3 = _mm512_mul_ps(vf, _mm512_fnmadd_ps(sf, _mm512_sub_ps(one, f), one));
        __m512 sector = _mm512_sub_ps(pre, _mm512_mul_ps(_mm512_roundscale_ps(
            _mm512_mul_ps(pre, sixth), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), six));
        __mmask16 is0 = _mm512_cmp_ps_mask(sector, _mm512_set1_ps(0), _CMP_EQ_OQ),
                  is1 = _mm512_cmp_ps_mask(sector, _mm512_set1_ps(1), _CMP_EQ_OQ),
                  is2 = _mm512_cmp_ps_mask(sector, _mm512_set1_ps(2), _CMP_EQ_OQ),
                  is3 = _mm512_cmp_ps_mask(sector, _mm512_set1_ps(3), _CMP_EQ_OQ),
                  is4 = _mm512_cmp_ps_mask(sector, _mm512_set1_ps(4), _CMP_EQ_OQ);
#define PICK(a0, a1, a2, a3, a4, a5)                                                          \
    _mm512_mask_blend_ps(is0, _mm512_mask_blend_ps(is1, _mm512_mask_blend_ps(is2,             \
        _mm512_mask_blend_ps(is3, _mm512_mask_blend_ps(is4, a5, a4), a3), a2), a1), a0)
        __m512 ob = PICK(t1, t1, t3, t0, t0, t2), og = PICK(t3, t0, t0, t2, t1, t1),
               orr = PICK(t0, t2, t1, t1, t3, t0);
#undef PICK
#define CLAMP(x) _mm512_min_epi32(_mm512_max_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(x, f255)), \
                                                   zero), byte)
        __m512i words = _mm512_or_si512(CLAMP(ob), _mm512_or_si512(
            _mm512_slli_epi32(CLAMP(og), 8), _mm512_slli_epi32(CLAMP(orr), 16)));
#undef CLAMP
        out = jl_pack16_bgr(words);
        jl_store48_bgr(img, out);
        have_last = 1;
    }
    return i;
}

void jl_hsv_lut_u8c3(uint8_t *img, size_t rows, size_t width, const uint8_t *lut,
                     size_t block)
{
    const size_t blocks = width - width % block;
    uint8_t *s_of = NULL;
    hsv_bytes *bytes = NULL;
    jl_once(&tables_state, tables);
    if (jl_avx512_on(JL_AVX512_VBMI) && blocks && (bytes = malloc(sizeof *bytes)) != NULL)
        hsv_bytes_of(lut, bytes); /* NOTE [ HSV with AVX-512 ] */
    /* the saturation table takes what 1,600 pixels of scalar code do: not for fewer */
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             rows * blocks >= 2048 && (s_of = malloc(256 * 256)) != NULL)
        saturation_of(lut, s_of);
    for (size_t y = 0; y < rows; y++, img += 3 * width) {
        size_t done = bytes ? pixels_avx512(img, blocks, bytes)
                            : s_of ? pixels_avx2(img, blocks, lut, s_of) : 0;
        pixels(img + 3 * done, blocks - done, lut, 0);
        pixels(img + 3 * blocks, width - blocks, lut, 1);
    }
    free(s_of);
    free(bytes);
}
