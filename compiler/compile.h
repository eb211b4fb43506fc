/* compile.h: ONNX model -> .om, the whole of simatc as a library call. */
#ifndef DV_COMPILE_H
#define DV_COMPILE_H

#include <stdio.h>

#include "om.h"
#include "soc.h"
#include "tensor_io.h"

/* ATC's --precision_mode values the compiler implements (pass_precision.c). */
enum cc_precision_mode { CC_PREC_FORCE_FP16, CC_PREC_MIX, CC_PREC_KEEP_ORIGIN };

struct cc_options {
	const char *input_shape; /* ATC form "name:1,3,224,224;other:1,10", or NULL */
	const char *report_json; /* write the compile report as JSON here, or NULL */
	FILE *report;            /* the text report, or NULL */
	const char *fusion_switch_file; /* ATC's JSON (or "Name:off" lines), or NULL */
	/* graph inputs to treat as constants (an ahead-of-time compiler needs
	 * shapes, axes and bounds at compile time): names and their values */
	const char *const *frozen_names;
	const struct om_tensor *frozen;
	unsigned nfrozen;
	const char *insert_op_conf; /* ATC's AIPP config (--insert_op_conf), or NULL */
	enum cc_precision_mode precision_mode;
	const char *keep_dtype; /* ATC's --keep_dtype file, or NULL */
	/* ATC's --buffer_optimize: l2_optimize (the default, L2 fusion) or
	 * off_optimize */
	enum cc_buffer_optimize { CC_BUF_L2 = 0, CC_BUF_OFF } buffer_optimize;
	/* ATC's --enable_small_channel=1: a first conv of 1-4 input channels
	 * reads them as C0 = 4 (the C04 path); 0, ATC's default and ours: as
	 * C0 = 16 like any other */
	int small_channel;
	/* the model's name in the .om, which traces give as its Model Name: ATC
	 * names a model after --output; NULL: the ONNX file's name */
	const char *model_name;
	/* a debug compile for a layer-by-layer comparison (tools/simcmp.py):
	 * every surviving node's output is also a model output, after the
	 * model's own (keep_outputs.c) */
	int keep_all_outputs;
	/* ATC's --output_type: "FP16" for every output of the model, or
	 * "node:index:TYPE;..." per output (output_type.c); NULL: each output's
	 * own type */
	const char *output_type;
	/* called as the compile goes (a tool shows it on a terminal): the stage
	 * ("kernels", "predicting", "verifying"), and how far, done of total
	 * (0 of 0 when a stage has no count); NULL: not called */
	void (*progress)(void *ctx, const char *stage, unsigned done, unsigned total);
	void *progress_ctx;
};

/* Compile the ONNX model at onnx_path for the SoC cfg into *out (free with
 * om_free).  Errors name the file and the node or tensor; returns 0 or -1. */
int cc_compile(const char *onnx_path, const struct soc_config *cfg, const struct cc_options *opt,
	       struct om_model *out, char *err, size_t errlen);

/* ATC's --dynamic_batch_size value ("1,2,4,8") into sizes (room for
 * OM_MAX_VARIANTS): ATC's rules, 2 to 100 positive sizes, here also
 * distinct and ascending.  Errors name the flag. */
int cc_parse_dynamic_batch(const char *v, int64_t *sizes, unsigned *n, char *err, size_t errlen);
/* A dynamic-batch model (om.h): opt->input_shape's -1 batch (the first
 * dimension of the dynamic inputs) at each of sizes[0..n-1] in turn, each
 * an ordinary compile; the weights stored once when the programs' are the
 * same bytes.  The text report is the largest size's, and a line on the
 * variants. */
int cc_compile_dynamic(const char *onnx_path, const struct soc_config *cfg,
		       const struct cc_options *opt, const int64_t *sizes, unsigned n,
		       struct om_model *out, char *err, size_t errlen);

/* ATC's --dynamic_dims value ("224,224;320,320"): nprof profiles of ndims
 * values each into vals[k * OM_MAX_DYN_DIMS + d] (room for OM_MAX_VARIANTS
 * profiles): 2 to 100 profiles, each of the same 1..8 positive values, no
 * two the same.  Errors name the flag. */
int cc_parse_dynamic_dims(const char *v, int64_t *vals, unsigned *nprof, unsigned *ndims,
			  char *err, size_t errlen);
/* A dynamic-dims model (om.h): opt->input_shape's -1 dimensions, in their
 * order, at each profile's values in turn, each an ordinary compile; the
 * weights stored once when the programs' are the same bytes, one memory
 * plan (the largest workspace).  The model is the last profile's program. */
int cc_compile_dynamic_dims(const char *onnx_path, const struct soc_config *cfg,
			    const struct cc_options *opt, const int64_t *dims, unsigned ndims,
			    unsigned nprof, struct om_model *out, char *err, size_t errlen);

/* The supported operators, space-separated (from ops.def). */
const char *cc_supported_ops(void);
/* The operator table docs/ops.md holds (simatc --ops): ops.def's rows and
 * what their properties mean; 0, or -1 when writing f failed. */
int cc_ops_markdown(FILE *f);

#endif
