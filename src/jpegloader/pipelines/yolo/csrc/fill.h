/* OpenCV's fillPoly (8-connected outline, no fractional bits) of a sample's
 * polygons, each into its own window of one canvas.  No Python here. */
#ifndef JL_YOLO_FILL_H
#define JL_YOLO_FILL_H

#include <stddef.h>
#include <stdint.h>

/* One polygon's window: its points moved by (-x0, -y0) fill a width x height
 * canvas, the block of the shared canvas from row ``row``, column ``column``. */
typedef struct {
    int32_t x0, y0, width, height, row, column;
} jl_fill_window;

/* cv2.fillPoly(window, [polygon], value, offset=(-x0, -y0)) for each of n polygons
 * of k int32 points (points: n x k x 2) into its window of canvas (rows of
 * ``stride`` bytes), lines and edges cut to the window as OpenCV 4.12 to 5.1 cut
 * them.  The caller keeps every point within 2^20 of its window's corner, where
 * OpenCV's double divisions and these integer ones agree.  Returns 0, or -1 when
 * out of memory. */
int jl_fill_polygons(const int32_t *points, size_t n, size_t k, const jl_fill_window *windows,
                     uint8_t *canvas, ptrdiff_t stride, uint8_t value);

#endif
