/* lower_convtask.c: one convolution task from its description
 * (struct cc_conv_task): the kernel generated for cv, its arguments in the
 * order kern_conv.c reads them (x, weights, y, bias, residual, dequant
 * scales, y's int8 form), the tensors it reads and writes, its flops and
 * bytes.  The fp16 lowering (lower_conv.c) and the int8 one (lower_quant.c)
 * fill the description; this file assembles the task once for both.  A
 * builder below them: it calls lower_util.c only. */
#include <stdio.h>
#include <string.h>

#include "compile_int.h"

/* An argument in the weights blob. */
static void weight_arg(struct task *t, int64_t off)
{
	t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, off, 0 };
}

int cc_conv_task(struct cc_ctx *c, struct cc_node *n, struct cc_conv *cv,
		 const struct cc_conv_task *d)
{
	char op[64]; /* the fused ops, as far as they fit */
	snprintf(op, sizeof op, "%s", d->op);
	if (n->fused[0]) {
		strncat(op, "+", sizeof op - strlen(op) - 1);
		strncat(op, n->fused, sizeof op - strlen(op) - 1);
	}
	struct task *t = cc_task_new(c, n->name, op);
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	char msg[256];
	cv->cache = c->tiles;
	if (cc_gen_conv(c->cfg, cv, &t->prog, &t->block_dim, msg, sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, d->x.ti);
	if (d->w.ti >= 0)
		cc_arg_tensor(c, t, d->w.ti);
	else
		weight_arg(t, d->w_off);
	cc_arg_tensor(c, t, d->y);
	if (!cc_conv_y16(cv)) /* y's fp16 bytes are not written */
		t->bytes -= (uint64_t)dev_elems(&c->dev[d->y]) * 2;
	if (d->bias >= 0) /* a grouped conv's slices' biases follow one another */
		weight_arg(t, d->b_off);
	if (d->r.ti >= 0) /* an argument: the memory plan keeps it alive up to this task */
		cc_arg_tensor(c, t, d->r.ti);
	if (d->deq_off >= 0)
		weight_arg(t, d->deq_off);
	if (d->y8 >= 0)
		cc_arg_tensor(c, t, d->y8);
	cc_io_add(t, 0, d->x.ti, d->x.shape, d->x.dtype, d->x.fmt);
	cc_io_add(t, 0, d->w.ti >= 0 ? d->w.ti : d->w.shape, d->w.shape, d->w.dtype, d->w.fmt);
	if (d->bias >= 0)
		cc_io_add(t, 0, d->bias, d->bias, CC_F16, CC_FMT_ND);
	if (d->r.ti >= 0)
		cc_io_add(t, 0, d->r.ti, d->r.shape, d->r.dtype, d->r.fmt);
	if (cc_conv_y16(cv))
		cc_io_dev(c, t, 1, d->y);
	if (d->y8 >= 0)
		cc_io_add(t, 1, d->y8, d->y, CC_I8, CC_FMT_NC1HWC0);
	t->flops = d->flops;
	t->bytes += d->bytes;
	if (cc_conv_c04(cv))
		snprintf(t->note, sizeof t->note, "small-channel path (C04 input)");
	return 0;
}
