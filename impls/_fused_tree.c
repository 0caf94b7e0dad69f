/* The segment tree's two walks (impls/segment_tree.py) as one C call each, for
 * impls.fused_tree: the tree stays torch tensors, these loops read and write their float64
 * storage in place. Plain C (no torch or Python headers): compiled at first use by the
 * system's compiler and loaded with ctypes, so it works next to any torch build.
 *
 * The layout is SegmentTree's: per channel, level l (0 = leaves, height = top) is a row of
 * top * b ** (height - l) doubles; the children of node p of level l + 1 are p*b .. p*b+b-1
 * of level l. Both walks follow the eager code step for step (see the Python comments there),
 * so the same masses find the same leaves.
 */
#include <math.h>
#include <stdint.h>

enum { OP_SUM = 0, OP_MIN = 1, OP_MAX = 2 };

/* the first i in [0, n) with inclusive[i] > mass (torch.searchsorted(..., right=True)),
 * or n when there is none; branch-free halving (a mispredicted branch per halving cost more
 * than the search itself) */
static int64_t upper_bound(const double *inclusive, int64_t n, double mass) {
    if (n <= 0) return 0;
    const double *base = inclusive;
    while (n > 1) {
        int64_t half = n / 2;
        base = (base[half] <= mass) ? base + half : base;
        n -= half;
    }
    return (base - inclusive) + (*base <= mass);
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* one step of the descent in a block of n children: the mass kept just below the block's
 * total and at least 0, the child whose inclusive sum exceeds it (clamped to the block), and
 * the mass left inside that child */
static int64_t step(const double *block, const double *inclusive, int64_t n, double *mass) {
    double m = *mass, below = nextafter(inclusive[n - 1], 0.0);
    if (below < m || isnan(below)) m = below;  /* torch.minimum: NaN wins */
    if (m < 0.0) m = 0.0;                       /* clamp_min_(0) */
    int64_t k = upper_bound(inclusive, n, m);
    if (k > n - 1) k = n - 1;
    *mass = m - (inclusive[k] - block[k]);
    return k;
}

/* prefix-sum search of n masses through one channel: rows[l] is the channel's row of level
 * l (rows[height] the top, of `top` nodes); scratch_top holds `top` doubles, scratch b.
 * Writes the leaf found for each mass and its value (masses: float64, or float32 uniforms
 * times total). The batch goes down level by level (all
 * draws at one level, then the next): the loads of different draws do not depend on each
 * other, so the processor overlaps their cache misses. */
void fused_descend(int64_t n, const double *masses, const float *uniform, double total,
                   int64_t *leaf, double *value, int64_t height, int64_t b, int64_t top,
                   const double *const *rows, double *scratch, double *scratch_top,
                   double *mass) {
    const double *top_row = rows[height];
    double acc = 0.0;
    for (int64_t i = 0; i < top; ++i) { acc += top_row[i]; scratch_top[i] = acc; }
    for (int64_t j = 0; j < n; ++j) {
        /* the sampler's float32 uniforms times the total, in float64 (as the eager
         * .to(torch.float64).mul_(total)), or the masses given */
        mass[j] = uniform ? (double)uniform[j] * total : masses[j];
        leaf[j] = step(top_row, scratch_top, top, &mass[j]);
    }
    for (int64_t l = height - 1; l >= 0; --l) {
        const double *row = rows[l];
        for (int64_t j = 0; j < n; ++j) {
            if (j + 8 < n) PREFETCH(row + leaf[j + 8] * b);  /* a later draw's block */
            const double *block = row + leaf[j] * b;
            double s = 0.0;
            for (int64_t i = 0; i < b; ++i) { s += block[i]; scratch[i] = s; }
            leaf[j] = leaf[j] * b + step(block, scratch, b, &mass[j]);
        }
    }
    for (int64_t j = 0; j < n; ++j) value[j] = rows[0][leaf[j]];
}

static double reduce(int op, const double *x, int64_t n) {
    double r = x[0];
    if (op == OP_SUM) {
        for (int64_t i = 1; i < n; ++i) r += x[i];
    } else if (op == OP_MIN) {
        for (int64_t i = 1; i < n && !isnan(r); ++i) if (x[i] < r || isnan(x[i])) r = x[i];
    } else {
        for (int64_t i = 1; i < n && !isnan(r); ++i) if (x[i] > r || isnan(x[i])) r = x[i];
    }
    return r;
}

/* 1 when every index lies in [0, capacity) (no -1 of TensorDictMaxValueWriter either): what
 * the sampler's update_priority needs, where a repeated index takes its last entry's value,
 * as the writes below run in order */
int64_t fused_valid(int64_t n, const int64_t *index, int64_t capacity) {
    for (int64_t j = 0; j < n; ++j) if (index[j] < 0 || index[j] >= capacity) return 0;
    return 1;
}

/* the sampler's fast path: 1 when every index lies in [0, capacity) and none repeats (each
 * entry writes its position into a per-slot scratch; a repeat leaves one entry reading back
 * another's), else 0 (the eager path then filters and deduplicates) */
int64_t fused_distinct(int64_t n, const int64_t *index, int64_t capacity, int64_t *scratch) {
    if (!fused_valid(n, index, capacity)) return 0;
    for (int64_t j = 0; j < n; ++j) scratch[index[j]] = j;
    for (int64_t j = 0; j < n; ++j) if (scratch[index[j]] != j) return 0;
    return 1;
}

/* the sampler's write of valid indices, in order (a repeated index keeps its last entry's
 * raw priority and leaves, and its ancestors are recomputed from them): raw priorities stored,
 * then the leaves of its channels (q, q and, with a third channel, -raw) and their ancestors.
 * raw: float64 per index, or NULL for one raw_value for all; q: float64, or float32 (q_f32)
 * widened exactly, as copying it into the float64 leaves does */
static void recompute(int64_t n, const int64_t *index, int op, int64_t height, int64_t b,
                      int64_t top, double *const *r, double *root);

void fused_write(int64_t n, const int64_t *index, const double *raw, double raw_value,
                 const void *q, int32_t q_f32, int64_t c, const int32_t *ops, int64_t height,
                 int64_t b, int64_t top, double *const *rows, double *const *roots,
                 double *raw_store) {
    const double *q64 = (const double *)q;
    const float *q32 = (const float *)q;
    for (int64_t j = 0; j < n; ++j) raw_store[index[j]] = raw ? raw[j] : raw_value;
    for (int64_t ch = 0; ch < c; ++ch) {
        double *const *r = rows + ch * (height + 1);
        if (ch < 2) {
            for (int64_t j = 0; j < n; ++j) r[0][index[j]] = q_f32 ? (double)q32[j] : q64[j];
        } else {
            for (int64_t j = 0; j < n; ++j) r[0][index[j]] = -(raw ? raw[j] : raw_value);
        }
        recompute(n, index, ops[ch], height, b, top, r, roots[ch]);
    }
}

/* eviction before a write (max_priority_within_buffer): raw priorities and the leaves of one
 * channel set to `value` (+inf), its ancestors recomputed */
void fused_fill(int64_t n, const int64_t *index, double value, int32_t op, int64_t height,
                int64_t b, int64_t top, double *const *rows, double *root, double *raw_store) {
    for (int64_t j = 0; j < n; ++j) { raw_store[index[j]] = value; rows[0][index[j]] = value; }
    recompute(n, index, op, height, b, top, rows, root);
}

/* write n leaves of c channels (values: [c, n]; channel ch's rows are rows[ch * (height + 1)
 * + l], its operation ops[ch], its root roots[ch]) and recompute their ancestors, then each
 * root from the whole top. A parent listed twice is recomputed twice from the same children:
 * the same value. Returns -1, or the position of the first index outside [0, size). */
int64_t fused_set(int64_t n, const int64_t *index, const double *values, int64_t c,
                  const int32_t *ops, int64_t height, int64_t b, int64_t top, int64_t size,
                  double *const *rows, double *const *roots) {
    /* checked before anything is written (as __setitem__ does): an index outside [0, size)
     * is returned, nothing changed; -1 when every index is valid */
    for (int64_t j = 0; j < n; ++j) if (index[j] < 0 || index[j] >= size) return j;
    for (int64_t ch = 0; ch < c; ++ch) {
        double *const *r = rows + ch * (height + 1);
        const double *v = values + ch * n;
        for (int64_t j = 0; j < n; ++j) r[0][index[j]] = v[j];
        recompute(n, index, ops[ch], height, b, top, r, roots[ch]);
    }
    return -1;
}

/* level by level (every write's parent at one level, then the next), for the same overlap of
 * cache misses as the descent; a level's parents are recomputed after all its children. A
 * parent that the previous write shares is skipped: its children are final for this level, so
 * recomputing it gives the same value. Consecutive slots (an extend: the ring's next rows)
 * then cost one reduction per distinct parent, b times fewer at each level. */
static void recompute(int64_t n, const int64_t *index, int op, int64_t height, int64_t b,
                      int64_t top, double *const *r, double *root) {
    int64_t div = 1;
    for (int64_t l = 1; l <= height; ++l) {
        div *= b;
        double *parents = r[l];
        const double *children = r[l - 1];
        int64_t last = -1;
        for (int64_t j = 0; j < n; ++j) {
            if (j + 8 < n) PREFETCH(children + index[j + 8] / div * b);
            int64_t node = index[j] / div;
            if (node == last) continue;
            last = node;
            parents[node] = reduce(op, children + node * b, b);
        }
    }
    *root = reduce(op, r[height], top);
}
