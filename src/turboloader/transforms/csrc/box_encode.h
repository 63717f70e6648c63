/* The SSD reference's Encoder.encode for one image, in C: the same float32
 * operations in the same order as transforms/boxes.py's torch version, so
 * the results are bit-identical (and ~10x faster than the ~15 small torch
 * calls per image).  No Python here. */
#ifndef TL_BOX_ENCODE_H
#define TL_BOX_ENCODE_H

#include <stdint.h>

/* boxes: float32[n][4] ground truth (ltrb), labels: int64[n]; dboxes:
 * float32[m][4] default boxes (ltrb).  Writes out_xywh float32[m][4]
 * (centre x, centre y, w, h) and out_labels int64[m] (0: background).
 * Returns 0, or -1 when n < 1 or out of memory (outputs untouched). */
int tl_encode_boxes(const float *boxes, const int64_t *labels, int n, const float *dboxes,
                    int m, float criteria, float *out_xywh, int64_t *out_labels);

#endif
