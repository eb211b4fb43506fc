/* stats.c: statistics dumps, generated from stats.def. */
#include "core.h"

static void dump_one(FILE *f, const char *prefix, const struct sim_core_stats *s)
{
#define STAT_PIPE(name, unit, doc)                                                         \
	for (int p = 0; p < ISA_NPIPES; p++)                                                \
		fprintf(f, "%s.pipe.%s.%-22s %14llu # %s (%s)\n", prefix,                  \
			isa_pipe_name((enum isa_pipe)p), #name, (unsigned long long)s->name[p], \
			doc, unit);
#define STAT_CORE(name, unit, doc) \
	fprintf(f, "%s.%-31s %14llu # %s (%s)\n", prefix, #name, (unsigned long long)s->name, doc, unit);
#include "stats.def"
}

void sim_stats_print(FILE *f, const struct sim_result *res, unsigned ncores)
{
	fprintf(f, "---------- Begin Simulation Statistics ----------\n");
	fprintf(f, "%-40s %14llu # %s\n", "sim.cycles", (unsigned long long)res->cycles,
		"cycles from the first block start to the last block end (cycles)");
	dump_one(f, "total", &res->total);
	for (unsigned i = 0; i < ncores; i++) {
		char prefix[32];
		snprintf(prefix, sizeof prefix, "core%u", i);
		dump_one(f, prefix, &res->core[i]);
	}
	fprintf(f, "---------- End Simulation Statistics   ----------\n");
}

static void json_one(FILE *f, const struct sim_core_stats *s)
{
	const char *sep = "";
	fputc('{', f);
#define STAT_PIPE(name, unit, doc)                                                    \
	fprintf(f, "%s\"%s\": {", sep, #name);                                          \
	for (int p = 0; p < ISA_NPIPES; p++)                                            \
		fprintf(f, "%s\"%s\": %llu", p ? ", " : "", isa_pipe_name((enum isa_pipe)p), \
			(unsigned long long)s->name[p]);                                \
	fputc('}', f);                                                                  \
	sep = ", ";
#define STAT_CORE(name, unit, doc)                                                     \
	fprintf(f, "%s\"%s\": %llu", sep, #name, (unsigned long long)s->name);           \
	sep = ", ";
#include "stats.def"
	fputc('}', f);
}

void sim_stats_json(FILE *f, const struct sim_result *res, unsigned ncores)
{
	fprintf(f, "{\"cycles\": %llu, \"insns_issued\": %llu, \"pipes\": {",
		(unsigned long long)res->cycles, (unsigned long long)res->total.scalar_insns);
	for (int p = 0; p < ISA_NPIPES; p++)
		fprintf(f, "%s\"%s\": %llu", p ? ", " : "", isa_pipe_name((enum isa_pipe)p),
			(unsigned long long)res->total.busy_cycles[p]);
	fprintf(f, "}, \"total\": ");
	json_one(f, &res->total);
	fprintf(f, ", \"cores\": [");
	for (unsigned i = 0; i < ncores; i++) {
		if (i)
			fputs(", ", f);
		json_one(f, &res->core[i]);
	}
	fprintf(f, "]}\n");
}

void sim_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
