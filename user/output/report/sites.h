/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sites of a finding: where its GPU state was initialised, where the fork that carried it
 * happened, where the child used it, where it crashed (model/stacks.c holds the stacks).
 * Formats them for the text report ("train.py:17 in build_model <- torch/cuda/__init__.py:
 * 300 in _lazy_init") and writes them into the JSON report.
 */
#ifndef __GPUCTX_SITES_H
#define __GPUCTX_SITES_H

#include <stddef.h>
#include <stdio.h>
#include "lib/json.h"
#include "model/model.h"

/* The stacks of a finding, by role (enum gctx_stack_role); NULL where none was taken. */
void gctx_finding_stacks(const struct gctx_model *m, const struct gctx_finding *f,
			 const struct gctx_stack *out[GCTX_STACK_ROLE_MAX]);
/* The same with the stacks looked up in sm (the exporter's read-ahead of a trace's stacks,
 * which the collector may write after the finding's events). */
void gctx_finding_stacks_in(const struct gctx_model *m, const struct gctx_model *sm,
			    const struct gctx_finding *f,
			    const struct gctx_stack *out[GCTX_STACK_ROLE_MAX]);
/* Text report: one line per site of the finding, then a hint naming the sites. */
void gctx_sites_print(FILE *out, const struct gctx_model *m, const struct gctx_finding *f);
/* Text report: every stack, up to max_frames frames each. */
void gctx_stacks_print(FILE *out, const struct gctx_model *m, __u32 max_frames);
/* JSON: "stacks": {"init": [frames], ...} and "sites": {"init": "...", ...} of a finding. */
void gctx_sites_json(struct gctx_json *j, const struct gctx_model *m, const struct gctx_finding *f);
/* JSON: "stack_stats": stacks lost, unresolved, and the collector's time resolving them. */
void gctx_stack_stats_json(struct gctx_json *j, const struct gctx_model *m);
/* Text report: a line about lost stacks, if any. */
void gctx_stack_stats_print(FILE *out, const struct gctx_model *m);
/* JSON: one frame object (kind, function, file, line, module, offset, address). */
void gctx_frame_json(struct gctx_json *j, const struct gctx_rec_frame *fr);
/* JSON: one stack object (pid, role, note, site, frames). */
void gctx_stack_json(struct gctx_json *j, const struct gctx_stack *s);

#endif /* __GPUCTX_SITES_H */
