// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx report --list: one line per trace (an agent's spool holds one per job that had an
 * incident), oldest first, so that an admin sees in a minute which jobs to look at: when,
 * which host and job, what happened, which process, which file. A directory stands for the
 * traces in it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "agent/spool.h"
#include "lib/esc.h"
#include "lib/json.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/tracefile.h"

struct row {
	char *path;
	bool ok;	/* read; otherwise the line says it could not be */
	__u64 start_ns; /* wall clock */
	char host[64];
	char job[96];  /* "slurm-42.0", "-" */
	char kind[24]; /* "poison-fork", "crash", "none" */
	__u32 pid;     /* the incident's source, the crashed process, else the command */
	char comm[GCTX_COMM_LEN];
	__u32 nerrors, nwarnings;
	int worst; /* enum gctx_severity, -1 none */
	char verdict[1024];
};

struct rows {
	struct row *v;
	__u32 n, cap;
};

static int add_path(struct rows *r, const char *path)
{
	if (r->n == r->cap) {
		__u32 cap = r->cap ? 2 * r->cap : 64;
		struct row *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
	r->v[r->n].path = strdup(path);
	if (!r->v[r->n].path)
		return -ENOMEM;
	r->n++;
	return 0;
}

static bool is_trace_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".gctx") && name[0] != '.';
}

/* The regular files named *.gctx in dir (not through a symlink: the spool is the agent's). */
static int add_dir(struct rows *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (!is_trace_name(e->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		ret = add_path(r, path);
	}
	closedir(d);
	return ret;
}

/* The job as the agent names its dumps (slurm-42.0, k8s-8f3c2a1b, a unit), "-" for none. */
static void job_of(const struct gctx_model *m, char *buf, size_t len)
{
	for (__u32 i = 0; i < gctx_model__nprocs(m); i++) {
		spool_job_label(gctx_model__proc(m, i)->cgroup, buf, len);
		if (buf[0])
			return;
	}
	snprintf(buf, len, "-");
}

static void set_proc(struct row *w, const struct gctx_model *m, __u32 idx)
{
	const struct gctx_proc *p = gctx_model__proc(m, idx);

	if (!p)
		return;
	w->pid = p->pid;
	snprintf(w->comm, sizeof(w->comm), "%s", p->comm);
}

static void fill(struct row *w)
{
	struct gctx_trace_meta meta;
	struct gctx_model *m;
	struct gctx_analysis *an;
	const struct gctx_job_summary *s;
	__u32 cmd = 0;

	w->worst = -1;
	if (cli_load_trace(w->path, &m, &meta)) /* it said why, on stderr */
		return;
	an = gctx_analysis__new(m, meta.start_mono_ns);
	if (!an) {
		fprintf(stderr, "gpuctx: out of memory\n");
		gctx_model__free(m);
		return;
	}
	w->ok = true;
	w->start_ns = meta.start_wall_ns;
	snprintf(w->host, sizeof(w->host), "%s", meta.hostname[0] ? meta.hostname : "-");
	job_of(m, w->job, sizeof(w->job));
	s = gctx_analysis__summary(an);
	w->nerrors = s->nerrors;
	w->nwarnings = s->nwarnings;
	snprintf(w->verdict, sizeof(w->verdict), "%s", s->verdict);
	snprintf(w->kind, sizeof(w->kind), "none");
	/* nothing happened: the traced command (record's first process is its own launcher) */
	while (cmd + 1 < gctx_model__nprocs(m) && !gctx_model__proc(m, cmd)->nexecs)
		cmd++;
	if (!gctx_model__proc(m, cmd) || !gctx_model__proc(m, cmd)->nexecs)
		cmd = 0;
	set_proc(w, m, cmd);
	if (gctx_analysis__nincidents(an)) {
		const struct gctx_incident *in = gctx_analysis__incident(an, 0);

		snprintf(w->kind, sizeof(w->kind), "%s", gctx_incident_kind_name(in->kind));
		w->worst = in->severity;
		set_proc(w, m, in->src_idx);
	} else if (s->ncrashed) { /* the verdict names the crash (the agent's crash dump) */
		snprintf(w->kind, sizeof(w->kind), "crash");
		set_proc(w, m, s->crash_idx);
	}
	gctx_analysis__free(an);
	gctx_model__free(m);
}

static int by_start(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->ok != y->ok)
		return x->ok ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void when(__u64 wall_ns, char *buf, size_t len)
{
	time_t t = wall_ns / 1000000000ull;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

/* A traced string (comm, hostname) or a file name shown in a column: escaped as report does
 * (lib/esc.h), so that no escape, bidi override or newline of a user's reaches the terminal. */
static const char *shown(char *buf, size_t len, const char *s)
{
	gctx_format_str(buf, len, s, strlen(s));
	return buf;
}

static void print_text(const struct rows *r, FILE *out)
{
	__u32 bad = 0, fail = 0;
	char host[GCTX_ESC_SIZE(64)], job[GCTX_ESC_SIZE(96)], path[GCTX_ESC_SIZE(4096)];

	fprintf(out, "%-19s  %-12s  %-14s  %-16s  %-24s  %s\n", "STARTED (UTC)", "HOST", "JOB",
		"WHAT", "PROCESS", "TRACE");
	for (__u32 i = 0; i < r->n; i++) {
		const struct row *w = &r->v[i];
		char t[32], comm[GCTX_ESC_SIZE(GCTX_COMM_LEN)],
		    proc[GCTX_ESC_SIZE(GCTX_COMM_LEN) + 12];

		if (!w->ok) {
			fprintf(out, "%-19s  %-12s  %-14s  %-16s  %-24s  %s\n", "?", "?", "?",
				"unreadable", "-", shown(path, sizeof(path), w->path));
			bad++;
			continue;
		}
		when(w->start_ns, t, sizeof(t));
		snprintf(proc, sizeof(proc), "%u %s", w->pid, shown(comm, sizeof(comm), w->comm));
		fprintf(out, "%-19s  %-12s  %-14s  %-16s  %-24s  %s\n", t,
			shown(host, sizeof(host), w->host), shown(job, sizeof(job), w->job),
			w->kind, proc, shown(path, sizeof(path), w->path));
		fail += w->nerrors || !strcmp(w->kind, "crash");
	}
	fprintf(out, "%u trace%s: %u with an error or a crash", r->n, r->n == 1 ? "" : "s", fail);
	if (bad)
		fprintf(out, ", %u unreadable", bad);
	fprintf(out, "; gpuctx report TRACE for one\n");
}

static void kstr(struct gctx_json *j, const char *key, const char *v)
{
	gctx_json__key(j, key);
	gctx_json__str(j, v);
}

static void ku64(struct gctx_json *j, const char *key, __u64 v)
{
	gctx_json__key(j, key);
	gctx_json__u64(j, v);
}

static void print_json(const struct rows *r, FILE *out)
{
	struct gctx_json *j = gctx_json__new(out, true);

	if (!j)
		return;
	gctx_json__arr_begin(j);
	for (__u32 i = 0; i < r->n; i++) {
		const struct row *w = &r->v[i];

		gctx_json__obj_begin(j);
		kstr(j, "path", w->path);
		gctx_json__key(j, "readable");
		gctx_json__bool(j, w->ok);
		if (w->ok) {
			ku64(j, "start_wall_ns", w->start_ns);
			kstr(j, "host", w->host);
			kstr(j, "job", strcmp(w->job, "-") ? w->job : NULL);
			kstr(j, "kind", w->kind);
			ku64(j, "pid", w->pid);
			kstr(j, "comm", w->comm);
			ku64(j, "errors", w->nerrors);
			ku64(j, "warnings", w->nwarnings);
			kstr(j, "verdict", w->verdict);
		}
		gctx_json__obj_end(j);
	}
	gctx_json__arr_end(j);
	gctx_json__free(j);
	fputc('\n', out);
}

int cli_report_list(char *const *paths, int npaths, bool json, int fail_on)
{
	struct rows r = {};
	int ret = 0;

	for (int i = 0; i < npaths && !ret; i++) {
		struct stat st;

		if (!stat(paths[i], &st) && S_ISDIR(st.st_mode)) {
			ret = add_dir(&r, paths[i]);
			if (ret && ret != -ENOMEM) {
				fprintf(stderr, "gpuctx: %s: %s\n", paths[i], strerror(-ret));
				ret = 0;
			}
		} else {
			ret = add_path(&r, paths[i]);
		}
	}
	if (ret) {
		fprintf(stderr, "gpuctx: out of memory\n");
		goto out;
	}
	for (__u32 i = 0; i < r.n; i++)
		fill(&r.v[i]);
	qsort(r.v, r.n, sizeof(*r.v), by_start);
	if (json)
		print_json(&r, stdout);
	else
		print_text(&r, stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "gpuctx: writing the list: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	/* an incident says more than a file that could not be read (stderr says which) */
	for (__u32 i = 0; i < r.n; i++) {
		if (r.v[i].ok && r.v[i].worst >= fail_on)
			ret = GCTX_EXIT_INCIDENT;
		else if (!r.v[i].ok && !ret)
			ret = 1;
	}
out:
	for (__u32 i = 0; i < r.n; i++)
		free(r.v[i].path);
	free(r.v);
	return ret;
}
