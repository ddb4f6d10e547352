/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to the diagnosis (incidents.c groups, verdict.c writes the texts); callers see
 * analysis.h only.
 */
#ifndef __GPUCTX_ANALYSIS_PRIV_H
#define __GPUCTX_ANALYSIS_PRIV_H

#include "model/analysis.h"

struct gctx_analysis {
	const struct gctx_model *m;
	__u64 start; /* trace start, for the times in texts */
	struct gctx_incident *inc;
	__u32 ninc, cap_inc;
	__u32 *finding_inc; /* per finding index: incident id, 0 none */
	__s64 *gpu_init;    /* per process: gpu_init_ns, -1 none */
	struct gctx_job_summary sum;
};

/* verdict.c */
void ana_incident_text(struct gctx_analysis *a, struct gctx_incident *in);
void ana_summary_text(struct gctx_analysis *a);
/* A process that died by SIGTERM while its parent lived: most likely stopped by that parent
 * (multiprocessing's Pool.terminate(), as leaving `with Pool(...)` does), not a crash. */
bool ana_terminated_by_parent(const struct gctx_model *m, const struct gctx_proc *p);

#endif /* __GPUCTX_ANALYSIS_PRIV_H */
