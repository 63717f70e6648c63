/* 8-bit levels already in memory through the tensor stage, into [3, h, w] planes:
 * float32 through the table, or the levels.  Interleaved RGB (what Python code left
 * as PIL images) or planar (a detection batch's images, made float where they are
 * pinned).  No Python here. */
#include "tensor_stage.h"

#include "plan.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#endif

/* NOTE [ Levels made float with streaming stores ]
 * Four table reads gathered into one 16-byte streaming store (SSE2, every x86-64
 * CPU): on the reference machine a 480x640 image took 0.25-0.33 ms this way, 0.55
 * ms through jl_levels_to_float's AVX2 loop and 0.44 ms to stream-copy the floats
 * the workers would otherwise have made.  The output is written once, read next by
 * a device's DMA (NOTE [ Streaming the float output ] in resample.c). */
#if defined(__x86_64__) || defined(_M_X64)
static void plane_to_float(const uint8_t *in, size_t n, const float *t, float *o)
{
    size_t i = 0, head = ((16 - ((uintptr_t)o & 15)) & 15) / sizeof(float);
    if (((uintptr_t)o & 3) == 0)
        for (; i < head && i < n; i++)
            o[i] = t[in[i]];
    if (((uintptr_t)(o + i) & 15) == 0) {
        for (; i + 4 <= n; i += 4)
            _mm_stream_ps(o + i, _mm_setr_ps(t[in[i]], t[in[i + 1]], t[in[i + 2]],
                                             t[in[i + 3]]));
        _mm_sfence();
    }
    for (; i < n; i++)
        o[i] = t[in[i]];
}
#else
static void plane_to_float(const uint8_t *in, size_t n, const float *t, float *o)
{
    size_t i;
    for (i = 0; i < n; i++)
        o[i] = t[in[i]];
}
#endif

void jl_planes_to_float(const uint8_t *src, int h, int w, const float *lut, float *dst)
{
    size_t plane = (size_t)h * w;
    int ch;
    for (ch = 0; ch < 3; ch++)
        plane_to_float(src + ch * plane, plane, lut + ch * 256, dst + ch * plane);
}

void jl_hwc_to_chw(const uint8_t *src, int n, int h, int w, int out_type, const float *lut,
                   void *out)
{
    size_t plane = (size_t)h * w, i;
    int k, ch;
    for (k = 0; k < n; k++) {
        const uint8_t *in = src + (size_t)k * 3 * plane;
        if (out_type == JL_OUT_FLOAT32) {
            float *o = (float *)out + (size_t)k * 3 * plane;
            for (i = 0; i < plane; i++)
                for (ch = 0; ch < 3; ch++)
                    o[ch * plane + i] = lut[ch * 256 + in[3 * i + ch]];
        } else {
            uint8_t *o = (uint8_t *)out + (size_t)k * 3 * plane;
            for (i = 0; i < plane; i++)
                for (ch = 0; ch < 3; ch++)
                    o[ch * plane + i] = in[3 * i + ch];
        }
    }
}
