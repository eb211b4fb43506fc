/* compile.c: the compiler driver: import, the graph passes, the shape
 * inference loop (the op table: ops.c), the host/device edges, the memory
 * plan, the .om model, the reports and the fusion switch file; the passes
 * run as passes.def lists them (run_stage).  Each op's
 * shape inference and lowering live in lower_<family>.c, the helpers they
 * share in lower_util.c, the shared types in compile_int.h. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "kern_aipp.h"
#include "fp16.h"
#include "kern_resize.h"
#include "fusion_switch.h"
#include "ops.h"

/* ---- --input_shape ---------------------------------------------------------------- */

static int apply_input_shape(struct cc_ctx *c, const char *spec)
{
	if (!spec || !*spec)
		return 0;
	char *copy = strdup(spec);
	if (!copy)
		return cc_fail(c, "out of memory");
	int rc = 0;
	for (char *save = NULL, *item = strtok_r(copy, ";", &save); item && !rc;
	     item = strtok_r(NULL, ";", &save)) {
		char *colon = strrchr(item, ':');
		if (!colon) {
			rc = cc_fail(c, "--input_shape '%s': expected name:d1,d2,...", item);
			break;
		}
		*colon = 0;
		int ti = cc_tensor_find(&c->g, item);
		if (ti < 0 || !T(c, ti)->is_input) {
			rc = cc_fail(c, "--input_shape names '%s', which is not an input of the model",
				     item);
			break;
		}
		struct cc_tensor *t = T(c, ti);
		int64_t dims[CC_MAX_RANK];
		int rank = 0;
		for (char *s2 = NULL, *d = strtok_r(colon + 1, ",", &s2); d;
		     d = strtok_r(NULL, ",", &s2)) {
			char *e;
			long long v = strtoll(d, &e, 10);
			if (!*e && v == -1) {
				rc = cc_fail(c, "--input_shape '%s': -1 (a dynamic batch) needs "
					     "--dynamic_batch_size", item);
				break;
			}
			if (*e || v < 1 || rank == CC_MAX_RANK) {
				rc = cc_fail(c, "--input_shape '%s': bad dimension '%s'", item, d);
				break;
			}
			dims[rank++] = v;
		}
		if (rc)
			break;
		if (t->rank >= 0 && t->rank != rank) {
			rc = cc_fail(c, "--input_shape gives '%s' %d dimensions; the model has %d", item,
				     rank, t->rank);
			break;
		}
		for (int i = 0; i < rank && t->rank >= 0; i++)
			if (t->dims[i] >= 0 && t->dims[i] != dims[i]) {
				rc = cc_fail(c, "--input_shape gives '%s' dimension %d = %lld; the model "
					     "fixes it at %lld", item, i, (long long)dims[i],
					     (long long)t->dims[i]);
				break;
			}
		if (!rc) {
			t->rank = rank;
			for (int i = 0; i < rank; i++)
				t->dims[i] = dims[i];
		}
	}
	free(copy);
	return rc;
}

/* ---- --fusion_switch_file ------------------------------------------------------- */

static int read_switches(struct cc_ctx *c, const char *path, int on[SW_N])
{
	char msg[512];
	if (cc_fusion_switch_read(path, on, msg, sizeof msg))
		return cc_fail(c, "%s", msg);
	return 0;
}

/* The passes of one stage that are on, in passes.def's order, each one's
 * count into changes[]; 0, or -1 with the message in c->err. */
static int run_stage(struct cc_ctx *c, enum cc_stage stage, const int on[SW_N],
		     int changes[SW_N])
{
	static const struct {
		enum cc_stage stage;
		int (*graph)(struct cc_graph *, struct cc_pass_log *, char *, size_t);
		int (*plan)(struct cc_ctx *);
	} passes[SW_N] = {
#define CC_PASS(id, name, stage, graph, plan, on) { stage, graph, plan },
#include "passes.def"
	};
	for (int i = 0; i < SW_N; i++) {
		if (passes[i].stage != stage || !on[i] || (!passes[i].graph && !passes[i].plan))
			continue;
		changes[i] = passes[i].graph ? passes[i].graph(&c->g, &c->log, c->err, c->errlen)
					     : passes[i].plan(c);
		if (changes[i] < 0)
			return -1;
	}
	return 0;
}

/* A task's kernel past the bounds of emit.h (what, e.g. "input 'x'"):
 * said at once, before more kernels of that size are generated. */
static int task_over(struct cc_ctx *c, const struct task *t, const char *what)
{
	if (t->prog.work_over)
		return cc_fail(c, "%s: its %s kernel's generator emits more than %zu instructions "
			       "(unrolled), the most it may on %s", what, t->op_type,
			       t->prog.max_work, c->cfg->name);
	if (t->prog.over)
		return cc_fail(c, "%s: its %s kernel needs more than %zu instructions, the most "
			       "one kernel may hold on %s", what, t->op_type, t->prog.max_n,
			       c->cfg->name);
	return 0;
}

static uint64_t task_bytes(const struct cc_ctx *c)
{
	uint64_t b = 0;
	for (unsigned i = 0; i < c->ntasks; i++)
		b += c->tasks[i].bytes;
	return b;
}

static int write_report_json(struct cc_ctx *c, const struct om_model *m, const char *path,
			     int nodes_in, int nodes_out, const int changes[SW_N],
			     const int on[SW_N])
{
	FILE *f = fopen(path, "w");
	if (!f)
		return cc_fail(c, "--report %s: cannot write", path);
	fprintf(f, "{\"model\": ");
	sim_json_str(f, c->path);
	fprintf(f, ", \"soc\": ");
	sim_json_str(f, c->cfg->name);
	fprintf(f, ", \"nodes_before\": %d, \"nodes_after\": %d, \"tasks\": %u, "
		   "\"weights_bytes\": %llu, \"workspace_bytes\": %llu, "
		   "\"workspace_bytes_without_reuse\": %llu",
		nodes_in, nodes_out, c->ntasks, (unsigned long long)c->wbytes,
		(unsigned long long)c->ws_bytes, (unsigned long long)c->ws_no_reuse);
	fprintf(f, ", \"tasks_by_type\": {");
	const char **ty;
	unsigned *cnt;
	int nty = om_task_types(m, &ty, &cnt);
	for (int k = 0; k < nty; k++) {
		fprintf(f, "%s", k ? ", " : "");
		sim_json_str(f, ty[k]);
		fprintf(f, ": %u", cnt[k]);
	}
	free(ty);
	free(cnt);
	fprintf(f, "}, \"task_bytes\": %llu, \"passes\": [", (unsigned long long)task_bytes(c));
	const char *sep = "";
	for (int i = 0; i < SW_N; i++)
		if (cc_switch_names[i]) {
			fprintf(f, "%s{\"name\": \"%s\", \"enabled\": %s, \"changes\": %d}", sep,
				cc_switch_names[i], on[i] ? "true" : "false", changes[i]);
			sep = ", ";
		}
	fprintf(f, "], \"precision\": [");
	cc_precision_json(c, f);
	if (c->keep_node) {
		fprintf(f, "], \"kept_outputs\": [");
		cc_keep_all_json(c, f);
	}
	fprintf(f, "], \"task_list\": [");
	for (unsigned i = 0; i < c->ntasks; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		sim_json_str(f, c->tasks[i].name);
		fprintf(f, ", \"type\": ");
		sim_json_str(f, c->tasks[i].op_type);
		fprintf(f, ", \"block_dim\": %u, \"instructions\": %zu, \"flops\": %llu, "
			   "\"predicted_cycles\": %llu}",
			c->tasks[i].block_dim, task_insns(c, i),
			(unsigned long long)c->tasks[i].flops,
			(unsigned long long)m->tasks[i].predicted_cycles);
	}
	fprintf(f, "]}\n");
	if (fclose(f))
		return cc_fail(c, "--report %s: cannot write", path);
	return 0;
}

/* ---- the driver ---------------------------------------------------------------- */

/* The memory plan: each workspace storage tensor lives from the first to
 * the last task that touches it; tensors whose lifetimes do not overlap may
 * share bytes.  Greedy in order of first use, lowest offset that fits. */
static int plan_memory(struct cc_ctx *c)
{
	int nt = c->g.nt;
	for (int i = 0; i < nt; i++)
		if (c->dev[i].where == W_WS && c->dev[i].storage == i)
			c->dev[i].first = c->dev[i].last = -1;
	for (unsigned k = 0; k < c->ntasks; k++)
		for (unsigned a = 0; a < c->tasks[k].nargs; a++) {
			int s = c->tasks[k].argt[a];
			if (s < 0)
				continue;
			struct dev_tensor *d = &c->dev[s];
			if (d->first < 0)
				d->first = (int)k;
			d->last = (int)k;
		}
	int *order = malloc((size_t)(nt + 1) * sizeof *order), n = 0;
	if (!order)
		return cc_fail(c, "out of memory");
	for (int i = 0; i < nt; i++)
		if (c->dev[i].where == W_WS && c->dev[i].storage == i && c->dev[i].first >= 0)
			order[n++] = i;
	/* insertion sort by first use: n is the number of tensors, small */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && c->dev[order[j]].first < c->dev[order[j - 1]].first; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	uint64_t peak = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		struct dev_tensor *d = &c->dev[order[i]];
		sum += d->size;
		uint64_t off = 0;
		for (int moved = 1; moved;) { /* lowest offset clear of every live tensor */
			moved = 0;
			for (int j = 0; j < i; j++) {
				struct dev_tensor *e = &c->dev[order[j]];
				if (e->last < d->first)
					continue;
				if (off < e->offset + e->size && e->offset < off + d->size) {
					off = e->offset + e->size;
					moved = 1;
				}
			}
		}
		d->offset = off;
		if (off + d->size > peak)
			peak = off + d->size;
	}
	free(order);
	for (int i = 0; i < nt; i++) /* views share their storage's offset */
		if (c->dev[i].where == W_WS && c->dev[i].storage != i && c->dev[i].storage >= 0)
			c->dev[i].offset = c->dev[c->dev[i].storage].offset;
	for (unsigned k = 0; k < c->ntasks; k++)
		for (unsigned a = 0; a < c->tasks[k].nargs; a++)
			if (c->tasks[k].argt[a] >= 0)
				c->tasks[k].args[a].value +=
					(int64_t)c->dev[c->tasks[k].argt[a]].offset;
	c->ws_bytes = peak;
	c->ws_no_reuse = sum;
	cc_log(&c->log, "  concat: %d inputs written in place by their producers, %d copied",
	       c->concat_inplace, c->concat_copies);
	cc_log(&c->log, "  split: %d Slice/Split outputs are views of their input (no task)",
	       c->slice_views);
	cc_log(&c->log, "  memplan: %d workspace tensors, %llu bytes without reuse, %llu with",
	       n, (unsigned long long)sum, (unsigned long long)peak);
	return 0;
}

static void ctx_free(struct cc_ctx *c)
{
	for (unsigned i = 0; i < c->ntasks; i++)
		cc_prog_free(&c->tasks[i].prog);
	free(c->tasks);
	free(c->dev);
	free(c->vroot);
	free(c->vc1);
	free(c->vwhy);
	free(c->l2);
	free(c->l2_at);
	free(c->wblobs);
	free(c->keep_node);
	free(c->weights);
	free(c->log.buf);
	cc_tile_cache_free(c->tiles);
	cc_graph_free(&c->g);
}

/* host: an output's --output_type (0: none) */
static void desc_from(struct om_tensor_desc *d, const struct cc_tensor *t, enum cc_dtype host)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", t->name);
	d->dtype = t->dtype;
	d->format = t->rank == 4 ? CC_FMT_NCHW : CC_FMT_ND;
	d->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		d->dims[i] = t->dims[i];
	d->size = (uint64_t)cc_tensor_numel(t) * cc_dtype_size(t->dtype);
	if (host) { /* --output_type: the output edge converts to it */
		d->dtype = host;
		d->size = (uint64_t)cc_tensor_numel(t) * cc_dtype_size(host);
	} else if (t->edge) { /* the user's type; the runtime converts (om_edge.c) */
		d->device_dtype = t->dtype;
		d->dtype = t->edge;
		d->size = (uint64_t)cc_tensor_numel(t) * cc_dtype_size(t->edge);
	}
}

/* A task's tensor: its logical dims, at the dtype and in the format the task
 * moves it; size is the logical bytes at that dtype (om_read checks it). */
static void desc_io(struct cc_ctx *c, struct om_tensor_desc *d, const struct task_io *io)
{
	const struct cc_tensor *s = T(c, io->shape);
	desc_from(d, s, 0);
	snprintf(d->name, sizeof d->name, "%s", T(c, io->ti)->name);
	d->dtype = io->dtype;
	d->device_dtype = 0;
	d->format = io->fmt;
	d->size = (uint64_t)cc_tensor_numel(s) * cc_dtype_size(io->dtype);
}

/* Graph outputs declared with a type the device does not compute in
 * (om_edge_device_dtype): computed in the device's type, converted by the
 * runtime.  A Cast to such a type that makes an output casts to the
 * device's type (the edge then narrows or widens, saturating as
 * om_edge.c says). */
static int edge_outputs(struct cc_ctx *c)
{
	for (int i = 0; i < c->g.noutputs; i++) {
		struct cc_tensor *t = T(c, c->g.outputs[i]);
		if (!t->is_input && om_edge_device_dtype(t->dtype))
			t->edge = t->dtype;
	}
	for (int i = 0; i < c->g.nn; i++) {
		struct cc_node *n = &c->g.n[i];
		if (n->dead || strcmp(n->op, "Cast") || n->nout < 1 || n->out[0] < 0)
			continue;
		struct cc_tensor *y = T(c, n->out[0]);
		for (int a = 0; a < n->nattrs; a++)
			if (!strcmp(n->attrs[a].name, "to") && y->is_output &&
			    om_edge_device_dtype((int32_t)n->attrs[a].i)) {
				y->edge = (enum cc_dtype)n->attrs[a].i;
				n->attrs[a].i = om_edge_device_dtype((int32_t)n->attrs[a].i);
			}
	}
	return 0;
}

/* The kernel already in m whose code is k's, byte for byte, else k's own
 * index (m->nkernels): tasks of one shape run one binary with their own
 * arguments, as ATC compiles an op of the same type, shape and attributes
 * once (ResNet-50's repeated bottlenecks). */
static unsigned same_kernel(const struct om_model *m, const struct om_kernel *k)
{
	for (unsigned j = 0; j < m->nkernels; j++)
		if (m->kernels[j].bytes == k->bytes &&
		    (!k->bytes || !memcmp(m->kernels[j].code, k->code, k->bytes)))
			return j;
	return m->nkernels;
}

static int build_model(struct cc_ctx *c, struct om_model *m, const char *name)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	snprintf(m->soc, sizeof m->soc, "%s", c->cfg->name);
	m->ntasks = c->ntasks;
	m->nkernels = 0;
	m->kernels = calloc(c->ntasks ? c->ntasks : 1, sizeof *m->kernels);
	m->tasks = calloc(c->ntasks ? c->ntasks : 1, sizeof *m->tasks);
	m->inputs = calloc((size_t)c->g.ninputs + 1, sizeof *m->inputs);
	m->outputs = calloc((size_t)c->g.noutputs + 1, sizeof *m->outputs);
	m->tensors = calloc((size_t)c->g.nt + 1, sizeof *m->tensors);
	if (!m->kernels || !m->tasks || !m->inputs || !m->outputs || !m->tensors)
		return cc_fail(c, "out of memory");
	for (unsigned i = 0; i < c->ntasks; i++) {
		struct task *t = &c->tasks[i];
		struct om_task *ot = &m->tasks[i];
		if (t->shared) { /* (the task it shares comes first) */
			ot->kernel = m->tasks[t->shared - 1].kernel;
		} else {
			struct om_kernel *k = &m->kernels[m->nkernels];
			snprintf(k->name, sizeof k->name, "k%u_", i);
			size_t l = strlen(k->name);
			for (const char *s = t->op_type; *s && l + 1 < sizeof k->name; s++)
				k->name[l++] = isalnum((unsigned char)*s) ? *s : '_';
			k->name[l] = 0;
			size_t bytes;
			char msg[256];
			if (cc_prog_finish(&t->prog, &k->code, &bytes, msg, sizeof msg))
				return cc_fail(c, "task '%s': %s", t->name, msg);
			k->bytes = bytes;
			ot->kernel = same_kernel(m, k);
			if (ot->kernel == m->nkernels)
				m->nkernels++;
			else /* one binary for every task of the same code */
				free(k->code), k->code = NULL;
		}
		snprintf(ot->name, sizeof ot->name, "%s", t->name);
		snprintf(ot->op_type, sizeof ot->op_type, "%s", t->op_type);
		cc_op_cann_type(t->op_type, ot->cann_type, sizeof ot->cann_type);
		ot->block_dim = t->block_dim;
		ot->nargs = t->nargs;
		ot->args = calloc(t->nargs ? t->nargs : 1, sizeof *ot->args);
		if (!ot->args)
			return cc_fail(c, "out of memory");
		memcpy(ot->args, t->args, t->nargs * sizeof *ot->args);
		ot->flops = t->flops;
		ot->bytes = t->bytes;
		ot->inputs = calloc(t->nin ? t->nin : 1, sizeof *ot->inputs);
		ot->outputs = calloc(t->nout ? t->nout : 1, sizeof *ot->outputs);
		if (!ot->inputs || !ot->outputs)
			return cc_fail(c, "out of memory");
		ot->ninputs = t->nin;
		for (unsigned j = 0; j < t->nin; j++)
			desc_io(c, &ot->inputs[j], &t->in[j]);
		ot->noutputs = t->nout;
		for (unsigned j = 0; j < t->nout; j++)
			desc_io(c, &ot->outputs[j], &t->out[j]);
	}
	m->ninputs = (uint32_t)c->g.ninputs;
	for (int i = 0; i < c->g.ninputs; i++)
		desc_from(&m->inputs[i], T(c, c->g.inputs[i]), 0);
	m->noutputs = (uint32_t)c->g.noutputs;
	for (int i = 0; i < c->g.noutputs; i++)
		desc_from(&m->outputs[i], T(c, c->g.outputs[i]),
			  T(c, c->g.outputs[i])->host_type);
	for (int i = 0; i < c->g.nt; i++) {
		struct dev_tensor *d = &c->dev[i];
		if (d->where != W_WS || d->storage != i || d->first < 0)
			continue;
		struct om_tensor_desc *td = &m->tensors[m->ntensors++];
		memset(td, 0, sizeof *td);
		snprintf(td->name, sizeof td->name, "%s", T(c, i)->name);
		td->dtype = CC_F16;
		td->format = dev_format(d);
		if (dev_5hd(d)) { /* [n][c1][h][w][c0] */
			int64_t c0 = dev_c0(d);
			td->rank = 5;
			td->dims[0] = d->n;
			td->dims[1] = (d->c + c0 - 1) / c0;
			td->dims[2] = d->h;
			td->dims[3] = d->w;
			td->dims[4] = c0;
		} else {
			td->rank = 2;
			td->dims[0] = d->rows;
			td->dims[1] = cc_pad16(d->cols);
		}
		td->offset = d->offset;
		td->size = (uint64_t)dev_elems(d) * 2; /* allocated: d->size */
	}
	m->weights_bytes = c->wbytes;
	m->weights = calloc(1, c->wbytes ? c->wbytes : 1);
	if (!m->weights)
		return cc_fail(c, "out of memory");
	if (c->wbytes)
		memcpy(m->weights, c->weights, c->wbytes);
	m->workspace_bytes = c->ws_bytes;
	char msg[768];
	if (c->progress)
		c->progress(c->progress_ctx, "predicting", 0, 0);
	if (cc_predict_tasks(c->cfg, m, msg, sizeof msg))
		return cc_fail(c, "predicting the tasks' cycles: %s", msg);
	if (c->progress)
		c->progress(c->progress_ctx, "verifying", 0, 0);
	if (cc_verify_tasks(c->cfg, m, msg, sizeof msg))
		return cc_fail(c, "%s", msg);
	return 0;
}

/* Empty tensors (a dimension of 0): a node whose outputs all hold nothing
 * runs no kernel, its outputs are placed and never written; a node that
 * must make values from an empty activation is refused.  1 when the node
 * is done, 0 to lower it, -1 on error. */
static int empty_node(struct cc_ctx *c, struct cc_node *n)
{
	int outs = 0, empty_out = 1, empty_in = -1;
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0) {
			outs++;
			empty_out &= cc_tensor_numel(T(c, n->out[k])) == 0;
		}
	for (int k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && !T(c, n->in[k])->data && cc_tensor_numel(T(c, n->in[k])) == 0)
			empty_in = k;
	if (outs && empty_out) {
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				cc_ws_place(c, n->out[k]);
		return 1;
	}
	if (empty_in >= 0 && strcmp(n->op, "Concat")) /* (Concat skips them) */
		return NODE_FAIL(c, n, "computing from the empty input '%s' is not supported yet",
				 T(c, n->in[empty_in])->name);
	return 0;
}

/* Bytes of one image of batch-sliced tensor ti: NC1HWC0's 32 a pixel and C1,
 * or the small-channel layout's 8 a pixel (C1 = 1) of an image input
 * (plan_l2.c node_batch). */
static uint64_t slice_image_bytes(struct cc_ctx *c, int ti)
{
	const int64_t *d = T(c, ti)->dims;
	return dev_c04(&c->dev[ti]) ? (uint64_t)(d[2] * d[3] * 8)
				    : (uint64_t)((d[1] + 15) / 16 * d[2] * d[3] * 32);
}

/* Tensor ti's images [b0, b0 + cnt) as a tensor of its own: a view (NC1HWC0
 * images follow one another), placed before its producer lowers. */
static int batch_slice(struct cc_ctx *c, int ti, int64_t b0, int64_t cnt)
{
	int64_t d[4];
	memcpy(d, T(c, ti)->dims, sizeof d);
	int c04 = dev_c04(&c->dev[ti]);
	uint64_t img = slice_image_bytes(c, ti);
	d[0] = cnt;
	int s = cc_tensor_new(c, T(c, ti)->name, "b", 4, d);
	if (s < 0)
		return -1;
	T(c, s)->dtype = T(c, ti)->dtype;
	cc_view_at(c, ti, s, (uint64_t)b0 * img, 0);
	if (c04) { /* the view keeps its layout (cc_view_at makes NC1HWC0) */
		c->dev[s].fmt = CC_FMT_NC1HWC0_C04;
		c->dev[s].size = dev_bytes(&c->dev[s]);
	}
	c->dev[s].pinned = 1;
	c->dev[s].slice_of = ti + 1;
	c->dev[s].slice_b0 = b0;
	/* its int8 form: the same images of the full tensor's (which the
	 * producer's first slice planned, cc_q8_plan) */
	c->dev[s].q8 = 0;
	if (c->dev[ti].q8) {
		int q = cc_q8_slice(c, ti, b0, cnt);
		if (q < 0)
			return -1;
		c->dev[s].q8 = q + 1;
	}
	return s;
}

/* Whether node j's tasks of the first slice [t0, t1) can serve a later
 * slice of the same size with their arguments moved: every workspace
 * argument is one of the node's batch-sliced tensors (its storage the full
 * tensor), so the slice's kernels differ in those addresses only. */
static int slice_clonable(struct cc_ctx *c, const struct cc_node *n, unsigned t0, unsigned t1,
			  int64_t N)
{
	if (t0 == t1)
		return 0;
	for (unsigned i = t0; i < t1; i++)
		for (unsigned a = 0; a < c->tasks[i].nargs; a++) {
			int st = c->tasks[i].argt[a], mine = 0;
			if (c->tasks[i].args[a].kind == OM_ARG_INPUT)
				return 0;
			if (st < 0)
				continue; /* a weight: laid out once for every slice */
			for (int k = 0; k < n->nin + n->nout; k++)
				mine |= cc_node_tensor(n, k) == st;
			if (!mine || T(c, st)->rank != 4 || T(c, st)->dims[0] != N)
				return 0;
		}
	return 1;
}

/* An L2-fused chain (plan_l2.c): every node for images [0, S), then every
 * node for [S, 2S)...; each node lowered as itself on batch slices of its
 * activations (its constants as they are, laid out once).  A later slice of
 * the first's size runs the first slice's kernels with its own addresses
 * (as ATC reuses one kernel binary for every slice), so code and compile
 * time do not grow with the slice count. */
static int lower_sliced(struct cc_ctx *c, const struct cc_l2chain *ch)
{
	for (int j = ch->first; j <= ch->last; j++) /* the full outputs, sliced below */
		for (int k = 0; !c->g.n[j].dead && k < c->g.n[j].nout; k++)
			if (c->g.n[j].out[k] >= 0 && cc_ws_place(c, c->g.n[j].out[k]))
				return -1;
	int64_t N = T(c, c->g.n[ch->first].out[0])->dims[0];
	int len = ch->last - ch->first + 1;
	unsigned *t0 = calloc((size_t)len, sizeof *t0), *t1 = calloc((size_t)len, sizeof *t1);
	if (!t0 || !t1) {
		free(t0);
		free(t1);
		return cc_fail(c, "out of memory");
	}
	int rc = -1;
	c->wdedupe = 1;
	c->nwblobs = 0;
	for (int64_t b0 = 0; b0 < N; b0 += ch->S) {
		int64_t cnt = N - b0 < ch->S ? N - b0 : ch->S;
		for (int j = ch->first; j <= ch->last; j++) {
			struct cc_node m = c->g.n[j];
			if (m.dead)
				continue;
			char name[600];
			snprintf(name, sizeof name, "%s#b%lld", c->g.n[j].name, (long long)b0);
			unsigned *f0 = &t0[j - ch->first], *f1 = &t1[j - ch->first];
			if (b0 && cnt == ch->S && slice_clonable(c, &m, *f0, *f1, N)) {
				for (unsigned i = *f0; i < *f1; i++) {
					char op[sizeof c->tasks[i].op_type]; /* (the tasks move) */
					memcpy(op, c->tasks[i].op_type, sizeof op);
					struct task *t = cc_task_new(c, name, op);
					if (!t) {
						cc_fail(c, "out of memory");
						goto done;
					}
					struct task *src = &c->tasks[i]; /* (after the realloc) */
					struct cc_prog own = t->prog;
					char tname[sizeof t->name];
					memcpy(tname, t->name, sizeof tname);
					*t = *src;
					t->prog = own;
					t->shared = i + 1;
					memcpy(t->name, tname, sizeof tname);
					for (unsigned a = 0; a < t->nargs; a++)
						if (t->argt[a] >= 0) /* the slice's images */
							t->args[a].value += (int64_t)((uint64_t)b0 *
								slice_image_bytes(c, t->argt[a]));
				}
				continue;
			}
			int in[64], out[8];
			if (m.nin > 64 || m.nout > 8) {
				cc_node_fail(c, &m, "too many inputs for L2 fusion");
				goto done;
			}
			for (int k = 0; k < m.nin + m.nout; k++) {
				int ti = cc_node_tensor(&m, k), v = ti;
				if (ti >= 0 && !T(c, ti)->data && T(c, ti)->rank == 4 &&
				    T(c, ti)->dims[0] == N && c->dev[ti].where == W_WS &&
				    (v = batch_slice(c, ti, b0, cnt)) < 0) {
					cc_fail(c, "out of memory");
					goto done;
				}
				*(k < m.nin ? &in[k] : &out[k - m.nin]) = v;
			}
			m.in = in;
			m.out = out;
			m.name = name;
			unsigned first = c->ntasks;
			if (cc_op_find(m.op)->lower(c, &m))
				goto done;
			if (!b0) {
				*f0 = first;
				*f1 = c->ntasks;
			}
		}
	}
	rc = 0;
done:
	c->wdedupe = 0;
	free(t0);
	free(t1);
	return rc;
}

int cc_compile(const char *onnx_path, const struct soc_config *cfg, const struct cc_options *opt,
	       struct om_model *out, char *err, size_t errlen)
{
	struct cc_ctx c;
	memset(&c, 0, sizeof c);
	memset(out, 0, sizeof *out);
	c.path = onnx_path;
	c.cfg = cfg;
	c.err = err;
	c.errlen = errlen;
	if (opt) {
		c.progress = opt->progress;
		c.progress_ctx = opt->progress_ctx;
	}
	if (cc_onnx_load(onnx_path, &c.g, err, errlen))
		return -1;
	c.tiles = cc_tile_cache_new(); /* NULL: tilings are chosen anew each time */
	int rc = -1;
	int nodes_in = 0;
	struct cc_aipp *aipp = NULL; /* --insert_op_conf (kern_aipp.c) */
	if (apply_input_shape(&c, opt ? opt->input_shape : NULL))
		goto done;
	for (unsigned f = 0; opt && f < opt->nfrozen; f++) {
		int ti = cc_tensor_find(&c.g, opt->frozen_names[f]);
		if (ti < 0 || !T(&c, ti)->is_input) {
			cc_fail(&c, "'%s' is not an input of the model", opt->frozen_names[f]);
			goto done;
		}
		struct cc_tensor *t = T(&c, ti);
		const struct om_tensor *v = &opt->frozen[f];
		t->data = malloc(v->nbytes ? v->nbytes : 1);
		if (!t->data) {
			cc_fail(&c, "out of memory");
			goto done;
		}
		memcpy(t->data, v->data, v->nbytes);
		t->nbytes = v->nbytes;
		t->dtype = (enum cc_dtype)v->dtype;
		t->rank = v->rank;
		for (int d = 0; d < v->rank; d++)
			t->dims[d] = v->dims[d];
		t->is_input = 0;
		int k = 0;
		for (int i = 0; i < c.g.ninputs; i++)
			if (c.g.inputs[i] != ti)
				c.g.inputs[k++] = c.g.inputs[i];
		c.g.ninputs = k;
	}
	for (int i = 0; i < c.g.ninputs; i++) {
		struct cc_tensor *t = T(&c, c.g.inputs[i]);
		char dyn[256] = "";
		size_t nd = 0;
		for (int d = 0; d < t->rank; d++)
			if (t->dims[d] < 0)
				nd += (size_t)snprintf(dyn + nd, sizeof dyn - nd, "%s%s",
						       nd ? ", " : "",
						       t->dim_param[d] ? t->dim_param[d] : "?");
		if (t->rank < 0) {
			cc_fail(&c, "input '%s' has no tensor shape (a sequence, map or optional?): "
				 "not supported yet", t->name);
			goto done;
		}
		if (nd) {
			cc_fail(&c, "input '%s' has dynamic dimensions (%s): give them with "
				 "--input_shape=\"%s:...\"", t->name, dyn, t->name);
			goto done;
		}
		if (om_edge_device_dtype(t->dtype)) { /* converted by the runtime */
			t->edge = t->dtype;
			t->dtype = (enum cc_dtype)om_edge_device_dtype(t->dtype);
		}
		if (t->dtype != CC_F32 && cc_int_input_check(&c, c.g.inputs[i]))
			goto done;
	}
	if (edge_outputs(&c) || cc_output_type(&c, opt ? opt->output_type : NULL))
		goto done;
	/* before any pass: a pass never sees a graph that breaks what it relies on */
	if (cc_validate_graph(&c))
		goto done;
	if (cc_aipp_prepare(&c, opt ? opt->insert_op_conf : NULL, &aipp))
		goto done;
	int on[SW_N], changes[SW_N] = { 0 };
	if (read_switches(&c, opt ? opt->fusion_switch_file : NULL, on))
		goto done;
	for (int i = 0; i < c.g.nn; i++)
		nodes_in += !c.g.n[i].dead;
	cc_log(&c.log, "passes:");
	if (run_stage(&c, CC_ST_GRAPH, on, changes))
		goto done;
	for (int i = 0; i < SW_N; i++)
		if (!on[i] && cc_switch_names[i])
			cc_log(&c.log, "  %s: off (fusion switch file)", cc_switch_names[i]);
	/* shape inference, in the graph's (topological) order */
	for (int i = 0; i < c.g.nn; i++) {
		struct cc_node *n = &c.g.n[i];
		if (n->dead)
			continue;
		if (on[SW_CONSTFOLD]) {
			int f = cc_fold_node(&c.g, i);
			if (f < 0) {
				cc_fail(&c, "out of memory folding constants");
				goto done;
			}
			if (f) {
				changes[SW_CONSTFOLD]++;
				continue;
			}
		}
		const struct cc_op_info *e = cc_op_find(n->op);
		if (!e || (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))) {
			cc_node_fail(&c, n, "operator %s%s%s is not supported (supported: %s)",
				     n->domain && *n->domain ? n->domain : "",
				     n->domain && *n->domain ? "." : "", n->op, cc_supported_ops());
			goto done;
		}
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && T(&c, n->in[k])->rank < 0 && !T(&c, n->in[k])->data) {
				cc_node_fail(&c, n, "input '%s' is not computed before this node",
					     T(&c, n->in[k])->name);
				goto done;
			}
		if (e->infer(&c, n))
			goto done;
		/* inferred sizes too: a later pass or generator computes with them */
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && cc_check_size(&c, n, n->out[k]))
				goto done;
	}
	for (int i = 0; i < c.g.noutputs; i++) {
		const struct cc_tensor *t = T(&c, c.g.outputs[i]);
		if (t->edge && !t->is_input && (int32_t)t->dtype != om_edge_device_dtype((int32_t)t->edge)) {
			cc_fail(&c, "output '%s' is declared %s but computes as %s: not supported yet",
				t->name, cc_dtype_name(t->edge), cc_dtype_name(t->dtype));
			goto done;
		}
	}
	cc_log(&c.log, "  constfold: %d nodes folded into constants", changes[SW_CONSTFOLD]);
	if (run_stage(&c, CC_ST_FUSE, on, changes))
		goto done;
	if (cc_pass_precision(&c.g, opt ? (int)opt->precision_mode : CC_PREC_FORCE_FP16,
			      opt ? opt->keep_dtype : NULL, cfg->name, &c.log, err, errlen) < 0)
		goto done;
	c.dev = calloc((size_t)c.g.nt + 1, sizeof *c.dev);
	if (!c.dev) {
		cc_fail(&c, "out of memory");
		goto done;
	}
	if (opt && opt->keep_all_outputs && cc_keep_all_mark(&c))
		goto done;
	if (opt && opt->buffer_optimize == CC_BUF_OFF)
		on[SW_L2] = 0; /* --buffer_optimize=off_optimize */
	if (run_stage(&c, CC_ST_PLAN, on, changes))
		goto done;
	c.split_views = on[SW_SPLIT]; /* lower_move.c's slice_view */
	/* graph inputs cross the edge: fp32 host -> fp16 device */
	for (int i = 0; i < c.g.ninputs; i++) {
		int ti = c.g.inputs[i];
		enum cc_dtype dt = T(&c, ti)->dtype;
		if (cc_tensor_numel(T(&c, ti)) == 0) { /* nothing to move (see empty_node) */
			cc_ws_place(&c, ti);
			continue;
		}
		if (dt != CC_F32 && cc_int_input_raw(&c, ti)) { /* in place (cc_int_input_raw) */
			c.dev[ti].where = W_INPUT;
			c.dev[ti].offset = (uint64_t)i;
			c.dev[ti].storage = -1;
			continue;
		}
		/* AIPP replaces the TransData */
		int ai = cc_aipp_input(&c, aipp, i, ti, opt && opt->small_channel);
		if (ai < 0)
			goto done;
		if (ai)
			continue;
		char msg[256];
		int64_t numel = cc_tensor_numel(T(&c, ti));
		int sc = -1; /* integer/bool: converted to fp32 in a scratch first */
		if (dt != CC_F32) {
			struct task *t = (sc = cc_scratch_new(&c, T(&c, ti)->name, (uint64_t)numel * 4)) < 0
						 ? NULL
						 : cc_task_new(&c, T(&c, ti)->name, "Cast");
			if (!t || cc_gen_int_edge(cfg, dt, numel, 1, &t->prog, &t->block_dim, msg,
						  sizeof msg)) {
				cc_fail(&c, "input '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
				goto done;
			}
			snprintf(msg, sizeof msg, "input '%s'", T(&c, ti)->name);
			if (task_over(&c, t, msg))
				goto done;
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)i };
			cc_arg_tensor(&c, t, sc);
			cc_io_host(&c, t, 0, ti, ti, dt);
			cc_io_host(&c, t, 1, sc, ti, CC_F32);
			t->bytes = (uint64_t)numel * (cc_dtype_size(dt) + 4);
		}
		cc_ws_place(&c, ti);
		struct dev_tensor *d = &c.dev[ti];
		int fp16 = 1, q8 = -1;
		float qs = 0;
		/* ATC's small-channel path: the input's own bytes for its convs */
		if (cc_conv_c04_input(&c, ti, opt && opt->small_channel)) {
			d->fmt = CC_FMT_NC1HWC0_C04;
			d->size = dev_bytes(d);
			if (!(opt && opt->small_channel))
				cc_log(&c.log, "  input '%s': the small-channel layout (C0 = 4), a "
					       "conv reading it has no tiling with C0 = 16",
				       T(&c, ti)->name);
		} else if (sc < 0 && dev_5hd(d) && d->c <= 16 && d->h * d->w > 1 &&
			   (qs = cc_q8_readers(&c, NULL, ti, &fp16)) > 0 && !fp16 &&
			   1.0f / qs >= 1.0f / 1024 && 1.0f / qs <= 32768.0f) {
			/* read only by int8 convs at one scale (a first conv of few
			 * channels): the TransData writes the int8 form they read, and
			 * no fp16 (ATC's AscendQuant fused into the TransData) */
			if ((q8 = cc_scratch_new(&c, T(&c, ti)->name,
						 (uint64_t)(d->n * d->h * d->w * 32))) < 0) {
				cc_fail(&c, "input '%s': out of memory", T(&c, ti)->name);
				goto done;
			}
			d = &c.dev[ti]; /* (the scratch may have moved the table) */
			d->q8 = q8 + 1;
			d->q8_scale = qs;
			cc_log(&c.log, "  input '%s': quantized to int8 in its TransData (scale %g) "
				       "for the int8 convs reading it", T(&c, ti)->name, (double)qs);
		}
		struct task *t = cc_task_new(&c, T(&c, ti)->name, "TransData");
		if (!t || (q8 < 0 ? cc_gen_edge(&c, d, 1, t, msg, sizeof msg)
				  : cc_gen_nchw_in_q8(cfg, d->n, d->c, d->h, d->w, 1.0f / qs,
						      &t->prog, &t->block_dim, msg, sizeof msg))) {
			cc_fail(&c, "input '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		snprintf(msg, sizeof msg, "input '%s'", T(&c, ti)->name);
		if (task_over(&c, t, msg))
			goto done;
		if (sc >= 0) {
			cc_arg_tensor(&c, t, sc);
			cc_io_host(&c, t, 0, sc, ti, CC_F32);
		} else {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_INPUT, 0, (uint32_t)i };
			cc_io_host(&c, t, 0, ti, ti, dt);
		}
		t->args[t->nargs] = (struct om_arg){ OM_ARG_WORKSPACE, 0, 0 };
		t->argt[t->nargs++] = q8 < 0 ? ti : q8;
		if (q8 < 0)
			cc_io_dev(&c, t, 1, ti);
		else
			cc_io_add(t, 1, q8, ti, CC_I8, CC_FMT_NC1HWC0);
		t->bytes = (uint64_t)numel * (q8 < 0 ? 6 : 5);
		if (dev_c04(d)) { /* fp32 in, 4 fp16 channels a pixel out */
			t->bytes = (uint64_t)numel * 4 + (uint64_t)dev_elems(d) * 2;
			snprintf(t->note, sizeof t->note, "to NC1HWC0_C04 (small channel)");
		}
	}
	for (int i = 0; i < c.g.nn; i++) {
		struct cc_node *n = &c.g.n[i];
		if (c.l2_at && c.l2_at[i] >= 0) { /* an L2-fused chain, slice by slice */
			const struct cc_l2chain *ch = &c.l2[c.l2_at[i]];
			if (lower_sliced(&c, ch))
				goto done;
			i = ch->last;
			continue;
		}
		if (c.progress)
			c.progress(c.progress_ctx, "kernels", (unsigned)i, (unsigned)c.g.nn);
		int e = n->dead ? 0 : empty_node(&c, n);
		unsigned t0 = c.ntasks;
		int failed = e < 0 || (!n->dead && !e && cc_op_find(n->op)->lower(&c, n));
		/* a kernel too large: say so now (its generator may have failed
		 * for it, with a message of its own) */
		for (unsigned k = t0; k < c.ntasks; k++) {
			const struct cc_prog *p = &c.tasks[k].prog;
			if (p->work_over) {
				cc_node_fail(&c, n, "its kernel's generator emits more than %zu "
					     "instructions (unrolled), the most it may on %s",
					     p->max_work, cfg->name);
				goto done;
			}
			if (p->over) {
				cc_node_fail(&c, n, "its kernel needs more than %zu instructions, the "
					     "most one kernel may hold on %s", p->max_n, cfg->name);
				goto done;
			}
		}
		if (failed)
			goto done;
	}
	changes[SW_SPLIT] = c.slice_views;
	if (c.keep_node)
		cc_keep_all_prune(&c);
	for (int i = 0; i < c.g.noutputs; i++) {
		int ti = c.g.outputs[i];
		struct dev_tensor *d = &c.dev[ti];
		if (d->where == W_NONE) {
			cc_fail(&c, "output '%s' is not computed by any supported node", T(&c, ti)->name);
			goto done;
		}
		/* the host's type: --output_type's, else the output's own */
		enum cc_dtype dt = T(&c, ti)->host_type ? T(&c, ti)->host_type : T(&c, ti)->dtype;
		int64_t numel = cc_tensor_numel(T(&c, ti));
		if (numel == 0) /* an empty output: no bytes to move */
			continue;
		/* fp16 in ND rows that fit the UB: the TransData writes it
		 * itself (as ATC's does); otherwise, and for the other types,
		 * through fp32 in a scratch, then kern_dtype.c */
		int f16 = dt == CC_F16 && !dev_5hd(d) &&
			  cc_cast_out_f16_fits(cfg, d->cols);
		int sc = -1;
		if (dt != CC_F32 && !f16) {
			if ((sc = cc_scratch_new(&c, T(&c, ti)->name, (uint64_t)numel * 4)) < 0) {
				cc_fail(&c, "out of memory");
				goto done;
			}
			d = &c.dev[ti];
		}
		struct task *t = cc_task_new(&c, T(&c, ti)->name, "TransData");
		char msg[256];
		if (!t || (f16 ? cc_gen_cast_out_f16(cfg, d->rows, d->cols, &t->prog, &t->block_dim,
						     msg, sizeof msg)
			       : cc_gen_edge(&c, d, 0, t, msg, sizeof msg))) {
			cc_fail(&c, "output '%s': %s", T(&c, ti)->name, t ? msg : "out of memory");
			goto done;
		}
		snprintf(msg, sizeof msg, "output '%s'", T(&c, ti)->name);
		if (task_over(&c, t, msg))
			goto done;
		t->args[0] = (struct om_arg){ d->where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE,
					      d->where == W_WEIGHT ? (int64_t)d->offset
								   : (int64_t)d->view.off, 0 };
		t->argt[0] = d->where == W_WS ? d->storage : -1;
		t->nargs = 1;
		cc_io_dev(&c, t, 0, ti);
		if (sc >= 0) {
			cc_arg_tensor(&c, t, sc);
			cc_io_host(&c, t, 1, sc, ti, CC_F32);
		} else {
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_OUTPUT, 0, (uint32_t)i };
			cc_io_host(&c, t, 1, ti, ti, dt);
		}
		t->bytes = (uint64_t)numel * (f16 ? 4 : 6);
		if (sc >= 0) {
			t = cc_task_new(&c, T(&c, ti)->name, "Cast");
			if (!t || cc_gen_int_edge(cfg, dt, numel, 0, &t->prog, &t->block_dim, msg,
						  sizeof msg)) {
				cc_fail(&c, "output '%s': %s", T(&c, ti)->name,
					t ? msg : "out of memory");
				goto done;
			}
			snprintf(msg, sizeof msg, "output '%s'", T(&c, ti)->name);
			if (task_over(&c, t, msg))
				goto done;
			cc_arg_tensor(&c, t, sc);
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_OUTPUT, 0, (uint32_t)i };
			cc_io_host(&c, t, 0, sc, ti, CC_F32);
			cc_io_host(&c, t, 1, ti, ti, dt);
			t->bytes = (uint64_t)numel * (cc_dtype_size(dt) + 4);
		}
	}
	if (plan_memory(&c))
		goto done;
	int nodes_out = 0;
	for (int i = 0; i < c.g.nn; i++)
		nodes_out += !c.g.n[i].dead;
	const char *base = strrchr(onnx_path, '/');
	base = base ? base + 1 : onnx_path;
	if (opt && opt->model_name && opt->model_name[0])
		base = opt->model_name;
	if (build_model(&c, out, base))
		goto done;
	if (opt && opt->report_json &&
	    write_report_json(&c, out, opt->report_json, nodes_in, nodes_out, changes, on))
		goto done;
	cc_aipp_model(aipp, out);
	if (opt && opt->report) {
		FILE *f = opt->report;
		fprintf(f, "simatc: %s for %s\n", onnx_path, cfg->name);
		fprintf(f, "  nodes: %d in the model, %d after the passes; %u tasks (%d input and "
			   "%d output TransData)\n",
			nodes_in, nodes_out, c.ntasks, c.g.ninputs - cc_aipp_count(aipp), c.g.noutputs);
		fprintf(f, "  tasks by type: ");
		om_print_task_types(out, f);
		fprintf(f, "\n  main-memory bytes the tasks move (compile-time estimate): %llu\n",
			(unsigned long long)task_bytes(&c));
		if (aipp)
			fprintf(f, "  aipp: %d input%s preprocessed on the AI Core (%s)\n",
				cc_aipp_count(aipp), cc_aipp_count(aipp) == 1 ? "" : "s",
				opt->insert_op_conf);
		cc_precision_text(&c, f);
		fprintf(f, "  weights: %llu bytes, workspace: %llu bytes (%llu without reuse)\n",
			(unsigned long long)c.wbytes, (unsigned long long)c.ws_bytes,
			(unsigned long long)c.ws_no_reuse);
		if (c.log.buf)
			fputs(c.log.buf, f);
		for (unsigned i = 0; i < c.ntasks; i++)
			fprintf(f, "  task %3u %-12s %-32s block_dim %2u, %6zu insns, predicted %llu "
				   "cycles%s%s\n", i, c.tasks[i].op_type, c.tasks[i].name,
				c.tasks[i].block_dim, task_insns(&c, i),
				(unsigned long long)out->tasks[i].predicted_cycles,
				c.tasks[i].note[0] ? ", " : "", c.tasks[i].note);
	}
	rc = 0;
done:
	if (rc)
		om_free(out);
	cc_aipp_free(aipp);
	ctx_free(&c);
	return rc;
}
