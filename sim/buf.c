/* buf.c: buffer access checks and hardware-rule error reports. */
#include "core.h"

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

uint8_t *sim_buf_at_aligned(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
			    uint64_t align, const char *what)
{
	uint64_t size = c->buf_size[b];
	if (addr < 0 || (uint64_t)addr > size || len > size - (uint64_t)addr) {
		sim_fail(c, "%s: %s access [0x%llx, 0x%llx) is outside the %llu-byte buffer", what,
			 sim_buf_names[b], (long long)addr, (unsigned long long)((uint64_t)addr + len),
			 (unsigned long long)size);
		return NULL;
	}
	if (align > 1 && (uint64_t)addr % align) {
		sim_fail(c, "%s: %s address 0x%llx is not %llu-byte aligned", what, sim_buf_names[b],
			 (long long)addr, (unsigned long long)align);
		return NULL;
	}
	return c->buf[b] + addr;
}

uint8_t *sim_buf_at(struct sim_core *c, enum sim_buf b, int64_t addr, uint64_t len,
		    const char *what)
{
	return sim_buf_at_aligned(c, b, addr, len, c->buf_align[b], what);
}
