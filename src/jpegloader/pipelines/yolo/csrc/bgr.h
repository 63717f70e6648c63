/* OpenCV's BGR rows to and from RGB planes, the layouts either side of YOLO's
 * training transforms.  No Python here. */
#ifndef JL_YOLO_BGR_H
#define JL_YOLO_BGR_H

#include <stddef.h>
#include <stdint.h>

/* planes (R, G, B: 3 x h x w) -> bgr (h x w x 3): what cv2.imread gives. */
void jl_planes_to_bgr(const uint8_t *planes, int h, int w, uint8_t *bgr);

/* bgr (h x w x 3), read mirrored top to bottom (flip_y) and left to right
 * (flip_x) -> planes (3 x h x w): B, G, R, or R, G, B with reverse: Format's
 * image, its flips by RandomFlip. */
void jl_bgr_to_planes(const uint8_t *bgr, int h, int w, int flip_y, int flip_x, int reverse,
                      uint8_t *planes);

#endif
