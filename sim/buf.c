/* buf.c: buffer access checks and hardware-rule error reports. */
#include "core.h"
#include "populate.h"

#include <stdio.h>

const char *const sim_buf_names[SIM_NBUFS] = { "L1", "L0A", "L0B", "L0C", "UB" };

int sim_fail(struct sim_core *c, const char *fmt, ...)
{
	char msg[512], text[256] = "?";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->cur)
		isa_disasm(c->cur->in, text, sizeof text);
	if (c->err && c->err[0] == 0)
		snprintf(c->err, c->errlen, "core %u, pipe %s, pc %u: %s: %s", c->id,
			 isa_pipe_name((enum isa_pipe)c->cur_pipe), c->cur ? c->cur->pc : 0, text,
			 msg);
	return -1;
}

/* The buffers are zero pages until touched (device.c), and a first touch costs a page fault:
 * 8,200 of them in a full ResNet-50 run, each about 5 us on the virtual machine the simulator
 * was measured on, 11% of the run.  In full mode the buffers are mapped a chunk at a time
 * instead, one sim_populate for a chunk (a page; 16 KB in a 1 MB L1) or a run of them, on
 * the first access to the chunk; the chunks are small enough that the memory a run uses grows
 * little (the pages are zero either way, so nothing a kernel sees changes).  Timing mode moves no bytes and maps
 * nothing. */
static void populate(struct sim_core *c, enum sim_buf b, uint64_t addr, uint64_t len)
{
	unsigned sh = c->pop_shift[b];
	if (!sh) /* a core sim_device_new did not make (check_vec's): its buffers are its own */
		return;
	uint64_t first = addr >> sh, last = (addr + len - 1) >> sh;
	uint64_t need = (last - first == 63 ? ~UINT64_C(0) : (UINT64_C(2) << (last - first)) - 1)
			<< first;
	uint64_t miss = need & ~c->populated[b];
	c->populated[b] |= need;
	while (miss) {
		unsigned i = (unsigned)__builtin_ctzll(miss);
		uint64_t run = miss >> i;
		unsigned n = ~run ? (unsigned)__builtin_ctzll(~run) : 64; /* chunks i .. i + n - 1 */
		uint64_t lo = (uint64_t)i << sh, hi = (uint64_t)(i + n) << sh;
		if (hi > c->buf_size[b])
			hi = c->buf_size[b];
		sim_populate(c->buf[b] + lo, (size_t)(hi - lo));
		miss &= n < 64 - i ? ~(((UINT64_C(1) << n) - 1) << i) : ~(~UINT64_C(0) << i);
	}
}

/* populate, then where the access lies: a tail call from buf_at, which so saves no registers
 * on its way through. */
static __attribute__((noinline)) uint8_t *populated_at(struct sim_core *c, enum sim_buf b,
						       uint64_t addr, uint64_t len)
{
	populate(c, b, addr, len);
	return c->buf[b] + addr;
}

/* The reports of an access sim_buf_at refuses, apart from the checks, which run for every
 * operand of every instruction (a fifth of a timing-mode vector instruction). */
static __attribute__((noinline, cold)) uint8_t *outside(struct sim_core *c, enum sim_buf b,
							int64_t addr, uint64_t len, const char *what)
{
	sim_fail(c, "%s: %s access [0x%llx, 0x%llx) is outside the %llu-byte buffer", what,
		 sim_buf_names[b], (long long)addr, (unsigned long long)((uint64_t)addr + len),
		 (unsigned long long)c->buf_size[b]);
	return NULL;
}

static __attribute__((noinline, cold)) uint8_t *misaligned(struct sim_core *c, enum sim_buf b,
							   int64_t addr, uint64_t align,
							   const char *what)
{
	sim_fail(c, "%s: %s address 0x%llx is not %llu-byte aligned", what, sim_buf_names[b],
		 (long long)addr, (unsigned long long)align);
	return NULL;
}

static inline uint8_t *buf_at(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
			      uint64_t align, const char *what)
{
	uint64_t size = c->buf_size[b];
	if (addr < 0 || (uint64_t)addr > size || len > size - (uint64_t)addr)
		return outside(c, b, addr, len, what);
	/* alignments are powers of two but for a SoC key's odd value: a mask, not a division */
	if (align > 1 && ((align & (align - 1)) == 0 ? (uint64_t)addr & (align - 1)
						      : (uint64_t)addr % align))
		return misaligned(c, b, addr, align, what);
	if (len && !c->dev->timing_only)
		return populated_at(c, b, (uint64_t)addr, len);
	return c->buf[b] + addr;
}

uint8_t *sim_buf_at_aligned(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
			    uint64_t align, const char *what)
{
	return buf_at(c, b, addr, len, align, what);
}

uint8_t *sim_buf_at(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
		    const char *what)
{
	return buf_at(c, b, addr, len, c->buf_align[b], what);
}
