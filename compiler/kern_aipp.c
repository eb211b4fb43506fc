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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aipp_conf.h"
#include "compile_int.h"
#include "kern_aipp.h"

enum { R_IMG = 1, R_CFG = 2, R_OUT = 3, R_BIDX = 4, R_TMP = 5, R_SRC = 6, R_ROW = 7,
       R_L1 = 8, R_UB = 9, R_GM = 10 };

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
	int64_t per;
	int64_t blocks = cc_split_work(n * ho, cfg->core_count, &per);
	*block_dim = (unsigned)blocks;
	cc_ldarg(p, R_IMG, 0);
	cc_ldarg(p, R_CFG, 1);
	cc_ldarg(p, R_OUT, 2);
	int labels[CC_MAX_BLOCKS];
	cc_block_dispatch(p, blocks, labels, R_BIDX, R_TMP);
	for (int64_t b = 0; b < blocks; b++) {
		cc_label_bind(p, labels[b]);
		int64_t g0 = b * per, g1 = g0 + per < n * ho ? g0 + per : n * ho;
		cc_prime_flags(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, 2);
		cc_prime_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, 2);
		int par = 0;
		for (int64_t g = g0; g < g1; par ^= 1) {
			int64_t img = g / ho, r = g % ho;
			int64_t rows = g1 - g < tile ? g1 - g : tile;
			if (r + rows > ho)
				rows = ho - r;
			cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, par);
			cc_addi(p, R_SRC, R_IMG, img * img_bytes);
			cc_li(p, R_ROW, r);
			cc_li(p, R_L1, par * slot);
			CC_I(p, AIPP, ISA_OP_AIPP_GM_L1, .rd = R_L1, .rs1 = R_SRC, .rs2 = R_CFG,
			     .rs3 = R_ROW, .nrow = rows);
			cc_set_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, par);
			cc_wait_flag(p, ISA_PIPE_MTE2, ISA_PIPE_MTE1, par);
			cc_wait_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, par);
			cc_li(p, R_UB, par * slot);
			cc_dma(p, ISA_OP_MOV_L1_UB, R_UB, R_L1, 1, rows * px_blocks, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, par);
			cc_set_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE3, par);
			cc_wait_flag(p, ISA_PIPE_MTE1, ISA_PIPE_MTE3, par);
			cc_addi(p, R_GM, R_OUT, g * row_bytes); /* [n][1][ho][wo][c0] */
			cc_dma(p, ISA_OP_MOV_UB_GM, R_GM, R_UB, 1, rows * px_blocks, 0, 0);
			cc_set_flag(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, par);
			g += rows;
		}
		cc_drain_flags(p, ISA_PIPE_MTE1, ISA_PIPE_MTE2, 2);
		cc_drain_flags(p, ISA_PIPE_MTE3, ISA_PIPE_MTE1, 2);
		cc_end(p);
	}
	return 0;
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
