/* NOTE [ DC scans only ]
 * At 1/8 scale libjpeg's IDCT reads one coefficient per block, the DC, so a
 * progressive file's pixels depend only on its DC scans; the AC scans, most of
 * the file and its entropy decoding, cannot change a pixel (except 4:2:0 chroma,
 * which libjpeg-turbo scales through the 2x2 IDCT: those components keep their
 * AC scans, reads_ac in dc_scans.c).  So for a 1/8 decode the stream is
 * rewritten without the other AC scans: markers and tables copied in order, DC
 * scans with their entropy-coded data, then EOI; it decodes to the same pixels
 * with block smoothing off (jpeg_region.c; tests/decoders/test_dc_scans.py).  A
 * scan ends at the next marker other than FF 00 and FF D0..D7: no Huffman
 * decoding.  At 1/4 and 1/2 the reduced IDCTs read high frequencies too.
 */
#ifndef JL_DC_SCANS_H
#define JL_DC_SCANS_H

#include <stddef.h>
#include <stdint.h>

/* Writes `in`'s DC-only stream to `out` (room for `size` bytes) and returns its
 * length; returns 0 when `in` is not a progressive JPEG, holds no AC scan, or is
 * not laid out as the standard says (the caller then decodes the file as is). */
size_t jl_jpeg_dc_scans(const uint8_t *in, size_t size, uint8_t *out);

#endif
