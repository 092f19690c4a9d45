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

// label clusters chunks [bounds[k], bounds[k + 1]), work-item m of
// matrices taking chunks m, m + matrices, ...: each hit in turn is joined
// with the last hit so far of each of its nine pixels within dt of it,
// and becomes its pixel's last unless that one is later. mats holds a
// matrix of cells entries (the sensor with a border of one pixel, rows of
// stride) per work-item: 0, or the pixel's last hit as its index in the
// chunk plus one; all zero between uses. Then every hit points at its
// cluster's root. Work-items past matrices (the launch is rounded up to
// whole work-groups) do nothing.
__kernel void label(__global const ushort *x, __global const ushort *y, __global const long *toa,
                    __global const int *bounds, int chunks, long dt, int stride, int cells, int matrices,
                    __global int *mats, __global int *parent) {
	int m = get_global_id(0);
	if (m >= matrices) {
		return;
	}
	__global int *mat = mats + (size_t)m * (size_t)cells;
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
					int r = mat[q];
					if (r != 0) {
						long d = t - toa[base + r];
						if (d <= dt && d >= -dt) {
							unite(parent, i, base + r);
						}
					}
				}
			}
			int r = mat[p];
			if (r == 0 || toa[base + r] <= t) {
				mat[p] = i - base;
			}
		}
		for (int i = lo; i < hi; i++) {
			mat[(y[i] + 1) * stride + x[i] + 1] = 0;
			parent[i] = parent[parent[i]]; // a parent is an earlier hit, already at its root
		}
	}
}
