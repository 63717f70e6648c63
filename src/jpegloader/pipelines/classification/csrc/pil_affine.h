/* Pillow's bilinear and bicubic affine transforms of an RGB image
 * (Image.transform with Transform.AFFINE), reproduced to the bit: see
 * pil_affine.c. */
#ifndef JL_PIL_AFFINE_H
#define JL_PIL_AFFINE_H

#include <stdint.h>

/* Pillow's Resampling numbers */
enum { JL_PIL_BILINEAR = 2, JL_PIL_BICUBIC = 3 };

/* src: sh x sw x 3 bytes; dst: dh x dw x 3 bytes, painted with `fill` (RGB)
 * wherever the transform maps outside src (Pillow's fillcolor, or 0).
 * a: the six coefficients mapping an output pixel to its input position,
 * as Pillow takes them; filter: JL_PIL_BILINEAR or JL_PIL_BICUBIC. */
void jl_pil_affine(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                   const double a[6], int filter, const uint8_t fill[3]);

/* Whether the four-pixel AVX2 loop may run (the default; the tests turn it off
 * to hold the scalar loop to Pillow too); returns the previous setting. */
int jl_pil_affine_allow_avx2(int allow);

#endif
