/* lower_matmul.c: MatMul and Gemm: shape inference, operand views (with
 * Transposes folded into the matmul), scaling and the cube kernel tasks.
 * One family per file; split out of compile.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "fp16.h"
#include "kern_resize.h"

/* numpy's matmul: the last two axes multiply, the others broadcast. */
int infer_matmul(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0) || cc_need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	if (a->rank < 2 || b->rank < 2 || a->rank > 6 || b->rank > 6)
		return NODE_FAIL(c, n, "MatMul of ranks %d and %d is not supported yet (ranks 2 "
				       "to 6)", a->rank, b->rank);
	int64_t K = a->dims[a->rank - 1], Kb = b->dims[b->rank - 2];
	if (K != Kb)
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)", (long long)K,
				 (long long)Kb);
	int rank = a->rank > b->rank ? a->rank : b->rank;
	int64_t d[CC_MAX_RANK];
	for (int i = 0; i < rank - 2; i++) {
		int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return NODE_FAIL(c, n, "batch dimensions %lld and %lld do not broadcast",
					 (long long)da, (long long)db);
		d[i] = da == 1 ? db : da;
	}
	d[rank - 2] = a->dims[a->rank - 2];
	d[rank - 1] = b->dims[b->rank - 1];
	return cc_set_shape(T(c, n->out[0]), a->dtype, rank, d);
}

/* Einsum of the batched-matmul forms attention layers write (MaxViT's
 * "B G H I D, B G H J D -> B G H I J" and "B G H I J, B G H J D -> B G H I D"):
 * the same batch letters leading every term, then a product over one shared
 * letter, the second operand either [k j] or [j k] (transposed).  Sets *tb;
 * 0, or -1 with the node refused. */
static int einsum_form(struct cc_ctx *c, struct cc_node *n, int *tb)
{
	const struct cc_attr *a = cc_attr_find(n, "equation");
	char t[3][CC_MAX_RANK + 1];
	int len[3] = { 0 }, k = 0;
	if (!a || a->type != CC_ATTR_STRING || !a->s)
		return NODE_FAIL(c, n, "Einsum needs an equation");
	if (n->nin != 2)
		return NODE_FAIL(c, n, "Einsum '%s' is not supported yet (batched matrix "
				       "products are, and sums and transposes of one operand or of "
				       "two with the same letters, without an ellipsis or a "
				       "diagonal)", a->s);
	for (const char *p = a->s; *p; p++) {
		if (*p == ' ')
			continue;
		if (*p == ',' && k == 0) {
			k = 1;
		} else if (p[0] == '-' && p[1] == '>' && k == 1) {
			k = 2;
			p++;
		} else if (((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
			   len[k] < CC_MAX_RANK) {
			t[k][len[k]++] = *p;
		} else {
			return NODE_FAIL(c, n, "Einsum '%s' is not supported yet (only batched "
					       "matrix products with an explicit output and no "
					       "ellipsis are)", a->s);
		}
	}
	int r = len[0], ok = k == 2 && r >= 2 && len[1] == r && len[2] == r;
	for (int i = 0; ok && i < r - 2; i++)
		ok = t[1][i] == t[0][i] && t[2][i] == t[0][i];
	char I = ok ? t[0][r - 2] : 0, K = ok ? t[0][r - 1] : 0;
	if (ok && t[2][r - 2] == I && t[1][r - 2] == K && t[1][r - 1] == t[2][r - 1]) {
		*tb = 0; /* [i k] x [k j] */
	} else if (ok && t[2][r - 2] == I && t[1][r - 1] == K && t[1][r - 2] == t[2][r - 1]) {
		*tb = 1; /* [i k] x [j k] */
	} else {
		return NODE_FAIL(c, n, "Einsum '%s' is not supported yet (only batched matrix "
				       "products are)", a->s);
	}
	return I != K && t[2][r - 1] != I && t[2][r - 1] != K
		       ? 0
		       : NODE_FAIL(c, n, "Einsum '%s': a repeated letter is not supported yet", a->s);
}

int infer_einsum(struct cc_ctx *c, struct cc_node *n)
{
	int tb;
	if (einsum_form(c, n, &tb) || cc_need_known(c, n, 0) || cc_need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	int r = a->rank;
	if (b->rank != r || r > 6)
		return NODE_FAIL(c, n, "Einsum of ranks %d and %d is not supported yet", a->rank,
				 b->rank);
	int64_t K = a->dims[r - 1], Kb = tb ? b->dims[r - 1] : b->dims[r - 2], d[CC_MAX_RANK];
	if (K != Kb)
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)", (long long)K,
				 (long long)Kb);
	for (int i = 0; i < r - 2; i++) {
		if (a->dims[i] != b->dims[i] && a->dims[i] != 1 && b->dims[i] != 1)
			return NODE_FAIL(c, n, "batch dimensions %lld and %lld do not broadcast",
					 (long long)a->dims[i], (long long)b->dims[i]);
		d[i] = a->dims[i] == 1 ? b->dims[i] : a->dims[i];
	}
	d[r - 2] = a->dims[r - 2];
	d[r - 1] = tb ? b->dims[r - 2] : b->dims[r - 1];
	return cc_set_shape(T(c, n->out[0]), a->dtype, r, d);
}

int infer_gemm(struct cc_ctx *c, struct cc_node *n)
{
	if (cc_need_known(c, n, 0) || cc_need_known(c, n, 1))
		return -1;
	struct cc_tensor *a = T(c, n->in[0]), *b = T(c, n->in[1]);
	if (a->rank != 2 || b->rank != 2)
		return NODE_FAIL(c, n, "Gemm needs 2-D A and B");
	int ta = (int)cc_attr_int(n, "transA", 0), tb = (int)cc_attr_int(n, "transB", 0);
	int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
	int64_t Kb = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
	if (K != Kb)
		return NODE_FAIL(c, n, "inner dimensions differ (%lld and %lld)", (long long)K,
				 (long long)Kb);
	int64_t d[2] = { M, N };
	return cc_set_shape(T(c, n->out[0]), a->dtype, 2, d);
}

/* An activation times a constant, into a new workspace tensor. */
static int scaled(struct cc_ctx *c, struct cc_node *n, int xi, float k)
{
	struct cc_tensor *x = T(c, xi);
	int64_t d[CC_MAX_RANK];
	int rank = x->rank;
	for (int i = 0; i < rank; i++)
		d[i] = x->dims[i];
	if (c->dev[xi].where == W_NONE && cc_weight_place_act(c, n, xi))
		return -1;
	int ti = cc_temp_new(c, n, rank, d);
	struct task *t = ti >= 0 ? cc_task_new(c, n->name, "Muls") : NULL;
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	struct cc_vchain ch = { .nin = 1 };
	ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_MULS, 0, 0, k };
	char msg[256];
	if (cc_gen_vchain(c->cfg, &ch, dev_elems(&c->dev[xi]), &t->prog, &t->block_dim, msg,
			  sizeof msg))
		return NODE_FAIL(c, n, "%s", msg);
	cc_one_in_one_out(c, t, xi, ti);
	return ti;
}

/* ---- MatMul, Gemm (kern_matmul.c) ----------------------------------------
 *
 * numpy semantics: the last two axes are the matrices, the others batch axes
 * broadcast against each other.  Each operand is read through a strided
 * view (struct mm_view): the tensor holding its bytes and an element stride
 * per axis, so a Transpose that feeds a MatMul is folded into the view (its
 * input read in place, see mm_fold_ok) and Gemm's transA/transB swap two
 * strides.  The axis with stride 1 is the padded lane axis: when it is the
 * operand's second-last axis the operand is stored transposed, which the
 * kernel transposes fractal by fractal.  The batch axes are then merged:
 * into M when B is shared and A's rows run on (one big GEMM), with their
 * neighbours when the strides agree, the innermost into the kernel's batch
 * and any others into one task each. */
struct mm_view {
	int ti; /* the tensor whose device bytes hold the operand */
	int rank;
	int64_t dims[CC_MAX_RANK];
	int64_t st[CC_MAX_RANK]; /* elements; the lane axis has 1 */
};

/* Element strides of the padded ND layout of dims (rank >= 2). */
static void nd_strides(int rank, const int64_t *dims, int64_t *st)
{
	st[rank - 1] = 1;
	for (int i = rank - 2; i >= 0; i--)
		st[i] = i == rank - 2 ? cc_pad16(dims[rank - 1]) : st[i + 1] * dims[i + 1];
}

/* The view of operand ti of node n: a folded Transpose's input, or ti. */
static int mm_view_of(struct cc_ctx *c, struct cc_node *n, int ti, struct mm_view *v)
{
	struct cc_tensor *t = T(c, ti);
	int p = t->producer;
	v->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		v->dims[i] = t->dims[i];
	if (c->dev[ti].where == W_NONE && !t->data && p >= 0 &&
	    !strcmp(c->g.n[p].op, "Transpose")) {
		int xi = c->g.n[p].in[0];
		int64_t perm[CC_MAX_RANK], sx[CC_MAX_RANK];
		if (cc_transpose_perm(&c->g.n[p], t->rank, perm))
			return NODE_FAIL(c, n, "bad Transpose perm");
		nd_strides(t->rank, T(c, xi)->dims, sx);
		for (int i = 0; i < t->rank; i++)
			v->st[i] = sx[perm[i]];
		v->ti = xi;
		return 0;
	}
	if (c->dev[ti].where == W_NONE && cc_weight_place_act(c, n, ti))
		return -1;
	v->ti = ti;
	if (dev_5hd(&c->dev[ti])) {
		/* a 4-D activation: relaid out as padded ND [d0*d1, d2, d3], whose
		 * bytes are those of the ND layout of its own dims */
		int64_t d3[3] = { t->dims[0] * t->dims[1], t->dims[2], t->dims[3] };
		int tmp = cc_temp_new(c, n, 3, d3);
		if (tmp < 0 || cc_relayout(c, n, ti, tmp))
			return tmp < 0 ? NODE_FAIL(c, n, "out of memory") : -1;
		v->ti = tmp;
	}
	/* v's own dims: cc_temp_new may have moved the tensor table under t */
	nd_strides(v->rank, v->dims, v->st);
	return 0;
}

static void mm_swap_last(struct mm_view *v)
{
	int r = v->rank;
	int64_t d = v->dims[r - 2], s = v->st[r - 2];
	v->dims[r - 2] = v->dims[r - 1];
	v->st[r - 2] = v->st[r - 1];
	v->dims[r - 1] = d;
	v->st[r - 1] = s;
}

/* The stride of output batch axis i (of nb) in an operand of rank r: 0 where
 * it broadcasts. */
static int64_t mm_bstride(const struct mm_view *v, int i, int nb)
{
	int j = i - (nb - (v->rank - 2));
	return j < 0 || v->dims[j] == 1 ? 0 : v->st[j];
}

static int matmul_common(struct cc_ctx *c, struct cc_node *n, int ai, int bi, int ta, int tb,
			 float alpha, int bias_ti, float beta)
{
	int out = n->out[0];
	struct cc_tensor *b = T(c, bi), *y = T(c, out);
	struct mm_view va, vb = { 0 };
	if (mm_view_of(c, n, ai, &va))
		return -1;
	/* new tensors (relayouts, temps) may move the table: b and y are
	 * looked up again after each step that can make one */
	b = T(c, bi);
	y = T(c, out);
	if (ta)
		mm_swap_last(&va);
	int b_nz = b->data != NULL;
	int64_t M = va.dims[va.rank - 2], K = va.dims[va.rank - 1];
	int64_t N = tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
	int64_t K16 = cc_pad16(K), N16 = cc_pad16(N), K32 = (K + 31) / 32 * 32;
	struct dev_tensor bdev = c->dev[bi];
	/* int8 (pass_qdq.c): A quantized by a task of its own, B int8 NZ, each
	 * column dequantized by alpha * s_x * s_w[n] as it leaves L0C */
	int q8 = n->q_x_scale > 0;
	if (q8 && (!b_nz || ta || cc_tensor_numel(b) != K * N))
		return NODE_FAIL(c, n, "int8 needs constant 2-D weights and A not transposed");
	int64_t deq_off = -1;
	if (q8) {
		float *f = cc_const_floats(c, n, bi);
		int8_t *wq = malloc((size_t)(K * N)), *h = calloc(1, (size_t)(K32 * N16));
		float *deq = calloc((size_t)N16, sizeof *deq);
		int64_t off = -1;
		if (f && wq && h && deq) {
			for (int64_t i = 0; i < K * N; i++) {
				float sw = n->q_w_scale[tb ? i / K : i % N];
				float v = sw != 0.0f ? nearbyintf(f[i] / sw) : 0.0f;
				wq[i] = (int8_t)(v < -128.0f ? -128 : v > 127.0f ? 127 : v);
			}
			for (int64_t j = 0; j < N; j++)
				deq[j] = alpha * n->q_x_scale * n->q_w_scale[j];
			cc_layout_b_nz_s8(wq, K, N, tb, h);
			off = cc_weight_add(c, h, (uint64_t)(K32 * N16));
			deq_off = off < 0 ? -1 : cc_weight_add(c, deq, (uint64_t)N16 * 4);
		}
		free(f);
		free(wq);
		free(h);
		free(deq);
		if (deq_off < 0)
			return NODE_FAIL(c, n, "out of memory");
		bdev.where = W_WEIGHT;
		bdev.offset = (uint64_t)off;
		bdev.rows = K;
		bdev.cols = N;
		vb.ti = bi;
		vb.rank = 2;
		vb.dims[0] = K;
		vb.dims[1] = N;
		vb.st[1] = 1;
		vb.st[0] = N16;
	} else if (b_nz) {
		/* each matrix laid out NZ (alpha and transB folded in), one after
		 * another: the view's strides count in those units */
		int64_t nmat = cc_tensor_numel(b) / (K * N);
		float *f = cc_const_floats(c, n, bi);
		if (!f)
			return -1;
		for (int64_t i = 0; i < nmat * K * N; i++)
			f[i] *= alpha;
		uint16_t *h = malloc((size_t)(nmat * K16 * N16) * 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t i = 0; i < nmat; i++)
			cc_layout_b_nz(f + i * K * N, K, N, tb, h + i * K16 * N16);
		int64_t off = cc_weight_add(c, h, (uint64_t)(nmat * K16 * N16 * 2));
		free(f);
		free(h);
		if (off < 0)
			return NODE_FAIL(c, n, "out of memory");
		bdev.where = W_WEIGHT;
		bdev.offset = (uint64_t)off;
		bdev.rows = K;
		bdev.cols = N;
		vb.ti = bi;
		vb.rank = b->rank;
		for (int i = 0; i < b->rank; i++)
			vb.dims[i] = b->dims[i];
		if (tb) {
			vb.dims[b->rank - 2] = K;
			vb.dims[b->rank - 1] = N;
		}
		vb.st[b->rank - 1] = 1;
		vb.st[b->rank - 2] = N16;
		for (int i = b->rank - 3; i >= 0; i--)
			vb.st[i] = (i == b->rank - 3 ? K16 * N16 : vb.st[i + 1] * vb.dims[i + 1]);
	} else {
		if (mm_view_of(c, n, bi, &vb))
			return -1;
		if (tb)
			mm_swap_last(&vb);
		if (alpha != 1.0f) {
			/* scale A: an elementwise copy keeps the view's strides */
			if ((va.ti = scaled(c, n, va.ti, alpha)) < 0)
				return -1;
		}
		b = T(c, bi);
		y = T(c, out);
		bdev = c->dev[vb.ti];
		if (bdev.where == W_NONE)
			return NODE_FAIL(c, n, "input '%s' has no device placement", b->name);
	}
	int64_t bias_off = -1;
	int add_c = -1; /* a C added by a second kernel: an activation or an M x N constant */
	if (bias_ti >= 0) {
		struct cc_tensor *bt = T(c, bias_ti);
		int64_t cnt = cc_tensor_numel(bt);
		/* a row vector ([N], [1, N]; not [N, 1] when M = N), or one value */
		int row = cnt == 1 || (cnt == N && (bt->rank < 2 || bt->dims[bt->rank - 2] == 1));
		if (!bt->data || !row) {
			if (y->rank != 2 ||
			    (c->dev[bias_ti].where == W_NONE && cc_weight_place_act(c, n, bias_ti)))
				return NODE_FAIL(c, n, "this C (%lld values, beta %g) is not supported "
						       "yet", (long long)cnt, (double)beta);
			int ci = bias_ti;
			if (!(cnt == N && row) &&
			    !(bt->rank == 2 && bt->dims[0] == M && bt->dims[1] == N)) {
				/* one value or a column ([M, 1]): broadcast to [M, N] first */
				int64_t dd[2] = { M, N };
				if ((ci = cc_temp_new(c, n, 2, dd)) < 0)
					return NODE_FAIL(c, n, "out of memory");
				if (cc_expand_into(c, n, bias_ti, ci))
					return -1;
			}
			add_c = beta == 1.0f ? ci : scaled(c, n, ci, beta);
			if (add_c < 0)
				return -1;
		}
	}
	if (bias_ti >= 0 && add_c < 0) {
		struct cc_tensor *bt = T(c, bias_ti);
		int64_t cnt = cc_tensor_numel(bt);
		float *f = cc_const_floats(c, n, bias_ti);
		if (!f)
			return -1;
		uint16_t *h = calloc((size_t)N16, 2);
		if (!h) {
			free(f);
			return NODE_FAIL(c, n, "out of memory");
		}
		for (int64_t j = 0; j < N; j++)
			h[j] = dv_f32_to_f16(beta * f[cnt == 1 ? 0 : j]);
		bias_off = cc_weight_add(c, h, (uint64_t)N16 * 2);
		free(f);
		free(h);
		if (bias_off < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	b = T(c, bi);
	y = T(c, out);
	if (cc_ws_place(c, out))
		return -1;
	int prod = out; /* where the products go: out, or a scratch when C is added after */
	if (add_c >= 0) {
		prod = cc_scratch_new(c, n->name, (uint64_t)(M * N16 * 2));
		if (prod < 0)
			return NODE_FAIL(c, n, "out of memory");
		c->dev[prod].rows = M;
		c->dev[prod].cols = N;
		bdev = b_nz ? bdev : c->dev[vb.ti];
	} else if (dev_5hd(&c->dev[out])) {
		/* a 4-D result: computed in ND, relaid out after */
		int64_t d3[3] = { y->dims[0] * y->dims[1], y->dims[2], y->dims[3] };
		if ((prod = cc_temp_new(c, n, 3, d3)) < 0)
			return NODE_FAIL(c, n, "out of memory");
	}
	b = T(c, bi);
	y = T(c, out);
	int64_t cst[CC_MAX_RANK];
	nd_strides(y->rank, y->dims, cst);
	/* the batch axes: size-1 axes dropped, then merged where possible */
	int nb = 0;
	int64_t ob[CC_MAX_RANK], sa[CC_MAX_RANK], sb[CC_MAX_RANK], sc[CC_MAX_RANK];
	for (int i = 0; i < y->rank - 2; i++) {
		if (y->dims[i] == 1)
			continue;
		ob[nb] = y->dims[i];
		sa[nb] = mm_bstride(&va, i, y->rank - 2);
		sb[nb] = mm_bstride(&vb, i, y->rank - 2);
		sc[nb] = cst[i];
		nb++;
	}
	struct cc_matmul mm = { .batch = 1, .K = K, .N = N, .b_nz = b_nz,
				.has_bias = bias_off >= 0, .cache = c->tiles };
	struct cc_vchain epi; /* pass_fuse_matmul_bias.c's element-wise epilogue */
	if (n->epilogue) {
		int ins[2];
		if (cc_eltwise_chain(c, &c->g.n[n->epilogue - 1], &epi, ins))
			return -1;
		if (epi.nin != 1 || add_c >= 0 || prod != out)
			return NODE_FAIL(c, n, "an element-wise epilogue with a second input, a C "
					       "matrix or a 4-D result is not supported yet");
		mm.epi = &epi;
		for (int k = n->epilogue - 1; k >= 0;
		     k = c->g.n[k].chain_prev ? c->g.n[k].chain_prev - 1 : -1)
			cc_prec_fp16_only(&c->g.n[k], "fused into a MatMul's fp16 output path");
	}
	int r = va.rank;
	mm.a_trans = va.st[r - 1] != 1;
	mm.a_rs = mm.a_trans ? va.st[r - 1] : va.st[r - 2];
	r = vb.rank;
	mm.b_trans = !b_nz && vb.st[r - 1] != 1;
	mm.b_rs = b_nz ? 0 : mm.b_trans ? vb.st[r - 1] : vb.st[r - 2];
	mm.c_rs = cst[y->rank - 2];
	/* B shared and A's rows running on: the batch is more rows of one GEMM */
	while (nb > 0 && !mm.a_trans && sb[nb - 1] == 0 && sa[nb - 1] == M * mm.a_rs &&
	       sc[nb - 1] == M * mm.c_rs)
		M *= ob[--nb];
	for (int i = nb - 2; i >= 0; i--)
		if (sa[i] == sa[i + 1] * ob[i + 1] && sb[i] == sb[i + 1] * ob[i + 1] &&
		    sc[i] == sc[i + 1] * ob[i + 1]) {
			ob[i + 1] *= ob[i];
			for (int j = i; j + 1 < nb; j++) {
				ob[j] = ob[j + 1];
				sa[j] = sa[j + 1];
				sb[j] = sb[j + 1];
				sc[j] = sc[j + 1];
			}
			nb--;
		}
	mm.M = M;
	if (nb > 0) {
		mm.batch = ob[nb - 1];
		mm.a_bs = sa[nb - 1];
		mm.b_bs = sb[nb - 1];
		mm.c_bs = sc[nb - 1];
	}
	int64_t outer = 1;
	for (int i = 0; i + 1 < nb; i++)
		outer *= ob[i];
	char msg[256];
	int a8 = -1; /* int8: A quantized, [M][K32] bytes */
	if (q8) {
		if (nb > 0 || mm.a_trans || mm.a_rs != K16)
			return NODE_FAIL(c, n, "int8 on a strided or batched view of A is not "
					       "supported yet");
		a8 = cc_scratch_new(c, n->name, (uint64_t)(M * K32));
		char name[300];
		snprintf(name, sizeof name, "%s#quant", n->name);
		struct task *t = a8 < 0 ? NULL : cc_task_new(c, name, "AscendQuant");
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_gen_quant_nd(c->cfg, M, K, 1.0f / n->q_x_scale, &t->prog, &t->block_dim,
				    msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		cc_arg_tensor(c, t, va.ti);
		cc_arg_tensor(c, t, a8);
		cc_io_dev(c, t, 0, va.ti);
		cc_io_add(t, 1, a8, va.ti, CC_I8, CC_FMT_ND);
		t->flops = (uint64_t)(M * K);
		mm.int8 = 1;
		mm.K = K32 / 2; /* pairs of int8 values: fp16's bytes */
		mm.a_rs = K32 / 2;
	}
	for (int64_t o = 0; o < outer; o++) {
		int64_t oa = 0, obb = 0, oc = 0, rem = o;
		for (int i = nb - 2; i >= 0; i--) {
			int64_t idx = rem % ob[i];
			rem /= ob[i];
			oa += idx * sa[i];
			obb += idx * sb[i];
			oc += idx * sc[i];
		}
		struct task *t = cc_task_new(c, n->name, n->op);
		if (!t)
			return NODE_FAIL(c, n, "out of memory");
		if (cc_gen_matmul_batch(c->cfg, &mm, &t->prog, &t->block_dim, msg, sizeof msg))
			return NODE_FAIL(c, n, "%s", msg);
		cc_arg_tensor(c, t, q8 ? a8 : va.ti);
		t->args[t->nargs - 1].value += oa * 2;
		t->argt[t->nargs] = bdev.where == W_WS ? bdev.storage : -1;
		struct om_arg *ba = &t->args[t->nargs++];
		ba->kind = bdev.where == W_WEIGHT ? OM_ARG_WEIGHT : OM_ARG_WORKSPACE;
		ba->value = (bdev.where == W_WEIGHT ? (int64_t)bdev.offset : (int64_t)bdev.view.off) +
			    obb * 2;
		cc_arg_tensor(c, t, prod);
		t->args[t->nargs - 1].value += oc * 2;
		if (bias_off >= 0) {
			struct om_arg *bb = &t->args[t->nargs++];
			bb->kind = OM_ARG_WEIGHT;
			bb->value = bias_off;
		}
		if (q8)
			t->args[t->nargs++] = (struct om_arg){ OM_ARG_WEIGHT, deq_off, 0 };
		/* the tasks each list the whole tensors their matrices come from */
		if (q8)
			cc_io_add(t, 0, a8, va.ti, CC_I8, CC_FMT_ND);
		else
			cc_io_dev(c, t, 0, va.ti);
		if (b_nz)
			cc_io_add(t, 0, bi, bi, q8 ? CC_I8 : CC_F16, CC_FMT_FRACTAL_NZ);
		else
			cc_io_dev(c, t, 0, vb.ti);
		if (bias_off >= 0)
			cc_io_add(t, 0, bias_ti, bias_ti, CC_F16, CC_FMT_ND);
		cc_io_add(t, 1, prod, add_c >= 0 ? out : prod, CC_F16, CC_FMT_ND);
		t->flops = 2 * (uint64_t)(mm.batch * M * K * N);
		if (mm.epi)
			t->flops += (uint64_t)(mm.batch * M * cc_pad16(N) * epi.nsteps);
		t->bytes += (uint64_t)(K * N * (q8 ? 1 : 2)) + (q8 ? (uint64_t)N16 * 4 : 0);
	}
	if (prod != out && add_c < 0)
		return cc_relayout(c, n, prod, out);
	if (add_c < 0)
		return 0;
	/* C added after the products: a row vector, or a matrix of the same shape */
	struct task *t = cc_task_new(c, n->name, "Add");
	if (!t)
		return NODE_FAIL(c, n, "out of memory");
	int bad;
	if (cc_tensor_numel(T(c, add_c)) == N) {
		bad = cc_gen_rowbcast(c->cfg, CC_V_ADD, M, N, 0, &t->prog, &t->block_dim, msg,
				      sizeof msg);
		cc_arg_tensor(c, t, prod);
		cc_arg_tensor(c, t, add_c);
	} else {
		struct cc_vchain ch = { .nin = 2 };
		ch.step[ch.nsteps++] = (struct cc_vstep){ CC_V_ADD, 0, 1, 0 };
		bad = cc_gen_vchain(c->cfg, &ch, M * N16, &t->prog, &t->block_dim, msg,
				    sizeof msg);
		cc_arg_tensor(c, t, prod);
		cc_arg_tensor(c, t, add_c);
	}
	if (bad)
		return NODE_FAIL(c, n, "%s", msg);
	cc_arg_tensor(c, t, out);
	cc_io_add(t, 0, prod, out, CC_F16, CC_FMT_ND);
	cc_io_dev(c, t, 0, add_c);
	cc_io_dev(c, t, 1, out);
	return 0;
}

/* MatMul, with the bias pass_fuse_matmul_bias.c folded into it as in[2]. */
int lower_matmul(struct cc_ctx *c, struct cc_node *n)
{
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	return matmul_common(c, n, n->in[0], n->in[1], 0, 0, 1.0f, bias, 1.0f);
}

/* Einsum as the MatMul it spells (einsum_form). */
int lower_einsum(struct cc_ctx *c, struct cc_node *n)
{
	int tb;
	if (einsum_form(c, n, &tb))
		return -1;
	return matmul_common(c, n, n->in[0], n->in[1], 0, tb, 1.0f, -1, 1.0f);
}

/* Gemm: Y = alpha * A' x B' + beta * C.  A constant B takes transB and alpha
 * in its layout; an activation operand's transposition is a view, and alpha
 * scales A. */
int lower_gemm(struct cc_ctx *c, struct cc_node *n)
{
	int ta = (int)cc_attr_int(n, "transA", 0), tb = (int)cc_attr_int(n, "transB", 0);
	float alpha = cc_attr_float(n, "alpha", 1);
	int bias = n->nin > 2 && n->in[2] >= 0 ? n->in[2] : -1;
	return matmul_common(c, n, n->in[0], n->in[1], ta, tb, alpha, bias,
			     cc_attr_float(n, "beta", 1));
}
