#include "dc_scans.h"

#include <string.h>

/* End of the entropy-coded data that starts at `p`: the first FF followed by
 * anything but 00 (stuffing) or D0..D7 (restart markers). */
static size_t scan_data_end(const uint8_t *in, size_t p, size_t size)
{
    while (p + 1 < size) {
        const uint8_t *ff = memchr(in + p, 0xFF, size - 1 - p);
        uint8_t next;
        if (!ff)
            return size;
        p = (size_t)(ff - in);
        next = in[p + 1];
        if (next != 0x00 && (next < 0xD0 || next > 0xD7))
            return p;
        p += 2;
    }
    return size;
}

static int is_sof(uint8_t m)
{
    /* C0..CF except DHT (C4), JPG (C8) and DAC (CC) */
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* Whether a component's 1/8 output reads AC coefficients.  libjpeg-turbo
 * (jpeg_calc_output_dimensions) scales a subsampled component up through a larger
 * IDCT rather than the upsampler where the factors allow: at 1/8, 4:2:0 chroma goes
 * through the 2x2 IDCT, which reads AC terms.  Same rule, with min scaled size 1. */
static int reads_ac(int h, int v, int max_h, int max_v)
{
    int size = 1;
    while (size < 8 && max_h % (h * size * 2) == 0 && max_v % (v * size * 2) == 0)
        size *= 2;
    return size > 1;
}

#define MAX_COMPONENTS 4

size_t jl_jpeg_dc_scans(const uint8_t *in, size_t size, uint8_t *out)
{
    size_t p = 2, n = 2;
    int progressive = -1, dropped = 0, components = 0, i;
    int ids[MAX_COMPONENTS], keep_ac[MAX_COMPONENTS];
    if (size < 4 || in[0] != 0xFF || in[1] != 0xD8)
        return 0;
    memcpy(out, in, 2);
    while (p + 1 < size) {
        uint8_t m;
        size_t len, end;
        if (in[p] != 0xFF)
            return 0;
        m = in[p + 1];
        if (m == 0xFF) { /* fill byte before a marker */
            p++;
            continue;
        }
        if (m == 0xD9) { /* EOI */
            if (progressive != 1 || !dropped)
                return 0;
            out[n++] = 0xFF;
            out[n++] = 0xD9;
            return n;
        }
        if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD8) || p + 4 > size)
            return 0; /* no standalone marker belongs here */
        len = ((size_t)in[p + 2] << 8) | in[p + 3];
        end = p + 2 + len;
        if (len < 2 || end > size)
            return 0;
        if (is_sof(m)) {
            int h[MAX_COMPONENTS], v[MAX_COMPONENTS], max_h = 1, max_v = 1;
            progressive = m == 0xC2 || m == 0xCA; /* Huffman or arithmetic progressive */
            components = len >= 8 ? in[p + 9] : 0;
            if (!progressive || components < 1 || components > MAX_COMPONENTS ||
                len != 8 + 3 * (size_t)components)
                return 0;
            for (i = 0; i < components; i++) {
                const uint8_t *c = in + p + 10 + 3 * i;
                ids[i] = c[0];
                h[i] = c[1] >> 4;
                v[i] = c[1] & 15;
                if (h[i] < 1 || v[i] < 1)
                    return 0;
                max_h = h[i] > max_h ? h[i] : max_h;
                max_v = v[i] > max_v ? v[i] : max_v;
            }
            for (i = 0; i < components; i++)
                keep_ac[i] = reads_ac(h[i], v[i], max_h, max_v);
        }
        if (m == 0xDA) { /* SOS: components, then Ss, Se, Ah/Al */
            size_t ns = len >= 3 ? in[p + 4] : 0;
            size_t data_end;
            if (progressive != 1 || ns == 0 || len != 6 + 2 * ns)
                return 0;
            data_end = scan_data_end(in, end, size);
            /* Ss = 0: a DC scan; else an AC scan, always of one component */
            int keep = in[p + 5 + 2 * ns] == 0;
            for (i = 0; !keep && i < components; i++)
                keep = ids[i] == in[p + 5] && keep_ac[i];
            if (keep) {
                memcpy(out + n, in + p, data_end - p);
                n += data_end - p;
            } else {
                dropped = 1;
            }
            p = data_end;
            continue;
        }
        /* libjpeg reads APP0 (JFIF) and APP14 (Adobe: the colour transform) and
         * skips the other APPn and COM: those (EXIF, XMP, ICC) are not copied. */
        if (!((m >= 0xE1 && m <= 0xED) || m == 0xEF || m == 0xFE)) {
            memcpy(out + n, in + p, end - p);
            n += end - p;
        }
        p = end;
    }
    return 0; /* no EOI */
}
