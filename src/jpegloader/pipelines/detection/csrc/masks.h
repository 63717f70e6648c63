/* COCO instance masks in C: a run-length encoded mask (the annotation format's
 * compressed counts, as pycocotools writes them) painted into a row-major
 * uint8 plane, mirrored left to right on request.  No Python here. */
#ifndef JL_MASKS_H
#define JL_MASKS_H

#include <stddef.h>
#include <stdint.h>

/* Paints the mask whose compressed counts are s[0..len) (column-major runs,
 * zeros first, each count in 6-bit characters from '0', after the third a
 * difference from the count two before) into out, an h x w plane, row-major:
 * 1 inside, 0 outside; with flip, column x goes to w - 1 - x.  Returns 0, or
 * -1 when the counts are malformed or do not cover exactly h * w pixels (out
 * is then undefined). */
int jl_paint_rle(const char *s, size_t len, int64_t h, int64_t w, int flip, uint8_t *out);

#endif
