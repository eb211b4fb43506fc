/* soc.h: SoC configuration (sim/soc/<name>.ini), one member per key of soc.def. */
#ifndef DV_SOC_H
#define DV_SOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SOC_T_INT int64_t
#define SOC_T_REAL double

struct soc_config {
	char name[64];  /* [soc] name= in the ini file */
	char memory[32]; /* [soc] memory=: main memory's technology ("HBM2", "LPDDR4X"),
			  * how reports name it; "main memory" when the file has none */
	char path[512]; /* the file it was read from */
#define SOC_KEY(sec, key, type, min, max, unit, doc) SOC_T_##type sec##_##key;
#include "soc.def"
};

/* Load a SoC: `name` is a chip name ("Ascend910") looked up in the SoC
 * directories (see soc_dirs), or a path to an .ini file.  Every key of
 * soc.def must be present exactly once; unknown sections/keys, malformed
 * numbers and out-of-range values are errors.  On error returns -1 and writes
 * "file:line: message" into err. */
int soc_load(const char *name, struct soc_config *cfg, char *err, size_t errlen);

/* The same for an .ini file's contents text[0..len) (the fuzzer's input);
 * path only names it in errors and in cfg->path. */
int soc_load_mem(const char *path, const char *text, size_t len, struct soc_config *cfg,
		 char *err, size_t errlen);

/* Apply one override "section.key=value" (what --set takes).  Same checks as
 * the file.  Returns 0 or -1 with a message in err. */
int soc_set(struct soc_config *cfg, const char *assignment, char *err, size_t errlen);

/* Read one key by its dotted name as a double; returns 0 or -1 if unknown. */
int soc_get(const struct soc_config *cfg, const char *dotted, double *value);

/* Write the effective configuration as an ini file (round-trips through soc_load). */
void soc_dump(const struct soc_config *cfg, FILE *f);
/* Write the configuration as a JSON object. */
void soc_dump_json(const struct soc_config *cfg, FILE *f);

/* Directory searched for <name>.ini: $DAVINCI_SOC_DIR if set, else the
 * installed data directory, else the source tree's sim/soc. */
const char *soc_dir(void);

/* Derived figures used everywhere; computed from the keys. */
static inline double soc_cycle_ns(const struct soc_config *c) { return 1000.0 / c->core_freq_mhz; }
/* GB/s -> bytes per core cycle */
static inline double soc_gbps_to_bpc(const struct soc_config *c, double gbps)
{
	return gbps * 1000.0 / c->core_freq_mhz;
}

#endif
