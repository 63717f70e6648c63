/* Format's overlapped instance mask from its instances' downsampled windows (one
 * block of a shared canvas each): their areas, then each one's pixels written as its
 * rank.  No Python here. */
#ifndef JL_YOLO_OVERLAP_H
#define JL_YOLO_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

/* An instance's window: the height x width block of the canvas from (row, column),
 * landing at (y, x) of the mask. */
typedef struct {
    int32_t row, column, height, width, y, x;
} jl_mask_block;

/* areas[i]: the nonzero bytes of block i of canvas (rows of ``stride`` bytes). */
void jl_block_areas(const uint8_t *canvas, ptrdiff_t stride, const jl_mask_block *blocks,
                    size_t n, uint64_t *areas);

/* For r = 1 .. n, block order[r - 1]'s nonzero pixels written as r into mask (rows
 * of ``width`` items of ``item`` bytes, 1 or 4, native order): the later rank wins
 * where blocks overlap, as Ultralytics' loop over the sorted masks does. */
void jl_ranked_blocks(const uint8_t *canvas, ptrdiff_t stride, const jl_mask_block *blocks,
                      const int64_t *order, size_t n, void *mask, ptrdiff_t width, int item);

#endif
