/* OpenCV's BGR rows to and from RGB planes, the layouts either side of YOLO's
 * training transforms.  No Python here. */
#ifndef JL_YOLO_BGR_H
#define JL_YOLO_BGR_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "simd.h"

/* planes (R, G, B: 3 x h x w) -> bgr (h x w x 3): what cv2.imread gives. */
void jl_planes_to_bgr(const uint8_t *planes, int h, int w, uint8_t *bgr);

/* bgr (h x w x 3), read mirrored top to bottom (flip_y) and left to right
 * (flip_x) -> planes (3 x h x w): B, G, R, or R, G, B with reverse: Format's
 * image, its flips by RandomFlip. */
void jl_bgr_to_planes(const uint8_t *bgr, int h, int w, int flip_y, int flip_x, int reverse,
                      uint8_t *planes);

/* Eight pixels held as (b, g, r, 0) words, in lane order, as the 24 bytes of their BGR
 * row: the first 16 in *first, the last 8 in the low half of *last (stored with
 * _mm_storeu_si128 and _mm_storel_epi64, nothing past the 24 is written). */
__attribute__((target("avx2"))) static inline void jl_pack8_bgr(__m256i words, __m128i *first,
                                                               __m128i *last)
{
    /* each lane's four words to twelve bytes at the lane's start */
    const __m256i pack3 = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                           0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    __m256i packed = _mm256_shuffle_epi8(words, pack3);
    __m128i lo = _mm256_castsi256_si128(packed), hi = _mm256_extracti128_si256(packed, 1);
    *first = _mm_or_si128(lo, _mm_slli_si128(hi, 12));
    *last = _mm_srli_si128(hi, 4);
}

/* Sixteen pixels held as (b, g, r, 0) words, in lane order, as the 48 bytes of their
 * BGR row in the result's low 48 bytes (jl_store48_bgr writes them). */
JL_AVX512 static inline __m512i jl_pack16_bgr(__m512i words)
{
    /* each 128-bit lane's four words to twelve bytes, then the lanes' runs side by side */
    const __m512i pack3 = _mm512_broadcast_i32x4(
                      _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1)),
                  runs = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 15, 15, 15);
    return _mm512_permutexvar_epi32(runs, _mm512_shuffle_epi8(words, pack3));
}

/* jl_pack16_bgr's 48 bytes to dst: one 32- and one 16-byte store (AMD's masked
 * AVX-512 stores are slow). */
JL_AVX512 static inline void jl_store48_bgr(uint8_t *dst, __m512i bytes)
{
    _mm256_storeu_si256((__m256i *)dst, _mm512_castsi512_si256(bytes));
    _mm_storeu_si128((__m128i *)(dst + 32), _mm512_extracti32x4_epi32(bytes, 2));
}

#endif
