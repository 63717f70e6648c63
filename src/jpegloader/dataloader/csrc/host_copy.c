/* NOTE [ Pinned copies bypass the caches ]
 * A pinned batch is written once here and next read by the device's DMA, never by
 * this core: a plain copy first reads every destination line into the cache (to
 * own it) and later writes it back, three passes over memory where two do.  With
 * streaming stores (SSE2, in every x86-64 CPU) the copy of a slot's float32
 * images ran 1.3-1.4x faster than memcpy on the reference machine (docs/
 * performance.md); the bytes are the same.  Elsewhere it is memcpy. */
#include "host_copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>

void jl_stream_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (n < 256) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);  /* the destination aligned to 16 bytes from here */
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    _mm_sfence();  /* the streamed stores ordered before whatever reads them next */
    memcpy(d, s, n);
}
#else
void jl_stream_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif
