#include "jpeg_region.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "dc_scans.h"
#include "grow.h"

struct jl_error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int warnings;
    char message[JMSG_LENGTH_MAX];
};

struct jl_decoder {
    struct jpeg_decompress_struct cinfo;
    struct jl_error_mgr err;
    struct jpeg_progress_mgr progress;
    uint8_t *buf;
    size_t buf_size;
    uint8_t *dc_stream; /* NOTE [ DC scans only ] */
    size_t dc_stream_size;
    int reading; /* a region is open: its rows up to y_end remain to be read */
    int y_end;
};

static void on_error_exit(j_common_ptr cinfo)
{
    struct jl_error_mgr *err = (struct jl_error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void on_emit_message(j_common_ptr cinfo, int level)
{
    struct jl_error_mgr *err = (struct jl_error_mgr *)cinfo->err;
    if (level >= 0)
        return; /* trace messages */
    /* Keep the first warning: it names the first thing that went wrong. */
    if (err->warnings++ == 0)
        (*cinfo->err->format_message)(cinfo, err->message);
}

/* A progressive file may hold any number of scans, each a pass over the
 * whole coefficient buffer: a few kilobytes can cost minutes of CPU.  Real
 * encoders write about ten; refuse past JL_MAX_SCANS, as djpeg -maxscans and
 * TurboJPEG's scan limit do.  The sample then takes the Python path. */
static void on_progress(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    struct jl_error_mgr *err = (struct jl_error_mgr *)cinfo->err;
    if (cinfo->is_decompressor && d->input_scan_number > JL_MAX_SCANS) {
        snprintf(err->message, sizeof(err->message),
                 "more than %d scans in a progressive file (malformed or hostile)",
                 JL_MAX_SCANS);
        longjmp(err->jump, 1);
    }
}

static void set_msg(char *msg, const char *text)
{
    if (msg) {
        strncpy(msg, text, JL_MSG_LEN - 1);
        msg[JL_MSG_LEN - 1] = '\0';
    }
}

/* NOTE [ setjmp and locals ]
 * A function that calls setjmp must not change a local after it: longjmp may
 * bring back a stale register copy.  So each setjmp sits in a small function
 * that only passes its unchanged arguments on to the one doing the work. */
static int create_decompress(jl_decoder *d)
{
    if (setjmp(d->err.jump))
        return -1;
    jpeg_create_decompress(&d->cinfo);
    return 0;
}

jl_decoder *jl_decoder_new(void)
{
    jl_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->cinfo.err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = on_error_exit;
    d->err.pub.emit_message = on_emit_message;
    d->progress.progress_monitor = on_progress;
    if (create_decompress(d)) {
        free(d);
        return NULL;
    }
    d->cinfo.progress = &d->progress;
    return d;
}

void jl_decoder_free(jl_decoder *d)
{
    if (!d)
        return;
    jpeg_destroy_decompress(&d->cinfo);
    free(d->buf);
    free(d->dc_stream);
    free(d);
}

int jl_jpeg_has_eoi(const uint8_t *data, size_t size)
{
    /* Entropy-coded data never holds FF D9, so one in the tail is the EOI;
     * padding and trailing frames (MPO) after it are tolerated. */
    size_t start = size > 4096 ? size - 4096 : 0, i;
    for (i = size; i-- > start + 1;)
        if (data[i] == 0xD9 && data[i - 1] == 0xFF)
            return 1;
    return 0;
}

static int read_header(jl_decoder *d, const uint8_t *data, size_t size,
                       jl_jpeg_info *info)
{
    struct jpeg_decompress_struct *cinfo = &d->cinfo;
    jpeg_mem_src(cinfo, data, (unsigned long)size);
    jpeg_read_header(cinfo, TRUE);
    info->width = (int)cinfo->image_width;
    info->height = (int)cinfo->image_height;
    info->components = cinfo->num_components;
    info->colorspace = (int)cinfo->jpeg_color_space;
    info->progressive = cinfo->progressive_mode ? 1 : 0;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_YCbCr:
    case JCS_RGB:
        return JL_OK;
    default:
        return JL_UNSUPPORTED; /* CMYK/YCCK: Pillow converts those itself */
    }
}

int jl_jpeg_probe(jl_decoder *d, const uint8_t *data, size_t size,
                  jl_jpeg_info *info, char *msg)
{
    int status;
    memset(info, 0, sizeof(*info));
    d->err.warnings = 0;
    if (setjmp(d->err.jump)) {
        jpeg_abort_decompress(&d->cinfo);
        set_msg(msg, d->err.message);
        return JL_ERROR;
    }
    status = read_header(d, data, size, info);
    jpeg_abort_decompress(&d->cinfo);
    if (status == JL_UNSUPPORTED)
        set_msg(msg, "colour space not handled by the fast path (CMYK/YCCK)");
    return status;
}

/* NOTE [ Exact pixels at a cropped edge ]
 * jpeg_crop_scanline widens the columns to iMCU bounds, and libjpeg-turbo then
 * upsamples the chroma as if the crop's edges were the image's: where chroma is
 * subsampled across columns, the outermost column on each side can differ from
 * a full decode.  Rows need no margin (jpeg_skip_scanlines keeps the context
 * rows vertical upsampling reads).  So one column more on each side, only where
 * the columns are upsampled (docs/experiments.md);
 * tests/decoders/test_region_edges.py holds the installed libjpeg-turbo to it. */
static int upsamples_columns(const struct jpeg_decompress_struct *cinfo)
{
    int c;
    for (c = 0; c < cinfo->num_components; c++)
        if (cinfo->comp_info[c].h_samp_factor != cinfo->max_h_samp_factor)
            return 1;
    return 0;
}

/* NOTE [ Rows off the 32-byte grid ]
 * libjpeg-turbo's AVX2 colour conversion writes an output row with
 * non-temporal stores when the row starts on a 32-byte boundary: the row goes
 * past the cache to memory, and the resampler then reads it back from there.
 * So every row starts 16 bytes past the grid (the stride a multiple of 32),
 * where the same code uses ordinary stores (docs/experiments.md). */
enum { ROW_GRID = 32 };

/* Ends the open region's decode: the rows below what was read are never decoded. */
static void stop_reading(jl_decoder *d)
{
    jpeg_abort_decompress(&d->cinfo);
    d->reading = 0;
}

/* jl_jpeg_region_open's work, run under its setjmp (NOTE [ setjmp and locals ]). */
static int open_region(jl_decoder *d, const uint8_t *data, size_t size, int scale_denom,
                       int x0, int y0, int x1, int y1, int64_t max_pixels, int bgr,
                       jl_region *out, char *msg)
{
    struct jpeg_decompress_struct *cinfo = &d->cinfo;
    jl_jpeg_info info;
    JDIMENSION xoff, width;
    int status, dc_only = 0;

    status = read_header(d, data, size, &info);
    if (status == JL_OK && info.progressive && scale_denom == 8) {
        /* NOTE [ DC scans only ]: decode the file's DC scans instead */
        size_t n;
        if (jl_grow((void **)&d->dc_stream, &d->dc_stream_size, size)) {
            jpeg_abort_decompress(cinfo);
            set_msg(msg, "out of memory for the DC scans");
            return JL_NO_MEMORY;
        }
        n = jl_jpeg_dc_scans(data, size, d->dc_stream);
        if (n) {
            jpeg_abort_decompress(cinfo);
            data = d->dc_stream;
            size = n;
            dc_only = 1;
            status = read_header(d, data, size, &info);
        }
    }
    if (status != JL_OK) {
        jpeg_abort_decompress(cinfo);
        set_msg(msg, "colour space not handled by the fast path (CMYK/YCCK)");
        return status;
    }
    out->width = info.width;
    out->height = info.height;
    if ((int64_t)info.width * info.height > max_pixels) {
        jpeg_abort_decompress(cinfo);
        snprintf(msg, JL_MSG_LEN, "image of %dx%d pixels exceeds the limit of %lld",
                 info.width, info.height, (long long)max_pixels);
        return JL_TOO_LARGE;
    }
    /* grey is replicated, as PIL's convert and OpenCV's IMREAD_COLOR do */
    cinfo->out_color_space = bgr ? JCS_EXT_BGR : JCS_RGB;
    cinfo->scale_num = 1;
    cinfo->scale_denom = (unsigned)scale_denom;
    cinfo->dct_method = JDCT_ISLOW;    /* Pillow's default */
    cinfo->do_fancy_upsampling = TRUE; /* Pillow's default */
    /* Off for the DC-only stream: with no AC scan at all, libjpeg-turbo's block
     * smoothing (2.1+) also smooths the DC values, which a full decode never does. */
    cinfo->do_block_smoothing = dc_only ? FALSE : TRUE;
    jpeg_start_decompress(cinfo);

    out->scaled_width = (int)cinfo->output_width;
    out->scaled_height = (int)cinfo->output_height;
    if (upsamples_columns(cinfo)) { /* NOTE [ Exact pixels at a cropped edge ] */
        x0 -= 1;
        x1 += 1;
    }
    if (x0 < 0)
        x0 = 0;
    if (y0 < 0)
        y0 = 0;
    if (x1 > out->scaled_width)
        x1 = out->scaled_width;
    if (y1 > out->scaled_height)
        y1 = out->scaled_height;
    if (x1 <= x0 || y1 <= y0) {
        jpeg_abort_decompress(cinfo);
        set_msg(msg, "empty decode region (plan does not fit the image)");
        return JL_ERROR;
    }
    xoff = (JDIMENSION)x0;
    width = (JDIMENSION)(x1 - x0);
    if (width < cinfo->output_width)
        jpeg_crop_scanline(cinfo, &xoff, &width); /* widens to iMCU bounds */
    if (y0 > 0)
        jpeg_skip_scanlines(cinfo, (JDIMENSION)y0);
    d->y_end = y1;
    d->reading = 1;

    out->x0 = (int)xoff;
    out->y0 = y0;
    out->cols = (int)width;
    out->rows = y1 - y0;
    return JL_OK;
}

int jl_jpeg_region_open(jl_decoder *d, const uint8_t *data, size_t size, int scale_denom,
                        int x0, int y0, int x1, int y1, int64_t max_pixels, int bgr,
                        jl_region *out, char *msg)
{
    d->err.warnings = 0;
    d->reading = 0;
    if (!jl_jpeg_has_eoi(data, size)) {
        set_msg(msg, "no EOI marker: the file looks truncated");
        return JL_WARNING;
    }
    if (setjmp(d->err.jump)) {
        jpeg_abort_decompress(&d->cinfo);
        set_msg(msg, d->err.message);
        return JL_ERROR;
    }
    return open_region(d, data, size, scale_denom, x0, y0, x1, y1, max_pixels, bgr, out, msg);
}

/* jl_jpeg_region_read's work, run under its setjmp (NOTE [ setjmp and locals ]). */
static int read_rows(jl_decoder *d, int max_rows, jl_rows *out, char *msg)
{
    struct jpeg_decompress_struct *cinfo = &d->cinfo;
    int first = (int)cinfo->output_scanline, want = d->y_end - first, got;
    size_t stride, need;
    uint8_t *pixels;

    if (want > max_rows)
        want = max_rows;
    /* NOTE [ Rows off the 32-byte grid ] */
    stride = ((size_t)cinfo->output_width * 3 + ROW_GRID - 1) & ~(size_t)(ROW_GRID - 1);
    need = stride * (size_t)want + ROW_GRID; /* room to move the first row */
    if (jl_grow((void **)&d->buf, &d->buf_size, need)) {
        stop_reading(d);
        set_msg(msg, "out of memory for the decode region");
        return JL_NO_MEMORY;
    }
    pixels = d->buf + ((ROW_GRID / 2 - (uintptr_t)d->buf) & (ROW_GRID - 1));
    while ((int)cinfo->output_scanline < first + want) {
        JSAMPROW row = pixels + (size_t)((int)cinfo->output_scanline - first) * stride;
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1)
            break;
    }
    got = (int)cinfo->output_scanline - first;
    out->pixels = pixels;
    out->stride = stride;
    out->rows = got;
    if (got != want) {
        stop_reading(d);
        set_msg(msg, "decoder returned fewer rows than requested");
        return JL_ERROR;
    }
    return JL_OK;
}

int jl_jpeg_region_read(jl_decoder *d, int max_rows, jl_rows *out, char *msg)
{
    out->pixels = NULL;
    out->rows = 0;
    if (!d->reading) {
        set_msg(msg, "no region open for reading");
        return JL_ERROR;
    }
    if (setjmp(d->err.jump)) {
        stop_reading(d);
        set_msg(msg, d->err.message);
        return JL_ERROR;
    }
    return read_rows(d, max_rows, out, msg);
}

int jl_jpeg_region_close(jl_decoder *d, char *msg)
{
    /* Aborting cannot fail, so no setjmp is needed. */
    if (d->reading)
        stop_reading(d);
    if (d->err.warnings) {
        set_msg(msg, d->err.message);
        return JL_WARNING;
    }
    return JL_OK;
}

void jl_probe_batch(const uint8_t *data, const int64_t *offsets, int n,
                    int32_t *info, int32_t *status, char *messages)
{
    jl_decoder *dec = jl_decoder_new();
    int i;
    for (i = 0; i < n; i++) {
        jl_jpeg_info ji;
        char *msg = messages + (size_t)i * JL_MSG_LEN;
        msg[0] = '\0';
        if (!dec) {
            snprintf(msg, JL_MSG_LEN, "out of memory for the JPEG decoder");
            status[i] = JL_NO_MEMORY;
            memset(info + 4 * i, 0, 4 * sizeof(int32_t));
            continue;
        }
        status[i] = jl_jpeg_probe(dec, data + offsets[i],
                                  (size_t)(offsets[i + 1] - offsets[i]), &ji, msg);
        info[4 * i] = ji.width;
        info[4 * i + 1] = ji.height;
        info[4 * i + 2] = ji.components;
        info[4 * i + 3] = ji.progressive;
    }
    jl_decoder_free(dec);
}
