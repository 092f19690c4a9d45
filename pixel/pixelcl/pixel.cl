// The chunk step of package pixel's chunked union-find (chunked.go,
// clusterChunk) on an OpenCL device, the same joins in the same order.

static int findRoot(__global int *parent, int i) {
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

// unite joins the trees of a and b under the smaller root: a cluster's
// root is its earliest hit, whatever the order of the joins.
static void unite(__global int *parent, int a, int b) {
	a = findRoot(parent, a);
	b = findRoot(parent, b);
	if (a < b) {
		parent[b] = a;
	} else if (b < a) {
		parent[a] = b;
	}
}

// cell is entry q of a matrix of 32-bit entries (wide) or 16-bit ones.
static int cell(__global const uchar *mat, int q, int wide) {
	return wide ? ((__global const int *)mat)[q] : ((__global const ushort *)mat)[q];
}

static void setCell(__global uchar *mat, int q, int wide, int v) {
	if (wide) {
		((__global int *)mat)[q] = v;
	} else {
		((__global ushort *)mat)[q] = (ushort)v;
	}
}

// label clusters chunks [bounds[k], bounds[k + 1]), work-item m of
// matrices taking chunks m, m + matrices, ...: each hit in turn is joined
// with the last hit so far of each of its nine pixels within dt of it,
// and becomes its pixel's last unless that one is later. mats holds a
// matrix of cells entries (the sensor with a border of one pixel, rows of
// stride) per work-item: 0, or the pixel's last hit as its index in the
// chunk plus one, in 16 bits as the paper's (chunks of at most 65,535
// hits) or 32 (wide); all zero between uses. Then every hit points at its
// cluster's root. Work-items past matrices (the launch is rounded up to
// whole work-groups) do nothing.
__kernel void label(__global const ushort *x, __global const ushort *y, __global const long *toa,
                    __global const int *bounds, int chunks, long dt, int stride, int cells, int matrices, int wide,
                    __global uchar *mats, __global int *parent) {
	int m = get_global_id(0);
	if (m >= matrices) {
		return;
	}
	__global uchar *mat = mats + (size_t)m * (size_t)cells * (wide ? 4 : 2);
	for (int k = m; k < chunks; k += matrices) {
		int lo = bounds[k], hi = bounds[k + 1], base = lo - 1;
		for (int i = lo; i < hi; i++) {
			parent[i] = i;
		}
		for (int i = lo; i < hi; i++) {
			int p = (y[i] + 1) * stride + x[i] + 1;
			long t = toa[i];
			for (int row = p - stride; row <= p + stride; row += stride) {
				for (int q = row - 1; q <= row + 1; q++) {
					int r = cell(mat, q, wide);
					if (r != 0) {
						long d = t - toa[base + r];
						if (d <= dt && d >= -dt) {
							unite(parent, i, base + r);
						}
					}
				}
			}
			int r = cell(mat, p, wide);
			if (r == 0 || toa[base + r] <= t) {
				setCell(mat, p, wide, i - base);
			}
		}
		for (int i = lo; i < hi; i++) {
			setCell(mat, (y[i] + 1) * stride + x[i] + 1, wide, 0);
			parent[i] = parent[parent[i]]; // a parent is an earlier hit, already at its root
		}
	}
}

// open reports whether the cluster of root r is left to the host (see
// pixel.ChunkJob): one of its hits may reach past the chunk, or its last
// hit comes more than span hits after r.
static bool isOpen(__global const uchar *reach, __global const int *last, int r, long span) {
	return reach[r] != 0 || (long)(last[r] - r) > span;
}

// count marks, for chunk k of the labelled hits, the roots of the clusters
// that may reach past it (a hit at or before start[k] or at or after
// end[k]) and each root's last hit, and counts the chunk's closed clusters
// and its open clusters' hits.
__kernel void count(__global const long *toa, __global const int *parent, __global const int *bounds, int chunks,
                    __global const long *start, __global const long *end, long span,
                    __global uchar *reach, __global int *last, __global int *closed, __global int *opened) {
	int k = get_global_id(0);
	if (k >= chunks) {
		return;
	}
	int lo = bounds[k], hi = bounds[k + 1];
	long s = start[k], e = end[k];
	for (int i = lo; i < hi; i++) {
		reach[i] = 0;
	}
	for (int i = lo; i < hi; i++) {
		int r = parent[i];
		if (toa[i] <= s || toa[i] >= e) {
			reach[r] = 1;
		}
		last[r] = i;
	}
	int c = 0, o = 0;
	for (int i = lo; i < hi; i++) {
		int r = parent[i];
		if (isOpen(reach, last, r, span)) {
			o++;
		} else if (r == i) {
			c++;
		}
	}
	closed[k] = c;
	opened[k] = o;
}

// fixedEnergy is an energy in units of 2^-40 keV as package pixel takes
// it (the float's value clamped to +-2^22 keV, NaN as 0, times 2^40, cut
// toward zero), from the float's bits: no double precision needed.
static long fixedEnergy(float e) {
	uint b = as_uint(e);
	int exp = (b >> 23) & 0xff;
	ulong v;
	if (exp == 0xff && (b & 0x7fffff) != 0) {
		v = 0;
	} else if (exp >= 127 + 22) { // 2^22 and beyond, infinities included
		v = 1UL << 62;
	} else {
		// The value is m * 2^(E - 150), E the exponent (1 for subnormals).
		ulong m = (b & 0x7fffff) | (exp != 0 ? 0x800000 : 0);
		int sh = max(exp, 1) - 150 + 40;
		v = sh >= 0 ? m << sh : (sh > -64 ? m >> -sh : 0);
	}
	return (b >> 31) != 0 ? -(long)v : (long)v;
}

// clampEnergy is the energy package pixel keeps as a cluster's peak.
static float clampEnergy(float e) {
	if (isnan(e)) {
		return 0;
	}
	return e < -0x1p22f ? -0x1p22f : e > 0x1p22f ? 0x1p22f : e;
}

// addMul adds v*m to the 128-bit integer w[0] (high), w[1] (low).
static void addMul(__global long *w, long v, ulong m) {
	ulong u = v < 0 ? (ulong)(-v) : (ulong)v;
	ulong lo = u * m, hi = mul_hi(u, m);
	if (v < 0) {
		hi = ~hi + (lo == 0 ? 1 : 0);
		lo = ~lo + 1;
	}
	ulong old = (ulong)w[1];
	w[1] = (long)(old + lo);
	w[0] += (long)hi + (old + lo < old ? 1 : 0);
}

// Record fields, as package pixel's Sum constants.
#define SUM_ROOT 0
#define SUM_LAST_HIT 1
#define SUM_SIZE 2
#define SUM_FIRST 3
#define SUM_LAST 4
#define SUM_TOT 5
#define SUM_TOTX 6
#define SUM_TOTY 7
#define SUM_X 8
#define SUM_Y 9
#define SUM_BOX 10
#define SUM_PEAK 11
#define SUM_ENERGY 12
#define SUM_PEAK_ENERGY 18

// sum writes the records of chunk k's closed clusters from closedAt[k] on
// (fields longs each; with energies when calibrated), in order of their
// roots, and lists its open clusters' hits from openAt[k] on, in order.
// slot holds, per root, its record's place.
__kernel void sum(__global const ushort *x, __global const ushort *y, __global const long *toa,
                  __global const ushort *tot, __global const float *energy, int calibrated, int fields,
                  __global const int *parent, __global const int *bounds, int chunks, long span,
                  __global const uchar *reach, __global const int *last, __global const int *closedAt,
                  __global const int *openAt, __global int *slot, __global long *sums, __global int *openHits) {
	int k = get_global_id(0);
	if (k >= chunks) {
		return;
	}
	int lo = bounds[k], hi = bounds[k + 1], c = closedAt[k], o = openAt[k];
	for (int i = lo; i < hi; i++) {
		int r = parent[i];
		if (isOpen(reach, last, r, span)) {
			openHits[o++] = i;
			continue;
		}
		ulong hx = x[i], hy = y[i];
		long w = tot[i], t = toa[i];
		__global long *s;
		if (r == i) {
			slot[i] = c;
			s = sums + (size_t)c * (size_t)fields;
			c++;
			s[SUM_ROOT] = i;
			s[SUM_LAST_HIT] = last[i];
			s[SUM_SIZE] = 1;
			s[SUM_FIRST] = t;
			s[SUM_LAST] = t;
			s[SUM_TOT] = w;
			s[SUM_TOTX] = w * (long)hx;
			s[SUM_TOTY] = w * (long)hy;
			s[SUM_X] = (long)hx;
			s[SUM_Y] = (long)hy;
			s[SUM_BOX] = (long)(hx | hx << 16 | hy << 32 | hy << 48);
			s[SUM_PEAK] = w;
			if (calibrated) {
				for (int f = SUM_ENERGY; f < SUM_PEAK_ENERGY; f++) {
					s[f] = 0;
				}
				s[SUM_PEAK_ENERGY] = as_uint(-INFINITY);
			}
		} else {
			s = sums + (size_t)slot[r] * (size_t)fields;
			s[SUM_SIZE]++;
			s[SUM_FIRST] = min(s[SUM_FIRST], t);
			s[SUM_LAST] = max(s[SUM_LAST], t);
			s[SUM_TOT] += w;
			s[SUM_TOTX] += w * (long)hx;
			s[SUM_TOTY] += w * (long)hy;
			s[SUM_X] += (long)hx;
			s[SUM_Y] += (long)hy;
			ulong b = (ulong)s[SUM_BOX];
			ulong x0 = min(b & 0xffff, hx), x1 = max(b >> 16 & 0xffff, hx);
			ulong y0 = min(b >> 32 & 0xffff, hy), y1 = max(b >> 48, hy);
			s[SUM_BOX] = (long)(x0 | x1 << 16 | y0 << 32 | y1 << 48);
			s[SUM_PEAK] = max(s[SUM_PEAK], w);
		}
		if (calibrated) {
			float e = energy[i];
			long v = fixedEnergy(e);
			addMul(s + SUM_ENERGY, v, 1);
			addMul(s + SUM_ENERGY + 2, v, hx);
			addMul(s + SUM_ENERGY + 4, v, hy);
			float p = as_float((uint)s[SUM_PEAK_ENERGY]), q = clampEnergy(e);
			if (q > p || (q == p && signbit(p) && !signbit(q))) {
				s[SUM_PEAK_ENERGY] = as_uint(q);
			}
		}
	}
}
