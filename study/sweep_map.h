/* sweep_map.h: a study's points as grids of cells (sweep_map.c): the
 * advisor's bound per point, and each metric as a heat map when exactly
 * two keys are varied. */
#ifndef DV_STUDY_SWEEP_MAP_H
#define DV_STUDY_SWEEP_MAP_H

#include <stddef.h>

#include "sweep.h"

/* Write the maps' NAME.dat and NAME.gp into dir; at[k] is point k's row
 * (NULL: missing), labels[m] metric m's axis label.  Each script's name is
 * appended to scripts (malloc'd; room for 1 + SW_NMETRICS), counted in
 * *ns, for sw_plot to run.  Returns 0, or -1 with err. */
int sw_plot_maps(const struct sw_spec *s, const struct sw_row *const *at, const char *dir,
		 const char *const *labels, char **scripts, unsigned *ns, char *err,
		 size_t errlen);

#endif
