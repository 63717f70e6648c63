/* Moving 8-bit pixels between layouts (layout.c).  No Python here. */
#ifndef JL_LAYOUT_H
#define JL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* Three planes [rows][cols], plane_size bytes apart, to interleaved RGB rows,
 * mirrored when flip is set (the inverse of jl_split_rgb). */
void jl_planes_interleave(const uint8_t *planes, size_t plane_size, int rows, int cols,
                          int flip, uint8_t *dst);

/* Splits interleaved RGB rows into three planes [rows][cols], planes
 * plane_size bytes apart. */
void jl_split_rgb(const uint8_t *src, size_t src_stride, int rows, int cols,
                  uint8_t *planes, size_t plane_size);

/* Row strides rounded up to 32 bytes: 16-byte blocks stored at a stride like
 * 333 straddle cache lines, measured 15-25% slower to split and transpose. */
static inline size_t jl_padded(int n)
{
    return ((size_t)n + 31) & ~(size_t)31;
}

/* Splits interleaved RGB rows into three planes, transposed:
 * planes[ch][x * plane_stride + y] = src[y][x*3 + ch], planes ch apart by
 * plane_size bytes.  strip is scratch for 48 * jl_padded(cols) bytes. */
void jl_split_transpose_rgb(const uint8_t *src, size_t src_stride, int rows,
                            int cols, uint8_t *planes, size_t plane_stride,
                            size_t plane_size, uint8_t *strip);

/* dst[x * dst_stride + y] = src[y * src_stride + x] for a rows x cols block. */
void jl_transpose_u8(const uint8_t *src, size_t src_stride, int rows, int cols,
                     uint8_t *dst, size_t dst_stride);

#endif
