// CLUE on an OpenCL device: the steps of package clue (index.go, clue.go)
// on the grid of clue.Plan, one work-item per point, in double
// precision. Contraction into fused multiply-adds is off, and every
// distance, density term and exponential is computed by the same
// operations in the same order as the Go code, so that the results are
// the same bits.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#define MAXDIM 16
#define FLAT 0
#define CMS 1
#define GAUSSIAN 2
#define EXPONENTIAL 3
#define FOLLOWER 0
#define SEED 1
#define OUTLIER 2

// plan_t is cluecl.plan: the grid of clue.Plan and the parameters.
typedef struct {
	double lo[MAXDIM], inv[MAXDIM], last[MAXDIM];
	int n[MAXDIM];
	int dim, perLayer, tiles, remapped;
	int layerOffset, kernelKind;
	double kparam, kamp;
	double dcPad, dcLimit, dmPad, dmLimit, firstPad, firstLimit;
	double deltac, deltao, rhoc;
	int points, layered;
} plan_t;

// cell is clue's grid.cell: the tile coordinate of v along dimension d,
// clamped to the grid.
static int cell(__constant plan_t *p, int d, double v) {
	double c = (v - p->lo[d]) * p->inv[d];
	if (c < 0.0) {
		c = 0.0;
	}
	if (c > p->last[d]) {
		c = p->last[d];
	}
	return (int)c;
}

// tiles sets the tile of every input point (clue's grid.tileOf).
__kernel void tiles(__constant plan_t *p, __global const double *coords, __global const int *layer,
                    __global const int *layers, __global int *key) {
	int i = get_global_id(0), n = p->points;
	if (i >= n) {
		return;
	}
	int t = 0;
	for (int d = p->dim - 1; d >= 0; d--) {
		t = t * p->n[d] + cell(p, d, coords[d * n + i]);
	}
	int l = 0;
	if (p->layered) {
		if (!p->remapped) {
			l = layer[i] - p->layerOffset;
		} else { // the place of the id among the sorted distinct ids
			int a = 0, b = p->remapped;
			while (a < b) {
				int m = (a + b) / 2;
				if (layers[m] < layer[i]) {
					a = m + 1;
				} else {
					b = m;
				}
			}
			l = a;
		}
	}
	key[i] = l * p->perLayer + t;
}

// count counts the points of every tile.
__kernel void count(__global const int *key, __global int *counts, int n) {
	int i = get_global_id(0);
	if (i < n) {
		atomic_inc(&counts[key[i]]);
	}
}

// scan turns each work-group's stretch of data into its exclusive prefix
// sums, and writes the stretch's total to sums.
__kernel void scan(__global int *data, __global int *sums, int len, __local int *tmp) {
	int gid = get_global_id(0), lid = get_local_id(0), wg = get_local_size(0);
	int v = gid < len ? data[gid] : 0;
	tmp[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int off = 1; off < wg; off <<= 1) {
		int a = lid >= off ? tmp[lid - off] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		tmp[lid] += a;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (gid < len) {
		data[gid] = tmp[lid] - v;
	}
	if (lid == wg - 1) {
		sums[get_group_id(0)] = tmp[lid];
	}
}

// addSums adds to each work-group's stretch the scanned total of those
// before it.
__kernel void addSums(__global int *data, __global const int *sums, int len) {
	int gid = get_global_id(0);
	if (gid < len) {
		data[gid] += sums[get_group_id(0)];
	}
}

// scatter deals the points into their tiles, in any order within one.
__kernel void scatter(__global const int *key, __global const int *start, __global int *fill, __global int *order, int n) {
	int i = get_global_id(0);
	if (i < n) {
		int t = key[i];
		order[start[t] + atomic_inc(&fill[t])] = i;
	}
}

// sortTiles puts each tile's points in input order (a Shell sort: most
// tiles hold a few points, a few may hold many).
__kernel void sortTiles(__global const int *start, __global int *order, int tiles) {
	int t = get_global_id(0);
	if (t >= tiles) {
		return;
	}
	int lo = start[t], m = start[t + 1] - lo;
	__global int *a = order + lo;
	int gap = 1;
	while (gap < m / 3) {
		gap = 3 * gap + 1;
	}
	for (; gap > 0; gap /= 3) {
		for (int i = gap; i < m; i++) {
			int v = a[i], j = i;
			while (j >= gap && a[j - gap] > v) {
				a[j] = a[j - gap];
				j -= gap;
			}
			a[j] = v;
		}
	}
}

// gather writes the columns in grid order, and the first tile of each
// point's layer.
__kernel void gather(__constant plan_t *p, __global const int *order, __global const int *key, __global const double *coords,
                     __global const double *weight, __global double *gcoords, __global double *gweight, __global int *layerTile) {
	int k = get_global_id(0), n = p->points;
	if (k >= n) {
		return;
	}
	int i = order[k];
	for (int d = 0; d < p->dim; d++) {
		gcoords[d * n + k] = coords[d * n + i];
	}
	gweight[k] = weight[i];
	layerTile[k] = key[i] / p->perLayer * p->perLayer;
}

// expPortable is clue's exp, step for step.
static double expPortable(double x) {
	const double ln2Hi = 6.93147180369123816490e-01, ln2Lo = 1.90821492927058770002e-10, log2e = 1.44269504088896338700e+00;
	const double overflow = 7.09782712893383973096e+02, underflow = -7.45133219101941108420e+02, nearZero = 1.0 / 268435456.0;
	const double p1 = 1.66666666666666019037e-01, p2 = -2.77777777770155933842e-03, p3 = 6.61375632143793436117e-05,
	             p4 = -1.65339022054652515390e-06, p5 = 4.13813679705723846039e-08;
	if (isnan(x)) {
		return x;
	}
	if (x > overflow) {
		return INFINITY;
	}
	if (x < underflow) {
		return 0.0;
	}
	if (-nearZero < x && x < nearZero) {
		return 1.0 + x;
	}
	int k = x < 0.0 ? (int)(log2e * x - 0.5) : (int)(log2e * x + 0.5);
	double hi = x - (double)k * ln2Hi;
	double lo = (double)k * ln2Lo;
	double r = hi - lo;
	double t = r * r;
	double poly = p4 + t * p5;
	poly = p3 + t * poly;
	poly = p2 + t * poly;
	poly = p1 + t * poly;
	double c = r - t * poly;
	double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
	return ldexp(y, k);
}

// chi is the kernel's weight of a point at distance d (clue's Kernel.chi).
static double chi(__constant plan_t *p, double d) {
	switch (p->kernelKind) {
	case CMS:
		return 0.5;
	case GAUSSIAN:
		return p->kamp * expPortable(-d * d / (2.0 * p->kparam * p->kparam));
	case EXPONENTIAL:
		return p->kamp * expPortable(-p->kparam * d);
	}
	return 1.0;
}

// search walks the points of grid point k's layer in the tiles a search
// of padded radius r reads, in clue's order (grid.spans): rows along the
// dimensions from 1 up, each row's tiles along dimension 0 one run. For
// each point j within limit it runs VISIT with j and its squared
// distance d2.
#define SEARCH(p, start, gcoords, layerTile, k, r, limit, VISIT)                          \
	{                                                                                 \
		int n_ = (p)->points, dim_ = (p)->dim;                                     \
		double x_[MAXDIM];                                                         \
		int lo_[MAXDIM], hi_[MAXDIM], c_[MAXDIM];                                  \
		for (int d = 0; d < dim_; d++) {                                          \
			x_[d] = gcoords[d * n_ + (k)];                                     \
			lo_[d] = cell(p, d, x_[d] - (r));                                  \
			hi_[d] = cell(p, d, x_[d] + (r));                                  \
			c_[d] = lo_[d];                                                    \
		}                                                                          \
		int base_ = layerTile[k];                                                  \
		for (;;) {                                                                 \
			int row_ = 0;                                                      \
			for (int d = dim_ - 1; d >= 1; d--) {                             \
				row_ = row_ * (p)->n[d] + c_[d];                           \
			}                                                                  \
			row_ = base_ + row_ * (p)->n[0];                                   \
			int end_ = start[row_ + hi_[0] + 1];                               \
			for (int j = start[row_ + lo_[0]]; j < end_; j++) {                \
				double d2 = 0.0;                                           \
				for (int d = 0; d < dim_; d++) {                          \
					double dx = gcoords[d * n_ + j] - x_[d];           \
					d2 += dx * dx;                                     \
				}                                                          \
				if (d2 <= (limit)) {                                       \
					VISIT                                              \
				}                                                          \
			}                                                                  \
			int d = 1;                                                         \
			for (; d < dim_; d++) {                                            \
				if (c_[d] < hi_[d]) {                                      \
					c_[d]++;                                           \
					break;                                             \
				}                                                          \
				c_[d] = lo_[d];                                            \
			}                                                                  \
			if (d >= dim_) {                                                   \
				break;                                                     \
			}                                                                  \
		}                                                                          \
	}

// density sums every grid point's density: a double-double in clue's
// order of the neighbours (exact, whatever the order, for whole weights).
__kernel void density(__constant plan_t *p, __global const int *start, __global const double *gcoords, __global const double *gweight,
                      __global const int *layerTile, __global double *rho) {
	int k = get_global_id(0);
	if (k >= p->points) {
		return;
	}
	double sum = 0.0, comp = 0.0;
	SEARCH(p, start, gcoords, layerTile, k, p->dcPad, p->dcLimit, {
		double term = gweight[j];
		if (j != k && p->kernelKind != FLAT) {
			term *= chi(p, sqrt(d2));
		}
		double t = sum + term;
		double b = t - sum;
		comp += (sum - (t - b)) + (term - b);
		sum = t;
	})
	rho[k] = sum + comp;
}

// nearestHigher finds every grid point's nearest higher one within dm:
// the smallest distance, on an exact tie the higher density, then the
// lower input index.
__kernel void nearestHigher(__constant plan_t *p, __global const int *start, __global const double *gcoords,
                            __global const int *layerTile, __global const int *order, __global const double *rho,
                            __global int *nh, __global double *delta) {
	int k = get_global_id(0);
	if (k >= p->points) {
		return;
	}
	double rhoK = rho[k];
	int idxK = order[k], best = -1;
	double bestD = INFINITY;
	// Within a small radius first: a higher point there bounds the
	// nearest, which is then among those seen; the order of the search
	// does not matter, the rule being a strict order.
#define SEE                                                                                                          \
	{                                                                                                            \
		double rj = rho[j];                                                                                  \
		if (rj > rhoK || rj == rhoK && order[j] > idxK) {                                                   \
			double d = sqrt(d2);                                                                         \
			if (best < 0 || d < bestD || d == bestD && (rj > rho[best] || rj == rho[best] && order[j] < order[best])) { \
				best = j;                                                                            \
				bestD = d;                                                                           \
			}                                                                                            \
		}                                                                                                    \
	}
	SEARCH(p, start, gcoords, layerTile, k, p->firstPad, p->firstLimit, SEE)
	if (best < 0) {
		SEARCH(p, start, gcoords, layerTile, k, p->dmPad, p->dmLimit, SEE)
	}
#undef SEE
	nh[k] = best;
	delta[k] = bestD;
}

// classify makes every point a seed, an outlier or a follower of its
// nearest-higher, and marks the seeds in input order.
__kernel void classify(__constant plan_t *p, __global const double *rho, __global const double *delta, __global const int *nh,
                       __global const int *order, __global uchar *kind, __global int *up, __global int *seedIn) {
	int k = get_global_id(0);
	if (k >= p->points) {
		return;
	}
	uchar c = FOLLOWER;
	int u = nh[k];
	if (delta[k] > p->deltac && rho[k] >= p->rhoc) {
		c = SEED;
		u = k;
	} else if (delta[k] > p->deltao && rho[k] < p->rhoc) {
		c = OUTLIER;
		u = k;
	}
	if (u < 0) { // a follower of nothing
		u = k;
	}
	kind[k] = c;
	up[k] = u;
	seedIn[order[k]] = c == SEED;
}

// seedIds gives the seeds their ids (their place among the seeds in input
// order), -1 the others for now.
__kernel void seedIds(__global const int *order, __global const uchar *kind, __global const int *ids, __global int *cid, int n) {
	int k = get_global_id(0);
	if (k < n) {
		cid[k] = kind[k] == SEED ? ids[order[k]] : -1;
	}
}

// jump points every point at the point its own points at, and notes a
// move in moved[j].
__kernel void jump(__global const int *up, __global int *next, __global int *moved, int j, int n) {
	int k = get_global_id(0);
	if (k < n) {
		int u = up[up[k]];
		next[k] = u;
		if (u != up[k]) {
			moved[j] = 1;
		}
	}
}

// assign gives every follower its tree's root's id.
__kernel void assign(__global const uchar *kind, __global const int *up, __global int *cid, int n) {
	int k = get_global_id(0);
	if (k < n && kind[k] == FOLLOWER) {
		cid[k] = cid[up[k]];
	}
}

// collect writes the results in input order, the nearest-higher points'
// indices plus base, and counts the outliers into seeds[n + 1] (seeds[n]
// is the number of seeds), a work-group's count at a time.
__kernel void collect(__global const int *order, __global const double *rho, __global const double *delta, __global const int *nh,
                      __global const uchar *kind, __global const int *cid, __global double *outRho, __global double *outDelta,
                      __global int *outNH, __global uchar *outSeed, __global int *outCID, int base, int n, __global int *seeds) {
	__local int outliers;
	int k = get_global_id(0);
	if (get_local_id(0) == 0) {
		outliers = 0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (k < n) {
		int i = order[k];
		outRho[i] = rho[k];
		outDelta[i] = delta[k];
		outNH[i] = nh[k] >= 0 ? order[nh[k]] + base : -1;
		outSeed[i] = kind[k] == SEED;
		outCID[i] = cid[k];
		if (cid[k] < 0) {
			atomic_inc(&outliers);
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (get_local_id(0) == 0 && outliers > 0) {
		atomic_add(&seeds[n + 1], outliers);
	}
}
