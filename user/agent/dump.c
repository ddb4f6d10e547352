// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A dump: one process tree cut out of the window (cut.c) and written into the spool as an
 * ordinary trace, named by its job and its first incident (spool.h). Written twice over the
 * same cut: into a model first (its verdict names the file), then into the file, whose
 * fsync, rename and the spool's cap are the spool_sync thread's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "agent/agent.h"
#include "agent/spool.h"
#include "collect/discover.h"
#include "lib/outfile.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/records.h"
#include "trace/tracefile.h"
#include "trace/window.h"

static void dump_meta(struct agent *a, const struct gctx_model *m, const struct pending *p,
		      __u64 first_ns, struct gctx_trace_meta *meta)
{
	const struct gctx_proc *root = gctx_model__proc(m, p->root_idx);
	char label[128];
	struct utsname u;

	memset(meta, 0, sizeof(*meta));
	meta->start_mono_ns = first_ns;
	meta->start_wall_ns = a->start_wall + (first_ns - a->start_mono);
	gethostname(meta->hostname, sizeof(meta->hostname) - 1);
	if (!uname(&u))
		snprintf(meta->kernel, sizeof(meta->kernel), "%.63s", u.release);
	snprintf(meta->version, sizeof(meta->version), "%s", GPUCTX_VERSION);
	gctx_proc_label(m, root->idx, label, sizeof(label));
	snprintf(meta->cmdline, sizeof(meta->cmdline), "agent: %s", label);
}

/* The incidents in a dump's model: their counts go to the metrics, the first one names the
 * file and gives the log line. */
static void dump_analyse(struct agent *a, struct pending *p, const struct gctx_model *dm,
			 const struct gctx_trace_meta *meta, char *kind, size_t kind_len,
			 char *verdict, size_t verdict_len)
{
	struct gctx_analysis *an = gctx_analysis__new(dm, meta->start_mono_ns);
	__u32 now[GCTX_INC_MAX][GCTX_SEV_ERROR + 1] = {};

	snprintf(kind, kind_len, "%s", p->crash ? "crash" : "incident");
	snprintf(verdict, verdict_len, "%s",
		 p->crash ? "a process with GPU state was killed by "
			    "a signal"
			  : "");
	if (!an)
		return;
	for (__u32 i = 0; i < gctx_analysis__nincidents(an); i++) {
		const struct gctx_incident *in = gctx_analysis__incident(an, i);

		now[in->kind][in->severity]++;
		if (!i && (int)in->severity >= a->o.fail_on)
			snprintf(kind, kind_len, "%s", gctx_incident_kind_name(in->kind));
	}
	for (int k = 0; k < GCTX_INC_MAX; k++)
		for (int s = 0; s <= GCTX_SEV_ERROR; s++)
			if (now[k][s] > p->counted[k][s]) {
				a->incidents[k][s] += now[k][s] - p->counted[k][s];
				p->counted[k][s] = now[k][s];
			}
	/* no incident says it, the verdict names the crash */
	snprintf(verdict, verdict_len, "%s", gctx_analysis__summary(an)->verdict);
	gctx_analysis__free(an);
}

/* A dump's records go to a model (first pass: its verdict names the file), then to the file. */
struct dump_sink {
	struct gctx_model *m;
	struct gctx_trace_writer *w;
	int err;
};

static int dump_put(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct dump_sink *d = ctx;

	if (d->m && gctx_model__feed(d->m, type, data, len) == -ENOMEM)
		return -ENOMEM;
	if (d->w) {
		int ret = gctx_trace_writer__append(d->w, type, data, len);

		if (ret && !d->err)
			d->err = ret;
	}
	return 0;
}

static int dump_pass(struct gctx_cut *c, struct dump_sink *d, const struct agent *a,
		     const struct gctx_model *m, __u64 now)
{
	struct gctx_rec_end end = {.end_ns = now, .exit_status = -1, .reason = 1};
	struct gctx_rec_drops lost;
	int ret;

	c->records = 0;
	c->sink = dump_put;
	c->sink_ctx = d;
	ret = agent_cut__emit(c, a, m);
	agent_cut__drops(a, c, &lost); /* what it lacks: the report says so */
	if (!ret)
		ret = dump_put(d, GCTX_REC_DROPS, &lost, sizeof(lost));
	end.events = c->records + 2;
	return ret ? ret : dump_put(d, GCTX_REC_END, &end, sizeof(end));
}

int agent_dump__write(struct agent *a, const struct gctx_model *m, struct pending *p)
{
	struct gctx_tree t = {};
	struct gctx_cut c = {.t = &t, .max_minor = AGENT_DUMP_MAX_MINOR};
	struct dump_sink d = {};
	struct gctx_trace_meta meta;
	struct gctx_outfile *out = NULL;
	const struct gctx_proc *root = gctx_model__proc(m, p->root_idx);
	char kind[32], verdict[1024], err[512], path[PATH_MAX], job[SPOOL_JOB_LEN] = "";
	char line[sizeof(kind) + sizeof(path) + sizeof(verdict) + 8];
	__u64 now = gctx_now_mono(), first;
	int ret, werr = 0;

	ret = gctx_tree__add(&t, m, p->root_idx);
	/* a job's records are the newest of a window of the node's: read from its start */
	if (!root->present_at_attach)
		c.from_ns = root->start_ns;
	if (!ret)
		ret = gctx_cut__scan(&c, m, a->win);
	if (ret)
		goto out;
	first = c.first_ns			 ? c.first_ns
		: gctx_window__oldest_ns(a->win) ? gctx_window__oldest_ns(a->win)
						 : now;
	c.first_ns = first;
	dump_meta(a, m, p, first, &meta);
	/* first pass: the verdict, which names the file */
	d.m = gctx_model__new();
	if (!d.m) {
		ret = -ENOMEM;
		goto out;
	}
	ret = dump_pass(&c, &d, a, m, now);
	if (ret)
		goto out;
	gctx_model__finish(d.m);
	dump_analyse(a, p, d.m, &meta, kind, sizeof(kind), verdict, sizeof(verdict));
	if (!p->written) {
		int same = spool_same_allow(&a->same, p->owner, kind, now);

		if (same <= 0) {
			/* the same failure of the same owner again: folded, not written */
			if (same < 0)
				agent_log(a,
					  "%s: %s's further dumps of this kind are folded for "
					  "%u s (%u written): pid %u's tree not dumped",
					  kind, p->owner[0] ? p->owner : "no job",
					  (unsigned)(SPOOL_SAME_WINDOW_NS / 1000000000ull),
					  SPOOL_SAME_MAX, root->pid);
			p->written = true;
			p->alive_at_write = false;
			goto out;
		}
		/* the cgroup the model has (the root may have exited), else its /proc, else the
		 * owner the incident found (a user) */
		spool_job_label(root->cgroup, job, sizeof(job));
		if (!job[0] && !root->exited)
			spool_job_of(root->pid, job, sizeof(job));
		if (!job[0])
			snprintf(job, sizeof(job), "%s", p->owner);
		spool_name(p->name, sizeof(p->name), meta.start_wall_ns, job, root->comm, root->pid,
			   kind);
	}
	/* second pass: the file */
	gctx_model__free(d.m);
	d.m = NULL;
	snprintf(path, sizeof(path), "%s/%s", a->o.spool, p->name);
	out = gctx_outfile__new(path, err, sizeof(err));
	if (!out) {
		agent_log(a, "cannot write a dump: %s", err);
		ret = -EIO;
		goto out;
	}
	if (a->o.group && fchown(gctx_outfile__fd(out), 0, a->o.gid) == 0)
		fchmod(gctx_outfile__fd(out), 0640);
	d.w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(out), F_DUPFD_CLOEXEC, 0), &meta,
					&werr);
	if (!d.w) {
		ret = werr;
		goto out;
	}
	ret = dump_pass(&c, &d, a, m, now);
	werr = gctx_trace_writer__free(d.w);
	d.w = NULL;
	if (!ret)
		ret = werr ? werr : d.err;
	if (!ret) {
		/* its fsync, rename, log line and the spool cap: the spool_sync thread's */
		snprintf(line, sizeof(line), "%s: %s: %s", kind, path, verdict);
		ret = spool_sync__push(a->sync, out, a->spool_fd, p->name, line, !p->written);
		out = NULL;
	}
	if (!ret) {
		a->drops_dumped = a->drops;
		p->written = true;
		p->alive_at_write = t.alive;
	}
out:
	if (ret) {
		a->dump_errors++;
		if (ret != -EIO)
			agent_log(a, "cannot write a dump of pid %u's tree: %s", root->pid,
				  strerror(-ret));
	}
	gctx_trace_writer__free(d.w);
	gctx_outfile__free(out);
	gctx_model__free(d.m);
	gctx_tree__free(&t);
	a->metrics_dirty = true;
	agent_stalled(now, &a->dump_ns, &a->dump_max_ns);
	return ret;
}
