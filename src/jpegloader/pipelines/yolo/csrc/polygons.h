/* A sample's warped polygons: their points, their boxes as Ultralytics' segment2box
 * computes them in float32, and the points held to the boxes.  No Python here. */
#ifndef JL_YOLO_POLYGONS_H
#define JL_YOLO_POLYGONS_H

#include <stddef.h>
#include <stdint.h>

/* What jl_segment_boxes found of a polygon. */
enum {
    JL_POLYGON_INSIDE = 0,   /* box: its extremes */
    JL_POLYGON_OUTSIDE = 1,  /* box: zeros */
    JL_POLYGON_CROSSING = 2, /* box: what lies inside but the image corners it covers,
                              * +inf/-inf where nothing does (the caller adds corners) */
    JL_POLYGON_ODD = 3,      /* crossing with a NaN or infinite extreme: the caller's */
};

/* rows (count x 3): each point (x, y) of xy (count x 2) as (x, y, 1). */
void jl_rows_xy1(const float *xy, size_t count, float *rows);

/* xy (count x 2): each row (x, y, z) of rows (count x 3) as (x / z, y / z). */
void jl_rows_divided(const float *rows, size_t count, float *xy);

/* For each of n polygons of k points (points: n x k x 2) in a w x h image, its box
 * (boxes: n x 4, x0 y0 x1 y1) and what it is (kinds: n, the enum above). */
void jl_segment_boxes(const float *points, size_t n, size_t k, float w, float h, float *boxes,
                      uint8_t *kinds);

/* Each polygon's points held to its box (numpy's clip: NaN stays NaN, a NaN bound
 * gives NaN). */
void jl_points_clipped(float *points, size_t n, size_t k, const float *boxes);

/* dst (n x k x 2): each point of n polygons of k points moved as Mosaic moves a
 * photo's (x * move[0] + move[2], y * move[1] + move[3], every product and sum
 * rounded to float) and held to [0, hi] as numpy's clip does; src is n x k x 2, or
 * with planar n x 2 x k (each polygon's x's, then its y's). */
void jl_points_placed(const float *src, size_t n, size_t k, int planar, const float move[4],
                      float hi, float *dst);

#endif
