/* NOTE [ DC scans only ]
 *
 * At 1/8 scale libjpeg's IDCT (jpeg_idct_1x1) reads one coefficient per block,
 * the DC: the output of a progressive file depends only on its DC scans (Ss = 0;
 * the first and any successive-approximation refinements).  The AC scans, most
 * of the file and of its entropy decoding, cannot change a pixel.  One exception:
 * libjpeg-turbo decodes 4:2:0 chroma at 1/8 through the 2x2 IDCT (it scales
 * subsampled components up in the IDCT, not the upsampler), which reads AC terms,
 * so those components keep their AC scans (reads_ac in dc_scans.c; the luma ones,
 * the bulk of the data, still go).  So for a 1/8 decode the stream is rewritten
 * with every other AC scan left out: markers and table
 * segments are copied in order (a table redefined between scans still applies to
 * the scans after it), DC scans with their entropy-coded data (restart markers
 * included), then EOI.  libjpeg decodes the shorter stream as an ordinary
 * progressive file whose AC coefficients stayed zero: the same DC values, so the
 * same pixels as a full 1/8 decode (tests/decoders/test_dc_scans.py), provided
 * block smoothing is off (jpeg_region.c).
 *
 * Finding where a scan ends needs no Huffman decoding: entropy-coded data holds
 * FF only as FF 00 (stuffing) or FF D0..D7 (restart), so the next other marker
 * ends it.  At 1/4 and 1/2 nothing like this holds exactly: the reduced IDCTs
 * (jidctred.c) read coefficients up to the highest frequencies, so every scan
 * counts.
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
