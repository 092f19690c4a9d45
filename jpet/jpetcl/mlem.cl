// List-mode MLEM of a two-strip J-PET on an OpenCL device: the formulas of
// package jpet (kernel.go, mlem.go), in double precision (with SINGLE
// defined, the kernel values' square roots and exponentials in single
// precision), one work-item per event. Contraction into fused
// multiply-adds is off so that the ellipse test, on which a pixel's
// membership of an event hangs, rounds as the Go code does.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
	double y, z, tan, sec;
	int z0, z1, y0, y1;
} jpet_event;

typedef struct {
	double r, isz2, isdl2, norm, pixel, zfirst, yfirst;
	int ny, gaussian, sensitivity, pad;
} params_t;

// An event's kernel over its box is computed a row (iy) at a time: what
// depends on the event alone (ev_t), then on the row (row_t), then the
// cell; every quantity by the same operations in the same order as the
// whole formula of package jpet, so the values are the same bits.
typedef struct {
	double t, sec, sec2, ea, eb, ec;
} ev_t;

typedef struct {
	double ady2, bdy, dyrt; // the ellipse test's and u's terms of the row
	double scale, qrow;     // the Gaussian kernel's
	double n0, n1, b0, b1, a0; // the analytic kernel's: n = n0 + n1 u, b = b0 + b1 u, a = 2 isz2 u u + a0
} row_t;

static ev_t eventTerms(const jpet_event *e, __constant params_t *p) {
	ev_t c;
	c.t = e->tan;
	c.sec = e->sec;
	c.sec2 = c.sec * c.sec;
	c.ea = 4.0 * c.sec2 * p->isdl2 + 2.0 * c.t * c.t * p->isz2;
	c.eb = -4.0 * c.t * p->isz2;
	c.ec = 2.0 * p->isz2;
	return c;
}

static row_t rowTerms(const jpet_event *e, const ev_t *c, __constant params_t *p, int iy) {
	row_t r;
	double dy = (p->yfirst - e->y) - (double)iy * p->pixel;
	r.ady2 = c->ea * dy * dy;
	r.bdy = c->eb * dy;
	double Y = p->yfirst - (double)iy * p->pixel;
	double dyr = Y - e->y;
	r.dyrt = dyr * c->t;
	double a1 = -(Y - p->r) * c->sec2, a2 = -(Y + p->r) * c->sec2, a3 = -2.0 * Y * c->sec * c->t;
	double b3 = -2.0 * dyr * c->sec;
	double aCa = (a1 * a1 + a2 * a2) * p->isz2 + a3 * a3 * p->isdl2;
	if (p->gaussian) {
#ifdef SINGLE
		r.scale = (double)((float)p->norm * rsqrt((float)aCa));
#else
		r.scale = p->norm / sqrt(aCa);
#endif
		r.qrow = 2.0 * p->isdl2 * c->sec2 * dyr * dyr;
		return r;
	}
	double o1 = a1 * c->t, o2 = a2 * c->t, o3 = -Y * c->sec * (1.0 + 2.0 * c->t * c->t);
	r.n0 = aCa + 2.0 * o3 * b3 * p->isdl2;
	r.n1 = 2.0 * (o1 + o2) * p->isz2;
	r.b0 = a3 * b3 * p->isdl2;
	r.b1 = (a1 + a2) * p->isz2;
	r.a0 = b3 * b3 * p->isdl2;
	return r;
}

// The kernel value at column iz of the row, or -1 outside the event's
// 3-sigma ellipse.
static double cellValue(const jpet_event *e, const ev_t *c, const row_t *r, __constant params_t *p, int iz) {
	double dz = p->zfirst + (double)iz * p->pixel - e->z;
	if (r->ady2 + r->bdy * dz + c->ec * dz * dz > 9.0) {
		return -1.0;
	}
	double u = dz - r->dyrt;
#ifdef SINGLE
	// The exponent in double (its terms cancel), the reciprocal of n from
	// single precision by a Newton step; the square root and the
	// exponential, the costly operations in double on a GPU, in single.
	if (p->gaussian) {
		return (double)((float)r->scale * exp((float)(-p->isz2 * u * u - r->qrow)));
	}
	double n = r->n0 + r->n1 * u;
	double b = r->b0 + r->b1 * u;
	double a = 2.0 * p->isz2 * u * u + r->a0;
	double inv = (double)(1.0f / (float)n);
	inv = inv * (2.0 - n * inv);
	return (double)((float)p->norm * rsqrt((float)n) * exp((float)(-0.5 * (a - b * b * inv))));
#else
	if (p->gaussian) {
		return r->scale * exp(-p->isz2 * u * u - r->qrow);
	}
	double n = r->n0 + r->n1 * u;
	double b = r->b0 + r->b1 * u;
	double a = 2.0 * p->isz2 * u * u + r->a0;
	return p->norm / sqrt(n) * exp(-0.5 * (a - b * b / n));
#endif
}

// Adds v to *p: a compare-and-swap loop, OpenCL 1.2 having no atomic add
// of doubles.
static void add(volatile __global double *p, double v) {
	union { ulong u; double d; } old, sum;
	do {
		old.d = *p;
		sum.d = old.d + v;
	} while (atom_cmpxchg((volatile __global ulong *)p, old.u, sum.u) != old.u);
}

static void addLocal(volatile __local double *p, double v) {
	union { ulong u; double d; } old, sum;
	do {
		old.d = *p;
		sum.d = old.d + v;
	} while (atom_cmpxchg((volatile __local ulong *)p, old.u, sum.u) != old.u);
}

// value is the kernel value of event e at (iz, iy), or -1 outside its
// ellipse: the row's terms for one cell, once the cell is known to be
// inside (the test is cellValue's, to the bit).
static double value(const jpet_event *e, __constant params_t *p, int iz, int iy) {
	ev_t c = eventTerms(e, p);
	double dy = (p->yfirst - e->y) - (double)iy * p->pixel;
	double dz = p->zfirst + (double)iz * p->pixel - e->z;
	if (c.ea * dy * dy + c.eb * dy * dz + c.ec * dz * dz > 9.0) {
		return -1.0;
	}
	row_t r = rowTerms(e, &c, p, iy);
	return cellValue(e, &c, &r, p, iz);
}

// weighted is a cell's term of its event's denominator: its kernel value
// k times the image there (and the sensitivity, when used).
static double weighted(double k, __constant params_t *p, __global const double *rho, __global const double *sens, int pix) {
	double v = k * rho[pix];
	if (p->sensitivity) {
		v *= sens[pix];
	}
	return v;
}

// What walk does at each cell of an event's ellipse: sum the event's
// denominator, or add K / denominator to the global or a local image.
enum { SUM, ADD_GLOBAL, ADD_LOCAL };

// walk does op at every cell of event e's box inside its ellipse, in rows
// [from, e's last) in steps of step, and returns the sum (for SUM: of
// K * rho * sensitivity). inv is 1 / the denominator; acc and img are the
// global and the local image (the one not added to is 0).
static double walk(const jpet_event *e, __constant params_t *p, int from, int step, int op, double inv,
                   __global const double *rho, __global const double *sens, __global double *acc, __local double *img) {
	ev_t c = eventTerms(e, p);
	double sum = 0.0;
	for (int iy = from; iy < e->y1; iy += step) {
		row_t r = rowTerms(e, &c, p, iy);
		for (int iz = e->z0; iz < e->z1; iz++) {
			double k = cellValue(e, &c, &r, p, iz);
			if (k < 0.0) {
				continue;
			}
			int pix = iz * p->ny + iy;
			if (op == SUM) {
				sum += weighted(k, p, rho, sens, pix);
			} else if (op == ADD_GLOBAL) {
				add(&acc[pix], k * inv);
			} else {
				addLocal(&img[pix], k * inv);
			}
		}
	}
	return sum;
}

// One iteration's back projection of events [lo, n), one work-item per
// event: acc[pixel] += K(pixel) / denominator. Images are column-major
// (iz * ny + iy), as in package jpet.
__kernel void project(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                      __global const double *rho, __global const double *sens, __global double *acc) {
	int i = lo + get_global_id(0);
	if (i >= n) {
		return;
	}
	jpet_event e = events[i];
	__local double *none = 0;
	double denom = walk(&e, p, e.y0, 1, SUM, 0.0, rho, sens, acc, none);
	if (denom == 0.0) {
		return;
	}
	walk(&e, p, e.y0, 1, ADD_GLOBAL, 1.0 / denom, rho, sens, acc, none);
}

// flush adds a work-group's local image into the work-group's own slot of
// partial, summed into the image by update: no two work-groups share a
// slot, so no atomics, and the slots' sum runs in a fixed order.
static void flush(__local double *img, int pixels, __global double *partial) {
	barrier(CLK_LOCAL_MEM_FENCE);
	__global double *slot = partial + (size_t)get_group_id(0) * pixels;
	for (int q = get_local_id(0); q < pixels; q += get_local_size(0)) {
		if (img[q] != 0.0) {
			slot[q] += img[q];
		}
	}
}

// project with an image of its own per work-group, in local memory, added
// to the work-group's slot of partial at the end: the many events that
// touch one pixel then contend within a work-group only. The work-items take events [lo, n)
// in strides of the whole launch.
__kernel void projectLocal(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                           __global const double *rho, __global const double *sens, __global double *partial,
                           __local double *img, int pixels) {
	for (int q = get_local_id(0); q < pixels; q += get_local_size(0)) {
		img[q] = 0.0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int i = lo + get_global_id(0); i < n; i += get_global_size(0)) {
		jpet_event e = events[i];
		double denom = walk(&e, p, e.y0, 1, SUM, 0.0, rho, sens, 0, img);
		if (denom == 0.0) {
			continue;
		}
		walk(&e, p, e.y0, 1, ADD_LOCAL, 1.0 / denom, rho, sens, 0, img);
	}
	flush(img, pixels, partial);
}

// The teams of the layouts below: a team of TEAM work-items an event
// (TEAM, and MAXROWS below, come from the build options: jpetcl.go).

// stridedSum is a lane's part of event e's denominator, the team's lanes
// taking the cells of its box in strides of TEAM.
static double stridedSum(const jpet_event *e, __constant params_t *p, int lane, __global const double *rho,
                         __global const double *sens) {
	int rows = e->y1 - e->y0, cells = (e->z1 - e->z0) * rows;
	double d = 0.0;
	for (int c = lane; c < cells; c += TEAM) {
		int iz = e->z0 + c / rows, iy = e->y0 + c % rows;
		double k = value(e, p, iz, iy);
		if (k >= 0.0) {
			d += weighted(k, p, rho, sens, iz * p->ny + iy);
		}
	}
	return d;
}

// stridedAdd adds K * inv at the lane's cells of stridedSum to img.
static void stridedAdd(const jpet_event *e, __constant params_t *p, int lane, double inv, __local double *img) {
	int rows = e->y1 - e->y0, cells = (e->z1 - e->z0) * rows;
	for (int c = lane; c < cells; c += TEAM) {
		int iz = e->z0 + c / rows, iy = e->y0 + c % rows;
		double k = value(e, p, iz, iy);
		if (k >= 0.0) {
			addLocal(&img[iz * p->ny + iy], k * inv);
		}
	}
}

// teamSum is the sum of the parts d of a team's lanes, through part (a
// double a work-item); every work-item of the work-group calls it.
static double teamSum(__local double *part, int lid, int lane, double d) {
	part[lid] = d;
	barrier(CLK_LOCAL_MEM_FENCE);
	double sum = 0.0;
	for (int l = lid - lane; l < lid - lane + TEAM; l++) {
		sum += part[l];
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	return sum;
}

// projectLocal with the work-group's work-items in teams of TEAM, one
// event a team, as the paper's GPU code gives a warp an event: the lanes
// take the box's cells in strides, so that they finish together and
// neighbours read neighbouring pixels (each cell's terms computed anew:
// on a GPU that costs less than lanes idle on the shorter rows), and the
// team sums the event's denominator through part (TEAM doubles a team).
// Every work-item runs the same rounds, the barriers between them outside
// any branch.
__kernel void projectTeams(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                           __global const double *rho, __global const double *sens, __global double *partial,
                           __local double *img, int pixels, __local double *part) {
	int lid = get_local_id(0), lane = lid % TEAM, teams = get_local_size(0) / TEAM;
	for (int q = lid; q < pixels; q += get_local_size(0)) {
		img[q] = 0.0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int first = lo + get_group_id(0) * teams; first < n; first += get_num_groups(0) * teams) {
		int i = first + lid / TEAM;
		jpet_event e;
		if (i < n) {
			e = events[i];
		}
		double denom = teamSum(part, lid, lane, i < n ? stridedSum(&e, p, lane, rho, sens) : 0.0);
		if (denom != 0.0) {
			stridedAdd(&e, p, lane, 1.0 / denom, img);
		}
	}
	flush(img, pixels, partial);
}

// The kernel values a lane of the segments layout keeps between the
// passes; its teams' tables hold MAXROWS rows (see projectSegments).
#define KEPT 16

// cursor is a lane's place in the inside cells of its event, in the
// rows' stretches of the tables first and count (a team's): the row, the
// column, the cells of the row's stretch left from there.
typedef struct {
	int row, iz, left;
} cursor;

// startAt is the cursor at the from-th inside cell of an event of rows
// rows (one past the last when from is their count).
static cursor startAt(__local const int *first, __local const int *count, int rows, int from) {
	cursor u = {0, 0, 0};
	while (u.row < rows && from >= count[u.row]) {
		from -= count[u.row++];
	}
	if (u.row < rows) {
		u.iz = first[u.row] + from;
		u.left = count[u.row] - from;
	}
	return u;
}

// nextRow moves u, at the end of a row's stretch, to the start of the
// next stretch that has cells (there must be one).
static void nextRow(cursor *u, __local const int *first, __local const int *count) {
	do {
		u->row++;
	} while (count[u->row] == 0);
	u->iz = first[u->row];
	u->left = count[u->row];
}

// projectSegments is projectTeams with each lane of a team taking a
// stretch of the event's cells that are inside its ellipse, row after
// row, instead of every TEAM-th cell of its box: a lane computes a row's
// terms once for the row's cells it takes rather than once a cell, no lane
// idles on a cell outside the ellipse, and the first pass's kernel values
// (up to KEPT a lane) are kept for the second. The team first finds each
// row's stretch inside the ellipse by the ellipse test itself (a lane a
// row), into first and count (MAXROWS a team); an event of more rows goes
// cell by cell as in projectTeams.
__kernel void projectSegments(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                              __global const double *rho, __global const double *sens, __global double *partial,
                              __local double *img, int pixels, __local double *part, __local int *firsts,
                              __local int *counts) {
	int lid = get_local_id(0), lane = lid % TEAM, teams = get_local_size(0) / TEAM;
	__local int *first = firsts + lid / TEAM * MAXROWS, *count = counts + lid / TEAM * MAXROWS;
	for (int q = lid; q < pixels; q += get_local_size(0)) {
		img[q] = 0.0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int at = lo + get_group_id(0) * teams; at < n; at += get_num_groups(0) * teams) {
		// The last round's lanes may still read the tables: they are
		// written anew once every work-item is here.
		barrier(CLK_LOCAL_MEM_FENCE);
		int i = at + lid / TEAM;
		jpet_event e;
		ev_t c;
		int rows = 0;
		if (i < n) {
			e = events[i];
			c = eventTerms(&e, p);
			rows = e.y1 - e.y0;
		}
		for (int q = lane; q < rows; q += TEAM) {
			// the ellipse test of rowTerms and cellValue, to the bit
			double dy = (p->yfirst - e.y) - (double)(e.y0 + q) * p->pixel;
			double ady2 = c.ea * dy * dy, bdy = c.eb * dy;
			int z = e.z0, end = e.z1;
			for (; z < end; z++) {
				double dz = p->zfirst + (double)z * p->pixel - e.z;
				if (ady2 + bdy * dz + c.ec * dz * dz <= 9.0) {
					break;
				}
			}
			for (; end > z; end--) {
				double dz = p->zfirst + (double)(end - 1) * p->pixel - e.z;
				if (ady2 + bdy * dz + c.ec * dz * dz <= 9.0) {
					break;
				}
			}
			first[q] = z;
			count[q] = end - z;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		// The lane's stretch [from, to) of the team's cells.
		int total = 0;
		for (int q = 0; q < rows; q++) {
			total += count[q];
		}
		int each = (total + TEAM - 1) / TEAM, from = min(total, lane * each), to = min(total, from + each);
		double kept[KEPT];
		double d = 0.0;
		row_t r;
		int fresh = -1; // the row whose terms r holds
		cursor u = startAt(first, count, rows, from);
		for (int j = 0; j < to - from; j++, u.iz++, u.left--) {
			if (u.left == 0) {
				nextRow(&u, first, count);
			}
			if (fresh != u.row) {
				r = rowTerms(&e, &c, p, e.y0 + u.row);
				fresh = u.row;
			}
			double k = cellValue(&e, &c, &r, p, u.iz);
			if (j < KEPT) {
				kept[j] = k;
			}
			if (k >= 0.0) {
				d += weighted(k, p, rho, sens, u.iz * p->ny + e.y0 + u.row);
			}
		}
		double denom = teamSum(part, lid, lane, d);
		if (denom == 0.0) {
			continue;
		}
		// The same stretch again: the kept values, the rest computed anew.
		double inv = 1.0 / denom;
		u = startAt(first, count, rows, from);
		for (int j = 0; j < to - from; j++, u.iz++, u.left--) {
			if (u.left == 0) {
				nextRow(&u, first, count);
			}
			double k;
			if (j < KEPT) {
				k = kept[j];
			} else {
				if (fresh != u.row) {
					r = rowTerms(&e, &c, p, e.y0 + u.row);
					fresh = u.row;
				}
				k = cellValue(&e, &c, &r, p, u.iz);
			}
			if (k >= 0.0) {
				addLocal(&img[u.iz * p->ny + e.y0 + u.row], k * inv);
			}
		}
	}
	flush(img, pixels, partial);
}

// rho *= the back projection: acc (project's) plus the slots of partial
// (the local images', see flush) in the order of their work-groups; acc
// and the slots back to zero for the next iteration.
__kernel void update(__global double *rho, __global double *acc, __global double *partial, int slots, int n) {
	int i = get_global_id(0);
	if (i < n) {
		double sum = acc[i];
		acc[i] = 0.0;
		for (int g = 0; g < slots; g++) {
			sum += partial[(size_t)g * n + i];
			partial[(size_t)g * n + i] = 0.0;
		}
		rho[i] *= sum;
	}
}
