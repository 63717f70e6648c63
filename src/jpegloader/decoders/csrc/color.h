/* torchvision's ColorJitter on PIL images, reproduced on 8-bit RGB planes.
 *
 * torchvision's PIL path runs Pillow's ImageEnhance (brightness, contrast,
 * saturation: Image.blend of the image with a "degenerate" image) and, for
 * hue, a round trip through Pillow's HSV conversion with the H byte shifted
 * (wrapping).  Each step here keeps Pillow's arithmetic types and rounding:
 * blend in float with truncation (clipped when extrapolating), luma as
 * (R*19595 + G*38470 + B*7471 + 0x8000) >> 16, the contrast mean rounded as
 * int(mean + 0.5), HSV with Pillow's float/double mix.  So given the same
 * input bytes the output is bit-exact.  No Python here.
 */
#ifndef TL_COLOR_H
#define TL_COLOR_H

#include <stddef.h>
#include <stdint.h>

enum { TL_JITTER_BRIGHTNESS = 0, TL_JITTER_CONTRAST = 1, TL_JITTER_SATURATION = 2,
       TL_JITTER_HUE = 3, TL_JITTER_NONE = -1 };

/* One sample's jitter: ops run in `order` (entries TL_JITTER_*; NONE entries
 * are skipped); factor[op] for the three blends; hue_shift is the byte added
 * to H (torchvision: uint8(int32(hue_factor * 255))). */
typedef struct {
    int32_t order[4];
    float factor[3];
    int32_t hue_shift;
} tl_jitter;

/* Applies the jitter in place to n pixels held as three planes. */
void tl_color_jitter(uint8_t *r, uint8_t *g, uint8_t *b, size_t n, const tl_jitter *j);

/* Runs all 2^24 RGB values through the table-driven hue step and the
 * per-pixel reference; returns how many differ (0).  For tests. */
int tl_color_hue_selfcheck(int shift);

#endif
