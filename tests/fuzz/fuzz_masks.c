/* Fuzz driver for the COCO mask painting (pipelines/detection/csrc/masks.c), built
 * with AddressSanitizer + UndefinedBehaviorSanitizer by test_fuzz_masks.py:
 *   fuzz_masks ITERATIONS SEED
 * Each iteration paints random counts strings (mostly valid characters, some not)
 * at random sizes, flipped or not and through random index maps, and checks the
 * contract: on success every pixel is 0 or 1, the flip mirrors the plain result,
 * and the mapped result gathers it.  Prints "FAIL: ..." and exits 1 on a breach. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "masks.h"

#define MAXS 12

/* The annotation format's compressed counts of runs cnts[0..m) into s (room for
 * 8 characters a count); returns the length. */
static size_t encode(const int64_t *cnts, int m, char *s)
{
    size_t p = 0;
    for (int i = 0; i < m; i++) {
        int64_t x = cnts[i] - (i > 2 ? cnts[i - 2] : 0);
        int more = 1;
        while (more) {
            int c = (int)(x & 0x1f);
            x >>= 5;
            more = (c & 0x10) ? x != -1 : x != 0;
            if (more)
                c |= 0x20;
            s[p++] = (char)(c + 48);
        }
    }
    return p;
}

static void fail(const char *what, long it)
{
    printf("FAIL: %s at iteration %ld\n", what, it);
    exit(1);
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    unsigned seed = argc > 2 ? (unsigned)atol(argv[2]) : 1;
    uint8_t *plain = malloc(MAXS * MAXS), *flipped = malloc(MAXS * MAXS);
    uint8_t *mapped = malloc(MAXS * MAXS), *scratch = malloc(MAXS * MAXS);
    int64_t rows[MAXS], cols[MAXS];
    long ok = 0;
    srand(seed);
    for (long it = 0; it < iterations; it++) {
        char s[8 * MAXS * MAXS + 8];
        size_t len;
        int64_t h = rand() % MAXS, w = rand() % MAXS;
        if (rand() % 2) {  /* valid counts of random runs over the h x w mask */
            int64_t cnts[MAXS * MAXS + 1], left = h * w;
            int m = 0;
            while (left > 0 || m == 0) {
                cnts[m] = m % 2 == 0 && rand() % 3 == 0 ? 0 : rand() % (left + 1);
                left -= cnts[m++];
                if (left > 0 && m == MAXS * MAXS) {
                    cnts[m - 1] += left;
                    left = 0;
                }
            }
            len = encode(cnts, m, s);
            if (rand() % 8 == 0 && len)  /* and sometimes one character off */
                s[rand() % len] = (char)(48 + rand() % 64);
        } else {
            len = (size_t)(rand() % 48);
            for (size_t i = 0; i < len; i++)
                s[i] = (char)(rand() % 4 ? 48 + rand() % 64 : rand() % 256);
        }
        int a = jl_paint_rle(s, len, h, w, 0, plain);
        int b = jl_paint_rle(s, len, h, w, 1, flipped);
        if (a != b)
            fail("flip changed the outcome", it);
        if (a)
            continue;
        ok++;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                if (plain[y * w + x] > 1)
                    fail("a pixel neither 0 nor 1", it);
                if (flipped[y * w + x] != plain[y * w + (w - 1 - x)])
                    fail("flip is not the mirror", it);
            }
        if (!h || !w)
            continue;
        int64_t nh = 1 + rand() % MAXS, nw = 1 + rand() % MAXS;
        for (int64_t i = 0; i < nh; i++)  /* -1: padding */
            rows[i] = rand() % 8 ? rand() % h : -1;
        for (int64_t j = 0; j < nw; j++)
            cols[j] = rand() % 8 ? rand() % w : -1;
        if (jl_paint_rle_mapped(s, len, h, w, rows, nh, cols, nw, scratch, mapped))
            fail("mapped refused what plain took", it);
        for (int64_t i = 0; i < nh; i++)
            for (int64_t j = 0; j < nw; j++)
                if (mapped[i * nw + j] !=
                    (rows[i] < 0 || cols[j] < 0 ? 0 : plain[rows[i] * w + cols[j]]))
                    fail("mapped is not the gather", it);
    }
    printf("{\"inputs\": %ld, \"painted\": %ld}\n", iterations, ok);
    free(plain);
    free(flipped);
    free(mapped);
    free(scratch);
    return 0;
}
