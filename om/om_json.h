/* om_json.h: an .om as JSON, ATC's --mode=1 --om=M.om --json=M.json.
 *
 * ATC writes the model's attributes (soc_version, its own version...) as a
 * list of {"key", "value": {"s" | "i"}} and its graph's ops; ours holds the
 * same kind of content for what a davinci-sim .om has: the model's
 * attributes, its inputs and outputs, and each task with its types (CANN's
 * and the ONNX ops it computes), block_dim, kernel, predicted cycles and the
 * tensors it reads and writes. */
#ifndef DV_OM_JSON_H
#define DV_OM_JSON_H

#include <stdio.h>

#include "om.h"

/* Write m as one JSON object; producer names the writer ("simatc 0.1.0"). */
void om_write_json(const struct om_model *m, const char *producer, FILE *f);

#endif
