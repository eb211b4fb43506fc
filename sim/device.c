/* device.c: the device handle, kernel loading, and sim_run. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (POSIX only since 2024) */
#include "core.h"
#include "func.h"
#include "insn_mem.h"
#include "populate.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The dispatch table, generated from isa.def: a missing handler is a link
 * error; sync instructions belong to the engine. */
#define EXEC_ENTRY_S(id) exec_##id
#define EXEC_ENTRY_MTE1(id) exec_##id
#define EXEC_ENTRY_MTE2(id) exec_##id
#define EXEC_ENTRY_MTE3(id) exec_##id
#define EXEC_ENTRY_M(id) exec_##id
#define EXEC_ENTRY_V(id) exec_##id
#define EXEC_ENTRY_SYNC(id) NULL
const sim_exec_fn sim_exec_table[ISA_NOPS] = {
#define ISA_INSN(id, mn, opc, fmt, pipe, flags, syn) [opc] = EXEC_ENTRY_##pipe(id),
#include "isa.def"
};

static void cores_free(struct sim_device *dev)
{
	if (!dev->cores)
		return;
	for (int64_t i = 0; i < dev->cfg.core_count; i++) {
		struct sim_core *c = &dev->cores[i];
		for (int p = 0; p < ISA_NPIPES; p++)
			free(c->pipe[p].q);
		free(c->flags);
		free(c->ic_tag);
		free(c->ld_log);
		free(c->func_err);
	}
	sim_func_free(dev);
	free(dev->cores);
	dev->cores = NULL;
	free(dev->cube_fa);
	free(dev->cube_fb);
	dev->cube_fa = dev->cube_fb = NULL;
	if (dev->sram)
		munmap(dev->sram, dev->sramlen);
	dev->sram = NULL;
}

struct sim_device *sim_device_new(const struct soc_config *cfg, const struct sim_options *opt,
				  char *err, size_t errlen)
{
	struct sim_device *dev = calloc(1, sizeof *dev);
	if (!dev)
		goto oom;
	dev->cfg = *cfg;
	if (opt)
		dev->opt = *opt;
	dev->timing_only = 1; /* full mode's data work is the functional core's (func.h) */
	dev->gm_next = 0x100000; /* address 0 is never valid */
	dev->gm_limit = (uint64_t)cfg->hbm_size_mb * 1024 * 1024;
	dev->err = dev->errbuf;
	dev->errlen = sizeof dev->errbuf;
	sim_costcfg_init(&dev->cc, cfg);
	uint64_t l2 = (uint64_t)cfg->l2_size_kb * 1024;
	if (l2) {
		dev->l2_line = (uint64_t)cfg->l2_line_bytes;
		dev->l2_ways = (uint64_t)cfg->l2_ways;
		uint64_t lines = l2 / dev->l2_line;
		if (lines < dev->l2_ways)
			dev->l2_ways = lines ? lines : 1;
		dev->l2_sets = lines / dev->l2_ways ? lines / dev->l2_ways : 1;
		if (dev->l2_sets > 1 && (dev->l2_sets & (dev->l2_sets - 1)) == 0)
			dev->l2_set_mask = dev->l2_sets - 1;
		dev->l2_line_shift = (unsigned)__builtin_ctzll(dev->l2_line); /* a power of two */
		dev->l2_way = calloc(dev->l2_sets * dev->l2_ways, sizeof *dev->l2_way);
		if (!dev->l2_way)
			goto oom;
		/* every set is read by the first model load (its weights' invalidation scans all
		 * tags): map the array in one call, not a page fault at a time (the 910's 2 MB) */
		sim_populate(dev->l2_way, dev->l2_sets * dev->l2_ways * sizeof *dev->l2_way);
	}
	dev->cores = calloc((size_t)cfg->core_count, sizeof *dev->cores);
	if (!dev->cores)
		goto oom;
	const int64_t kb[SIM_NBUFS] = { cfg->l1_size_kb, cfg->l0a_size_kb, cfg->l0b_size_kb,
					cfg->l0c_size_kb, cfg->ub_size_kb };
	const int64_t al[SIM_NBUFS] = { cfg->l1_align_bytes, cfg->l0a_align_bytes,
					cfg->l0b_align_bytes, cfg->l0c_align_bytes,
					cfg->ub_align_bytes };
	size_t nflags = ISA_NPIPES * ISA_NPIPES * (size_t)cfg->core_event_ids;
	/* One set of buffers, the functional core's (func.h).  The engine's cores
	 * time their instructions without touching any: they point at a second,
	 * inaccessible set of the same layout, for the operand checks' address
	 * arithmetic alone, so that a handler's data work outside its
	 * timing_only guard faults instead of changing the functional core's
	 * bytes.  One anonymous mapping: the kernel hands out zero pages as they
	 * are first touched, so a device costs no clearing and no memory for the
	 * buffers a run never uses (all of them in timing mode), where calloc
	 * would clear the smaller ones eagerly.  Each buffer starts on a page and
	 * is followed by an inaccessible page, so an overrun still faults as it
	 * would off a heap block under the sanitizers. */
	long pgl = sysconf(_SC_PAGESIZE);
	uint64_t pg = pgl > 0 ? (uint64_t)pgl : 4096, set = 0, stride[SIM_NBUFS];
	for (int b = 0; b < SIM_NBUFS; b++) {
		stride[b] = ((uint64_t)kb[b] * 1024 + pg - 1) / pg * pg + pg;
		set += stride[b];
	}
	if (pg + 2 * set > SIZE_MAX)
		goto oom;
	dev->sramlen = (size_t)(pg + 2 * set);
	dev->sram = mmap(NULL, dev->sramlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dev->sram == MAP_FAILED) {
		dev->sram = NULL;
		goto oom;
	}
	uint8_t *bufs = (uint8_t *)dev->sram + pg, *untouched = bufs + set;
	if (mprotect(bufs, (size_t)set, PROT_READ | PROT_WRITE))
		goto oom;
	for (uint64_t b = 0, off = 0; b < SIM_NBUFS; off += stride[b++]) /* the guard pages */
		if (mprotect(bufs + off + stride[b] - pg, (size_t)pg, PROT_NONE))
			goto oom;
	for (int64_t i = 0; i < cfg->core_count; i++) {
		struct sim_core *c = &dev->cores[i];
		c->dev = dev;
		c->id = (unsigned)i;
		c->err = dev->errbuf;
		c->errlen = sizeof dev->errbuf;
		uint8_t *mem = untouched;
		for (int b = 0; b < SIM_NBUFS; b++) {
			c->buf_size[b] = (uint64_t)kb[b] * 1024;
			c->buf_align[b] = (uint64_t)al[b];
			c->buf[b] = mem;
			/* page-sized chunks, or 64 chunks for a buffer past 64 pages (buf.c; 16 KB
			 * ones took 1.3 MB more memory for ResNet-50 and MobileNetV2 on the 910
			 * for the same CPU time, 64 KB ones 3.5 MB more than that) */
			c->pop_shift[b] = (unsigned)__builtin_ctzll(pg);
			while ((c->buf_size[b] - 1) >> c->pop_shift[b] >= 64)
				c->pop_shift[b]++;
			mem += stride[b];
		}
		for (int p = 0; p < ISA_NPIPES; p++) {
			c->pipe[p].q = calloc((size_t)cfg->core_queue_depth, sizeof *c->pipe[p].q);
			if (!c->pipe[p].q)
				goto oom;
		}
		c->flags = calloc(nflags, 1);
		if (!c->flags)
			goto oom;
		c->ic_ipl = (uint64_t)cfg->core_icache_line_bytes / ISA_INSN_BYTES;
		if (c->ic_ipl < 1)
			c->ic_ipl = 1;
		c->ic_lines = (uint64_t)cfg->core_icache_kb * 1024 / (uint64_t)cfg->core_icache_line_bytes;
		if (c->ic_lines && !(c->ic_tag = calloc(c->ic_lines, sizeof *c->ic_tag)))
			goto oom;
	}
	if (sim_func_init(dev, bufs, stride))
		goto oom;
	dev->cube_fa = malloc((size_t)cfg->l0a_size_kb * 1024 * 2); /* fp16 -> fp32 */
	dev->cube_fb = malloc((size_t)cfg->l0b_size_kb * 1024 * 2);
	if (!dev->cube_fa || !dev->cube_fb)
		goto oom;
	return dev;
oom:
	snprintf(err, errlen, "out of memory creating a %s device", cfg->name);
	sim_device_free(dev);
	return NULL;
}

void sim_device_free(struct sim_device *dev)
{
	if (!dev)
		return;
	cores_free(dev);
	for (size_t i = 0; i < dev->ngm; i++)
		sim_gm_block_release(&dev->gm[i]);
	free(dev->gm);
	free(dev->l2_way);
	evq_free(&dev->evq);
	free(dev->active);
	free(dev);
}

const struct soc_config *sim_device_config(const struct sim_device *dev) { return &dev->cfg; }
uint64_t sim_device_now(const struct sim_device *dev) { return dev->now; }
void sim_device_set_mode(struct sim_device *dev, enum sim_mode mode)
{
	dev->opt.mode = mode; /* engine.c's start_block reads it */
}

enum sim_mode sim_device_mode(const struct sim_device *dev) { return dev->opt.mode; }

void sim_device_set_span_hook(struct sim_device *dev,
			      void (*fn)(void *ctx, unsigned core, unsigned pipe, uint64_t start,
					 uint64_t end),
			      void *ctx)
{
	dev->opt.on_span = fn;
	dev->opt.span_ctx = fn ? ctx : NULL;
}

int sim_kernel_load(struct sim_kernel *k, const char *name, const uint8_t *code, size_t bytes,
		    char *err, size_t errlen)
{
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "%s", name);
	if (bytes == 0 || bytes % ISA_INSN_BYTES) {
		snprintf(err, errlen, "kernel '%s': %zu bytes is not a whole number of %d-byte "
			 "instructions", name, bytes, ISA_INSN_BYTES);
		return -1;
	}
	k->ninsns = bytes / ISA_INSN_BYTES;
	k->insns = sim_insn_mem_alloc(k->ninsns, &k->insns_mapped);
	if (!k->insns) {
		snprintf(err, errlen, "kernel '%s': out of memory", name);
		return -1;
	}
	for (size_t pc = 0; pc < k->ninsns; pc++)
		if (isa_decode(code + pc * ISA_INSN_BYTES, &k->insns[pc])) {
			const uint8_t *p = code + pc * ISA_INSN_BYTES;
			snprintf(err, errlen, "kernel '%s', pc %zu: invalid instruction (opcode 0x%02x%s)",
				 name, pc, p[0],
				 isa_info(p[0]) ? ", bits set outside its fields" : ", unknown");
			sim_kernel_free(k);
			return -1;
		}
	return 0;
}

void sim_kernel_free(struct sim_kernel *k)
{
	sim_insn_mem_free(k->insns, k->insns_mapped);
	k->insns = NULL;
	k->ninsns = 0;
	k->insns_mapped = 0;
}

int sim_run(struct sim_device *dev, const struct sim_kernel *k, unsigned block_dim,
	    const int64_t *args, unsigned nargs, struct sim_result *res)
{
	memset(res, 0, sizeof *res);
	struct sim_launch l = { .kind = SIM_LAUNCH_KERNEL, .ready = dev->now, .kernel = k,
				.block_dim = block_dim, .nargs = nargs };
	if (nargs <= SIM_MAX_ARGS && nargs)
		memcpy(l.args, args, nargs * sizeof *args);
	if (sim_submit(dev, &l, res->error, sizeof res->error) ||
	    sim_drain(dev, NULL, NULL, NULL, res->error, sizeof res->error)) {
		res->core = l.core ? l.core : calloc((size_t)dev->cfg.core_count, sizeof *res->core);
		return -1;
	}
	res->start_cycle = l.start_cycle;
	res->end_cycle = l.end_cycle;
	res->cycles = l.end_cycle - l.start_cycle;
	res->ncores = l.ncores;
	res->core = l.core;
	res->total = l.total;
	return 0;
}

void sim_result_free(struct sim_result *res)
{
	free(res->core);
	res->core = NULL;
}

int sim_kernel_load_file(struct sim_kernel *k, const char *path, char *err, size_t errlen)
{
	const char *dot = strrchr(path, '.');
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (dot && strcmp(dot, ".s") == 0) {
		struct isa_program prog;
		if (isa_assemble_file(path, &prog, err, errlen))
			return -1;
		int rc = sim_kernel_load(k, base, prog.code, prog.ninsns * ISA_INSN_BYTES, err,
					 errlen);
		isa_program_free(&prog);
		return rc;
	}
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *b = realloc(buf, cap *= 2);
			if (!b)
				free(buf);
			buf = b;
		}
	}
	fclose(f);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	int rc = sim_kernel_load(k, base, buf, n, err, errlen);
	free(buf);
	return rc;
}

int sim_gm_fill_random_f16(struct sim_device *dev, uint64_t addr, uint64_t bytes, uint64_t seed)
{
	uint16_t *p = sim_gm_ptr(dev, addr, bytes);
	if (!p)
		return -1;
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
	for (uint64_t i = 0; i < bytes / 2; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		/* fp16 in [-1, 1): sign, exponent 0..14, random mantissa */
		uint16_t m = (uint16_t)(s & 0x3ff), e = (uint16_t)((s >> 10) % 15);
		p[i] = (uint16_t)((s >> 20 & 1) << 15 | e << 10 | m);
	}
	return 0;
}
