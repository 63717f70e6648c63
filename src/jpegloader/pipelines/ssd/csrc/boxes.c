#include "boxes.h"

#include <math.h>
#include <stdlib.h>

/* torch.max(dim) on the CPU: NaN wins, and the first of equal maxima is kept. */
static inline int beats(float v, float best)
{
    return v > best || (isnan(v) && !isnan(best));
}

int jl_encode_boxes(const float *boxes, const int64_t *labels, int n, const float *dboxes,
                    int m, float criteria, float *out_xywh, int64_t *out_labels)
{
    /* Row by row of the IoU matrix (one ground-truth box against every
     * default box), in straight loops the compiler vectorises: the default
     * boxes' coordinates and area as planes, and per default box the best
     * IoU so far and its ground-truth index. */
    float *buf = malloc((size_t)m * 7 * sizeof(float));
    int32_t *col_arg = malloc((size_t)m * sizeof(int32_t));
    int32_t *gt_best = malloc((size_t)n * sizeof(int32_t));
    float *dl, *dt, *dr, *db, *darea, *row, *col_best;
    int i, j;
    if (n < 1 || !buf || !col_arg || !gt_best) {
        free(buf);
        free(col_arg);
        free(gt_best);
        return -1;
    }
    dl = buf, dt = dl + m, dr = dt + m, db = dr + m, darea = db + m, row = darea + m;
    col_best = row + m;
    for (j = 0; j < m; j++) {
        const float *d = dboxes + 4 * j;
        dl[j] = d[0], dt[j] = d[1], dr[j] = d[2], db[j] = d[3];
        darea[j] = (d[2] - d[0]) * (d[3] - d[1]);
    }
    for (i = 0; i < n; i++) {
        const float *a = boxes + 4 * i;
        const float al = a[0], at = a[1], ar = a[2], ab = a[3];
        const float area_a = (ar - al) * (ab - at);
        float best;
        int arg;
        /* boxes.iou: lt and rb, clamp_(min=0) (which keeps NaN), intersection,
         * then (area_a + area_b) - inter, each step rounded to float32 */
        for (j = 0; j < m; j++) {
            float l = al > dl[j] ? al : dl[j], t = at > dt[j] ? at : dt[j];
            float r = ar < dr[j] ? ar : dr[j], b = ab < db[j] ? ab : db[j];
            float w = r - l, h = b - t, inter;
            w = w < 0.0f ? 0.0f : w;
            h = h < 0.0f ? 0.0f : h;
            inter = w * h;
            row[j] = inter / (area_a + darea[j] - inter);
        }
        /* per default box: the best ground-truth box so far */
        if (i == 0) {
            for (j = 0; j < m; j++) {
                col_best[j] = row[j];
                col_arg[j] = 0;
            }
        } else {
            for (j = 0; j < m; j++) {
                int take = beats(row[j], col_best[j]);
                col_best[j] = take ? row[j] : col_best[j];
                col_arg[j] = take ? i : col_arg[j];
            }
        }
        /* per ground-truth box: its best default box */
        best = row[0];
        arg = 0;
        for (j = 1; j < m; j++)
            if (beats(row[j], best)) {
                best = row[j];
                arg = j;
            }
        gt_best[i] = arg;
    }
    /* index_fill_(best_dbox, 2.0) and best_gt[best_dbox] = arange(n): every
     * ground-truth box keeps its best default box; of two claiming the same
     * one, the later wins. */
    for (i = 0; i < n; i++) {
        col_best[gt_best[i]] = 2.0f;
        col_arg[gt_best[i]] = i;
    }
    for (j = 0; j < m; j++) {
        float *o = out_xywh + 4 * j;
        const float *src = dboxes + 4 * j;
        if (col_best[j] > criteria) {
            src = boxes + 4 * col_arg[j];
            out_labels[j] = labels[col_arg[j]];
        } else {
            out_labels[j] = 0;
        }
        o[0] = 0.5f * (src[0] + src[2]);
        o[1] = 0.5f * (src[1] + src[3]);
        o[2] = src[2] - src[0];
        o[3] = src[3] - src[1];
    }
    free(buf);
    free(col_arg);
    free(gt_best);
    return 0;
}

int jl_crop_boxes(const float *boxes, int n, double left, double top, double w, double h,
                  float *out, int64_t *kept)
{
    /* right and bottom are summed in double (Python) and then rounded */
    const float l = (float)left, t = (float)top, r = (float)(left + w),
                b = (float)(top + h), fw = (float)w, fh = (float)h;
    int i, m = 0;
    for (i = 0; i < n; i++) {
        const float *a = boxes + 4 * i;
        const float xc = 0.5f * (a[0] + a[2]), yc = 0.5f * (a[1] + a[3]);
        float *o = out + 4 * m;
        if (!(xc > l && xc < r && yc > t && yc < b))
            continue;
        o[0] = ((a[0] < l ? l : a[0]) - l) / fw;
        o[1] = ((a[1] < t ? t : a[1]) - t) / fh;
        o[2] = ((a[2] > r ? r : a[2]) - l) / fw;
        o[3] = ((a[3] > b ? b : a[3]) - t) / fh;
        kept[m++] = i;
    }
    return m;
}
