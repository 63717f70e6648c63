/* Fuzz driver for Pillow's enhancements in C (pipelines/classification/csrc/
 * pil_enhance.c), built with AddressSanitizer + UndefinedBehaviorSanitizer by
 * test_fuzz_pil_enhance.py:
 *   fuzz_pil_enhance ITERATIONS SEED
 * Each iteration enhances a random image (1 to 40 pixels a side) by a random kind
 * and factor (inside [0, 1], past either end, far past), with the AVX2 loops and the
 * plain ones, and checks that both give the same bytes and that the outermost
 * pixels of a sharpness stay as they were.  The source ends against an unreadable
 * page or starts right after one, and so does the output, so a vector access past
 * either end faults.  Prints "FAIL: ..." and exits 1 on a breach. */
#define _DEFAULT_SOURCE 1  /* MAP_ANONYMOUS under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pil_enhance.h"

#define MAXS 40

static float factor(void)
{
    float u = rand() / (float)RAND_MAX;
    switch (rand() % 4) {
    case 0: return u;                    /* a blend */
    case 1: return 1.0f + u;             /* past the image */
    case 2: return -u;                   /* past the degenerate */
    default: return (u - 0.5f) * 1e6f;   /* far past either */
    }
}

int main(int argc, char **argv)
{
    long iterations = driver_arguments(argc, argv);
    size_t room;
    uint8_t *src_room = guarded_room(MAXS * MAXS * 3, &room);
    uint8_t *dst_room = guarded_room(MAXS * MAXS * 3, &room);
    uint8_t *plain = malloc(MAXS * MAXS * 3);
    long smoothed = 0;
    for (long it = 0; it < iterations; it++) {
        int w = 1 + rand() % MAXS, h = 1 + rand() % MAXS, kind = rand() % 4;
        size_t n = (size_t)w * h * 3, stride = (size_t)w * 3;
        uint8_t *src = rand() % 2 ? src_room : src_room + room - n;
        uint8_t *dst = rand() % 2 ? dst_room : dst_room + room - n;
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)rand();
        float f = factor();
        jl_pil_enhance_allow_avx2(1);
        if (jl_pil_enhance(src, w, h, dst, kind, f))
            fail("no buffer", it);
        jl_pil_enhance_allow_avx2(0);
        if (jl_pil_enhance(src, w, h, plain, kind, f))
            fail("no buffer", it);
        if (memcmp(dst, plain, n))
            fail("the AVX2 and plain loops differ", it);
        if (kind == JL_PIL_SHARPNESS) {
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    if ((y == 0 || y == h - 1 || x == 0 || x == w - 1) &&
                        memcmp(dst + y * stride + 3 * x, src + y * stride + 3 * x, 3))
                        fail("a sharpness moved an outermost pixel", it);
            smoothed += w > 2 && h > 2;
        }
    }
    printf("{\"inputs\": %ld, \"smoothed\": %ld}\n", iterations, smoothed);
    free(plain);
    return 0;
}
