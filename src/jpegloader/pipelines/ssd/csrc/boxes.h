/* The SSD reference's box arithmetic for one image in C (crop_boxes and
 * Encoder.encode): the same float32 operations in the same order as
 * pipelines/ssd/boxes.py's torch versions, so the results are bit-identical,
 * without the ~15 small torch calls per image.  No Python here. */
#ifndef JL_BOXES_H
#define JL_BOXES_H

#include <stdint.h>

/* boxes: float32[n][4] ground truth (ltrb), labels: int64[n]; dboxes:
 * float32[m][4] default boxes (ltrb).  Writes out_xywh float32[m][4]
 * (centre x, centre y, w, h) and out_labels int64[m] (0: background).
 * Returns 0, or -1 when n < 1 or out of memory (outputs untouched). */
int jl_encode_boxes(const float *boxes, const int64_t *labels, int n, const float *dboxes,
                    int m, float criteria, float *out_xywh, int64_t *out_labels);

/* crop_boxes: the boxes (float32[n][4] ltrb) whose centre lies strictly
 * inside the window (left, top, left + w, top + h), clamped to it and
 * renormalised by w and h, in input order into out (float32[n][4]); their
 * input indices into kept (int64[n]).  Returns how many.  As torch does with
 * a Python float, each bound is rounded to float32 before it is used. */
int jl_crop_boxes(const float *boxes, int n, double left, double top, double w, double h,
                  float *out, int64_t *kept);

#endif
