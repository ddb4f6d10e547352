// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The jobs in the report: each process's job from its cgroup (model/jobattr.h), and a line per
 * distinct job (a `record -a` trace holds many) with its processes.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "model/jobattr.h"
#include "output/report/report_priv.h"

#define JOBS_MAX 32 /* distinct jobs listed; the rest are counted */
#define PIDS_MAX 8  /* root pids listed per job */

struct rep_job {
	struct gctx_job_attr a;
	char label[160];
	__u32 nprocs;
	__u32 roots[PIDS_MAX]; /* processes whose parent is in another job or none */
	__u32 nroots;
};

static bool job_of(const struct gctx_proc *p, struct gctx_job_attr *a, char *label, size_t len)
{
	if (gctx_job_attr_parse(p->cgroup, a) == GCTX_JOB_NONE)
		return false;
	/* a job is a job, not each task of it: tasks are told apart per process */
	a->task[0] = '\0';
	gctx_job_attr_format(a, label, len);
	return true;
}

/* The distinct jobs of m's processes, in order of first process; returns how many (at most
 * JOBS_MAX) and sets *more to the processes of jobs past that. */
static __u32 rep_jobs(const struct gctx_model *m, struct rep_job *jobs, __u32 *more)
{
	__u32 n = 0;

	*more = 0;
	for (__u32 i = 0; i < gctx_model__nprocs(m); i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i), *par;
		struct gctx_job_attr a;
		char label[160], plabel[160];
		__u32 k;

		if (!p || !job_of(p, &a, label, sizeof(label)))
			continue;
		for (k = 0; k < n && strcmp(jobs[k].label, label); k++)
			;
		if (k == n) {
			if (n == JOBS_MAX) {
				(*more)++;
				continue;
			}
			memset(&jobs[n], 0, sizeof(jobs[n]));
			jobs[n].a = a;
			snprintf(jobs[n].label, sizeof(jobs[n].label), "%s", label);
			n++;
		}
		jobs[k].nprocs++;
		par = rep_proc(m, p->parent_idx);
		if ((!par || !job_of(par, &a, plabel, sizeof(plabel)) || strcmp(plabel, label)) &&
		    jobs[k].nroots < PIDS_MAX)
			jobs[k].roots[jobs[k].nroots++] = p->pid;
	}
	return n;
}

void rep_text_jobs(struct rep_ctx *c)
{
	struct rep_job jobs[JOBS_MAX];
	__u32 more, n = rep_jobs(c->m, jobs, &more);

	for (__u32 i = 0; i < n; i++) {
		fprintf(c->out, "  %s %s: %u process%s, from pid",
			i ? "           " : "jobs:     ", jobs[i].label, jobs[i].nprocs,
			jobs[i].nprocs == 1 ? "" : "es");
		for (__u32 k = 0; k < jobs[i].nroots; k++)
			fprintf(c->out, "%s %u", k ? "," : "", jobs[i].roots[k]);
		fputc('\n', c->out);
	}
	if (more)
		fprintf(c->out, "             and %u processes of more jobs\n", more);
}

static void json_str(struct gctx_json *j, const char *k, const char *v)
{
	gctx_json__key(j, k);
	if (v && v[0])
		gctx_json__str(j, v);
	else
		gctx_json__null(j);
}

static void json_attr(struct gctx_json *j, const struct gctx_job_attr *a)
{
	gctx_json__obj_begin(j);
	json_str(j, "kind", gctx_job_kind_name(a->kind));
	json_str(j, "id", a->id);
	json_str(j, "step", a->step);
	json_str(j, "task", a->task);
	json_str(j, "container", a->container);
	json_str(j, "runtime", a->runtime);
	json_str(j, "qos", a->qos);
}

void rep_json_proc_job(struct gctx_json *j, const struct gctx_proc *p)
{
	struct gctx_job_attr a;

	json_str(j, "cgroup", p->cgroup);
	gctx_json__key(j, "job");
	if (gctx_job_attr_parse(p->cgroup, &a) == GCTX_JOB_NONE) {
		gctx_json__null(j);
		return;
	}
	json_attr(j, &a);
	gctx_json__obj_end(j);
}

void rep_json_jobs(struct gctx_json *j, const struct gctx_model *m)
{
	struct rep_job jobs[JOBS_MAX];
	__u32 more, n = rep_jobs(m, jobs, &more);

	gctx_json__key(j, "jobs");
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < n; i++) {
		json_attr(j, &jobs[i].a);
		json_str(j, "label", jobs[i].label);
		gctx_json__key(j, "processes");
		gctx_json__u64(j, jobs[i].nprocs);
		gctx_json__key(j, "root_pids");
		gctx_json__arr_begin(j);
		for (__u32 k = 0; k < jobs[i].nroots; k++)
			gctx_json__u64(j, jobs[i].roots[k]);
		gctx_json__arr_end(j);
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	gctx_json__key(j, "jobs_not_listed_processes");
	gctx_json__u64(j, more);
}
