/* quant.h: post-training int8 quantization (simquant as a library).
 *
 * An fp32 ONNX model and a calibration set in, a QDQ ONNX model out: every
 * quantized node's activation input goes through QuantizeLinear ->
 * DequantizeLinear (per-tensor, symmetric int8), its weight becomes an int8
 * initializer + DequantizeLinear (per-channel or per-tensor), its bias an
 * int32 initializer + DequantizeLinear.  The activation statistics come from
 * the simulator itself: the model is compiled with the calibrated tensors as
 * extra outputs and run in-process on each calibration input set.
 * docs/quantization.md describes the conventions and the algorithms. */
#ifndef DV_QUANT_H
#define DV_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- statistics and calibration algorithms (calib.c) ---- */

#define QT_BINS 2048   /* histogram of |x| */
#define QT_LEVELS 128  /* quantized levels of |x| for symmetric int8 (0..127) */

enum qt_algo { QT_MINMAX, QT_PERCENTILE, QT_ENTROPY };
enum qt_gran { QT_PER_CHANNEL, QT_PER_TENSOR };

/* |x| of one tensor over the whole calibration set: its exact maximum and a
 * QT_BINS-bin histogram over [0, range).  The range is the first batch's
 * maximum and doubles (merging bin pairs) whenever a later batch exceeds it,
 * so one pass over the data suffices and range < 2 * amax. */
struct qt_stats {
	double amax, range;
	uint64_t count;     /* finite values seen */
	uint64_t zeros;     /* of which exact zeros (not in the histogram) */
	uint64_t nonfinite; /* NaN / Inf values ignored */
	uint64_t hist[QT_BINS];
};

void qt_stats_init(struct qt_stats *s);
void qt_stats_add(struct qt_stats *s, const float *x, size_t n);
/* The clipping threshold T (scale = T / 127) the algorithm picks; percentile
 * in (0, 100] is used by QT_PERCENTILE only.  0 when nothing nonzero was seen. */
double qt_threshold(const struct qt_stats *s, enum qt_algo a, double percentile);
const char *qt_algo_name(enum qt_algo a);
/* Parse "minmax", "percentile", "entropy": 0, or -1. */
int qt_algo_parse(const char *s, enum qt_algo *a);

/* Signal-to-quantization-noise ratio of test against ref in dB:
 * 10 log10(sum ref^2 / sum (ref - test)^2); +inf when equal. */
double qt_sqnr(const float *ref, const float *test, size_t n);

/* ---- the tool (quant.c) ---- */

struct qt_options {
	const char *model, *output;  /* fp32 ONNX in, QDQ ONNX out */
	const char *soc;             /* the SoC the calibration runs on */
	const char *input_shape;     /* as simatc's --input_shape, or NULL */
	const char *calib_dir;       /* test_data_set_* / input_N.pb sets, or NULL */
	unsigned calib_count;        /* generated sets when calib_dir is NULL */
	uint64_t seed;
	enum qt_algo algo;
	double percentile;
	enum qt_gran gran;
	const char *skip_nodes, *skip_types; /* comma-separated, or NULL */
	unsigned auto_skip;          /* keep the N most harmful layers fp32 */
	/* 0 (the default): a residual Add (a Conv's result plus a tensor int8
	 * convs read) reads the residual through its Q/DQ pair, so it stays
	 * int8 on the device; 1: the residual stays fp32 */
	int fp32_residual;
	const char *report_json;     /* or NULL */
	FILE *report;                /* the text report, or NULL */
	FILE *progress;              /* progress lines, or NULL */
};

/* Calibrate and write the QDQ model to o->output.  Errors name the file,
 * node or tensor; returns 0, or -1 with nothing written. */
int qt_quantize(const struct qt_options *o, char *err, size_t errlen);

#endif
