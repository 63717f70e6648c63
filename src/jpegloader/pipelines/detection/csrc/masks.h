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

/* The same mask sampled by index maps: out is an nh x nw plane, row-major, with
 * out[i][j] = mask[rows[i]][cols[j]], or 0 where either index is -1 (padding;
 * every index in -1..h-1 or -1..w-1: the caller checks); scratch holds h * w
 * bytes.  A nearest-neighbour resize, crops, paddings and flips, composed into
 * the maps.  Returns as jl_paint_rle. */
int jl_paint_rle_mapped(const char *s, size_t len, int64_t h, int64_t w, const int64_t *rows,
                        int64_t nh, const int64_t *cols, int64_t nw, uint8_t *scratch,
                        uint8_t *out);

#endif
