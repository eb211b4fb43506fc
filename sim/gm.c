/* gm.c: global memory: allocations, the shared L2 and main memory.
 *
 * Timing model of one GM transfer (an MTE2 or MTE3 instruction):
 *  - the core's own path moves bytes at mte.gm_{read,write}_bytes_per_cycle;
 *  - every byte passes the L2, a bandwidth server shared by all cores;
 *  - read misses fill whole L2 lines from main memory; writes allocate
 *    their lines without a fill and, with l2.write_back, stay there until
 *    the line is evicted (then the whole line goes to main memory), or else
 *    also go through to main memory; main memory is a second shared server
 *    at hbm.bandwidth_gbps.
 * Servers are FIFO in simulated time: requests reach them in global time
 * order (the engine processes events in time order), so N cores streaming
 * together share the bandwidth instead of each getting all of it. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (POSIX only since 2024) */
#include "core.h"
#include "populate.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* The L2 line holding byte address a (soc.c takes power-of-two lines only), and the
 * set holding a line (the set count need not be one). */
static inline uint64_t l2_line_of(const struct sim_device *dev, uint64_t a)
{
	return a >> dev->l2_line_shift;
}

static inline uint32_t *l2_set_of(const struct sim_device *dev, uint64_t line)
{
	uint64_t s = dev->l2_set_mask ? line & dev->l2_set_mask : line % dev->l2_sets;
	return dev->l2_way + s * dev->l2_ways;
}

static uint64_t gm_size(uint64_t bytes)
{
	uint64_t size = (bytes + 511) & ~(uint64_t)511;
	return size ? size : 512;
}

/* Append a block of size bytes (gm_size) at host; map/maplen as gm_block's.
 * Blocks stay sorted because addresses only grow. */
static uint64_t gm_add(struct sim_device *dev, uint64_t size, uint8_t *host, void *map,
		       size_t maplen)
{
	/* an L2 entry holds (line + 1) << 1 | dirty in 32 bits (core.h): addresses, which
	 * only grow, end below 2^31 - 1 lines (256 GiB of 128-byte lines allocated over a
	 * device's life) or the allocation fails as out of memory */
	if (dev->l2_sets && ((dev->gm_next + size) >> dev->l2_line_shift) + 1 >= UINT64_C(1) << 31)
		return 0;
	if (dev->ngm == dev->capgm) {
		size_t cap = dev->capgm ? dev->capgm * 2 : 16;
		struct gm_block *g = realloc(dev->gm, cap * sizeof *g);
		if (!g)
			return 0;
		dev->gm = g;
		dev->capgm = cap;
	}
	struct gm_block *b = &dev->gm[dev->ngm++];
	b->addr = dev->gm_next;
	b->size = size;
	b->host = host;
	b->map = map;
	b->maplen = maplen;
	b->popmap = NULL;
	dev->gm_next += size;
	dev->gm_used += size;
	return b->addr;
}

uint64_t sim_gm_alloc(struct sim_device *dev, uint64_t bytes)
{
	uint64_t size = gm_size(bytes);
	if (size > dev->gm_limit - dev->gm_used)
		return 0;
	/* calloc: large blocks come as fresh zero pages, touched only when used */
	uint8_t *host = calloc(1, size);
	if (!host)
		return 0;
	uint64_t addr = gm_add(dev, size, host, NULL, 0);
	if (!addr)
		free(host);
	return addr;
}

uint64_t sim_gm_alloc_file(struct sim_device *dev, uint64_t bytes, int fd, uint64_t offset,
			   uint64_t file_bytes)
{
	uint64_t size = gm_size(bytes);
	long pg = sysconf(_SC_PAGESIZE);
	if (size > dev->gm_limit - dev->gm_used || file_bytes > size || pg <= 0)
		return 0;
	/* mmap wants page-aligned file offsets: map from the page holding offset
	 * and start the block delta bytes in. */
	uint64_t page = (uint64_t)pg, delta = offset % page;
	uint64_t maplen = (delta + size + page - 1) / page * page;
	uint64_t filelen = (delta + file_bytes + page - 1) / page * page;
	if (maplen > SIZE_MAX || offset > (uint64_t)INT64_MAX)
		return 0;
	/* Reserve the whole block as anonymous zero pages, then lay the file's
	 * pages over its start: the tail beyond the file part needs no clearing
	 * and no page past the file's end is ever mapped from it (SIGBUS). */
	uint8_t *map = mmap(NULL, (size_t)maplen, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 0;
	if (file_bytes &&
	    mmap(map, (size_t)filelen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
		 (off_t)(offset - delta)) == MAP_FAILED) {
		munmap(map, (size_t)maplen);
		return 0;
	}
	uint8_t *host = map + delta;
	/* Whatever follows the region in its last page is other file content,
	 * not part of the block: zero it, as sim_gm_alloc's blocks are (this
	 * copies that one page). */
	if (filelen > delta + file_bytes)
		memset(host + file_bytes, 0, (size_t)(filelen - delta - file_bytes));
	uint64_t addr = gm_add(dev, size, host, map, (size_t)maplen);
	if (!addr)
		munmap(map, (size_t)maplen);
	return addr;
}

void sim_gm_block_release(struct gm_block *b)
{
	if (b->map)
		munmap(b->map, b->maplen);
	else
		free(b->host);
	free(b->popmap);
	b->host = NULL;
	b->map = NULL;
	b->popmap = NULL;
}

int sim_gm_free(struct sim_device *dev, uint64_t addr)
{
	struct gm_block *b = gm_find(dev, addr);
	if (!b || b->addr != addr)
		return -1;
	sim_gm_block_release(b);
	dev->gm_used -= b->size;
	size_t i = (size_t)(b - dev->gm);
	memmove(b, b + 1, (dev->ngm - i - 1) * sizeof *b);
	dev->ngm--;
	return 0;
}

uint64_t sim_gm_used(const struct sim_device *dev) { return dev->gm_used; }

/* Drop entry w of a set: the later ones move up, an invalid one goes last
 * (so it is the next victim, as the least recently used would be). */
static void l2_drop(uint32_t *set, uint64_t ways, uint64_t w)
{
	memmove(set + w, set + w + 1, (ways - 1 - w) * sizeof *set);
	set[ways - 1] = 0;
}

void sim_l2_invalidate(struct sim_device *dev, uint64_t addr, uint64_t bytes)
{
	if (!dev->l2_sets || !bytes)
		return;
	uint64_t first = l2_line_of(dev, addr), last = l2_line_of(dev, addr + bytes - 1);
	uint64_t ways = dev->l2_ways;
	/* the copy wrote main memory itself: a dirty line is dropped unwritten */
	if (last - first >= dev->l2_sets * ways) { /* cheaper to scan the tags */
		for (uint64_t s = 0; s < dev->l2_sets; s++) {
			uint32_t *set = dev->l2_way + s * ways;
			uint64_t kept = 0;
			for (uint64_t w = 0; w < ways && set[w]; w++) {
				uint64_t line = (set[w] >> 1) - 1;
				if (line < first || line > last)
					set[kept++] = set[w];
			}
			for (uint64_t w = kept; w < ways && set[w]; w++)
				set[w] = 0;
		}
		return;
	}
	for (uint64_t line = first; line <= last; line++) {
		uint32_t *set = l2_set_of(dev, line);
		for (uint64_t w = 0; w < ways && set[w]; w++)
			if (set[w] >> 1 == line + 1) {
				l2_drop(set, ways, w);
				break;
			}
	}
}

void *sim_gm_ptr(struct sim_device *dev, uint64_t addr, uint64_t n)
{
	struct gm_block *b = gm_find(dev, addr);
	if (!b || n > b->addr + b->size - addr)
		return NULL;
	return b->host + (addr - b->addr);
}

#define POP_SHIFT 16 /* sim_gm_ptr_write's chunks: 64 KB */

uint8_t *sim_gm_ptr_write(struct sim_device *dev, uint64_t addr, uint64_t n)
{
	struct gm_block *b = gm_find(dev, addr);
	if (!b || n > b->addr + b->size - addr)
		return NULL;
	uint64_t off = addr - b->addr;
	/* A block mapped from a file (the weights) is left alone: populating it for writing would
	 * copy its pages. */
	if (n && !b->map) {
		if (!b->popmap) {
			uint64_t chunks = ((b->size - 1) >> POP_SHIFT) + 1;
			b->popmap = calloc((size_t)((chunks + 63) / 64), sizeof *b->popmap);
			if (!b->popmap) /* no map, no populating: the pages fault in */
				return b->host + off;
		}
		uint64_t first = off >> POP_SHIFT, last = (off + n - 1) >> POP_SHIFT;
		for (uint64_t i = first; i <= last; i++) {
			uint64_t *w = &b->popmap[i / 64], bit = UINT64_C(1) << (i % 64);
			if (*w & bit)
				continue;
			uint64_t j = i; /* chunks i .. j unpopulated: one call */
			while (j < last && !(b->popmap[(j + 1) / 64] >> ((j + 1) % 64) & 1))
				j++;
			for (uint64_t q = i; q <= j; q++)
				b->popmap[q / 64] |= UINT64_C(1) << (q % 64);
			uint64_t lo = i << POP_SHIFT, hi = (j + 1) << POP_SHIFT;
			sim_populate(b->host + lo, (size_t)((hi < b->size ? hi : b->size) - lo));
			i = j;
		}
	}
	return b->host + off;
}

int sim_gm_write(struct sim_device *dev, uint64_t addr, const void *src, size_t n)
{
	void *p = sim_gm_ptr(dev, addr, n);
	if (!p)
		return -1;
	/* A block may already hold the source (a model's weights mapped from
	 * its file are loaded from themselves): then there is nothing to move,
	 * and touching the pages would only copy them. */
	if (p != src) {
		/* fresh GM pages, and a source that may never have been written (simrun's zero inputs
		 * in timing mode, calloc'd): one call each, not a fault a page */
		sim_populate(p, n);
		sim_populate_read(src, n);
		memcpy(p, src, n);
	}
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

/* Look a line up; returns 1 on a hit.  A miss allocates it, evicting the
 * least recently used line (the set's last entry, invalid if the set has
 * room), *wb set when the victim was dirty (its line goes to main memory).
 * A write marks the line dirty when the L2 is write-back.  Keeping each set
 * in recency order finds the victim without reading a stamp per way, and a
 * set's tags fill two host cache lines where tags and stamps took four: the
 * lookups were a tenth of a timing-mode run, waiting on those misses. */
static int l2_access(struct sim_device *dev, uint64_t line, int dirty, int *wb)
{
	uint64_t ways = dev->l2_ways;
	uint32_t *set = l2_set_of(dev, line);
	uint32_t key = (uint32_t)(line + 1);
	uint64_t w = 0;
	for (; w < ways && set[w]; w++)
		if (set[w] >> 1 == key) {
			uint32_t e = set[w] | (uint32_t)dirty;
			/* the newer ones down a way, in place: a few entries, where a
			 * memmove call cost more than the move (a tenth of the lookups) */
			for (; w > 0; w--)
				set[w] = set[w - 1];
			set[0] = e;
			*wb = 0;
			return 1;
		}
	/* a miss: the victim is the last valid way when the set is full, else
	 * the set has room at w and only the valid ones move down */
	if (w == ways) {
		*wb = (int)(set[ways - 1] & 1);
		w = ways - 1;
	} else {
		*wb = 0;
	}
	for (; w > 0; w--)
		set[w] = set[w - 1];
	set[0] = key << 1 | (uint32_t)dirty;
	return 0;
}

/* Fetch line's set into the host's cache ahead of its l2_access: the sets are 2 MB for the
 * 910, and the lookups waited on them (a third of sim_gm_timing's samples on one load). */
static void l2_prefetch(const struct sim_device *dev, uint64_t line)
{
	const uint32_t *set = l2_set_of(dev, line);
	__builtin_prefetch(set);
	__builtin_prefetch(set + dev->l2_ways - 1);
}

struct sim_cost sim_gm_timing(struct sim_core *c, uint64_t now, uint64_t addr, uint64_t nburst,
			      uint64_t burst_bytes, uint64_t stride, int is_write)
{
	if (c->func_only) /* the functional pass: the engine times this transfer */
		return (struct sim_cost){ 0, 0 };
	struct sim_device *dev = c->dev;
	uint64_t bytes = nburst * burst_bytes, hit = 0, miss = 0, hbm = 0, wb_bytes = 0;
	if (dev->l2_sets) {
		uint64_t line_sz = dev->l2_line;
		int back = dev->cfg.l2_write_back != 0, wb;
		l2_prefetch(dev, l2_line_of(dev, addr));
		for (uint64_t i = 0; i < nburst; i++) {
			uint64_t a = addr + i * stride, end = a + burst_bytes;
			/* the next burst's first set is fetched while this one's are looked up */
			if (i + 1 < nburst)
				l2_prefetch(dev, l2_line_of(dev, a + stride));
			l2_prefetch(dev, l2_line_of(dev, a) + 1);
			while (a < end) {
				uint64_t line = l2_line_of(dev, a);
				/* two lines ahead: the sets lie in the order of the lines */
				if (a + 2 * line_sz < end)
					l2_prefetch(dev, line + 2);
				uint64_t part = (line + 1) * line_sz;
				part = (part < end ? part : end) - a;
				if (l2_access(dev, line, is_write && back, &wb)) {
					hit += part;
				} else {
					miss += part;
					if (!is_write)
						hbm += line_sz; /* line fill */
				}
				wb_bytes += wb ? line_sz : 0; /* a dirty victim written back */
				a += part;
			}
		}
		if (is_write && !back)
			hbm = bytes; /* write-through */
		hbm += wb_bytes;
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
	cost.occ = sim_ceil_cycles(end - t0);
	if (cost.occ == 0)
		cost.occ = 1;
	c->st->l2_hit_bytes += hit;
	c->st->l2_miss_bytes += miss;
	c->st->hbm_bytes += hbm;
	c->st->hbm_write_bytes += is_write ? hbm : wb_bytes;
	return cost;
}
