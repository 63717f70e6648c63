/* Region decoding with libjpeg-turbo: header probe, DCT-domain scaling, and
 * decoding only the rows and columns a crop needs (jpeg_crop_scanline +
 * jpeg_skip_scanlines, stopping after the last needed row).  No Python here.
 */
#ifndef JL_JPEG_REGION_H
#define JL_JPEG_REGION_H

#include <stddef.h>
#include <stdint.h>

#define JL_MSG_LEN 160

/* Progressive scans decoded before a file is refused (see on_progress). */
#define JL_MAX_SCANS 1000

/* Per-sample status codes, mirrored in jpegloader/decoders/status.py. */
enum {
    JL_OK = 0,
    JL_SKIPPED = 1,      /* the plan asked for the Python path */
    JL_UNSUPPORTED = 2,  /* valid input this core does not decode (CMYK, ...) */
    JL_ERROR = 3,        /* libjpeg refused the data */
    JL_WARNING = 4,      /* libjpeg decoded with a warning (corrupt data) */
    JL_TOO_LARGE = 5,    /* header claims more pixels than allowed */
    JL_NO_MEMORY = 6,
    JL_CHANGED = 7       /* the image is not the size its plan was drawn for */
};

typedef struct {
    int width, height, components, colorspace, progressive;
} jl_jpeg_info;

typedef struct jl_decoder jl_decoder;

/* One decoder per thread; reuse it across the samples of a batch. */
jl_decoder *jl_decoder_new(void);
void jl_decoder_free(jl_decoder *d);

/* Reads the header only.  Returns a status; msg gets a short text. */
int jl_jpeg_probe(jl_decoder *d, const uint8_t *data, size_t size,
                  jl_jpeg_info *info, char *msg);

/* A block of the (scaled) image: rows [y0, y0+rows) and columns [x0, x0+cols);
 * jl_jpeg_region_read hands over its RGB rows. */
typedef struct {
    int x0, y0, cols, rows;
    int scaled_width, scaled_height;
    int width, height; /* the image's own size (0 until its header is read) */
} jl_region;

/* Rows of the block, `stride` bytes apart, in a buffer of the decoder's that
 * stays valid until its next read. */
typedef struct {
    const uint8_t *pixels;
    size_t stride;
    int rows;
} jl_rows;

/* Starts decoding at 1/scale_denom (1, 2, 4 or 8) at least the block [x0,x1) x
 * [y0,y1) of the scaled image, each of its pixels as a full decode gives it
 * (NOTE [ Exact pixels at a cropped edge ]): fills `out` with the block, which
 * may start further left and end further right.  Refuses images
 * over max_pixels before allocating.  The rows are R, G, B, or with bgr B, G, R
 * (libjpeg-turbo's JCS_EXT_BGR: the same colour conversion, in OpenCV's order). */
int jl_jpeg_region_open(jl_decoder *d, const uint8_t *data, size_t size, int scale_denom,
                        int x0, int y0, int x1, int y1, int64_t max_pixels, int bgr,
                        jl_region *out, char *msg);

/* Decodes the block's next rows, at most max_rows: a few at a time lets the
 * caller work on each strip while it is still in cache. */
int jl_jpeg_region_read(jl_decoder *d, int max_rows, jl_rows *out, char *msg);

/* Ends the decode (the rows below the block are never decoded); JL_WARNING when
 * libjpeg warned.  Call it after every open that returned JL_OK, also when a
 * read failed. */
int jl_jpeg_region_close(jl_decoder *d, char *msg);

/* True when the data ends with an EOI marker (tolerating trailing bytes). */
int jl_jpeg_has_eoi(const uint8_t *data, size_t size);

/* Header probe for n samples: info is int32 [n][4] (width, height,
 * components, progressive). */
void jl_probe_batch(const uint8_t *data, const int64_t *offsets, int n,
                    int32_t *info, int32_t *status, char *messages);

#endif
