/* torchvision's colour adjustments of a uint8 tensor (RandomPhotometricDistort and
 * ColorJitter after PILToTensor / ToImage), reproduced on 8-bit RGB planes.
 *
 * On a tensor torchvision does not call Pillow: each adjustment is a chain of
 * float32 tensor ops, and v2's kernels (transforms.v2.functional) chain them
 * differently from v1's (transforms.functional on tensors).  Each function here
 * runs its chain op for op in float32: the same roundings, and a fused
 * multiply-add exactly where torch's add(self, other, alpha) fuses one (v2's
 * grayscale and blend), truncation to uint8 after the clamp.  So given the same
 * bytes the output is torch's, except that the contrast's mean is the exact mean
 * rounded once, where torch sums in an order that depends on its threads (a few
 * pixels one level off at most; tests/decoders/test_colour_tensor.py).
 */
#ifndef JL_COLOUR_TENSOR_H
#define JL_COLOUR_TENSOR_H

#include <stddef.h>
#include <stdint.h>

/* Which chain: torchvision v2's kernels or v1's functional tensor ops. */
enum { JL_TORCH_V2 = 0, JL_TORCH_V1 = 1 };

/* brightness: x * f, clamped, truncated (v1's blend with zeros is the same). */
void jl_tensor_brightness(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f);

/* contrast: blended with the mean of the grayscale image. */
void jl_tensor_contrast(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f, int chain);

/* saturation: blended with each pixel's grayscale. */
void jl_tensor_saturation(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float f, int chain);

/* hue: through HSV in float32 with ``hue`` added to H (in [-0.5, 0.5]). */
void jl_tensor_hue(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, float hue, int chain);

#endif
