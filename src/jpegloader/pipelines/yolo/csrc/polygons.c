/* Ultralytics' segment2box over a sample's polygons (NOTE [ A sample's polygons at
 * once ] in pipelines/yolo/polygons.py): the same float32 operations, one at a time,
 * in its order. */
#include "polygons.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void jl_rows_xy1(const float *xy, size_t count, float *rows)
{
    for (size_t i = 0; i < count; i++) {
        rows[3 * i] = xy[2 * i];
        rows[3 * i + 1] = xy[2 * i + 1];
        rows[3 * i + 2] = 1.0f;
    }
}

void jl_rows_divided(const float *rows, size_t count, float *xy)
{
    for (size_t i = 0; i < count; i++) {
        float z = rows[3 * i + 2];
        xy[2 * i] = rows[3 * i] / z;
        xy[2 * i + 1] = rows[3 * i + 1] / z;
    }
}

/* numpy's x.min(), y.min(), x.max(), y.max() of a polygon: a NaN in a coordinate
 * is both its extremes. */
static void extremes(const float *p, size_t k, float e[4])
{
    float x0 = p[0], y0 = p[1], x1 = p[0], y1 = p[1];
    int nan_x = 0, nan_y = 0;
    for (size_t i = 0; i < k; i++) {
        float x = p[2 * i], y = p[2 * i + 1];
        nan_x |= x != x, nan_y |= y != y;
        x0 = x < x0 ? x : x0, y0 = y < y0 ? y : y0;
        x1 = x > x1 ? x : x1, y1 = y > y1 ? y : y1;
    }
    e[0] = nan_x ? NAN : x0, e[1] = nan_y ? NAN : y0;
    e[2] = nan_x ? NAN : x1, e[3] = nan_y ? NAN : y1;
}

/* Whether an edge from s to q along one axis clearly misses the line at ``line``:
 * both ends beyond it by more than rounding can move t = (line - s) / (q - s)
 * into [0, 1] (relative 1e-3 of the coordinates, where rounding is 1e-7). */
static inline int misses(float s, float q, float line)
{
    float slack = 1e-3f * (1.0f + fabsf(s) + fabsf(q) + fabsf(line));
    return line < fminf(s, q) - slack || line > fmaxf(s, q) + slack;
}

/* The box of what lies in the image of a polygon that crosses its border, the
 * corners aside: its points inside, and where each edge meets each border line
 * within the border (t in [0, 1], the other coordinate in [0, lim]); +inf/-inf
 * where nothing does. */
static void crossing_box(const float *p, size_t k, float w, float h, float box[4])
{
    const float bounds[4] = {0.0f, w, 0.0f, h}, lims[4] = {h, h, w, w};
    /* an edge with both ends this far inside misses every border line by more than
     * misses()'s slack (at most 1e-3 (1 + 3 max(w, h)) there), doubled, plus one */
    const float far = 2e-3f * (1.0f + 3.0f * fmaxf(w, h)) + 1.0f;
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t i = 0; i < k; i++) {
        float x = p[2 * i], y = p[2 * i + 1];
        if (x >= 0 && y >= 0 && x <= w && y <= h) {
            lo[0] = fminf(lo[0], x), lo[1] = fminf(lo[1], y);
            hi[0] = fmaxf(hi[0], x), hi[1] = fmaxf(hi[1], y);
        }
        const float *q = p + 2 * (i + 1 == k ? 0 : i + 1);
        if (x > far && x < w - far && y > far && y < h - far &&
            q[0] > far && q[0] < w - far && q[1] > far && q[1] < h - far)
            continue;
        float d[2] = {q[0] - x, q[1] - y}, s[2] = {x, y};
        for (int j = 0; j < 4; j++) {
            int axis = j >> 1;
            if (misses(s[axis], q[axis], bounds[j]))
                continue;
            float t = (bounds[j] - s[axis]) / d[axis];
            float at[2] = {s[0] + t * d[0], s[1] + t * d[1]};
            float other = at[1 - axis];
            if (t >= 0 && t <= 1 && other >= 0 && other <= lims[j]) {
                lo[0] = fminf(lo[0], at[0]), lo[1] = fminf(lo[1], at[1]);
                hi[0] = fmaxf(hi[0], at[0]), hi[1] = fmaxf(hi[1], at[1]);
            }
        }
    }
    box[0] = lo[0], box[1] = lo[1], box[2] = hi[0], box[3] = hi[1];
}

void jl_segment_boxes(const float *points, size_t n, size_t k, float w, float h, float *boxes,
                      uint8_t *kinds)
{
    for (size_t m = 0; m < n; m++) {
        const float *p = points + 2 * k * m;
        float *box = boxes + 4 * m;
        float e[4];
        extremes(p, k, e);
        float x0 = e[0], y0 = e[1], x1 = e[2], y1 = e[3];
        if (x0 >= 0 && y0 >= 0 && x1 <= w && y1 <= h) {
            box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
            kinds[m] = JL_POLYGON_INSIDE;
        } else if (x1 < 0 || y1 < 0 || x0 > w || y0 > h) {
            box[0] = box[1] = box[2] = box[3] = 0.0f;
            kinds[m] = JL_POLYGON_OUTSIDE;
        } else if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1))) {
            box[0] = box[1] = box[2] = box[3] = 0.0f;
            kinds[m] = JL_POLYGON_ODD;
        } else {
            crossing_box(p, k, w, h, box);
            kinds[m] = JL_POLYGON_CROSSING;
        }
    }
}

/* numpy's clip of float32: max(x, lo) then min(that, hi), each keeping a NaN x and
 * giving the bound where the comparison fails. */
static inline float clipped(float x, float lo, float hi)
{
    float a = isnan(x) ? x : x > lo ? x : lo;
    return isnan(a) ? a : a < hi ? a : hi;
}

#if defined(__SSE2__)
/* clipped() of four floats: the same selects, as masks (NaN compares unordered). */
static inline __m128 clipped4(__m128 x, __m128 lo, __m128 hi)
{
    __m128 keep = _mm_or_ps(_mm_cmpgt_ps(x, lo), _mm_cmpunord_ps(x, x));
    __m128 a = _mm_or_ps(_mm_and_ps(keep, x), _mm_andnot_ps(keep, lo));
    keep = _mm_or_ps(_mm_cmplt_ps(a, hi), _mm_cmpunord_ps(a, a));
    return _mm_or_ps(_mm_and_ps(keep, a), _mm_andnot_ps(keep, hi));
}
#endif

/* k points (x, y) held to lo and hi (each x's, then y's): two points a vector. */
static void held(float *p, size_t k, const float lo[2], const float hi[2])
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 low = _mm_setr_ps(lo[0], lo[1], lo[0], lo[1]);
    const __m128 high = _mm_setr_ps(hi[0], hi[1], hi[0], hi[1]);
    for (; i + 2 <= k; i += 2)
        _mm_storeu_ps(p + 2 * i, clipped4(_mm_loadu_ps(p + 2 * i), low, high));
#endif
    for (; i < k; i++) {
        p[2 * i] = clipped(p[2 * i], lo[0], hi[0]);
        p[2 * i + 1] = clipped(p[2 * i + 1], lo[1], hi[1]);
    }
}

void jl_points_clipped(float *points, size_t n, size_t k, const float *boxes)
{
    for (size_t m = 0; m < n; m++) {
        const float *box = boxes + 4 * m;
        held(points + 2 * k * m, k, box, box + 2);
    }
}

/* One polygon's points moved (jl_points_placed) into q; xs and ys step by ``step``. */
static void placed(const float *xs, const float *ys, size_t step, size_t k, const float move[4],
                   float *q)
{
    const float sx = move[0], sy = move[1], dx = move[2], dy = move[3];
    for (size_t i = 0; i < k; i++) {
        float x = xs[step * i] * sx, y = ys[step * i] * sy;
        q[2 * i] = x + dx;
        q[2 * i + 1] = y + dy;
    }
}

void jl_points_placed(const float *src, size_t n, size_t k, int planar, const float move[4],
                      float hi, float *dst)
{
    const float low[2] = {0.0f, 0.0f}, high[2] = {hi, hi};
    for (size_t m = 0; m < n; m++) {
        const float *p = src + 2 * k * m;
        float *q = dst + 2 * k * m;
        if (planar)
            placed(p, p + k, 1, k, move, q);
        else
            placed(p, p + 1, 2, k, move, q);
        held(q, k, low, high);
    }
}
