// A stable LSD radix sort of 64-bit keys, eight bits a pass, for package
// pixel's reorder stage (sort.go, radixSort): the keys are time offsets
// packed above their indices. Work-item w of items owns the keys
// [w * per, (w + 1) * per) and walks them in order in every step, so the
// sort is stable without any ordering between work-items: a pass counts
// each work-item's keys per digit into counts[digit * items + w], the
// exclusive prefix sum of counts in that order is where each work-item's
// keys of a digit go, and the work-item moves them there in order.

// count counts the digits at shift of each work-item's keys.
__kernel void count(__global const ulong *keys, int n, int per, int items, uint shift, __global uint *counts) {
	int w = get_global_id(0);
	if (w >= items) {
		return;
	}
	for (int d = 0; d < 256; d++) {
		counts[d * items + w] = 0;
	}
	int end = min(n, (w + 1) * per);
	for (int i = w * per; i < end; i++) {
		counts[(uint)(keys[i] >> shift & 255) * items + w]++;
	}
}

// blockSums sums each block of size entries of v (m of them).
__kernel void blockSums(__global const uint *v, int m, int size, int blocks, __global uint *sums) {
	int b = get_global_id(0);
	if (b >= blocks) {
		return;
	}
	uint s = 0;
	int end = min(m, (b + 1) * size);
	for (int i = b * size; i < end; i++) {
		s += v[i];
	}
	sums[b] = s;
}

// scanSums turns the blocks' sums into their exclusive prefix sums, in
// one work-group: each work-item takes a run of them, and the runs'
// totals are scanned in local memory (Hillis and Steele).
__kernel void scanSums(__global uint *sums, int blocks, __local uint *tmp) {
	int t = get_local_id(0), g = get_local_size(0);
	int per = (blocks + g - 1) / g;
	int lo = min(blocks, t * per), hi = min(blocks, lo + per);
	uint s = 0;
	for (int i = lo; i < hi; i++) {
		s += sums[i];
	}
	tmp[t] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int off = 1; off < g; off <<= 1) {
		uint v = t >= off ? tmp[t - off] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		tmp[t] += v;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	uint run = tmp[t] - s;
	for (int i = lo; i < hi; i++) {
		uint x = sums[i];
		sums[i] = run;
		run += x;
	}
}

// scanBlocks turns v into its exclusive prefix sums, each block starting
// from its sum's prefix.
__kernel void scanBlocks(__global uint *v, int m, int size, int blocks, __global const uint *sums) {
	int b = get_global_id(0);
	if (b >= blocks) {
		return;
	}
	uint run = sums[b];
	int end = min(m, (b + 1) * size);
	for (int i = b * size; i < end; i++) {
		uint x = v[i];
		v[i] = run;
		run += x;
	}
}

// scatter moves each work-item's keys, in order, to the places of their
// digits at shift: into out, or, in the last pass, their indices (their
// bits under mask) into perm.
__kernel void scatter(__global const ulong *in, __global ulong *out, __global int *perm, int last, ulong mask, int n, int per, int items, uint shift, __global uint *at) {
	int w = get_global_id(0);
	if (w >= items) {
		return;
	}
	int end = min(n, (w + 1) * per);
	for (int i = w * per; i < end; i++) {
		ulong k = in[i];
		uint p = at[(uint)(k >> shift & 255) * items + w]++;
		if (last) {
			perm[p] = (int)(k & mask);
		} else {
			out[p] = k;
		}
	}
}
