#include "gather_rows.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define JL_GATHER_AVX2 1 /* as resample.c's AVX2 path: GCC's target attributes */
#endif

#define WINDOW 16      /* bytes a 128-bit lane's shuffle can pick from */
#define VEC 32         /* bytes of one table vector */
#define KL_BITS 11     /* k = kh * 2^KL_BITS + kl: both halves fit int16 */

static int max_taps(const jl_coeffs *c)
{
    int o, t = 0;
    for (o = 0; o < c->n; o++)
        if (c->bounds[2 * o + 1] > t)
            t = c->bounds[2 * o + 1];
    return t;
}

size_t jl_gather_size(const jl_coeffs *c)
{
    size_t groups = ((size_t)c->n + 7) / 8, pairs = ((size_t)max_taps(c) + 1) / 2;
    return groups * (2 * sizeof(int) + pairs * 3 * VEC);
}

/* The first output of group k: groups of 8, the last moved back to end at n. */
static inline int group_start(int n, int k)
{
    return 8 * k > n - 8 ? n - 8 : 8 * k;
}

/* The window a lane reads for outputs o0..o0+3 (rows of at least WINDOW): it
 * starts at their first tap, moved left if it would run past the row.  -1 when
 * their taps span more. */
static int lane_window(const jl_coeffs *c, int o0, int in_size)
{
    int j, lo = in_size, hi = 0, base;
    for (j = 0; j < 4; j++) {
        int first = c->bounds[2 * (o0 + j)], taps = c->bounds[2 * (o0 + j) + 1];
        if (taps > 0 && first < lo)
            lo = first;
        if (taps > 0 && first + taps > hi)
            hi = first + taps;
    }
    base = lo + WINDOW > in_size ? in_size - WINDOW : lo;
    return hi - base > WINDOW ? -1 : base;
}

int jl_gather_build(jl_gather *g, const jl_coeffs *c, int in_size, void *scratch)
{
    int n = c->n, k, lane, j, pair, half;
    uint8_t *mem = scratch;
#ifdef JL_GATHER_AVX2
    if (!__builtin_cpu_supports("avx2"))
        return 0;
#else
    return 0;
#endif
    if (n < 8 || in_size < WINDOW)
        return 0;
    g->n = n;
    g->groups = (n + 7) / 8;
    g->pairs = (max_taps(c) + 1) / 2;
    g->base = (int *)mem;
    g->table = mem + 2 * sizeof(int) * (size_t)g->groups;
    for (k = 0; k < g->groups; k++) {
        int o0 = group_start(n, k);
        for (lane = 0; lane < 2; lane++) {
            int base = lane_window(c, o0 + 4 * lane, in_size);
            if (base < 0)
                return 0;
            g->base[2 * k + lane] = base;
            for (pair = 0; pair < g->pairs; pair++) {
                uint8_t *v = g->table + ((size_t)k * g->pairs + pair) * 3 * VEC;
                uint8_t *shuffle = v + 16 * lane;
                int16_t *kl = (int16_t *)(v + VEC) + 8 * lane;
                int16_t *kh = (int16_t *)(v + 2 * VEC) + 8 * lane;
                for (j = 0; j < 4; j++) {
                    int o = o0 + 4 * lane + j;
                    for (half = 0; half < 2; half++) {
                        int t = 2 * pair + half, used = t < c->bounds[2 * o + 1];
                        int32_t w = used ? c->kk[(size_t)o * c->ksize + t] : 0;
                        /* 0x80 zeroes a byte: each tap widened to 16 bits */
                        shuffle[4 * j + 2 * half] =
                            used ? (uint8_t)(c->bounds[2 * o] + t - base) : 0x80;
                        shuffle[4 * j + 2 * half + 1] = 0x80;
                        kl[2 * j + half] = (int16_t)(w & ((1 << KL_BITS) - 1));
                        kh[2 * j + half] = (int16_t)(w >> KL_BITS); /* floor */
                    }
                }
            }
        }
    }
    return 1;
}

#ifdef JL_GATHER_AVX2

/* A group's window of a row: 16 bytes for each lane. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
group_window(const jl_gather *g, int k, const uint8_t *row)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(row + g->base[2 * k]))),
        _mm_loadu_si128((const __m128i *)(row + g->base[2 * k + 1])), 1);
}

/* Sum = high * 2^KL_BITS + low, rounded and shifted (not yet clamped). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
shifted_sum(__m256i lo, __m256i hi)
{
    lo = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(hi, KL_BITS), lo),
                          _mm256_set1_epi32(1 << (JL_PRECISION_BITS - 1)));
    return _mm256_srai_epi32(lo, JL_PRECISION_BITS);
}

/* The eight sums of group k in ROWS rows, shifted (not yet clamped), each of
 * the group's table vectors loaded once for all of them: each was loaded again
 * for every row before.  Measured in one process against one row at a time,
 * outputs the same: two rows 0.6-1.1% faster (train and eval), four another
 * 0.5-1.1%, eight 1-1.5% slower than four (registers run out). */
#define ROWS 4
__attribute__((target("avx2"), always_inline)) static inline void
group_sums(const jl_gather *g, int pairs, int k, const uint8_t *const *row, __m256i *sums)
{
    const uint8_t *v = g->table + (size_t)k * pairs * 3 * VEC;
    __m256i w[ROWS], lo[ROWS], hi[ROWS];
    int pair, r;
    for (r = 0; r < ROWS; r++) {
        w[r] = group_window(g, k, row[r]);
        lo[r] = hi[r] = _mm256_setzero_si256();
    }
    for (pair = 0; pair < pairs; pair++, v += 3 * VEC) {
        __m256i shuffle = _mm256_loadu_si256((const __m256i *)v);
        __m256i kl = _mm256_loadu_si256((const __m256i *)(v + VEC));
        __m256i kh = _mm256_loadu_si256((const __m256i *)(v + 2 * VEC));
        for (r = 0; r < ROWS; r++) {
            __m256i taps = _mm256_shuffle_epi8(w[r], shuffle);
            lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(taps, kl));
            hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(taps, kh));
        }
    }
    for (r = 0; r < ROWS; r++)
        sums[r] = shifted_sum(lo[r], hi[r]);
}

/* Saturating packs clamp to 0..255 as clip8 does; the permute puts the four
 * groups' bytes, interleaved by lane, back in order. */
__attribute__((target("avx2"), always_inline)) static inline void
store_four_groups(__m256i a, __m256i b, __m256i c, __m256i d, uint8_t *out)
{
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    _mm256_storeu_si256((__m256i *)out, _mm256_permutevar8x32_epi32(bytes, order));
}

__attribute__((target("avx2"), always_inline)) static inline void
store_group(__m256i s, uint8_t *out)
{
    __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(s, s), s);
    _mm_storel_epi64((__m128i *)out, _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes),
                                                        _mm256_extracti128_si256(bytes, 1)));
}

/* The ROWS rows from row y, in and out; past the last row, the last row again. */
static inline void rows_from(int y, int rows, const uint8_t *src, size_t src_stride,
                             uint8_t *dst, size_t dst_stride, const uint8_t **row,
                             uint8_t **out)
{
    int r;
    for (r = 0; r < ROWS; r++) {
        int yy = y + r < rows ? y + r : rows - 1;
        row[r] = src + (size_t)yy * src_stride;
        out[r] = dst + (size_t)yy * dst_stride;
    }
}

/* Groups k.. to the end, one at a time. */
__attribute__((target("avx2"), always_inline)) static inline void
groups_from(const jl_gather *g, int pairs, int k, const uint8_t *const *row, uint8_t **out)
{
    int r;
    for (; k < g->groups; k++) {
        __m256i sums[ROWS];
        group_sums(g, pairs, k, row, sums);
        for (r = 0; r < ROWS; r++)
            store_group(sums[r], out[r] + group_start(g->n, k));
    }
}

__attribute__((target("avx2"), always_inline)) static inline void
gather_rows_avx2(const jl_gather *g, int pairs, const uint8_t *src, size_t src_stride,
                 int rows, uint8_t *dst, size_t dst_stride)
{
    int fours = g->n / 32, y, k, r;
    for (y = 0; y < rows; y += ROWS) {
        const uint8_t *row[ROWS];
        uint8_t *out[ROWS];
        rows_from(y, rows, src, src_stride, dst, dst_stride, row, out);
        for (k = 0; k < 4 * fours; k += 4) {
            __m256i a[ROWS], b[ROWS], c[ROWS], d[ROWS];
            group_sums(g, pairs, k, row, a);
            group_sums(g, pairs, k + 1, row, b);
            group_sums(g, pairs, k + 2, row, c);
            group_sums(g, pairs, k + 3, row, d);
            for (r = 0; r < ROWS; r++)
                store_four_groups(a[r], b[r], c[r], d[r], out[r] + 8 * k);
        }
        groups_from(g, pairs, k, row, out);
    }
}

/* NOTE [ The horizontal pass in 512 bits ]
 * On processors with AVX-512 (jl_avx512_on), two neighbouring groups share one
 * 512-bit register: their four 16-byte windows fill its four lanes, and each
 * table vector is the two groups' 32-byte vectors side by side.  The same
 * shuffles, products and sums per lane as the AVX2 loop, so the same bytes;
 * groups left over after the fours take the AVX2 group_sums. */
#define JL_AVX512_GATHER __attribute__((target("avx512f,avx512bw"), always_inline))

JL_AVX512_GATHER static inline __m512i pair_window(const jl_gather *g, int k,
                                                   const uint8_t *row)
{
    const int *b = g->base + 2 * k;
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(row + b[0])));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row + b[1])), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row + b[2])), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row + b[3])), 3);
}

JL_AVX512_GATHER static inline __m512i pair_vector(const uint8_t *a, const uint8_t *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

/* group_sums for groups k and k + 1 at once. */
JL_AVX512_GATHER static inline void
pair_sums(const jl_gather *g, int pairs, int k, const uint8_t *const *row, __m512i *sums)
{
    const uint8_t *v = g->table + (size_t)k * pairs * 3 * VEC;
    const uint8_t *u = v + (size_t)pairs * 3 * VEC; /* group k + 1 */
    __m512i w[ROWS], lo[ROWS], hi[ROWS];
    int pair, r;
    for (r = 0; r < ROWS; r++) {
        w[r] = pair_window(g, k, row[r]);
        lo[r] = hi[r] = _mm512_setzero_si512();
    }
    for (pair = 0; pair < pairs; pair++, v += 3 * VEC, u += 3 * VEC) {
        __m512i shuffle = pair_vector(v, u);
        __m512i kl = pair_vector(v + VEC, u + VEC);
        __m512i kh = pair_vector(v + 2 * VEC, u + 2 * VEC);
        for (r = 0; r < ROWS; r++) {
            __m512i taps = _mm512_shuffle_epi8(w[r], shuffle);
            lo[r] = _mm512_add_epi32(lo[r], _mm512_madd_epi16(taps, kl));
            hi[r] = _mm512_add_epi32(hi[r], _mm512_madd_epi16(taps, kh));
        }
    }
    for (r = 0; r < ROWS; r++) {
        __m512i sum = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(hi[r], KL_BITS), lo[r]),
                                       _mm512_set1_epi32(1 << (JL_PRECISION_BITS - 1)));
        sums[r] = _mm512_srai_epi32(sum, JL_PRECISION_BITS);
    }
}

/* Groups k..k+3 from two pair sums: after the packs lane i holds x's lane i in
 * its first dword and y's in its second; the permute puts them in order. */
JL_AVX512_GATHER static inline void store_two_pairs(__m512i x, __m512i y, uint8_t *out)
{
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512i words = _mm512_packs_epi32(x, y);
    __m512i bytes = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(words, words));
    _mm256_storeu_si256((__m256i *)out, _mm512_castsi512_si256(bytes));
}

JL_AVX512_GATHER static inline void
gather_rows_avx512(const jl_gather *g, int pairs, const uint8_t *src, size_t src_stride,
                   int rows, uint8_t *dst, size_t dst_stride)
{
    int fours = g->n / 32, y, k, r;
    for (y = 0; y < rows; y += ROWS) {
        const uint8_t *row[ROWS];
        uint8_t *out[ROWS];
        rows_from(y, rows, src, src_stride, dst, dst_stride, row, out);
        for (k = 0; k < 4 * fours; k += 4) {
            __m512i x[ROWS], z[ROWS];
            pair_sums(g, pairs, k, row, x);
            pair_sums(g, pairs, k + 2, row, z);
            for (r = 0; r < ROWS; r++)
                store_two_pairs(x[r], z[r], out[r] + 8 * k);
        }
        groups_from(g, pairs, k, row, out);
    }
}

/* One copy per common tap count, so that the loop over pairs unrolls. */
#define JL_GATHER_ROWS_WITH(n)                                                                \
    __attribute__((target("avx2"))) static void gather_rows_##n(                            \
        const jl_gather *g, const uint8_t *src, size_t ss, int rows, uint8_t *dst, size_t ds) \
    {                                                                                         \
        gather_rows_avx2(g, n, src, ss, rows, dst, ds);                                       \
    }                                                                                         \
    __attribute__((target("avx512f,avx512bw"))) static void gather_rows_512_##n(            \
        const jl_gather *g, const uint8_t *src, size_t ss, int rows, uint8_t *dst, size_t ds) \
    {                                                                                         \
        gather_rows_avx512(g, n, src, ss, rows, dst, ds);                                     \
    }
JL_GATHER_ROWS_WITH(1)
JL_GATHER_ROWS_WITH(2)
JL_GATHER_ROWS_WITH(3)
JL_GATHER_ROWS_WITH(4)

__attribute__((target("avx2"))) static void gather_rows_any(
    const jl_gather *g, const uint8_t *src, size_t ss, int rows, uint8_t *dst, size_t ds)
{
    gather_rows_avx2(g, g->pairs, src, ss, rows, dst, ds);
}
#endif

void jl_gather_rows(const jl_gather *g, const uint8_t *src, size_t src_stride, int rows,
                    uint8_t *dst, size_t dst_stride)
{
#ifdef JL_GATHER_AVX2
    if (jl_avx512_on(JL_AVX512_BW))
        switch (g->pairs) {
        case 1: gather_rows_512_1(g, src, src_stride, rows, dst, dst_stride); return;
        case 2: gather_rows_512_2(g, src, src_stride, rows, dst, dst_stride); return;
        case 3: gather_rows_512_3(g, src, src_stride, rows, dst, dst_stride); return;
        case 4: gather_rows_512_4(g, src, src_stride, rows, dst, dst_stride); return;
        }
    switch (g->pairs) {
    case 1: gather_rows_1(g, src, src_stride, rows, dst, dst_stride); break;
    case 2: gather_rows_2(g, src, src_stride, rows, dst, dst_stride); break;
    case 3: gather_rows_3(g, src, src_stride, rows, dst, dst_stride); break;
    case 4: gather_rows_4(g, src, src_stride, rows, dst, dst_stride); break;
    default: gather_rows_any(g, src, src_stride, rows, dst, dst_stride);
    }
#else
    (void)g, (void)src, (void)src_stride, (void)rows, (void)dst, (void)dst_stride;
#endif
}
