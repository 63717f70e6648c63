/* Pillow's ImageEnhance and the look-up tables ImageOps applies, for RGB
 * images, reproduced to the bit: see pil_enhance.c. */
#ifndef JL_PIL_ENHANCE_H
#define JL_PIL_ENHANCE_H

#include <stddef.h>
#include <stdint.h>

/* The enhancements, by their ImageEnhance class */
enum { JL_PIL_BRIGHTNESS = 0, JL_PIL_COLOUR = 1, JL_PIL_CONTRAST = 2, JL_PIL_SHARPNESS = 3 };

/* ImageEnhance.<kind>(image).enhance(factor): src and dst h x w x 3 bytes, apart;
 * factor finite.  0, or -1 when a row's buffer cannot be had. */
int jl_pil_enhance(const uint8_t *src, int w, int h, uint8_t *dst, int kind, float factor);

/* Whether the AVX2 loops may run (the default; the tests turn it off to hold the
 * plain loops to Pillow too); returns the previous setting. */
int jl_pil_enhance_allow_avx2(int allow);

/* Image.histogram() of an RGB image of `pixels` pixels: counts per channel. */
void jl_pil_histograms(const uint8_t *src, size_t pixels, int64_t counts[3][256]);

/* Image.point(luts) of an RGB image: each channel through its table (dst may be src). */
void jl_pil_apply_luts(const uint8_t *src, size_t pixels, uint8_t *dst,
                       const uint8_t luts[3][256]);

#endif
