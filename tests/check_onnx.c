/* check_onnx.c: tests for the ONNX importer (compiler/onnx_import.c, compiler/graph.c) and the
 * TensorProto files (om/tensor_io.c).
 *
 * Inputs: the ONNX backend node tests ($ONNX_TESTDATA/node, Debian's libonnx-testdata), which
 * cover nearly every operator but carry no initializers, and small models written at test time
 * by tests/onnx_models.py (run with Debian's python3-onnx) for the storage forms and error
 * paths the node tests do not reach. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "graph.h"
#include "tensor_io.h"
#include "onnx.pb-c.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"

/* ck_assert marks a point through Check's pipe on every success, too slow in loops over a
 * thousand models; this only calls into Check on failure. */
#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

static const char *testdata(void)
{
	const char *d = getenv("ONNX_TESTDATA");

	return d && *d ? d : "/usr/share/libonnx-testdata/data";
}

static const char *srcdir(void)
{
	const char *d = getenv("srcdir");

	return d && *d ? d : ".";
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The error must name the file first, as "PATH: ...". */
static int names_path(const char *err, const char *path)
{
	size_t n = strlen(path);

	return strncmp(err, path, n) == 0 && err[n] == ':' && err[n + 1] != '\0';
}

static float f32_at(const void *data, size_t i)
{
	float f;

	memcpy(&f, (const unsigned char *)data + 4 * i, 4);
	return f;
}

static int64_t i64_at(const void *data, size_t i)
{
	int64_t v;

	memcpy(&v, (const unsigned char *)data + 8 * i, 8);
	return v;
}

static uint16_t u16_at(const void *data, size_t i)
{
	uint16_t v;

	memcpy(&v, (const unsigned char *)data + 2 * i, 2);
	return v;
}

static const struct cc_node *find_node(const struct cc_graph *g, const char *op)
{
	for (int i = 0; i < g->nn; i++)
		if (strcmp(g->n[i].op, op) == 0)
			return &g->n[i];
	return NULL;
}

static const struct cc_tensor *tensor(const struct cc_graph *g, const char *name)
{
	int i = cc_tensor_find(g, name);

	ck_assert_msg(i >= 0, "no tensor %s", name);
	return &g->t[i];
}

/* The invariants every imported graph keeps, whatever the model. */
static void check_invariants(const struct cc_graph *g, const char *path)
{
	for (int i = 0; i < g->nt; i++) {
		const struct cc_tensor *t = &g->t[i];

		CHECK(t->name && cc_tensor_find(g, t->name) == i, "%s: tensor %d (%s) not unique",
		      path, i, t->name);
		CHECK(t->rank >= -1 && t->rank <= CC_MAX_RANK, "%s: %s rank", path, t->name);
		CHECK(t->producer >= -1 && t->producer < g->nn, "%s: %s producer", path, t->name);
		CHECK(!t->data || t->producer < 0, "%s: constant %s has a producer", path,
		      t->name);
		CHECK(!t->data || !t->is_input, "%s: constant %s is an input", path, t->name);
		if (t->data && cc_tensor_numel(t) >= 0)
			CHECK(t->nbytes == (size_t)cc_tensor_numel(t) * cc_dtype_size(t->dtype),
			      "%s: constant %s: %zu bytes", path, t->name, t->nbytes);
	}
	for (int i = 0; i < g->nn; i++) {
		const struct cc_node *n = &g->n[i];

		CHECK(n->name && n->name[0] && n->op && n->domain, "%s: node %d", path, i);
		CHECK(strcmp(n->op, "Constant") || n->domain[0], "%s: Constant node kept", path);
		for (int k = 0; k < n->nin; k++)
			CHECK(n->in[k] >= -1 && n->in[k] < g->nt, "%s: %s input %d", path, n->name,
			      k);
		for (int k = 0; k < n->nout; k++)
			CHECK(n->out[k] == -1 ||
			      (n->out[k] < g->nt && g->t[n->out[k]].producer == i),
			      "%s: %s output %d", path, n->name, k);
		for (int k = 0; k < n->nattrs; k++)
			if (n->attrs[k].type == CC_ATTR_TENSOR)
				CHECK(n->attrs[k].tensor >= 0 && n->attrs[k].tensor < g->nt &&
				      g->t[n->attrs[k].tensor].data, "%s: %s attribute %s", path,
				      n->name, n->attrs[k].name);
	}
	for (int i = 0; i < g->ninputs; i++)
		CHECK(g->t[g->inputs[i]].is_input, "%s: input %d", path, i);
	for (int i = 0; i < g->noutputs; i++)
		CHECK(g->t[g->outputs[i]].is_output, "%s: output %d", path, i);
}

/* ---- the ONNX backend node tests ---- */

START_TEST(test_node_models_import)
{
	char dir[4096], path[4096 + 300], err[1024];
	DIR *d;
	struct dirent *e;
	int total = 0, ok = 0;

	snprintf(dir, sizeof dir, "%s/node", testdata());
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s (set ONNX_TESTDATA)", dir);
	while ((e = readdir(d)) != NULL) {
		struct cc_graph g;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%.250s/model.onnx", dir, e->d_name);
		if (!exists(path))
			continue;
		total++;
		err[0] = '\0';
		if (cc_onnx_load(path, &g, err, sizeof err) == 0) {
			ok++;
			check_invariants(&g, path);
			cc_graph_free(&g);
		} else {
			CHECK(names_path(err, path), "%s: bad error message '%s'", path, err);
			CHECK(g.nt == 0 && g.nn == 0 && !g.t, "%s: graph not freed on error",
			      path);
		}
	}
	closedir(d);
	fprintf(stderr, "check_onnx: %d of %d node test models imported\n", ok, total);
	ck_assert_int_gt(total, 500);
	ck_assert_msg(ok * 10 >= total * 9, "only %d of %d models imported", ok, total);
}
END_TEST

START_TEST(test_node_tensors_read)
{
	char dir[4096], sub[4096 + 300], path[4096 + 600], err[1024];
	DIR *d, *sd;
	struct dirent *e, *f;
	int total = 0, ok = 0;

	snprintf(dir, sizeof dir, "%s/node", testdata());
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s (set ONNX_TESTDATA)", dir);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%.250s/test_data_set_0", dir, e->d_name);
		sd = opendir(sub);
		if (!sd)
			continue;
		while ((f = readdir(sd)) != NULL) {
			struct om_tensor t;
			size_t n = strlen(f->d_name);

			if ((strncmp(f->d_name, "input_", 6) &&
			     strncmp(f->d_name, "output_", 7)) ||
			    n < 4 || strcmp(f->d_name + n - 3, ".pb"))
				continue;
			snprintf(path, sizeof path, "%s/%.250s", sub, f->d_name);
			total++;
			err[0] = '\0';
			if (om_tensor_read(path, &t, err, sizeof err) == 0) {
				ok++;
				CHECK(t.data && t.rank >= 0 && t.rank <= 8, "%s: bad tensor",
				      path);
				om_tensor_free(&t);
			} else {
				CHECK(names_path(err, path), "%s: bad error message '%s'",
				      path, err);
			}
		}
		closedir(sd);
	}
	closedir(d);
	fprintf(stderr, "check_onnx: %d of %d node test tensors read\n", ok, total);
	ck_assert_int_gt(total, 1000);
	ck_assert_msg(ok * 100 >= total * 95, "only %d of %d tensors read", ok, total);
}
END_TEST

static void load_node_test(const char *test, struct cc_graph *g)
{
	char path[4096], err[1024];

	snprintf(path, sizeof path, "%s/node/%s/model.onnx", testdata(), test);
	ck_assert_msg(cc_onnx_load(path, g, err, sizeof err) == 0, "%s", err);
}

static void read_node_tensor(const char *test, const char *file, struct om_tensor *t)
{
	char path[4096], err[1024];

	snprintf(path, sizeof path, "%s/node/%s/test_data_set_0/%s", testdata(), test, file);
	ck_assert_msg(om_tensor_read(path, t, err, sizeof err) == 0, "%s", err);
}

START_TEST(test_conv_attrs)
{
	struct cc_graph g;
	const struct cc_node *n;
	const struct cc_attr *a;
	const struct cc_tensor *w, *x, *y;
	struct om_tensor in;
	static const int64_t wdims[] = { 1, 1, 3, 3 }, ydims[] = { 1, 1, 4, 3 };

	load_node_test("test_conv_with_strides_padding", &g);
	ck_assert_int_eq(g.opset, 11);
	ck_assert_int_eq(g.nn, 1);
	n = &g.n[0];
	ck_assert_str_eq(n->op, "Conv");
	ck_assert_str_eq(n->domain, "");
	ck_assert_str_eq(n->name, "Conv_0"); /* the model leaves it unnamed */
	a = cc_attr_find(n, "strides");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, CC_ATTR_INTS);
	ck_assert_uint_eq(a->n, 2);
	ck_assert_int_eq(a->ints[0], 2);
	ck_assert_int_eq(a->ints[1], 2);
	a = cc_attr_find(n, "pads");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, CC_ATTR_INTS);
	ck_assert_uint_eq(a->n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(a->ints[i], 1);
	ck_assert_ptr_null(cc_attr_find(n, "dilations"));
	ck_assert_int_eq(cc_attr_int(n, "group", 1), 1);

	ck_assert_int_eq(g.ninputs, 2);
	ck_assert_int_eq(g.noutputs, 1);
	x = &g.t[g.inputs[0]];
	w = &g.t[g.inputs[1]];
	y = &g.t[g.outputs[0]];
	ck_assert_str_eq(x->name, "x");
	ck_assert_str_eq(w->name, "W");
	ck_assert_str_eq(y->name, "y");
	ck_assert_int_eq(n->nin, 2);
	ck_assert_int_eq(n->in[0], g.inputs[0]);
	ck_assert_int_eq(n->in[1], g.inputs[1]);
	ck_assert_int_eq(n->out[0], g.outputs[0]);
	ck_assert_int_eq(y->producer, 0);
	ck_assert_int_eq(x->producer, -1);
	ck_assert(x->is_input && !x->is_output && y->is_output && !y->is_input);
	ck_assert_int_eq(w->dtype, CC_F32);
	ck_assert_int_eq(w->rank, 4);
	ck_assert_mem_eq(w->dims, wdims, sizeof wdims);
	ck_assert_ptr_null(w->data);
	ck_assert_ptr_null(w->dim_param[0]);
	ck_assert_int_eq(y->rank, 4);
	ck_assert_mem_eq(y->dims, ydims, sizeof ydims);
	ck_assert_int_eq(cc_tensor_numel(x), 35);
	ck_assert_str_eq(cc_dtype_name(x->dtype), "float32");

	read_node_tensor("test_conv_with_strides_padding", "input_0.pb", &in);
	ck_assert_str_eq(in.name, "x");
	ck_assert_int_eq(in.dtype, 1);
	ck_assert_int_eq(in.rank, 4);
	ck_assert_mem_eq(in.dims, x->dims, 4 * sizeof in.dims[0]);
	ck_assert_uint_eq(in.nbytes, 35 * 4);
	om_tensor_free(&in);
	ck_assert_ptr_null(in.data);
	cc_graph_free(&g);
	cc_graph_free(&g); /* freeing twice is harmless */
}
END_TEST

START_TEST(test_gemm_attrs)
{
	struct cc_graph g;
	const struct cc_node *n;

	load_node_test("test_gemm_all_attributes", &g);
	n = find_node(&g, "Gemm");
	ck_assert_ptr_nonnull(n);
	ck_assert_float_eq(cc_attr_float(n, "alpha", 1.0f), 0.25f);
	ck_assert_float_eq(cc_attr_float(n, "beta", 1.0f), 0.35f);
	ck_assert_int_eq(cc_attr_int(n, "transA", 0), 1);
	ck_assert_int_eq(cc_attr_int(n, "transB", 0), 1);
	/* absent and wrongly typed attributes give the default */
	ck_assert_float_eq(cc_attr_float(n, "gamma", 7.0f), 7.0f);
	ck_assert_int_eq(cc_attr_int(n, "alpha", 5), 5);
	ck_assert_float_eq(cc_attr_float(n, "transA", 3.0f), 3.0f);
	cc_graph_free(&g);

	load_node_test("test_gemm_default_no_bias", &g);
	n = find_node(&g, "Gemm");
	ck_assert_ptr_nonnull(n);
	ck_assert_float_eq(cc_attr_float(n, "alpha", 1.0f), 1.0f);
	ck_assert_int_eq(n->nattrs, 0);
	cc_graph_free(&g);
}
END_TEST

/* Constant nodes and TENSOR attributes from the node tests: test_constant's only node is a
 * Constant, so the graph output is a constant equal to the expected output file. */
START_TEST(test_node_constants)
{
	struct cc_graph g;
	const struct cc_tensor *c, *v, *roi;
	const struct cc_node *n;
	const struct cc_attr *a;
	struct om_tensor out;

	load_node_test("test_constant", &g);
	ck_assert_int_eq(g.nn, 0);
	ck_assert_int_eq(g.noutputs, 1);
	c = &g.t[g.outputs[0]];
	ck_assert_str_eq(c->name, "values");
	ck_assert_ptr_nonnull(c->data);
	ck_assert_int_eq(c->dtype, CC_F32);
	ck_assert_int_eq(c->rank, 2);
	ck_assert_int_eq(c->producer, -1);
	read_node_tensor("test_constant", "output_0.pb", &out);
	ck_assert_uint_eq(out.nbytes, c->nbytes);
	ck_assert_mem_eq(out.data, c->data, c->nbytes);
	om_tensor_free(&out);
	cc_graph_free(&g);

	load_node_test("test_constantofshape_float_ones", &g);
	n = find_node(&g, "ConstantOfShape");
	ck_assert_ptr_nonnull(n);
	a = cc_attr_find(n, "value");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, CC_ATTR_TENSOR);
	ck_assert_int_ge(a->tensor, 0);
	v = &g.t[a->tensor];
	ck_assert_int_eq(v->dtype, CC_F32);
	ck_assert_int_eq(v->rank, 1);
	ck_assert_int_eq(v->dims[0], 1);
	ck_assert_float_eq(f32_at(v->data, 0), 1.0f);
	ck_assert(!v->is_input && !v->is_output);
	cc_graph_free(&g);

	/* an empty constant: still a constant, with no bytes */
	load_node_test("test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn", &g);
	roi = tensor(&g, "roi");
	ck_assert_ptr_nonnull(roi->data);
	ck_assert_uint_eq(roi->nbytes, 0);
	ck_assert_int_eq(roi->rank, 1);
	ck_assert_int_eq(cc_tensor_numel(roi), 0);
	n = find_node(&g, "Resize");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->in[1], cc_tensor_find(&g, "roi"));
	ck_assert_int_eq(n->in[2], cc_tensor_find(&g, "scales"));
	a = cc_attr_find(n, "mode");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, CC_ATTR_STRING);
	ck_assert_str_eq(a->s, "nearest");
	cc_graph_free(&g);

	/* an omitted optional input (Clip's min) */
	load_node_test("test_clip_default_max", &g);
	n = find_node(&g, "Clip");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->nin, 3);
	ck_assert_int_eq(n->in[1], -1);
	ck_assert_int_eq(n->in[2], cc_tensor_find(&g, "max"));
	ck_assert_int_ge(n->in[2], 0);
	cc_graph_free(&g);
}
END_TEST

/* ---- models from tests/onnx_models.py ---- */

/* Writes the models into a fresh directory (name in dir); fails the test if the Debian
 * Python cannot build them. */
static void gen_models(char *dir, size_t len)
{
	char cmd[8192];
	int rc;

	snprintf(dir, len, "/tmp/check_onnx.XXXXXX");
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp failed");
	rc = system(PYTHON " -c 'import onnx' >/dev/null 2>&1");
	ck_assert_msg(rc == 0, PYTHON " cannot import onnx: install python3-onnx "
		      "(Debian) to generate the test models");
	snprintf(cmd, sizeof cmd, PYTHON " '%s/tests/onnx_models.py' '%s'", srcdir(), dir);
	rc = system(cmd);
	ck_assert_msg(rc == 0, "%s failed (%d)", cmd, rc);
}

static void rm_models(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096 + 300];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%.250s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Load dir/file, expecting failure; returns the message, which must start with the path. */
static void load_fails(const char *dir, const char *file, char *err, size_t errlen)
{
	char path[4096];
	struct cc_graph g;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	ck_assert_msg(cc_onnx_load(path, &g, err, errlen) < 0, "%s loaded", path);
	ck_assert_msg(names_path(err, path), "error '%s' does not start with %s", err, path);
	ck_assert_ptr_null(g.t);
}

static void load_ok(const char *dir, const char *file, struct cc_graph *g)
{
	char path[4096], err[1024];

	snprintf(path, sizeof path, "%s/%s", dir, file);
	ck_assert_msg(cc_onnx_load(path, g, err, sizeof err) == 0, "%s", err);
	check_invariants(g, path);
}

START_TEST(test_external_data)
{
	char dir[64], err[1024], want[200];
	struct cc_graph g;
	const struct cc_tensor *w;

	gen_models(dir, sizeof dir);
	load_ok(dir, "external.onnx", &g);
	w = tensor(&g, "W");
	ck_assert_ptr_nonnull(w->data);
	ck_assert_int_eq(w->dtype, CC_F32);
	ck_assert_int_eq(w->rank, 2);
	ck_assert_uint_eq(w->nbytes, 24);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(f32_at(w->data, (size_t)i), (float)i + 0.5f);
	ck_assert(!w->is_input);
	ck_assert_int_eq(g.ninputs, 1);
	ck_assert_str_eq(g.t[g.inputs[0]].name, "X");
	cc_graph_free(&g);

	load_fails(dir, "external_missing.onnx", err, sizeof err);
	snprintf(want, sizeof want, "%s/missing.bin", dir);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' does not name %s", err, want);
	ck_assert_msg(strstr(err, "initializer W") != NULL, "'%s' does not name W", err);

	load_fails(dir, "external_escape.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "../weights.bin") && strstr(err, "initializer W"), "%s", err);
	load_fails(dir, "external_range.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "beyond the end") && strstr(err, "initializer W"), "%s", err);
	rm_models(dir);
}
END_TEST

START_TEST(test_generated_models)
{
	char dir[64], path[200], err[1024];
	struct cc_graph g;
	const struct cc_tensor *x, *t;
	const struct cc_node *n;
	FILE *f;
	long len;
	char *buf;

	gen_models(dir, sizeof dir);

	/* dynamic.onnx: the batch dimension keeps its name */
	load_ok(dir, "dynamic.onnx", &g);
	ck_assert_int_eq(g.ninputs, 1);
	x = &g.t[g.inputs[0]];
	ck_assert_int_eq(x->rank, 4);
	ck_assert_int_eq(x->dims[0], -1);
	ck_assert_str_eq(x->dim_param[0], "N");
	ck_assert_int_eq(x->dims[1], 3);
	ck_assert_ptr_null(x->dim_param[1]);
	ck_assert_int_eq(cc_tensor_numel(x), -1);
	ck_assert_str_eq(g.t[g.outputs[0]].dim_param[0], "N");
	ck_assert_int_eq(g.nn, 1);
	ck_assert_str_eq(g.n[0].name, "relu");
	cc_graph_free(&g);

	/* constant.onnx: a Constant node and initializers in the typed fields */
	load_ok(dir, "constant.onnx", &g);
	ck_assert_ptr_null(find_node(&g, "Constant"));
	ck_assert_int_eq(g.nn, 5);
	t = tensor(&g, "C");
	ck_assert_ptr_nonnull(t->data);
	ck_assert_int_eq(t->rank, 2);
	ck_assert_int_eq(t->producer, -1);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(f32_at(t->data, (size_t)i), (float)(i + 1));
	n = find_node(&g, "Add");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->in[1], cc_tensor_find(&g, "C"));
	t = tensor(&g, "W");
	ck_assert_uint_eq(t->nbytes, 24);
	ck_assert_float_eq(f32_at(t->data, 0), 0.25f);
	ck_assert_float_eq(f32_at(t->data, 3), -3.0f);
	ck_assert_float_eq(f32_at(t->data, 5), 1e6f);
	t = tensor(&g, "shape");
	ck_assert_int_eq(t->dtype, CC_I64);
	ck_assert_uint_eq(t->nbytes, 16);
	ck_assert_int_eq(i64_at(t->data, 0), 3);
	ck_assert_int_eq(i64_at(t->data, 1), -1);
	t = tensor(&g, "H"); /* float16 bits in int32_data */
	ck_assert_int_eq(t->dtype, CC_F16);
	ck_assert_uint_eq(t->nbytes, 6);
	ck_assert_uint_eq(u16_at(t->data, 0), 0x3c00);
	ck_assert_uint_eq(u16_at(t->data, 1), 0xc000);
	ck_assert_uint_eq(u16_at(t->data, 2), 0x3800);
	t = tensor(&g, "B");
	ck_assert_int_eq(t->dtype, CC_BOOL);
	ck_assert_uint_eq(t->nbytes, 2);
	ck_assert_mem_eq(t->data, "\1\0", 2);
	ck_assert_int_eq(g.ninputs, 1);
	ck_assert_int_eq(g.noutputs, 3);
	ck_assert_str_eq(g.t[g.outputs[2]].name, "BO");
	cc_graph_free(&g);

	/* graph_attr.onnx: If's branches are subgraphs */
	load_fails(dir, "graph_attr.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "node choose (If)") && strstr(err, "_branch") &&
		      strstr(err, "GRAPH"), "%s", err);

	/* half a model, and text, are not protobuf */
	snprintf(path, sizeof path, "%s/constant.onnx", dir);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	ck_assert_int_eq(fread(buf, 1, (size_t)len, f), len);
	fclose(f);
	snprintf(path, sizeof path, "%s/truncated.onnx", dir);
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)len / 2, f);
	fclose(f);
	free(buf);
	load_fails(dir, "truncated.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "not a valid ONNX model"), "%s", err);
	snprintf(path, sizeof path, "%s/garbage.onnx", dir);
	f = fopen(path, "wb");
	fputs("this is not an ONNX model\n", f);
	fclose(f);
	load_fails(dir, "garbage.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "not a valid ONNX model"), "%s", err);
	/* an empty file is a valid, empty protobuf message: no graph */
	snprintf(path, sizeof path, "%s/empty.onnx", dir);
	f = fopen(path, "wb");
	fclose(f);
	load_fails(dir, "empty.onnx", err, sizeof err);
	ck_assert_msg(strstr(err, "no graph"), "%s", err);
	load_fails(dir, "no_such_model.onnx", err, sizeof err);
	rm_models(dir);
}
END_TEST

/* ---- TensorProto files ---- */

static void roundtrip(const char *dir, const struct om_tensor *t)
{
	char path[400], err[1024];
	struct om_tensor r;

	snprintf(path, sizeof path, "%s/%s.pb", dir, t->name);
	ck_assert_msg(om_tensor_write(path, t, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(om_tensor_read(path, &r, err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(r.name, t->name);
	ck_assert_int_eq(r.dtype, t->dtype);
	ck_assert_int_eq(r.rank, t->rank);
	if (t->rank)
		ck_assert_mem_eq(r.dims, t->dims, (size_t)t->rank * sizeof t->dims[0]);
	ck_assert_uint_eq(r.nbytes, t->nbytes);
	ck_assert_mem_eq(r.data, t->data, t->nbytes);
	om_tensor_free(&r);
	unlink(path);
}

START_TEST(test_tensor_roundtrip)
{
	char dir[64] = "/tmp/check_onnx.XXXXXX", path[200], err[1024];
	struct om_tensor t = { .name = "scalar_f16", .dtype = 10, .rank = 0 };
	struct om_tensor r;
	uint16_t h = 0x3555; /* ~1/3 */
	float v[2 * 3 * 1 * 4];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	t.data = &h;
	t.nbytes = 2;
	roundtrip(dir, &t);

	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "nchw_f32");
	t.dtype = 1;
	t.rank = 4;
	t.dims[0] = 2, t.dims[1] = 3, t.dims[2] = 1, t.dims[3] = 4;
	for (int i = 0; i < 24; i++)
		v[i] = (float)i * 0.75f - 3.0f;
	t.data = v;
	t.nbytes = sizeof v;
	roundtrip(dir, &t);

	/* a size that does not match the shape is refused */
	t.nbytes = 8;
	snprintf(path, sizeof path, "%s/bad.pb", dir);
	ck_assert_int_lt(om_tensor_write(path, &t, err, sizeof err), 0);
	ck_assert(names_path(err, path));
	ck_assert_int_lt(om_tensor_read(path, &r, err, sizeof err), 0);
	ck_assert(names_path(err, path));
	ck_assert_ptr_null(r.data);
	rmdir(dir);
}
END_TEST

/* Tensor files written with the typed fields rather than raw_data. */
START_TEST(test_tensor_typed_fields)
{
	char dir[64] = "/tmp/check_onnx.XXXXXX", path[200], err[1024];
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[1] = { 3 };
	int32_t halves[3] = { 0x3c00, 0xc000, 0x7bff };
	int64_t longs[3] = { -1, 1LL << 40, 7 };
	float floats[3] = { 1.5f, -0.0f, 1e-3f };
	struct om_tensor r;
	unsigned char buf[256];
	size_t len;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/typed.pb", dir);
	tp.name = "typed";
	tp.n_dims = 1;
	tp.dims = dims;
	tp.has_data_type = 1;
	for (int form = 0; form < 3; form++) {
		tp.n_int32_data = tp.n_int64_data = tp.n_float_data = 0;
		if (form == 0)
			tp.data_type = 10, tp.n_int32_data = 3, tp.int32_data = halves;
		else if (form == 1)
			tp.data_type = 7, tp.n_int64_data = 3, tp.int64_data = longs;
		else
			tp.data_type = 1, tp.n_float_data = 3, tp.float_data = floats;
		len = onnx__tensor_proto__get_packed_size(&tp);
		ck_assert_uint_le(len, sizeof buf);
		onnx__tensor_proto__pack(&tp, buf);
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		fwrite(buf, 1, len, f);
		fclose(f);
		ck_assert_msg(om_tensor_read(path, &r, err, sizeof err) == 0, "%s", err);
		ck_assert_str_eq(r.name, "typed");
		ck_assert_int_eq(r.rank, 1);
		ck_assert_int_eq(r.dims[0], 3);
		for (int i = 0; i < 3; i++) {
			if (form == 0)
				ck_assert_uint_eq(u16_at(r.data, (size_t)i), (uint16_t)halves[i]);
			else if (form == 1)
				ck_assert_int_eq(i64_at(r.data, (size_t)i), longs[i]);
			else
				ck_assert_mem_eq((char *)r.data + 4 * i, &floats[i], 4);
		}
		om_tensor_free(&r);
	}
	/* too few values for the shape */
	tp.data_type = 1;
	tp.n_float_data = 2;
	len = onnx__tensor_proto__get_packed_size(&tp);
	onnx__tensor_proto__pack(&tp, buf);
	f = fopen(path, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	ck_assert_int_lt(om_tensor_read(path, &r, err, sizeof err), 0);
	ck_assert(names_path(err, path));
	unlink(path);
	snprintf(path, sizeof path, "%s/none.pb", dir);
	ck_assert_int_lt(om_tensor_read(path, &r, err, sizeof err), 0);
	ck_assert(names_path(err, path));
	rmdir(dir);
}
END_TEST

START_TEST(test_graph_helpers)
{
	struct cc_graph g = { 0 };
	static const int64_t d[] = { 2, 3, 5 };
	int a, b;

	ck_assert_uint_eq(cc_dtype_size(CC_F32), 4);
	ck_assert_uint_eq(cc_dtype_size(CC_F16), 2);
	ck_assert_uint_eq(cc_dtype_size(CC_BF16), 2);
	ck_assert_uint_eq(cc_dtype_size(CC_I64), 8);
	ck_assert_uint_eq(cc_dtype_size(CC_BOOL), 1);
	ck_assert_uint_eq(cc_dtype_size(CC_U32), 4);
	ck_assert_uint_eq(cc_dtype_size(CC_STRING), 0);
	ck_assert_uint_eq(cc_dtype_size(CC_UNDEFINED), 0);
	ck_assert_str_eq(cc_dtype_name(CC_F16), "float16");
	ck_assert_str_eq(cc_dtype_name(CC_I64), "int64");
	ck_assert_str_eq(cc_dtype_name(CC_BF16), "bfloat16");
	for (int i = 0; i < 100; i++) {
		char name[16];

		snprintf(name, sizeof name, "t%d", i);
		ck_assert_int_eq(cc_tensor_add(&g, name, CC_F32, 3, d), i);
	}
	a = cc_tensor_add(&g, "unknown", CC_UNDEFINED, -1, NULL);
	b = cc_tensor_find(&g, "t57");
	ck_assert_int_eq(a, 100);
	ck_assert_int_eq(b, 57);
	ck_assert_int_eq(cc_tensor_find(&g, "nope"), -1);
	ck_assert_int_eq(cc_tensor_numel(&g.t[b]), 30);
	ck_assert_int_eq(cc_tensor_numel(&g.t[a]), -1);
	ck_assert_int_eq(g.t[a].producer, -1);
	ck_assert_int_eq(cc_tensor_add(&g, "too_big", CC_F32, CC_MAX_RANK + 1, NULL), -1);
	cc_graph_free(&g);
	ck_assert_int_eq(g.nt, 0);
}
END_TEST

static Suite *onnx_suite(void)
{
	Suite *s = suite_create("onnx");
	TCase *tc = tcase_create("import");

	/* the sweeps over the node tests take a second or two, more under sanitizers */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_graph_helpers);
	tcase_add_test(tc, test_node_models_import);
	tcase_add_test(tc, test_node_tensors_read);
	tcase_add_test(tc, test_conv_attrs);
	tcase_add_test(tc, test_gemm_attrs);
	tcase_add_test(tc, test_node_constants);
	tcase_add_test(tc, test_external_data);
	tcase_add_test(tc, test_generated_models);
	tcase_add_test(tc, test_tensor_roundtrip);
	tcase_add_test(tc, test_tensor_typed_fields);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(onnx_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
