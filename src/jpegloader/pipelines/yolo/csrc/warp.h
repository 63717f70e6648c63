/* OpenCV's warpAffine (INTER_LINEAR, BORDER_CONSTANT) on uint8 BGR images, bit for
 * bit (NOTE [ OpenCV's warpAffine ] in warp.c).  No Python here. */
#ifndef JL_YOLO_WARP_H
#define JL_YOLO_WARP_H

#include <stddef.h>
#include <stdint.h>

/* Which OpenCV's arithmetic a warp reproduces (NOTE [ OpenCV's warpAffine ] in
 * warp.c): OpenCV 5.0's float sampling, or the 4.x releases' fixed-point one. */
typedef enum { JL_WARP_FLOAT = 0, JL_WARP_FIXED = 1 } jl_warp_arithmetic;

/* The inverse map OpenCV samples with: the forward 2x3 matrix m (row-major, as
 * cv2.warpAffine takes it) inverted in double.  A singular matrix gives zeros, as
 * in OpenCV. */
void jl_warp_inverse(const double m[6], double inv[6]);

/* A rectangle of an image placed on a larger one: canvas pixels [x0, x1) x [y0, y1)
 * are src's, src pointing at the one placed at (x0, y0); ``rows``: the rows of the
 * image from src's to the end of its buffer (reads stay within them). */
typedef struct {
    const uint8_t *src;
    ptrdiff_t stride;
    int x0, y0, x1, y1;
    int rows;
} jl_warp_tile;

/* dst (dh x dw x 3, rows dst_stride bytes apart) = src (sh x sw x 3) sampled
 * through inv, border[3] outside, with ``arithmetic``'s rounding.  0, or -1 where
 * memory for the fixed-point steps could not be had (dst then unwritten). */
int jl_warp_affine_u8c3(const uint8_t *src, int sh, int sw, ptrdiff_t src_stride,
                         uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride,
                         const double inv[6], const uint8_t border[3],
                         jl_warp_arithmetic arithmetic);

/* The same warp of a canvas that is never built: the tiles (disjoint) over a plane of
 * fill[3], which is also the border: a Mosaic's photos on its canvas of 114, warped by
 * RandomPerspective with a border of 114, bit for bit as warping the built canvas. */
int jl_warp_tiles_u8c3(const jl_warp_tile *tiles, int count, uint8_t *dst, int dh, int dw,
                        ptrdiff_t dst_stride, const double inv[6], const uint8_t fill[3],
                        jl_warp_arithmetic arithmetic);

#endif
