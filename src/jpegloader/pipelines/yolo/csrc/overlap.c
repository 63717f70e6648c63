/* Format's overlapped mask: see overlap.h. */
#include "overlap.h"

#include <string.h>

void jl_block_areas(const uint8_t *canvas, ptrdiff_t stride, const jl_mask_block *blocks,
                    size_t n, uint64_t *areas)
{
    for (size_t i = 0; i < n; i++) {
        const jl_mask_block *b = &blocks[i];
        uint64_t count = 0;
        for (int32_t r = 0; r < b->height; r++) {
            const uint8_t *row = canvas + (b->row + r) * stride + b->column;
            for (int32_t c = 0; c < b->width; c++)
                count += row[c] != 0;
        }
        areas[i] = count;
    }
}

void jl_ranked_blocks(const uint8_t *canvas, ptrdiff_t stride, const jl_mask_block *blocks,
                      const int64_t *order, size_t n, void *mask, ptrdiff_t width, int item)
{
    for (size_t r = 0; r < n; r++) {
        const jl_mask_block *b = &blocks[order[r]];
        for (int32_t y = 0; y < b->height; y++) {
            const uint8_t *from = canvas + (b->row + y) * stride + b->column;
            ptrdiff_t at = (b->y + y) * width + b->x;
            if (item == 1) {
                uint8_t *to = (uint8_t *)mask + at, rank = (uint8_t)(r + 1);
                for (int32_t c = 0; c < b->width; c++)
                    to[c] = from[c] ? rank : to[c];
            } else {
                int32_t *to = (int32_t *)mask + at, rank = (int32_t)(r + 1);
                for (int32_t c = 0; c < b->width; c++)
                    to[c] = from[c] ? rank : to[c];
            }
        }
    }
}
