/* OpenCV's cv::resize with INTER_LINEAR on 8-bit images, bit for bit (NOTE
 * [ OpenCV's INTER_LINEAR ] in cv_linear.c).  No Python here. */
#ifndef JL_CV_LINEAR_H
#define JL_CV_LINEAR_H

#include <stdint.h>

/* One axis of a resize from src to dst samples: each output's first source index
 * and its two 11-bit weights w0, w1 (the second source index is ofs + 1, or ofs at
 * the last sample, where w1 is 0).  `clamp` (the horizontal axis) pins outputs
 * beyond either edge to it, as OpenCV does for x; rows are clipped by the caller. */
void jl_cv_linear_axis(int src, int dst, int clamp, int32_t *ofs, int32_t *w0, int32_t *w1);

/* The horizontal pass on one plane's row: dst[x] = p[ofs[x]] * w0[x] + p[ofs[x] + 1] *
 * w1[x] for n outputs.  p must be readable 3 bytes past its last sample (the pass
 * reads 4 bytes at a time; what lies past the end meets a zero weight). */
void jl_cv_linear_row(const uint8_t *p, const int32_t *ofs, const int32_t *w0,
                      const int32_t *w1, int n, int32_t *dst);

/* The vertical pass: n outputs from two horizontal rows with weights b0, b1, with
 * OpenCV's vectorised rounding. */
void jl_cv_linear_column(const int32_t *s0, const int32_t *s1, int b0, int b1, int n,
                         uint8_t *dst);

#endif
