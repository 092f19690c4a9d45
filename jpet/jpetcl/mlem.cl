// List-mode MLEM of a two-strip J-PET on an OpenCL device: the formulas of
// package jpet (kernel.go, mlem.go), in double precision, one work-item
// per event. Contraction into fused multiply-adds is off so that the
// ellipse test, on which a pixel's membership of an event hangs, rounds as
// the Go code does.
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

// The kernel value of event e at pixel (iz, iy), or -1 outside its
// 3-sigma ellipse.
static double value(const jpet_event *e, __constant params_t *p, int iz, int iy) {
	double dz = p->zfirst + (double)iz * p->pixel - e->z;
	double dy = (p->yfirst - e->y) - (double)iy * p->pixel;
	double t = e->tan, sec = e->sec, sec2 = sec * sec;
	double ea = 4.0 * sec2 * p->isdl2 + 2.0 * t * t * p->isz2;
	double eb = -4.0 * t * p->isz2, ec = 2.0 * p->isz2;
	if (ea * dy * dy + eb * dy * dz + ec * dz * dz > 9.0) {
		return -1.0;
	}
	double Y = p->yfirst - (double)iy * p->pixel;
	double dyr = Y - e->y;
	double a1 = -(Y - p->r) * sec2, a2 = -(Y + p->r) * sec2, a3 = -2.0 * Y * sec * t;
	double b3 = -2.0 * dyr * sec;
	double aCa = (a1 * a1 + a2 * a2) * p->isz2 + a3 * a3 * p->isdl2;
	double u = dz - dyr * t;
	if (p->gaussian) {
		double q = -p->isz2 * u * u - 2.0 * p->isdl2 * sec2 * dyr * dyr;
		return p->norm / sqrt(aCa) * exp(q);
	}
	double o1 = a1 * t, o2 = a2 * t, o3 = -Y * sec * (1.0 + 2.0 * t * t);
	double n = aCa + 2.0 * o3 * b3 * p->isdl2 + 2.0 * (o1 + o2) * p->isz2 * u;
	double b = a3 * b3 * p->isdl2 + (a1 + a2) * p->isz2 * u;
	double a = 2.0 * p->isz2 * u * u + b3 * b3 * p->isdl2;
	return p->norm / sqrt(n) * exp(-0.5 * (a - b * b / n));
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

// denominator is the sum over event e's pixels of K * rho * sensitivity.
static double denominator(const jpet_event *e, __constant params_t *p, __global const double *rho, __global const double *sens) {
	double denom = 0.0;
	for (int iz = e->z0; iz < e->z1; iz++) {
		for (int iy = e->y0; iy < e->y1; iy++) {
			double k = value(e, p, iz, iy);
			if (k < 0.0) {
				continue;
			}
			int pix = iz * p->ny + iy;
			double v = k * rho[pix];
			if (p->sensitivity) {
				v *= sens[pix];
			}
			denom += v;
		}
	}
	return denom;
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
	double denom = denominator(&e, p, rho, sens);
	if (denom == 0.0) {
		return;
	}
	double inv = 1.0 / denom;
	for (int iz = e.z0; iz < e.z1; iz++) {
		for (int iy = e.y0; iy < e.y1; iy++) {
			double k = value(&e, p, iz, iy);
			if (k >= 0.0) {
				add(&acc[iz * p->ny + iy], k * inv);
			}
		}
	}
}

// project with an image of its own per work-group, in local memory, added
// to acc once at the end: the many events that touch one pixel then
// contend within a work-group only. The work-items take events [lo, n)
// in strides of the whole launch.
__kernel void projectLocal(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                           __global const double *rho, __global const double *sens, __global double *acc,
                           __local double *img, int pixels) {
	for (int q = get_local_id(0); q < pixels; q += get_local_size(0)) {
		img[q] = 0.0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int i = lo + get_global_id(0); i < n; i += get_global_size(0)) {
		jpet_event e = events[i];
		double denom = denominator(&e, p, rho, sens);
		if (denom == 0.0) {
			continue;
		}
		double inv = 1.0 / denom;
		for (int iz = e.z0; iz < e.z1; iz++) {
			for (int iy = e.y0; iy < e.y1; iy++) {
				double k = value(&e, p, iz, iy);
				if (k >= 0.0) {
					addLocal(&img[iz * p->ny + iy], k * inv);
				}
			}
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int q = get_local_id(0); q < pixels; q += get_local_size(0)) {
		if (img[q] != 0.0) {
			add(&acc[q], img[q]);
		}
	}
}

// projectLocal with the work-group's work-items in teams of TEAM, one
// event a team, as the paper's GPU code gives a warp an event: the lanes
// take the event's box in strides, so that neighbours read neighbouring
// pixels and finish together, and sum its denominator through part (TEAM
// doubles a team). Every work-item runs the same rounds, the barriers
// between them outside any branch.
#define TEAM 32
__kernel void projectTeams(__global const jpet_event *events, int lo, int n, __constant params_t *p,
                           __global const double *rho, __global const double *sens, __global double *acc,
                           __local double *img, int pixels, __local double *part) {
	int lid = get_local_id(0), lane = lid % TEAM, teams = get_local_size(0) / TEAM;
	for (int q = lid; q < pixels; q += get_local_size(0)) {
		img[q] = 0.0;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int first = lo + get_group_id(0) * teams; first < n; first += get_num_groups(0) * teams) {
		int i = first + lid / TEAM;
		jpet_event e;
		int rows = 0, cells = 0;
		if (i < n) {
			e = events[i];
			rows = e.y1 - e.y0;
			cells = (e.z1 - e.z0) * rows;
		}
		double d = 0.0;
		for (int c = lane; c < cells; c += TEAM) {
			int iz = e.z0 + c / rows, iy = e.y0 + c % rows;
			double k = value(&e, p, iz, iy);
			if (k >= 0.0) {
				int pix = iz * p->ny + iy;
				double v = k * rho[pix];
				if (p->sensitivity) {
					v *= sens[pix];
				}
				d += v;
			}
		}
		part[lid] = d;
		barrier(CLK_LOCAL_MEM_FENCE);
		double denom = 0.0;
		for (int l = lid - lane; l < lid - lane + TEAM; l++) {
			denom += part[l];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (denom == 0.0) {
			continue;
		}
		double inv = 1.0 / denom;
		for (int c = lane; c < cells; c += TEAM) {
			int iz = e.z0 + c / rows, iy = e.y0 + c % rows;
			double k = value(&e, p, iz, iy);
			if (k >= 0.0) {
				addLocal(&img[iz * p->ny + iy], k * inv);
			}
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int q = lid; q < pixels; q += get_local_size(0)) {
		if (img[q] != 0.0) {
			add(&acc[q], img[q]);
		}
	}
}

// rho *= acc, and acc back to zero for the next iteration.
__kernel void update(__global double *rho, __global double *acc, int n) {
	int i = get_global_id(0);
	if (i < n) {
		rho[i] *= acc[i];
		acc[i] = 0.0;
	}
}
