/* Fuzz driver for the C decode core (csrc/): probe + jl_decode_batch on
 * mutated JPEGs with random sample plans, built with AddressSanitizer and
 * UndefinedBehaviorSanitizer by tests/fuzz/build.sh.
 *
 * Each input is decoded as a batch of two samples (the same bytes, two
 * plans) into an output filled with NaN first; afterwards a sample with
 * status OK must hold only finite values inside the lookup table's range and
 * any other status must leave zeros and a message.  A breach aborts with the
 * input saved as crash-<n>.jpg.  ASan catches reads and writes outside any
 * buffer, LeakSanitizer leaks at exit, UBSan undefined arithmetic.
 *
 * Every choice made for an input (output size and type, plans, pixel limit)
 * is drawn from a generator seeded by a hash of the input's bytes, as
 * libFuzzer expects: a saved input reproduces its run exactly, whatever the
 * mutation fuzzer's own seed (-s).
 *
 * Two targets, chosen when building:
 *  - the default decodes each input as above;
 *  - with -DJL_TARGET_DC_SCANS each input first goes straight to the
 *    progressive DC-only rewrite (jl_jpeg_dc_scans, NOTE [ DC scans only ]),
 *    whose output must fit its buffer and be a JPEG stream (SOI ... EOI), and
 *    is then decoded as above with every plan at 1/8, the scale that rewrites
 *    a progressive file (through the mutation fuzzer alone about one input in
 *    ten reached it).
 *
 * Two front ends share LLVMFuzzerTestOneInput:
 *  - built with -DJL_LIBFUZZER and clang -fsanitize=fuzzer, it is a libFuzzer
 *    target (coverage-guided, where clang exists);
 *  - otherwise main() below is a self-contained mutation fuzzer (no coverage
 *    feedback): seeds from files or folders, byte- and marker-level
 *    mutations, a fixed PRNG seed so a run can be repeated.
 *
 * usage: fuzz_decode [-n INPUTS] [-t SECONDS] [-s SEED] [-r] PATH...
 *        -r decodes each PATH once, unmutated (to reproduce a crash).
 *        Prints one JSON line: inputs, seeds, CPU seconds, status counts.
 */
#define _POSIX_C_SOURCE 200809L /* fileno, opendir under -std=c11 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dc_scans.h"
#include "jpeg_region.h"
#include "pipeline.h"
#include "resample.h"

#define OUT_MAX 48

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_u64(void)
{ /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static int below(int n) { return n > 0 ? (int)(next_u64() % (uint64_t)n) : 0; }

static double unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

static const uint8_t *current_input;
static size_t current_size;
static long crash_count;

static void fail(const char *what, int sample, int status)
{
    char name[64];
    FILE *f;
    snprintf(name, sizeof(name), "crash-%ld.jpg", crash_count++);
    f = fopen(name, "wb");
    if (f) {
        fwrite(current_input, 1, current_size, f);
        fclose(f);
    }
    fprintf(stderr, "FAIL: %s (sample %d, status %d); input saved as %s\n", what, sample,
            status, name);
    abort();
}

/* One axis of a random plan inside a scaled image of `full` pixels. */
static void random_axis(jl_axis *a, int full, int out)
{
    int lo = below(full), size = 1 + below(full - lo);
    double in0 = unit() * size * 0.9, in1 = in0 + (size - in0) * (0.05 + 0.95 * unit());
    a->src_lo = lo;
    a->src_size = size;
    a->in0 = in0;
    a->in1 = in1 > size ? size : in1;
    a->out_size = out + below(16);
    a->out_start = below(a->out_size - out + 1);
}

/* A whole image at its own size, no DCT scale, flip or colour, a constant padding of
 * nothing: a letterbox's base (NOTE [ A letterbox ]), and as it is, what
 * JL_OUT_BGR_HWC takes. */
static void whole_image_plan(jl_plan *p, int filter, int width, int height)
{
    jl_axis *axes[2] = {&p->x, &p->y};
    int sizes[2] = {width, height}, i;
    for (i = 0; i < JL_COLOUR_STEPS; i++)
        p->colour.op[i] = JL_COLOUR_NONE;
    p->scale_denom = 1;
    p->flip = 0;
    p->colour_first = 0;
    p->filter = filter;
    p->pad_mode = JL_PAD_CONSTANT;
    for (i = 0; i < 2; i++) {
        jl_axis *a = axes[i];
        a->src_lo = 0;
        a->src_size = a->out_size = a->pad_len = sizes[i];
        a->in0 = 0.0;
        a->in1 = sizes[i];
        a->pad_lo = a->pad_start = a->out_start = 0;
    }
}

static void random_plan(jl_plan *p, int width, int height, int out_w, int out_h)
{
    static const int scales[4] = {1, 2, 4, 8};
    int k;
    memset(p, 0, sizeof(*p));
    p->scale_denom = scales[below(4)];
    p->flip = below(2);
    p->filter = below(JL_FILTER_COUNT);
    p->vertical_first = below(2);
    p->image_w = width;
    p->image_h = height;
    random_axis(&p->x, (width + p->scale_denom - 1) / p->scale_denom, out_w);
    random_axis(&p->y, (height + p->scale_denom - 1) / p->scale_denom, out_h);
    for (k = 0; k < JL_COLOUR_STEPS; k++) {
        /* -1 .. permute, or a step with torch's arithmetic (colour_tensor.h) */
        p->colour.op[k] = below(3) ? JL_COLOUR_NONE
                          : below(4) ? below(8) - 1 : JL_COLOUR_TORCH_V2 + (int32_t)below(8);
        p->colour.value[k] = p->colour.op[k] == JL_COLOUR_HUE ? (float)below(256)
                                                              : (float)(2.0 * unit());
        if (p->colour.op[k] >= JL_COLOUR_TORCH_V2 &&
            (p->colour.op[k] - JL_COLOUR_TORCH_V2) % 4 == JL_COLOUR_HUE)
            p->colour.value[k] = (float)(1.2 * unit() - 0.6); /* some out of range */
        if (p->colour.op[k] == JL_COLOUR_BLUR) { /* odd kernels, some too large */
            p->colour.value[k] += 0.05f;
            p->colour.arg[k] = (1 + 2 * below(12)) | (1 + 2 * below(12)) << 16;
        }
        if (p->colour.op[k] == JL_COLOUR_PERMUTE) /* some not permutations */
            p->colour.arg[k] = below(3) | below(3) << 2 | below(4) << 4;
    }
    if (below(4) == 0) { /* a padded crop: NOTE [ Padding a crop ] */
        jl_axis *axes[2] = {&p->x, &p->y};
        int sides[2] = {out_w, out_h}, i;
        p->pad_mode = 1 + below(4);
        p->pad_fill = (int32_t)(next_u64() & 0xFFFFFF);
        p->colour_first = below(2); /* NOTE [ Colour before the padding ] */
        for (i = 0; i < 2; i++) {
            jl_axis *a = axes[i];
            a->pad_lo = below(8);
            a->pad_len = a->out_size + a->pad_lo + below(8);
            a->pad_start = below(a->pad_len + 2 * sides[i]) - sides[i];
        }
    }
    if (below(4) == 0) { /* a letterbox: NOTE [ A letterbox ] (uint8 outputs take it) */
        jl_axis *axes[2] = {&p->x, &p->y};
        int sides[2] = {out_w, out_h}, i;
        whole_image_plan(p, below(4) ? JL_FILTER_OPENCV_LINEAR : JL_FILTER_BILINEAR, width,
                         height);
        p->pad_fill = (int32_t)(next_u64() & 0xFFFFFF);
        for (i = 0; i < 2; i++) {
            jl_axis *a = axes[i];
            if (p->filter != JL_FILTER_BILINEAR)
                a->out_size = 1 + below(sides[i]);
            a->pad_lo = a->out_size <= sides[i] ? below(sides[i] - a->out_size + 1) : 0;
            a->pad_len = sides[i];
        }
    }
    if (below(16) == 0) { /* garbage fields: the core must refuse, not trust them */
        int32_t *words = (int32_t *)&p->x;
        words[below((int)(sizeof(jl_axis) / 4))] = (int32_t)next_u64();
        p->scale_denom = below(3) ? p->scale_denom : (int32_t)next_u64();
        p->filter = below(3) ? p->filter : (int32_t)next_u64();
        p->colour.op[below(JL_COLOUR_STEPS)] = below(3) ? JL_COLOUR_HUE : (int32_t)next_u64();
        p->colour.value[below(JL_COLOUR_STEPS)] = (float)(int32_t)next_u64();
        p->colour_first = below(3) ? p->colour_first : (int32_t)next_u64();
    }
}

static void check_sample(const void *out, int out_type, size_t n, const float *lut,
                         int status, const char *msg, int sample)
{
    const float *f = (const float *)out;
    const uint8_t *u = (const uint8_t *)out;
    size_t i;
    if (status == JL_OK) {
        if (out_type == JL_OUT_FLOAT32)
            for (i = 0; i < n; i++)
                if (!isfinite(f[i]) || f[i] < lut[0] || f[i] > lut[3 * 256 - 1])
                    fail("status OK but a value is missing or out of range", sample, status);
    } else {
        if (msg[0] == '\0')
            fail("failure without a message", sample, status);
        for (i = 0; i < n; i++)
            if (out_type == JL_OUT_FLOAT32 ? f[i] != 0.0f : u[i] != 0)
                fail("failed sample not zeroed (stale pixels)", sample, status);
    }
}

static long status_counts[8]; /* by status (0 .. JL_CHANGED) */
static long rewritten;         /* inputs the DC-only rewrite shortened */
static long bgr_rows;          /* samples decoded OK into OpenCV's BGR rows */

/* FNV-1a over the input: the seed of every choice made for it. */
static uint64_t input_seed(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3ull;
    return h | 1; /* xorshift's state must not be zero */
}

static int decode_input(const uint8_t *data, size_t size, int scale8);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t mutator = rng; /* the mutation fuzzer's own stream, put back after */
    int scale8 = 0;
    rng = input_seed(data, size);
#ifdef JL_TARGET_DC_SCANS
    {
        uint8_t *dc = malloc(size + 1); /* exactly the room the contract gives */
        size_t n;
        current_input = data;
        current_size = size;
        n = jl_jpeg_dc_scans(data, size, dc);
        if (n > size)
            fail("DC-only stream longer than its input", 0, 0);
        if (n && (n < 4 || dc[0] != 0xFF || dc[1] != 0xD8 || dc[n - 2] != 0xFF ||
                  dc[n - 1] != 0xD9))
            fail("DC-only stream is not SOI ... EOI", 0, 0);
        rewritten += n != 0;
        free(dc);
        scale8 = 1;
    }
#endif
    decode_input(data, size, scale8);
    rng = mutator;
    return 0;
}

/* Several views of the same two samples (jl_decode_views): each sample's views
 * share view 0's scale and image size, as the loader's plans do. */
static void decode_views_input(const uint8_t *twice, const int64_t *offsets, int width,
                               int height, int64_t max_pixels, const float *lut, int scale8)
{
    enum { MOST = 3 };
    jl_plan plans[2 * MOST];
    jl_view_out outs[MOST];
    int32_t status[2];
    char messages[2 * JL_MSG_LEN];
    double seconds[2] = {0.0, 0.0};
    size_t bytes[MOST];
    int views = 2 + below(MOST - 1), v, k;
    for (v = 0; v < views; v++) {
        jl_view_out *o = &outs[v];
        o->out_w = 1 + below(OUT_MAX);
        o->out_h = 1 + below(OUT_MAX);
        o->out_type = below(2) ? JL_OUT_FLOAT32 : below(2) ? JL_OUT_UINT8 : JL_OUT_UINT8_HWC;
        o->lut = lut;
        o->norm = NULL;
        bytes[v] = (size_t)3 * o->out_w * o->out_h *
                   (o->out_type == JL_OUT_FLOAT32 ? sizeof(float) : 1);
        o->out = malloc(2 * bytes[v]);
        memset(o->out, 0xAB, 2 * bytes[v]); /* poison: a failed sample must be zeroed */
        for (k = 0; o->out_type == JL_OUT_FLOAT32 && k < (int)(2 * bytes[v] / 4); k++)
            ((float *)o->out)[k] = NAN; /* and an OK one written */
    }
    for (k = 0; k < 2; k++) {
        for (v = 0; v < views; v++) {
            jl_plan *p = &plans[k * views + v];
            int scale = v ? plans[k * views].scale_denom : 8;
            random_plan(p, width, height, outs[v].out_w, outs[v].out_h);
            if ((v || scale8) && p->scale_denom != scale && scale >= 1 && scale <= 8) {
                p->scale_denom = scale;
                random_axis(&p->x, (width + scale - 1) / scale, outs[v].out_w);
                random_axis(&p->y, (height + scale - 1) / scale, outs[v].out_h);
            }
        }
    }
    jl_decode_views(twice, offsets, plans, 2, views, outs, max_pixels, status, messages,
                    seconds);
    if (!(seconds[0] >= 0.0 && seconds[1] >= 0.0))
        fail("negative stage time (views)", 0, status[0]);
    for (k = 0; k < 2; k++) { /* status_counts count the decode_batch calls only */
        for (v = 0; v < views; v++) {
            int type = outs[v].out_type == JL_OUT_FLOAT32 ? JL_OUT_FLOAT32 : JL_OUT_UINT8;
            check_sample((uint8_t *)outs[v].out + k * bytes[v], type,
                         (size_t)3 * outs[v].out_w * outs[v].out_h, lut, status[k],
                         messages + k * JL_MSG_LEN, k);
        }
    }
    for (v = 0; v < views; v++)
        free(outs[v].out);
}

static int decode_input(const uint8_t *data, size_t size, int scale8)
{
    /* The lookup table is ascending per channel and across channels, so the
     * overall range check is the first and last entry. */
    static float lut[3 * 256];
    int64_t offsets[3] = {0, (int64_t)size, 2 * (int64_t)size};
    uint8_t *twice = malloc(2 * size + 1);
    int32_t info[8], status[2];
    double seconds[2] = {0.0, 0.0};
    char messages[2 * JL_MSG_LEN];
    jl_plan plans[2];
    int out_w = 1 + below(OUT_MAX), out_h = 1 + below(OUT_MAX), k, width, height, whole = 0;
    size_t sample;
    int out_type = below(3) ? JL_OUT_FLOAT32 : below(3) ? JL_OUT_UINT8 : JL_OUT_BGR_HWC;
    size_t item = out_type == JL_OUT_FLOAT32 ? sizeof(float) : 1;
    uint8_t *out;
    int64_t max_pixels = below(8) ? 2 * 89478485LL : 1 + below(1 << 16);

    current_input = data;
    current_size = size;
    for (k = 0; k < 3 * 256; k++)
        lut[k] = (float)k / 255.0f - 1.0f;
    memcpy(twice, data, size);
    memcpy(twice + size, data, size);
    jl_probe_batch(twice, offsets, 2, info, status, messages);
    /* Plans from the header, as the loader makes them; sometimes from other
     * dimensions, as when a file changed after its size was recorded. */
    width = status[0] == JL_OK && info[0] > 0 ? info[0] : 1 + below(4096);
    height = status[0] == JL_OK && info[1] > 0 ? info[1] : 1 + below(4096);
    if (below(8) == 0) {
        width = 1 + below(2 * width);
        height = 1 + below(2 * height);
    }
    if (out_type == JL_OUT_BGR_HWC && width <= OUT_MAX && height <= OUT_MAX && below(2)) {
        out_w = width, out_h = height; /* OpenCV's rows: a whole image at its own size */
        whole = 1;
    }
    sample = (size_t)3 * out_w * out_h;
    out = malloc(2 * sample * item);
    for (k = 0; k < 2; k++) {
        random_plan(&plans[k], width, height, out_w, out_h);
        if (whole) {
            whole_image_plan(&plans[k],
                             below(2) ? JL_FILTER_OPENCV_LINEAR : JL_FILTER_BILINEAR, width,
                             height);
            plans[k].skip = 0;
        }
        if (scale8 && plans[k].scale_denom != 8) {
            plans[k].scale_denom = 8;
            random_axis(&plans[k].x, (width + 7) / 8, out_w);
            random_axis(&plans[k].y, (height + 7) / 8, out_h);
        }
    }
    if (out_type == JL_OUT_FLOAT32)
        for (k = 0; k < (int)(2 * sample); k++)
            ((float *)out)[k] = NAN;
    else
        memset(out, 0xAB, 2 * sample); /* poison: a failed sample must be zeroed */
    /* Half the time the floats are computed rather than looked up, with a mean and
     * std whose results, (level / 255 - 0.5) / 0.5, stay inside the table's range. */
    static const float norm[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    jl_decode_batch(twice, offsets, plans, 2, out, out_type, out_h, out_w, lut,
                    below(2) ? norm : NULL, max_pixels, status, messages, seconds);
    if (!(seconds[0] >= 0.0 && seconds[1] >= 0.0))
        fail("negative stage time", 0, status[0]);
    for (k = 0; k < 2; k++) {
        status_counts[status[k] & 7]++;
        check_sample(out + k * sample * item, out_type, sample, lut, status[k],
                     messages + k * JL_MSG_LEN, k);
        bgr_rows += out_type == JL_OUT_BGR_HWC && status[k] == JL_OK;
    }
    if (below(2))
        decode_views_input(twice, offsets, width, height, max_pixels, lut, scale8);
    free(out);
    free(twice);
    return 0;
}

#ifndef JL_LIBFUZZER
/* ---- the self-contained mutation fuzzer ------------------------------- */
typedef struct {
    uint8_t *data;
    size_t size;
} blob;

static blob *seeds;
static int nseeds, seeds_cap;

static void add_seed(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    blob b;
    if (!f)
        return;
    if (fstat(fileno(f), &st) != 0 || st.st_size > (8 << 20)) {
        fclose(f);
        return; /* too large to mutate quickly */
    }
    b.size = (size_t)st.st_size;
    b.data = malloc(b.size + 1); /* never NULL for an empty file */
    if (fread(b.data, 1, b.size, f) != b.size) {
        free(b.data);
        fclose(f);
        return;
    }
    fclose(f);
    if (nseeds == seeds_cap) {
        seeds_cap = seeds_cap ? 2 * seeds_cap : 64;
        seeds = realloc(seeds, (size_t)seeds_cap * sizeof(blob));
    }
    seeds[nseeds++] = b;
}

static void add_path(const char *path)
{
    struct stat st;
    DIR *dir;
    struct dirent *e;
    char child[4096];
    if (stat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        add_seed(path);
        return;
    }
    dir = opendir(path);
    if (!dir)
        return;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        add_path(child);
    }
    closedir(dir);
}

/* Positions just after a marker (FF xx, xx not 00/FF), or -1. */
static long random_marker(const uint8_t *d, size_t n)
{
    size_t start = (size_t)below((int)(n > 1 ? n - 1 : 1)), i;
    for (i = 0; i + 1 < n; i++) {
        size_t p = (start + i) % (n - 1);
        if (d[p] == 0xFF && d[p + 1] != 0x00 && d[p + 1] != 0xFF)
            return (long)p + 2;
    }
    return -1;
}

/* Applies 1-4 mutations to buf[0..*n) (capacity cap). */
static void mutate(uint8_t *buf, size_t *n, size_t cap)
{
    static const uint8_t bytes8[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, 0xC0, 0xC2, 0xC4,
                                     0xD8, 0xD9, 0xDA, 0xDB, 0xDD, 0xE1, 0xE2, 0x10};
    static const uint16_t words[] = {0, 1, 2, 0x7FFF, 0x8000, 0xFFFF, 65500, 8, 16, 255};
    int rounds = 1 + below(4), r;
    for (r = 0; r < rounds && *n > 2; r++) {
        /* Half of the edits land in the first 2 KB, where the headers are. */
        size_t span = below(2) && *n > 2048 ? 2048 : *n;
        size_t pos = 2 + (size_t)below((int)(span - 2));
        switch (below(10)) {
        case 0:
            buf[pos] ^= (uint8_t)(1u << below(8));
            break;
        case 1:
            buf[pos] = (uint8_t)next_u64();
            break;
        case 2:
            buf[pos] = bytes8[below(sizeof(bytes8))];
            break;
        case 3:
            if (pos + 1 < *n) {
                uint16_t w = words[below(sizeof(words) / 2)];
                buf[pos] = (uint8_t)(w >> 8);
                buf[pos + 1] = (uint8_t)w;
            }
            break;
        case 4: { /* delete a chunk */
            size_t len = 1 + (size_t)below((int)(*n - pos > 256 ? 256 : *n - pos));
            memmove(buf + pos, buf + pos + len, *n - pos - len);
            *n -= len;
            break;
        }
        case 5: { /* copy a chunk from elsewhere in, shifting the rest */
            size_t len = 1 + (size_t)below(256), from = (size_t)below((int)*n);
            if (from + len > *n)
                len = *n - from;
            if (*n + len > cap)
                break;
            memmove(buf + pos + len, buf + pos, *n - pos);
            memmove(buf + pos, buf + (from < pos ? from : from + len), len);
            *n += len;
            break;
        }
        case 6: /* truncate */
            *n = pos;
            break;
        case 7: { /* splice: the tail of another seed */
            const blob *o = &seeds[below(nseeds)];
            size_t from = (size_t)below((int)o->size), len = o->size - from;
            if (pos + len > cap)
                len = cap - pos;
            memcpy(buf + pos, o->data + from, len);
            *n = pos + len;
            break;
        }
        case 8: { /* a marker segment's length field */
            long m = random_marker(buf, *n);
            if (m >= 0 && (size_t)m + 1 < *n) {
                uint16_t w = below(2) ? words[below(sizeof(words) / 2)] : (uint16_t)next_u64();
                buf[m] = (uint8_t)(w >> 8);
                buf[m + 1] = (uint8_t)w;
            }
            break;
        }
        default: { /* a byte just after a marker (dimensions, table ids, counts) */
            long m = random_marker(buf, *n);
            if (m >= 0) {
                size_t p = (size_t)m + 2 + (size_t)below(16);
                if (p < *n)
                    buf[p] = below(2) ? bytes8[below(sizeof(bytes8))] : (uint8_t)next_u64();
            }
            break;
        }
        }
    }
}

int main(int argc, char **argv)
{
    long inputs = 100000, done = 0, k;
    double seconds = 0;
    int replay = 0, i;
    uint8_t *buf;
    size_t cap = 0;
    clock_t start = clock();
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            inputs = atol(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            rng = strtoull(argv[++i], NULL, 0) | 1;
        else if (!strcmp(argv[i], "-r"))
            replay = 1;
        else
            add_path(argv[i]);
    }
    if (nseeds == 0) {
        fprintf(stderr, "no seed files found\n");
        return 2;
    }
    if (replay) {
        for (i = 0; i < nseeds; i++)
            LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].size);
        printf("replayed %d inputs\n", nseeds);
        inputs = 0;
    }
    for (i = 0; i < nseeds; i++)
        if (seeds[i].size > cap)
            cap = seeds[i].size;
    cap = 2 * cap + 4096;
    buf = malloc(cap);
    for (done = 0; done < inputs; done++) {
        const blob *s = &seeds[below(nseeds)];
        size_t n = s->size;
        if (seconds > 0 && (done & 63) == 0 &&
            (double)(clock() - start) / CLOCKS_PER_SEC > seconds)
            break;
        memcpy(buf, s->data, n);
        mutate(buf, &n, cap);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("{\"inputs\": %ld, \"seeds\": %d, \"cpu_seconds\": %.1f, \"statuses\": {", done, nseeds,
           (double)(clock() - start) / CLOCKS_PER_SEC);
    for (k = 0; k < 8; k++)
        printf("%s\"%ld\": %ld", k ? ", " : "", k, status_counts[k]);
    printf("}, \"rewritten\": %ld, \"bgr_rows\": %ld}\n", rewritten, bgr_rows);
    for (i = 0; i < nseeds; i++)
        free(seeds[i].data);
    free(seeds);
    free(buf);
    return 0;
}
#endif
