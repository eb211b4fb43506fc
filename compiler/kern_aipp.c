/* kern_aipp.c: the AIPP kernel (--insert_op_conf) and its place in the
 * compiler: it replaces the first op of an image input, the TransData that
 * would turn the host's fp32 NCHW into the device's fp16 NC1HWC0 (ATC does
 * the same: "AIPP ... is the first op of the model", ascend-runtime.md 6.2).
 *
 * The kernel streams tiles of output rows: aipp.gm.l1 (MTE2: the uint8 image
 * rows, preprocessed, into L1 as NC1HWC0 fp16, or as NC1HWC0_C04 (8 bytes a
 * pixel) for a first conv on ATC's small-channel path, which ATC's docs pair
 * with static AIPP, ascend-runtime.md 6.2), mov.l1.ub (MTE1), mov.ub.gm
 * (MTE3), double-buffered on both L1 and UB so the three queues overlap.
 * MTE3 cannot read L1, hence the hop through the UB.  The N x Ho output rows
 * are split over the cores; a tile never crosses an image (the instruction
 * addresses one image).  Padding rows and columns come out of the same
 * instruction (it writes zeros there), so no vector work is needed.
 *
 * Arguments: 0 the image (the model input, uint8), 1 the config block (in
 * the weights, isa/aipp.h), 2 the NC1HWC0 output in the workspace. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aipp_conf.h"
#include "compile_int.h"
#include "kern_aipp.h"
#include "kern_gen.h"
#include "kern_roll.h"

/* Registers: the arguments image, config, output in x1, x2, x8 (clear of
 * the builder's fixed registers x3..x7, kern_gen.h); x9 0 before the
 * dispatch, the base the output row index is an offset on (kg_addr: so that
 * tiles whose rows move by a tile roll into a loop); x10 the image's
 * address, x11 the row index, x12 the L1 slot, x13 the UB slot (the aipp
 * and mov.l1.ub instructions take registers); the builder's cache
 * x16..x23. */
enum { R_IMG = R_SRC, R_CFG = R_DST, R_OUT = 8, R_ROW0 = 9, R_IMGA = 10, R_ROW = 11, R_L1 = 12,
       R_UB = 13, R_CACHE = 16, R_CACHE_END = 24 };

/* The plan: a tile of output rows (never crossing an image) a step, the L1
 * and UB slots in turn; tiles alike run as a loop, blocks alike share one
 * copy (kg_emit_steps). */
struct aippk {
	int64_t ho, wo, tile, per, total, slot, img_bytes, row_bytes;
	int64_t px_blocks; /* 32-byte blocks of an output row (C0 16 or 4) */
};

/* Block b's tiles (returned): tile want's first output row (over all
 * images) in *first and its rows in *rows. */
static size_t aipp_walk(const struct aippk *q, int64_t b, size_t want, int64_t *first,
			int64_t *rows)
{
	int64_t g0 = b * q->per, g1 = g0 + q->per < q->total ? g0 + q->per : q->total;
	size_t n = 0;
	for (int64_t g = g0; g < g1; n++) {
		int64_t r = g % q->ho, k = g1 - g < q->tile ? g1 - g : q->tile;
		if (r + k > q->ho)
			k = q->ho - r;
		if (n == want) {
			*first = g;
			*rows = k;
		}
		g += k;
	}
	return n;
}

static size_t aipp_steps(const void *ctx, int64_t b)
{
	int64_t first, rows;
	return aipp_walk(ctx, b, SIZE_MAX, &first, &rows);
}

static void aipp_step(struct kg *g, const void *ctx, int64_t b, size_t i)
{
	const struct aippk *q = ctx;
	struct cc_prog *p = g->p;
	int64_t first = 0, rows = 0;
	aipp_walk(q, b, i, &first, &rows);
	int par = (int)(i % 2);
	int64_t img = first / q->ho, r = first % q->ho;
	cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, par);
	kg_addr(g, R_IMGA, R_IMG, img * q->img_bytes);
	kg_addr(g, R_ROW, R_ROW0, r);
	cc_li(p, R_L1, par * q->slot);
	CC_I(p, AIPP, ISA_OP_AIPP_GM_L1, .rd = R_L1, .rs1 = R_IMGA, .rs2 = R_CFG, .rs3 = R_ROW,
	     .nrow = rows);
	cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, par);
	cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, par);
	cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, par);
	cc_li(p, R_UB, par * q->slot);
	cc_dma(p, ISA_OP_MOV_L1_UB, R_UB, R_L1, 1, rows * q->px_blocks, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, par);
	cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE3, par);
	cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE3, par);
	/* [n][1][ho][wo][c0] */
	kg_dma_reg(g, ISA_OP_MOV_UB_GM, R_GM, R_OUT, first * q->row_bytes, R_UB, 1,
		   rows * q->px_blocks, 0, 0);
	cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, par);
}

int cc_gen_aipp(const struct soc_config *cfg, int64_t n, int64_t ho, int64_t wo, int64_t c0,
		int64_t img_bytes, struct cc_prog *p, unsigned *block_dim, char *err,
		size_t errlen)
{
	if ((c0 != 16 && c0 != 4) || (wo * c0 * 2) % 32) {
		snprintf(err, errlen, "aipp: C0 %lld with rows of %lld pixels: not whole 32-byte "
			 "blocks", (long long)c0, (long long)wo);
		return -1;
	}
	int64_t row_bytes = wo * c0 * 2; /* C1 = 1: c0 fp16 lanes per pixel */
	int64_t px_blocks = wo * c0 * 2 / 32; /* 32-byte DMA blocks a row */
	int64_t l1 = (int64_t)cfg->l1_size_kb * 1024, ub = (int64_t)cfg->ub_size_kb * 1024;
	int64_t slot = (l1 < ub ? l1 : ub) / 2;
	int64_t tile = slot / row_bytes;
	if (tile * px_blocks > ISA_DMA_LEN_MAX) /* the DMA's len field (blocks) */
		tile = ISA_DMA_LEN_MAX / px_blocks;
	if (tile < 1) {
		snprintf(err, errlen, "aipp: an output row of %lld pixels does not fit half the "
			 "UB/L1", (long long)wo);
		return -1;
	}
	struct aippk q = { ho, wo, tile, 0, n * ho, slot, img_bytes, row_bytes, px_blocks };
	int64_t blocks = cc_split_work(q.total, cfg->core_count, &q.per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_IMG, 0);
	cc_ldarg(p, R_CFG, 1);
	cc_ldarg(p, R_OUT, 2);
	cc_li(p, R_ROW0, 0);
	struct kg_steps ks = { .blocks = blocks,
			       .sync = { { ISA_PIPE_MTE1, ISA_PIPE_MTE2, 2 },
					 { ISA_PIPE_MTE3, ISA_PIPE_MTE1, 2 } },
			       .nsync = 2, .nsteps = aipp_steps, .step = aipp_step, .ctx = &q };
	return kg_emit_kernel(p, R_CACHE, R_CACHE_END, &ks, "aipp", err, errlen);
}

/* ---- the driver's side -------------------------------------------------- */

struct cc_aipp {
	const char *path;
	struct aipp_conf op[AIPP_MAX_OPS];
	int nop;
	int task[AIPP_MAX_OPS]; /* the task each op became, -1 before */
	int64_t n[AIPP_MAX_OPS];
};

static struct aipp_conf *conf_for(struct cc_aipp *a, int input, int *k)
{
	for (int i = 0; a && i < a->nop; i++)
		if (a->op[i].related_input_rank == input) {
			if (k)
				*k = i;
			return &a->op[i];
		}
	return NULL;
}

int cc_aipp_prepare(struct cc_ctx *c, const char *path, struct cc_aipp **out)
{
	*out = NULL;
	if (!path)
		return 0;
	struct cc_aipp *a = calloc(1, sizeof *a);
	if (!a)
		return cc_fail(c, "out of memory");
	a->path = path;
	if (aipp_conf_parse(path, a->op, AIPP_MAX_OPS, &a->nop, c->err, c->errlen)) {
		free(a);
		return -1;
	}
	for (int i = 0; i < a->nop; i++) {
		struct aipp_conf *o = &a->op[i];
		a->task[i] = -1;
		if (o->related_input_rank >= c->g.ninputs) {
			snprintf(c->err, c->errlen, "%s:%d: related_input_rank %d: the model has %d "
				 "input%s", path, o->line, o->related_input_rank, c->g.ninputs,
				 c->g.ninputs == 1 ? "" : "s");
			free(a);
			return -1;
		}
		const struct cc_tensor *t = T(c, c->g.inputs[o->related_input_rank]);
		if (t->rank != 4 || (t->dtype != CC_F32 && t->dtype != CC_F16)) {
			snprintf(c->err, c->errlen, "%s:%d: input '%s' is not a 4-D float image "
				 "(NCHW): AIPP does not apply", path, o->line, t->name);
			free(a);
			return -1;
		}
		if (aipp_conf_resolve(o, path, t->dims[1], t->dims[2], t->dims[3], c->err,
				      c->errlen)) {
			free(a);
			return -1;
		}
		a->n[i] = t->dims[0];
	}
	*out = a;
	return 0;
}

int cc_aipp_input(struct cc_ctx *c, struct cc_aipp *a, int input, int ti, int small_channel)
{
	int k;
	struct aipp_conf *o = conf_for(a, input, &k);
	if (!o)
		return 0;
	if (cc_ws_place(c, ti))
		return cc_fail(c, "out of memory");
	struct dev_tensor *d = &c->dev[ti];
	if (!dev_5hd(d))
		return cc_fail(c, "input '%s': AIPP needs the NC1HWC0 layout", T(c, ti)->name);
	/* the small-channel path: the AIPP writes the C0 = 4 layout its convs
	 * read (as the TransData would without AIPP), when rows are whole
	 * 32-byte blocks of it */
	int c04 = small_channel && d->w % 4 == 0 && cc_conv_c04_input(c, ti, 1);
	if (c04) {
		d->fmt = CC_FMT_NC1HWC0_C04;
		d->size = dev_bytes(d);
	}
	uint32_t words[AIPP_CFG_WORDS];
	aipp_conf_block(o, words);
	words[AIPP_W_C0] = c04 ? 4 : 16;
	int64_t woff = cc_weight_add(c, words, sizeof words);
	if (woff < 0)
		return cc_fail(c, "out of memory");
	int64_t img = aipp_image_bytes(o->format, o->src_w, o->src_h);
	struct task *t = cc_task_new(c, T(c, ti)->name, "Aipp");
	if (!t)
		return cc_fail(c, "out of memory");
	char msg[256];
	if (cc_gen_aipp(c->cfg, d->n, d->h, d->w, c04 ? 4 : 16, img, &t->prog, &t->block_dim, msg,
			sizeof msg))
		return cc_fail(c, "input '%s': %s", T(c, ti)->name, msg);
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)input };
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, woff, 0 };
	t->argt[t->nargs - 1] = -1;
	t->args[t->nargs] = (struct om_arg){ OM_ARG_WORKSPACE, 0, 0 };
	t->argt[t->nargs++] = ti;
	cc_io_host(c, t, 0, ti, ti, CC_U8); /* its descriptor: set in cc_aipp_model */
	cc_io_dev(c, t, 1, ti);
	t->bytes = (uint64_t)(d->n * img) + (uint64_t)dev_elems(d) * 2;
	a->task[k] = (int)(t - c->tasks);
	if (c04)
		snprintf(t->note, sizeof t->note, "to NC1HWC0_C04 (small channel)");
	cc_log(&c->log, "  aipp: input '%s' <- %s %dx%d image%s%s%s%s%s (%s:%d)", T(c, ti)->name,
	       aipp_format_name(o->format), o->src_w, o->src_h, o->crop ? ", crop" : "",
	       o->csc ? ", CSC" : "", o->rbuv_swap || o->ax_swap ? ", swap" : "",
	       o->padding ? ", padding" : "", c04 ? ", NC1HWC0_C04 out" : "", a->path, o->line);
	return 1;
}

void cc_aipp_model(const struct cc_aipp *a, struct om_model *m)
{
	for (int i = 0; a && i < a->nop; i++) {
		const struct aipp_conf *o = &a->op[i];
		struct om_tensor_desc *d = &m->inputs[o->related_input_rank];
		d->dtype = CC_U8;
		d->rank = aipp_image_dims(o, a->n[i], d->dims);
		d->format = d->rank == 4 ? CC_FMT_NHWC : CC_FMT_ND;
		d->size = (uint64_t)(a->n[i] * aipp_image_bytes(o->format, o->src_w, o->src_h));
		if (a->task[i] >= 0 && (unsigned)a->task[i] < m->ntasks &&
		    m->tasks[a->task[i]].ninputs > 0) {
			struct om_tensor_desc *td = &m->tasks[a->task[i]].inputs[0];
			char name[sizeof td->name];
			snprintf(name, sizeof name, "%s", td->name);
			*td = *d;
			snprintf(td->name, sizeof td->name, "%s", name);
		}
	}
}

int cc_aipp_count(const struct cc_aipp *a) { return a ? a->nop : 0; }

void cc_aipp_free(struct cc_aipp *a) { free(a); }
