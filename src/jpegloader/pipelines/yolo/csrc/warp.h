/* OpenCV's warpAffine (INTER_LINEAR, BORDER_CONSTANT) on uint8 BGR images, bit for
 * bit (NOTE [ OpenCV's warpAffine ] in warp.c).  No Python here. */
#ifndef JL_YOLO_WARP_H
#define JL_YOLO_WARP_H

#include <stddef.h>
#include <stdint.h>

/* The inverse map OpenCV samples with: the forward 2x3 matrix m (row-major, as
 * cv2.warpAffine takes it) inverted in double, then rounded to float.  A singular
 * matrix gives zeros, as in OpenCV. */
void jl_warp_inverse(const double m[6], float inv[6]);

/* dst (dh x dw x 3, rows dst_stride bytes apart) = src (sh x sw x 3) sampled
 * through inv, border[3] outside. */
void jl_warp_affine_u8c3(const uint8_t *src, int sh, int sw, ptrdiff_t src_stride,
                         uint8_t *dst, int dh, int dw, ptrdiff_t dst_stride,
                         const float inv[6], const uint8_t border[3]);

#endif
