/* Fuzz driver for Pillow's affine warps in C (pipelines/classification/csrc/
 * pil_affine.c), built with AddressSanitizer + UndefinedBehaviorSanitizer by
 * test_fuzz_pil_affine.py:
 *   fuzz_pil_affine ITERATIONS SEED
 * Each iteration warps a random image (1 to 40 pixels a side) to a random size
 * through a random matrix (shears, rotations, whole-pixel shifts, scales, positions
 * far outside), bilinear or bicubic, with the AVX2 loop and with the one-pixel loop,
 * and checks that both give the same bytes.  The source ends against an unreadable
 * page and starts right after another, so a vector read past either end faults (the
 * sanitizer does not see inside a gather).  Prints "FAIL: ..." and exits 1 on a
 * breach. */
#define _DEFAULT_SOURCE 1  /* MAP_ANONYMOUS under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pil_affine.h"

#define MAXS 40

static double uniform(double lo, double hi) { return lo + (hi - lo) * (rand() / (double)RAND_MAX); }

/* A random matrix of one of the kinds RandAugment and RandomAffine make, or none. */
static void matrix(double a[6], int sw, int sh)
{
    int kind = rand() % 6;
    double c = uniform(-1.2, 1.2), s = uniform(-1.2, 1.2);
    a[0] = 1.0, a[1] = 0.0, a[2] = 0.0, a[3] = 0.0, a[4] = 1.0, a[5] = 0.0;
    if (kind == 0) {          /* a shear along x */
        a[1] = uniform(-0.6, 0.6);
    } else if (kind == 1) {   /* along y */
        a[3] = uniform(-0.6, 0.6);
    } else if (kind == 2) {   /* whole pixels */
        a[2] = (double)(rand() % (2 * MAXS + 1) - MAXS);
        a[5] = (double)(rand() % (2 * MAXS + 1) - MAXS);
    } else if (kind == 3) {   /* a rotation and a shift about the centre */
        a[0] = c, a[1] = s, a[3] = -s, a[4] = c;
        a[2] = uniform(-sw, 2.0 * sw), a[5] = uniform(-sh, 2.0 * sh);
    } else if (kind == 4) {   /* anything */
        for (int k = 0; k < 6; k++)
            a[k] = k == 2 || k == 5 ? uniform(-2.0 * MAXS, 2.0 * MAXS) : uniform(-2.0, 2.0);
    } else {                  /* far outside, or on the edges' half pixels */
        a[2] = rand() % 2 ? uniform(-1e6, 1e6) : (rand() % (2 * sw + 1) - sw) * 0.5;
        a[5] = rand() % 2 ? uniform(-1e6, 1e6) : (rand() % (2 * sh + 1) - sh) * 0.5;
    }
}

int main(int argc, char **argv)
{
    long iterations = driver_arguments(argc, argv);
    size_t room;
    uint8_t *sources = guarded_room(MAXS * MAXS * 3, &room);  /* flush at either end */
    uint8_t *vector = malloc(MAXS * MAXS * 3), *single = malloc(MAXS * MAXS * 3);
    long copies = 0, interpolated = 0;
    for (long it = 0; it < iterations; it++) {
        int sw = 1 + rand() % MAXS, sh = 1 + rand() % MAXS;
        int dw = 1 + rand() % MAXS, dh = 1 + rand() % MAXS;
        size_t n = (size_t)sw * sh * 3;
        uint8_t *src = rand() % 2 ? sources : sources + room - n;
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)rand();
        double a[6];
        matrix(a, sw, sh);
        int filter = rand() % 2 ? JL_PIL_BILINEAR : JL_PIL_BICUBIC;
        uint8_t fill[3] = {(uint8_t)rand(), (uint8_t)rand(), (uint8_t)rand()};
        jl_pil_affine_allow_avx2(1);
        jl_pil_affine(src, sw, sh, vector, dw, dh, a, filter, fill);
        jl_pil_affine_allow_avx2(0);
        jl_pil_affine(src, sw, sh, single, dw, dh, a, filter, fill);
        if (memcmp(vector, single, (size_t)dw * dh * 3))
            fail("the AVX2 and one-pixel loops differ", it);
        if (a[0] == 1.0 && a[1] == 0.0 && a[3] == 0.0 && a[4] == 1.0 && a[2] == (long)a[2] &&
            a[5] == (long)a[5])
            copies++;
        else
            interpolated++;
    }
    printf("{\"inputs\": %ld, \"copies\": %ld, \"interpolated\": %ld}\n", iterations, copies,
           interpolated);
    free(vector);
    free(single);
    return 0;
}
