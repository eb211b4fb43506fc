/* gm.c: global memory: allocations, the shared L2 and main memory.
 *
 * Timing model of one GM transfer (an MTE2 or MTE3 instruction):
 *  - the core's own path moves bytes at mte.gm_{read,write}_bytes_per_cycle;
 *  - every byte passes the L2, a bandwidth server shared by all cores;
 *  - read misses fill whole L2 lines from main memory, writes go through to
 *    main memory (write-allocate, write-through); main memory is a second
 *    shared server at hbm.bandwidth_gbps.
 * Servers are FIFO in simulated time: requests reach them in global time
 * order (the engine processes events in time order), so N cores streaming
 * together share the bandwidth instead of each getting all of it. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static struct gm_block *gm_find(struct sim_device *dev, uint64_t addr)
{
	size_t lo = 0, hi = dev->ngm;
	while (lo < hi) { /* blocks are sorted by address */
		size_t mid = (lo + hi) / 2;
		struct gm_block *b = &dev->gm[mid];
		if (addr < b->addr)
			hi = mid;
		else if (addr >= b->addr + b->size)
			lo = mid + 1;
		else
			return b;
	}
	return NULL;
}

uint64_t sim_gm_alloc(struct sim_device *dev, uint64_t bytes)
{
	uint64_t size = (bytes + 511) & ~(uint64_t)511;
	if (size == 0)
		size = 512;
	if (size > dev->gm_limit - dev->gm_used)
		return 0;
	if (dev->ngm == dev->capgm) {
		size_t cap = dev->capgm ? dev->capgm * 2 : 16;
		struct gm_block *g = realloc(dev->gm, cap * sizeof *g);
		if (!g)
			return 0;
		dev->gm = g;
		dev->capgm = cap;
	}
	uint8_t *host = calloc(1, size);
	if (!host)
		return 0;
	struct gm_block *b = &dev->gm[dev->ngm++];
	b->addr = dev->gm_next;
	b->size = size;
	b->host = host;
	dev->gm_next += size;
	dev->gm_used += size;
	return b->addr;
}

int sim_gm_free(struct sim_device *dev, uint64_t addr)
{
	struct gm_block *b = gm_find(dev, addr);
	if (!b || b->addr != addr)
		return -1;
	free(b->host);
	dev->gm_used -= b->size;
	size_t i = (size_t)(b - dev->gm);
	memmove(b, b + 1, (dev->ngm - i - 1) * sizeof *b);
	dev->ngm--;
	return 0;
}

uint64_t sim_gm_used(const struct sim_device *dev) { return dev->gm_used; }

void sim_l2_invalidate(struct sim_device *dev, uint64_t addr, uint64_t bytes)
{
	if (!dev->l2_sets || !bytes)
		return;
	uint64_t first = addr / dev->l2_line, last = (addr + bytes - 1) / dev->l2_line;
	if (last - first >= dev->l2_sets * dev->l2_ways) { /* cheaper to scan the tags */
		for (uint64_t i = 0; i < dev->l2_sets * dev->l2_ways; i++)
			if (dev->l2_tag[i] && dev->l2_tag[i] - 1 >= first && dev->l2_tag[i] - 1 <= last)
				dev->l2_tag[i] = dev->l2_stamp[i] = 0;
		return;
	}
	for (uint64_t line = first; line <= last; line++) {
		uint64_t *tag = dev->l2_tag + (line % dev->l2_sets) * dev->l2_ways;
		for (uint64_t w = 0; w < dev->l2_ways; w++)
			if (tag[w] == line + 1)
				tag[w] = dev->l2_stamp[(line % dev->l2_sets) * dev->l2_ways + w] = 0;
	}
}

void *sim_gm_ptr(struct sim_device *dev, uint64_t addr, uint64_t n)
{
	struct gm_block *b = gm_find(dev, addr);
	if (!b || n > b->addr + b->size - addr)
		return NULL;
	return b->host + (addr - b->addr);
}

int sim_gm_write(struct sim_device *dev, uint64_t addr, const void *src, size_t n)
{
	void *p = sim_gm_ptr(dev, addr, n);
	if (!p)
		return -1;
	memcpy(p, src, n);
	return 0;
}

int sim_gm_read(struct sim_device *dev, uint64_t addr, void *dst, size_t n)
{
	const void *p = sim_gm_ptr(dev, addr, n);
	if (!p)
		return -1;
	memcpy(dst, p, n);
	return 0;
}

/* Look a line up; returns 1 on a hit.  A miss allocates it (LRU victim). */
static int l2_access(struct sim_device *dev, uint64_t line)
{
	uint64_t set = line % dev->l2_sets;
	uint64_t *tag = dev->l2_tag + set * dev->l2_ways;
	uint64_t *stamp = dev->l2_stamp + set * dev->l2_ways;
	uint64_t victim = 0;
	dev->l2_clock++;
	for (uint64_t w = 0; w < dev->l2_ways; w++) {
		if (tag[w] == line + 1) {
			stamp[w] = dev->l2_clock;
			return 1;
		}
		if (stamp[w] < stamp[victim])
			victim = w;
	}
	tag[victim] = line + 1;
	stamp[victim] = dev->l2_clock;
	return 0;
}

struct sim_cost sim_gm_timing(struct sim_core *c, uint64_t now, uint64_t addr, uint64_t nburst,
			      uint64_t burst_bytes, uint64_t stride, int is_write)
{
	struct sim_device *dev = c->dev;
	uint64_t bytes = nburst * burst_bytes, hit = 0, miss = 0, hbm = 0;
	if (dev->l2_sets) {
		uint64_t line_sz = dev->l2_line;
		for (uint64_t i = 0; i < nburst; i++) {
			uint64_t a = addr + i * stride, end = a + burst_bytes;
			while (a < end) {
				uint64_t line = a / line_sz;
				uint64_t part = (line + 1) * line_sz;
				part = (part < end ? part : end) - a;
				if (l2_access(dev, line)) {
					hit += part;
				} else {
					miss += part;
					if (!is_write)
						hbm += line_sz; /* line fill */
				}
				a += part;
			}
		}
		if (is_write)
			hbm = bytes; /* write-through */
	} else {
		miss = bytes;
		hbm = bytes;
	}
	/* alone, the transfer takes sim_mem_time; the shared servers, queued
	 * behind every core's earlier traffic, may make it end later */
	struct sim_cost cost = sim_mem_time(&dev->cc, bytes, miss && !is_write ? hbm : 0,
					    is_write, 1.0, 1.0);
	double t0 = (double)now, end = t0 + (double)cost.occ;
	double l2_start = dev->l2_free > t0 ? dev->l2_free : t0;
	dev->l2_free = l2_start + (double)bytes / dev->cc.l2_bpc;
	if (dev->l2_free > end)
		end = dev->l2_free;
	if (hbm) {
		double h_start = dev->hbm_free > t0 ? dev->hbm_free : t0;
		dev->hbm_free = h_start + (double)hbm / dev->cc.hbm_bpc;
		if (dev->hbm_free > end)
			end = dev->hbm_free;
	}
	cost.occ = sim_cycles_for(end - t0, 1.0);
	if (cost.occ == 0)
		cost.occ = 1;
	c->st->l2_hit_bytes += hit;
	c->st->l2_miss_bytes += miss;
	c->st->hbm_bytes += hbm;
	return cost;
}
