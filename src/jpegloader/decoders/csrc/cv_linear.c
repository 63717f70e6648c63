/* OpenCV's INTER_LINEAR resize for 8-bit images. */
#include "cv_linear.h"

#include <math.h>
#include <stddef.h>

/* NOTE [ OpenCV's INTER_LINEAR ]
 * cv::resize maps output d to the source at f = (float)((d + 0.5) * scale - 0.5)
 * (scale = 1 / (dst / src), in double), takes floor(f) and the fraction, and
 * rounds the weights 1 - f and f, times 2048, to 16-bit integers, half to
 * even.  The horizontal pass keeps 2048-scaled integer sums; the vertical pass
 * computes, for every output byte as its vector loops do, ((s0 >> 4) * b0 >> 16) +
 * ((s1 >> 4) * b1 >> 16), then adds 2 and shifts right by 2.  Held to the
 * installed cv2 as the oracle on real photos at random sizes, up and down. */
void jl_cv_linear_axis(int src, int dst, int clamp, int32_t *ofs, int16_t *coef)
{
    double scale = 1.0 / ((double)dst / src);
    int d;
    for (d = 0; d < dst; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (clamp && s < 0) {
            f = 0.f;
            s = 0;
        }
        if (clamp && s >= src - 1) {
            f = 0.f;
            s = src - 1;
        }
        ofs[d] = s;
        coef[2 * d] = (int16_t)lrintf((1.f - f) * 2048.f);
        coef[2 * d + 1] = (int16_t)lrintf(f * 2048.f);
    }
}

void jl_cv_linear_row(const uint8_t *src, int src_w, int cn, const int32_t *ofs,
                      const int16_t *coef, int dst_w, int32_t *dst)
{
    int x, c;
    for (x = 0; x < dst_w; x++) {
        const uint8_t *a = src + (size_t)ofs[x] * cn;
        const uint8_t *b = src + (size_t)(ofs[x] + 1 < src_w ? ofs[x] + 1 : src_w - 1) * cn;
        int w0 = coef[2 * x], w1 = coef[2 * x + 1];
        for (c = 0; c < cn; c++)
            dst[x * cn + c] = a[c] * w0 + b[c] * w1;
    }
}

void jl_cv_linear_column(const int32_t *s0, const int32_t *s1, int b0, int b1, int n,
                         uint8_t *dst)
{
    int x;
    for (x = 0; x < n; x++) {
        int v = ((((s0[x] >> 4) * b0) >> 16) + (((s1[x] >> 4) * b1) >> 16) + 2) >> 2;
        dst[x] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
    }
}
