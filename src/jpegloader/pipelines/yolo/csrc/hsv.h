/* OpenCV's BGR -> HSV -> BGR round trip on uint8 images with a lookup table in HSV
 * between (cv2.cvtColor, cv2.LUT), bit for bit (NOTE [ OpenCV's HSV ] in hsv.c).
 * No Python here. */
#ifndef JL_YOLO_HSV_H
#define JL_YOLO_HSV_H

#include <stddef.h>
#include <stdint.h>

/* Each BGR pixel of img, rows x width pixels (in place): converted to HSV (hue
 * 0..179), each channel c mapped through lut[256][3] (lut[value * 3 + c]), and
 * back, row by row as OpenCV converts with a vector loop of ``block`` pixels a
 * pass (a multiple of 16: 32 or 64, by OpenCV's build and the processor). */
void jl_hsv_lut_u8c3(uint8_t *img, size_t rows, size_t width, const uint8_t *lut,
                     size_t block);

#endif
