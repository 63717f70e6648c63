/* See masks.h. */
#include "masks.h"

#include <string.h>

/* One count from s at *p: 5 bits per character, low bits first, 0x20 meaning
 * another character follows, 0x10 of the last one its sign.  -1 when s ends
 * inside it or it is too long to be a count. */
static int next_count(const char *s, size_t len, size_t *p, int64_t *value)
{
    int64_t x = 0;
    int k = 0, more = 1;
    while (more) {
        int c;
        if (*p >= len || k > 11)
            return -1;
        c = (unsigned char)s[*p] - 48;
        if (c < 0 || c > 63)
            return -1;
        x |= (int64_t)(c & 0x1f) << (5 * k);
        more = c & 0x20;
        (*p)++;
        k++;
        if (!more && (c & 0x10))
            x |= -((int64_t)1 << (5 * k));
    }
    *value = x;
    return 0;
}

/* The run of ones [pos, pos + n) of a column-major h x w mask, into a
 * row-major plane. */
static void fill_run(int64_t pos, int64_t n, int64_t h, int64_t w, int flip, uint8_t *out)
{
    int64_t x = pos / h, y = pos % h;
    while (n > 0) {
        int64_t rows = h - y < n ? h - y : n;
        uint8_t *dst = out + y * w + (flip ? w - 1 - x : x);
        for (int64_t r = 0; r < rows; r++, dst += w)
            *dst = 1;
        n -= rows;
        x++;
        y = 0;
    }
}

int jl_paint_rle(const char *s, size_t len, int64_t h, int64_t w, int flip, uint8_t *out)
{
    const int64_t total = h * w;
    int64_t pos = 0, before_last = 0, last = 0;
    int64_t m = 0;
    size_t p = 0;
    int ones = 0;
    if (h < 0 || w < 0)
        return -1;
    memset(out, 0, (size_t)total);
    while (p < len && s[p]) {
        int64_t x;
        if (next_count(s, len, &p, &x))
            return -1;
        if (m > 2)
            x += before_last;
        before_last = last;
        last = x;
        m++;
        if (x < 0 || x > total - pos)
            return -1;
        if (ones && x)
            fill_run(pos, x, h, w, flip, out);
        pos += x;
        ones = !ones;
    }
    return pos == total ? 0 : -1;
}

int jl_paint_rle_mapped(const char *s, size_t len, int64_t h, int64_t w, const int64_t *rows,
                        int64_t nh, const int64_t *cols, int64_t nw, uint8_t *scratch,
                        uint8_t *out)
{
    if (jl_paint_rle(s, len, h, w, 0, scratch))
        return -1;
    for (int64_t i = 0; i < nh; i++) {
        uint8_t *dst = out + i * nw;
        if (rows[i] < 0) { /* padding */
            memset(dst, 0, (size_t)nw);
            continue;
        }
        const uint8_t *src = scratch + rows[i] * w;
        for (int64_t j = 0; j < nw; j++)
            dst[j] = cols[j] < 0 ? 0 : src[cols[j]];
    }
    return 0;
}
