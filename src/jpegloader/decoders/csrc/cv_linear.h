/* OpenCV's cv::resize with INTER_LINEAR on 8-bit images, bit for bit (NOTE
 * [ OpenCV's INTER_LINEAR ] in cv_linear.c).  No Python here. */
#ifndef JL_CV_LINEAR_H
#define JL_CV_LINEAR_H

#include <stdint.h>

/* One axis of a resize from src to dst samples: each output's first source index
 * and its two 11-bit weights (the second source index is min(ofs + 1, src - 1)).
 * `clamp` (the horizontal axis) pins outputs beyond either edge to it, as OpenCV
 * does for x; rows are clipped by the caller instead. */
void jl_cv_linear_axis(int src, int dst, int clamp, int32_t *ofs, int16_t *coef);

/* The horizontal pass of one interleaved row of `cn` channels: dst[x * cn + c] =
 * src[ofs[x] * cn + c] * coef[2x] + src[min(ofs[x] + 1, src_w - 1) * cn + c] *
 * coef[2x + 1], for dst_w outputs. */
void jl_cv_linear_row(const uint8_t *src, int src_w, int cn, const int32_t *ofs,
                      const int16_t *coef, int dst_w, int32_t *dst);

/* The vertical pass: n outputs from two horizontal rows with weights b0, b1, with
 * OpenCV's vectorised rounding. */
void jl_cv_linear_column(const int32_t *s0, const int32_t *s1, int b0, int b1, int n,
                         uint8_t *dst);

#endif
