/* OpenCV's fillPoly of a sample's polygons, each into its own window of one canvas
 * (NOTE [ A sample's polygons at once ] in pipelines/yolo/polygons.py). */
#include "fill.h"

#include <stdlib.h>
#include <string.h>

/* Edge x in fixed point with 16 fraction bits, as OpenCV keeps it. */
#define FRACTION 16
#define ONE ((int64_t)1 << FRACTION)

typedef struct {
    int64_t x, dx; /* x at the current row, its change a row */
    int top, end;  /* the rows it spans: [top, end) */
} edge;

typedef struct {
    uint8_t *rows;
    ptrdiff_t stride;
    int width, height;
    uint8_t value;
} canvas;

/* Where p is beyond the canvas: 1 left, 2 right, 4 above, 8 below. */
static inline int beyond(const canvas *c, const int64_t p[2])
{
    return (p[0] < 0) | (p[0] > c->width - 1) << 1 | (p[1] < 0) << 2 |
           (p[1] > c->height - 1) << 3;
}

/* p, an end of the segment a-b, moved along it onto the line where coordinate
 * ``axis`` is ``line`` (the product first, the division truncating). */
static inline void onto(int64_t p[2], int axis, int64_t line, const int64_t a[2],
                        const int64_t b[2])
{
    int other = 1 - axis;
    p[other] += (line - p[axis]) * (b[other] - a[other]) / (b[axis] - a[axis]);
    p[axis] = line;
}

/* OpenCV's clipLine: the segment a-b cut to the canvas, 0 if none of it is in
 * (its ends may have moved even then).  Each end beyond the top or bottom moves
 * onto that border row (a first, b then from a's new place), then each end beyond
 * a side onto it.  (OpenCV divides in double: the same quotients for coordinates
 * within 2^20, products below 2^53.) */
static int cut_to(const canvas *c, int64_t a[2], int64_t b[2])
{
    int out_a = beyond(c, a), out_b = beyond(c, b);
    if (out_a & out_b || !(out_a | out_b))
        return !(out_a | out_b);
    if (out_a & 12) {
        onto(a, 1, out_a & 8 ? c->height - 1 : 0, a, b);
        out_a = beyond(c, a) & 3;
    }
    if (out_b & 12) {
        onto(b, 1, out_b & 8 ? c->height - 1 : 0, a, b);
        out_b = beyond(c, b) & 3;
    }
    if (out_a & out_b || !(out_a | out_b))
        return !(out_a | out_b);
    if (out_a)
        onto(a, 0, out_a & 2 ? c->width - 1 : 0, a, b);
    if (out_b)
        onto(b, 0, out_b & 2 ? c->width - 1 : 0, a, b);
    return 1;
}

/* OpenCV's 8-connected line from a to b, both on the canvas: from the left end
 * (the first where upright), a pixel a column (a row where steeper), the other
 * coordinate stepping while the error term is negative. */
static void line8(const canvas *c, const int64_t *a, const int64_t *b)
{
    if (b[0] < a[0]) {
        const int64_t *t = a;
        a = b, b = t;
    }
    int64_t run = b[0] - a[0], rise = b[1] - a[1];
    ptrdiff_t down = c->stride;
    if (rise < 0)
        rise = -rise, down = -down;
    int steep = rise > run;
    int64_t along = steep ? rise : run, across = steep ? run : rise;
    ptrdiff_t major = steep ? down : 1, minor = steep ? 1 : down;
    int64_t error = along - 2 * across;
    uint8_t *p = c->rows + a[1] * c->stride + a[0];
    for (int64_t i = 0;; i++) {
        *p = c->value;
        if (i == along)
            break;
        int turn = error < 0;
        error += turn ? 2 * along - 2 * across : -2 * across;
        p += turn ? major + minor : major;
    }
}

/* The canvas row y, from ``from`` to ``to`` (16-bit fixed point, either order):
 * the whole pixels between, cut to the canvas. */
static inline void span(const canvas *c, int y, int64_t from, int64_t to)
{
    int64_t lo = from < to ? from : to, hi = from < to ? to : from;
    int64_t x0 = (lo + ONE - 1) >> FRACTION, x1 = hi >> FRACTION;
    if (x0 >= c->width || x1 < 0)
        return;
    x0 = x0 < 0 ? 0 : x0;
    x1 = x1 >= c->width ? c->width - 1 : x1;
    if (x1 >= x0)
        memset(c->rows + y * c->stride + x0, c->value, (size_t)(x1 - x0 + 1));
}

/* Whether edge a goes before b in OpenCV's order: by (top, x, dx). */
static inline int before(const edge *a, const edge *b)
{
    if (a->top != b->top)
        return a->top < b->top;
    return a->x != b->x ? a->x < b->x : a->dx < b->dx;
}

/* Scratch memory for one polygon at a time, grown as needed. */
typedef struct {
    edge *edges, *sorted;
    int *active, *merged, *rows;
    size_t edges_cap, rows_cap;
} scratch;

static int grow(scratch *s, size_t edges, size_t rows)
{
    if (edges > s->edges_cap) {
        free(s->edges), free(s->sorted), free(s->active), free(s->merged);
        s->edges = malloc(edges * sizeof(edge));
        s->sorted = malloc(edges * sizeof(edge));
        s->active = malloc(edges * sizeof(int));
        s->merged = malloc(edges * sizeof(int));
        s->edges_cap = s->edges && s->sorted && s->active && s->merged ? edges : 0;
        if (!s->edges_cap)
            return -1;
    }
    if (rows > s->rows_cap) {
        free(s->rows);
        s->rows = malloc(rows * sizeof(int));
        s->rows_cap = s->rows ? rows : 0;
        if (!s->rows_cap)
            return -1;
    }
    return 0;
}

/* The edges in OpenCV's order into s->sorted: counted by top row, then each row's
 * few edges by (x, dx) in place (edges equal in all three are interchangeable). */
static int sort_edges(scratch *s, int count, int top, int bottom)
{
    size_t span_rows = (size_t)(bottom - top) + 1;
    if (grow(s, s->edges_cap, span_rows))
        return -1;
    memset(s->rows, 0, span_rows * sizeof(int));
    for (int i = 0; i < count; i++)
        s->rows[s->edges[i].top - top]++;
    for (size_t r = 0, at = 0; r < span_rows; r++) {
        int here = s->rows[r];
        s->rows[r] = (int)at;
        at += (size_t)here;
    }
    for (int i = 0; i < count; i++)
        s->sorted[s->rows[s->edges[i].top - top]++] = s->edges[i];
    for (int i = 1; i < count; i++) {
        edge e = s->sorted[i];
        int j = i;
        for (; j > 0 && before(&e, &s->sorted[j - 1]); j--)
            s->sorted[j] = s->sorted[j - 1];
        s->sorted[j] = e;
    }
    return 0;
}

/* Stable insertion sort of active edge indices by x. */
static void by_x(const edge *edges, int *active, int n)
{
    for (int i = 1; i < n; i++) {
        int e = active[i], j = i;
        for (; j > 0 && edges[active[j - 1]].x > edges[e].x; j--)
            active[j] = active[j - 1];
        active[j] = e;
    }
}

/* OpenCV's FillEdgeCollection: row by row from the first edge's top, the active
 * edges (ending edges dropped, starting ones merged in before any at their x or
 * further) filled between in pairs, each pair's x stepped, then reordered by x. */
static int fill_edges(const canvas *c, scratch *s, int count)
{
    if (count < 2)
        return 0;
    const edge *all = s->edges;
    int top = all[0].top, bottom = all[0].end;
    int64_t left = INT64_MAX, right = -1;
    for (int i = 0; i < count; i++) {
        int64_t end_x = all[i].x + (int64_t)(all[i].end - all[i].top) * all[i].dx;
        top = all[i].top < top ? all[i].top : top;
        bottom = all[i].end > bottom ? all[i].end : bottom;
        left = all[i].x < left ? all[i].x : left;
        left = end_x < left ? end_x : left;
        right = all[i].x > right ? all[i].x : right;
        right = end_x > right ? end_x : right;
    }
    if (bottom < 0 || top >= c->height || right < 0 || left >= ((int64_t)c->width << FRACTION))
        return 0;
    if (sort_edges(s, count, top, bottom))
        return -1;
    edge *edges = s->sorted;
    int *active = s->active, *merged = s->merged;
    bottom = bottom < c->height ? bottom : c->height;
    int live = 0, next = 0;
    for (int y = edges[0].top; y < bottom; y++) {
        if (!live && next < count && edges[next].top > y)
            y = edges[next].top; /* nothing to fill until the next edge starts */
        if (y >= bottom)
            break;
        int m = 0;
        for (int j = 0; j < live || (next < count && edges[next].top == y);) {
            if (j < live && edges[active[j]].end == y) {
                j++;
                continue;
            }
            int starting = next < count && edges[next].top == y;
            if (j < live && (!starting || edges[active[j]].x < edges[next].x))
                merged[m++] = active[j++];
            else
                merged[m++] = next++;
        }
        for (int t = 0; t + 1 < m; t += 2) {
            edge *a = &edges[merged[t]], *b = &edges[merged[t + 1]];
            if (y >= 0)
                span(c, y, a->x, b->x);
            a->x += a->dx;
            b->x += b->dx;
        }
        by_x(edges, merged, m);
        int *t = active;
        active = merged, merged = t;
        live = m;
    }
    return 0;
}

/* One polygon: its outline's lines drawn (cut to the canvas), its non-horizontal
 * edges collected (x at the upper end, dx a row truncated toward zero; where the
 * line was cut, both from the cut line's ends and the rows it spans), then filled. */
static int fill_one(const canvas *c, const int32_t *p, size_t k, int64_t dx, int64_t dy,
                    scratch *s)
{
    int count = 0;
    int64_t from[2] = {p[2 * (k - 1)] + dx, p[2 * (k - 1) + 1] + dy};
    for (size_t i = 0; i < k; i++) {
        int64_t to[2] = {p[2 * i] + dx, p[2 * i + 1] + dy};
        int64_t a[2] = {from[0], from[1]}, b[2] = {to[0], to[1]};
        int cut = beyond(c, a) | beyond(c, b);
        if (!cut || cut_to(c, a, b))
            line8(c, a, b);
        if (from[1] != to[1]) {
            /* the edge's ends: its points', or the cut line's */
            int64_t f[2] = {from[0], from[1]}, t[2] = {to[0], to[1]};
            if (cut) {
                f[0] = a[0], t[0] = b[0];
                if (a[1] != b[1])
                    f[1] = a[1], t[1] = b[1];
            }
            int down = from[1] < to[1];
            edge *e = &s->edges[count++];
            e->dx = (t[0] - f[0]) * ONE / (t[1] - f[1]);
            e->top = (int)(down ? from[1] : to[1]);
            e->end = (int)(down ? to[1] : from[1]);
            e->x = down ? f[0] * ONE + (from[1] - f[1]) * e->dx
                        : t[0] * ONE + (to[1] - t[1]) * e->dx;
        }
        from[0] = to[0], from[1] = to[1];
    }
    return fill_edges(c, s, count);
}

int jl_fill_polygons(const int32_t *points, size_t n, size_t k, const jl_fill_window *windows,
                     uint8_t *rows, ptrdiff_t stride, uint8_t value)
{
    scratch s = {0};
    int failed = 0;
    if (n && k && grow(&s, k, 1))
        failed = -1;
    for (size_t i = 0; i < n && k && !failed; i++) {
        const jl_fill_window *w = &windows[i];
        if (w->width <= 0 || w->height <= 0)
            continue;
        canvas c = {rows + (ptrdiff_t)w->row * stride + w->column, stride, w->width, w->height,
                    value};
        failed = fill_one(&c, points + 2 * k * i, k, -(int64_t)w->x0, -(int64_t)w->y0, &s);
    }
    free(s.edges), free(s.sorted), free(s.active), free(s.merged), free(s.rows);
    return failed;
}
