/* torchvision's ColorJitter and RandomGrayscale on PIL images, reproduced on
 * 8-bit RGB planes.
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
#ifndef JL_COLOUR_H
#define JL_COLOUR_H

#include <stddef.h>
#include <stdint.h>

/* One colour step.  ColorJitter is up to four steps in its drawn order;
 * RandomGrayscale (Pillow's "L" conversion, replicated to three channels)
 * is one. */
enum { JL_COLOUR_NONE = -1, JL_COLOUR_BRIGHTNESS = 0, JL_COLOUR_CONTRAST = 1,
       JL_COLOUR_SATURATION = 2, JL_COLOUR_HUE = 3, JL_COLOUR_GRAYSCALE = 4,
       JL_COLOUR_BLUR = 5, JL_COLOUR_PERMUTE = 6 };

/* The same four adjustments with torchvision's arithmetic on a uint8 tensor
 * (colour_tensor.h): op = JL_COLOUR_TORCH_V2 or JL_COLOUR_TORCH_V1 plus
 * JL_COLOUR_BRIGHTNESS ... JL_COLOUR_HUE; a hue step's value is then the hue
 * factor itself, in [-0.5, 0.5]. */
enum { JL_COLOUR_TORCH_V2 = 8, JL_COLOUR_TORCH_V1 = 12, JL_COLOUR_LAST = 15 };

/* The largest Gaussian kernel side a blur step takes. */
#define JL_BLUR_MAX_KERNEL 255

#define JL_COLOUR_STEPS 8

/* A sample's colour program: steps run in order (NONE entries are skipped).
 * value[k] is the blend factor of a brightness/contrast/saturation step, for
 * a hue step the byte added to H (torchvision: uint8(int32(hue * 255))),
 * held as an exact integer in a float, or a blur step's sigma.  arg[k] is a
 * blur step's kernel size, width | height << 16 (odd sides), for a permute
 * step the channels it takes, p0 | p1 << 2 | p2 << 4 (output channel i is
 * input channel pi: torchvision's permute_channels), else 0. */
typedef struct {
    int32_t op[JL_COLOUR_STEPS];
    float value[JL_COLOUR_STEPS];
    int32_t arg[JL_COLOUR_STEPS];
} jl_colour;

/* 1 when every step is a known op with a valid value. */
int jl_colour_is_valid(const jl_colour *c);

/* 1 when every blur step's kernel fits an image of h x w (torchvision's
 * reflection padding needs half the kernel to be less than the side). */
int jl_colour_fits(const jl_colour *c, int h, int w);

/* 1 when the program does anything. */
int jl_colour_is_active(const jl_colour *c);

/* Bytes of scratch jl_colour_apply needs for an h x w image (0 without a blur). */
size_t jl_colour_scratch_size(const jl_colour *c, int h, int w);

/* Applies the program in place to an h x w image held as three planes, with
 * jl_colour_scratch_size bytes of 8-byte-aligned scratch. */
void jl_colour_apply(uint8_t *r, uint8_t *g, uint8_t *b, int h, int w, const jl_colour *c,
                     void *scratch);

/* Runs all 2^24 RGB values through the table-driven hue step and the
 * per-pixel reference; returns how many differ (0).  For tests. */
int jl_colour_hue_selfcheck(int shift);

#endif
