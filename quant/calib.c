/* calib.c: activation statistics and the three threshold algorithms. */
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void qt_stats_init(struct qt_stats *s)
{
	memset(s, 0, sizeof *s);
}

void qt_stats_add(struct qt_stats *s, const float *x, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++) {
		double a = fabs((double)x[i]);
		if (isfinite(a) && a > m)
			m = a;
	}
	if (m > s->amax)
		s->amax = m;
	/* Grow the range by doubling: bin 2k and 2k+1 become bin k, so earlier
	 * counts stay exact at half the resolution (no second pass over the data). */
	if (s->range == 0 && m > 0) {
		s->range = m; /* counts so far were all zeros: they stay in bin 0 */
	} else {
		while (m > s->range) {
			for (int b = 0; b < QT_BINS / 2; b++)
				s->hist[b] = s->hist[2 * b] + s->hist[2 * b + 1];
			memset(s->hist + QT_BINS / 2, 0, sizeof s->hist / 2);
			s->range *= 2;
		}
	}
	double scale = s->range > 0 ? QT_BINS / s->range : 0;
	for (size_t i = 0; i < n; i++) {
		double a = fabs((double)x[i]);
		if (!isfinite(a)) {
			s->nonfinite++;
			continue;
		}
		s->count++;
		/* Exact zeros (half of a ReLU's output) quantize exactly whatever the
		 * threshold, so they say nothing about it; in the histogram their
		 * spike in bin 0 would be smeared by entropy's Q and drag T down. */
		if (a == 0) {
			s->zeros++;
			continue;
		}
		long b = (long)(a * scale);
		s->hist[b >= QT_BINS ? QT_BINS - 1 : b]++;
	}
}

/* The value below which pct percent of |x| lies, interpolating linearly
 * inside the histogram bin that crosses it. */
static double percentile(const struct qt_stats *s, double pct)
{
	double target = pct / 100.0 * (double)s->count, cum = (double)s->zeros;
	double w = s->range / QT_BINS;
	if (cum >= target)
		return 0;
	for (int b = 0; b < QT_BINS; b++) {
		double h = (double)s->hist[b];
		if (h > 0 && cum + h >= target) {
			double t = (b + (target - cum) / h) * w;
			return t < s->amax ? t : s->amax;
		}
		cum += h;
	}
	return s->amax;
}

/* Entropy calibration, after TensorRT's int8 calibrator (the idea, not its
 * code).  Clipping at T trades two errors: values above T saturate, values
 * below T are rounded to one of 128 levels of width T/127.  For each
 * candidate T = i bins (i from 128 to the last occupied bin), take
 *   P: the histogram's first i bins, with all the mass above bin i added to
 *      bin i-1 (what saturation does to the data), and
 *   Q: P squeezed into 128 levels: the i bins are cut into 128 equal runs,
 *      each run's mass spread evenly over the bins of the run that were
 *      non-empty in P (an empty bin must stay empty, else the comparison
 *      would blame the quantizer for values that never occur),
 * and keep the T whose KL(P || Q) is smallest: the clipped, quantized
 * distribution that loses the least information about the observed one. */
static double entropy(const struct qt_stats *s)
{
	int last = QT_BINS;
	while (last > 0 && s->hist[last - 1] == 0)
		last--;
	if (last <= QT_LEVELS)
		return s->amax; /* every value fits at full resolution already */
	double *p = malloc(sizeof(double) * QT_BINS), *q = malloc(sizeof(double) * QT_BINS);
	if (!p || !q) {
		free(p);
		free(q);
		return s->amax; /* out of memory: min-max is always a valid answer */
	}
	double best_kl = INFINITY;
	int best = last;
	double above = 0;
	for (int b = last; b < QT_BINS; b++)
		above += (double)s->hist[b];
	/* walk candidates downwards so "mass above i" is a running sum */
	double tail = above;
	for (int i = last; i >= QT_LEVELS; i--) {
		if (i < last)
			tail += (double)s->hist[i];
		double total = 0;
		for (int b = 0; b < i; b++) {
			p[b] = (double)s->hist[b];
			total += p[b];
		}
		p[i - 1] += tail;
		total += tail;
		if (total <= 0)
			continue;
		/* Q is built from the histogram without the saturated tail: the
		 * quantizer's resolution is what it is compared on, and the tail's
		 * absence from Q is what makes a too-small T cost something (built
		 * from P, T = 128 bins would always look perfect). */
		double qtotal = 0;
		for (int j = 0; j < QT_LEVELS; j++) {
			int lo = (int)((long)j * i / QT_LEVELS), hi = (int)((long)(j + 1) * i / QT_LEVELS);
			double mass = 0;
			int nz = 0;
			for (int b = lo; b < hi; b++) {
				mass += (double)s->hist[b];
				nz += p[b] > 0;
			}
			for (int b = lo; b < hi; b++)
				q[b] = p[b] > 0 ? mass / nz : 0;
			qtotal += mass;
		}
		if (qtotal <= 0)
			continue;
		double kl = 0;
		for (int b = 0; b < i; b++) {
			if (p[b] <= 0)
				continue;
			/* a bin Q leaves empty where P is not (only the tail bin can be)
			 * gets a tiny floor: a large but finite penalty */
			double pp = p[b] / total, qq = q[b] > 0 ? q[b] / qtotal : 1e-12;
			kl += pp * log(pp / qq);
		}
		if (kl < best_kl) {
			best_kl = kl;
			best = i;
		}
	}
	free(p);
	free(q);
	double t = best * (s->range / QT_BINS);
	return t < s->amax ? t : s->amax;
}

double qt_threshold(const struct qt_stats *s, enum qt_algo a, double pct)
{
	if (s->count == 0 || s->amax <= 0)
		return 0;
	switch (a) {
	case QT_PERCENTILE:
		return percentile(s, pct);
	case QT_ENTROPY:
		return entropy(s);
	case QT_MINMAX:
	default:
		return s->amax;
	}
}

const char *qt_algo_name(enum qt_algo a)
{
	return a == QT_PERCENTILE ? "percentile" : a == QT_ENTROPY ? "entropy" : "minmax";
}

int qt_algo_parse(const char *s, enum qt_algo *a)
{
	if (!strcmp(s, "minmax"))
		*a = QT_MINMAX;
	else if (!strcmp(s, "percentile"))
		*a = QT_PERCENTILE;
	else if (!strcmp(s, "entropy"))
		*a = QT_ENTROPY;
	else
		return -1;
	return 0;
}

double qt_sqnr(const float *ref, const float *test, size_t n)
{
	double sig = 0, noise = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)ref[i] - (double)test[i];
		sig += (double)ref[i] * ref[i];
		noise += d * d;
	}
	if (noise == 0)
		return INFINITY;
	return 10.0 * log10(sig / noise);
}
