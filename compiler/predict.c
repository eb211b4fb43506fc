/* predict.c: what each task of a compiled model should take, from the
 * simulator's dry run (sim/dryrun.h) of its own kernel: every block run
 * through the cost function in the engine's pipe-and-flag order, the
 * blocks dealt to the cores as the task scheduler deals them (each to the
 * core that frees first), the L2 and main memory shared evenly by the cores
 * the task uses, no other task running.  Reads come from the L2 (an
 * activation's producer has just written it) but for the weights and the
 * model's inputs (copied in from the host): their first read comes from
 * main memory, and the task takes at least the time main memory needs to
 * stream them, once (a model's weights outgrow the L2 and are streamed each
 * inference; the first core to read one fetches it for all).
 * Simulated over predicted is then what contention, the L2's actual
 * contents and the task's neighbours cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "dryrun.h"

/* Arguments in regions of their own, so that a read's address says where
 * it reads from: the weights at 1 << 40, the workspace at 2 << 40, input
 * i at (3 + i) << 40, output j at (3 + ninputs + j) << 40. */
#define REGION(k) ((int64_t)(k) << 40)

/* Task t's arguments with every buffer in its region. */
static int region_args(const struct om_model *m, const struct om_task *t, int64_t *args)
{
	uint32_t nio = m->ninputs + m->noutputs;
	uint64_t *base = malloc((nio ? nio : 1) * sizeof *base);
	if (!base)
		return -1;
	for (uint32_t i = 0; i < nio; i++)
		base[i] = (uint64_t)REGION(3 + i);
	const struct om_places p = { (uint64_t)REGION(1), (uint64_t)REGION(2), base,
				     base + m->ninputs };
	om_task_args(t, &p, args);
	free(base);
	return 0;
}

/* The weight bytes read so far: disjoint spans, sorted. */
struct touched {
	uint64_t (*span)[2];
	size_t n, cap;
	uint64_t bytes; /* in the spans */
	int oom;
	uint32_t ninputs; /* the model's inputs, in regions 3 .. 3 + ninputs - 1 */
};

/* Count the weight bytes of [addr, addr + len) not read before; 1 if there
 * were any. */
static int touch(struct touched *t, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;
	size_t i = 0;
	while (i < t->n && t->span[i][1] < addr) /* the first span touching or past it */
		i++;
	size_t j = i; /* the spans [addr, end) touches: i .. j-1 */
	uint64_t lo = addr, hi = end, held = 0;
	for (; j < t->n && t->span[j][0] <= end; j++) {
		lo = t->span[j][0] < lo ? t->span[j][0] : lo;
		hi = t->span[j][1] > hi ? t->span[j][1] : hi;
		held += t->span[j][1] - t->span[j][0];
	}
	if (j == i) { /* a new span at i */
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 64;
			uint64_t(*s)[2] = realloc(t->span, cap * sizeof *s);
			if (!s) {
				t->oom = 1;
				return 0;
			}
			t->span = s;
			t->cap = cap;
		}
		memmove(t->span + i + 1, t->span + i, (t->n - i) * sizeof *t->span);
		t->n++;
	} else { /* spans i .. j-1 become one */
		memmove(t->span + i + 1, t->span + j, (t->n - j) * sizeof *t->span);
		t->n -= j - i - 1;
	}
	t->span[i][0] = lo;
	t->span[i][1] = hi;
	t->bytes += (hi - lo) - held;
	return (hi - lo) > held;
}

/* A read of the weights or of a model input is cold (from main memory) the
 * first time its bytes are read; those bytes are counted once, for the
 * task's main-memory floor (predict_task), whichever core fetches them
 * first.  Every other read is priced from the L2. */
static int first_touch(void *ctx, uint64_t addr, uint64_t nburst, uint64_t burst,
		       uint64_t stride)
{
	int cold = 0;
	struct touched *t = ctx;
	int weights = addr >= (uint64_t)REGION(1) && addr < (uint64_t)REGION(2);
	int input = addr >= (uint64_t)REGION(3) && addr < (uint64_t)REGION(3 + t->ninputs);
	if (!weights && !input)
		return 0;
	for (uint64_t i = 0; i < nburst; i++)
		cold |= touch(ctx, addr + i * stride, burst);
	return cold;
}

/* The task's cycles: its blocks dealt to min(block_dim, cores) cores. */
static int predict_task(const struct soc_config *cfg, const struct sim_costcfg *cc,
			const struct om_model *m, const struct om_task *t,
			const struct sim_kernel *k, uint64_t *cycles, char *err, size_t errlen)
{
	unsigned ncores = t->block_dim < (unsigned)cfg->core_count ? t->block_dim
								   : (unsigned)cfg->core_count;
	double *core = calloc(ncores ? ncores : 1, sizeof *core), end = 0;
	int64_t args[SIM_MAX_ARGS] = { 0 };
	struct touched w = { .ninputs = m->ninputs };
	if (!core) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (t->nargs > SIM_MAX_ARGS || region_args(m, t, args)) {
		snprintf(err, errlen, t->nargs > SIM_MAX_ARGS ? "too many arguments" : "out of memory");
		free(core);
		return -1;
	}
	for (unsigned b = 0; b < t->block_dim; b++) {
		unsigned at = 0; /* the core that frees first */
		for (unsigned i = 1; i < ncores; i++)
			if (core[i] < core[at])
				at = i;
		struct sim_dryrun d;
		sim_dryrun_init(&d, cc, cfg->core_queue_depth, (double)ncores, 0);
		d.cold = first_touch;
		d.hbm_share = 1; /* the other cores find in the L2 what this one fetched */
		d.cold_ctx = &w;
		if (sim_dryrun_kernel(&d, k, b, t->block_dim, args, t->nargs, SIM_MAX_BLOCK_INSNS, err,
				      errlen) ||
		    w.oom) {
			if (w.oom)
				snprintf(err, errlen, "out of memory");
			free(core);
			free(w.span);
			return -1;
		}
		core[at] += sim_dryrun_time(&d);
		if (core[at] > end)
			end = core[at];
	}
	free(core);
	free(w.span);
	/* the weights stream from main memory once, at its whole bandwidth */
	if (w.bytes) {
		struct sim_cost h = sim_hbm_stream(cc, (double)w.bytes);
		double floor = (double)(h.occ + h.lat);
		if (floor > end)
			end = floor;
	}
	*cycles = (uint64_t)(end + 0.5);
	return 0;
}

int cc_predict_tasks(const struct soc_config *cfg, struct om_model *m, char *err, size_t errlen)
{
	struct sim_costcfg cc;
	sim_costcfg_init(&cc, cfg);
	struct sim_kernel *k = calloc(m->nkernels ? m->nkernels : 1, sizeof *k);
	int rc = 0;
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < m->nkernels && !rc; i++)
		rc = sim_kernel_load(&k[i], m->kernels[i].name, m->kernels[i].code,
				     m->kernels[i].bytes, err, errlen);
	for (uint32_t i = 0; i < m->ntasks && !rc; i++) {
		struct om_task *t = &m->tasks[i];
		char why[512];
		rc = predict_task(cfg, &cc, m, t, &k[t->kernel], &t->predicted_cycles, why,
				  sizeof why);
		if (rc)
			snprintf(err, errlen, "task '%s': %s", t->name, why);
	}
	for (uint32_t i = 0; i < m->nkernels; i++)
		sim_kernel_free(&k[i]);
	free(k);
	return rc;
}
