// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx agent: a node-wide flight recorder. Follows every process (as record -a) with no
 * trace file; keeps the latest records in a bounded window (trace/window.h) and writes a
 * trace of one process tree into a spool directory only when it matters: an incident at or
 * above --fail-on, or a fatal signal in a process holding or inheriting GPU state. Those
 * dumps are ordinary traces: report, check and export read them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "cli/cli.h"
#include "cli/agent.h"
#include "cli/spool.h"
#include "collect/discover.h"
#include "collect/jobcg.h"
#include "lib/grow.h"
#include "lib/outfile.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/records.h"
#include "trace/tracefile.h"
#include "trace/window.h"

#define AGENT_LOCK	 "/run/gpuctx-agent.lock"
#define MAX_GLOBALS	 4096 /* device registrations and probes kept for every dump */
#define MAX_PENDING	 256  /* process trees with an incident not yet written */
#define TREE_WAIT_NS	 (30 * 1000000000ull) /* a tree still running is dumped after this */
#define STACKS_WAIT_NS	 (10 * 1000000000ull) /* a due dump waits this long for its stacks */
#define AGENT_MAX_ARGS	 64
#define PENDING_EVERY_NS (100 * 1000000ull)
#define METRICS_EVERY_NS (5 * 1000000000ull)
#define METRICS_SOON_NS	 (1000000000ull) /* after a change: a dump, a SIGHUP, a drop */
#define FOLD_EVERY_NS	 (1000000000ull)
#define FOLD_AFTER_NS	 (10 * 1000000000ull) /* an exit this old: its late records are in */

static volatile sig_atomic_t got_hup;

static void on_hup(int sig)
{
	got_hup = 1;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx agent [--spool DIR] [--fail-on error|warning] [--window SECONDS]\n"
	    "                    [--window-size SIZE] [--grace SECONDS] [--spool-max SIZE]\n"
	    "                    [--spool-files N] [--metrics FILE] [--group GROUP] [--syslog]\n"
	    "                    [--device PATH:KIND]... [--libcuda PATH] [--libhip PATH]\n"
	    "                    [--no-api] [--no-stacks] [--no-hold] [-v]\n"
	    "\n"
	    "Follow every process on this node and keep the latest events in memory; write a\n"
	    "trace of a process tree into the spool only when it has an incident at or above\n"
	    "--fail-on, or when a process holding or inheriting GPU state dies by a signal.\n"
	    "Runs until SIGTERM (a final flush); SIGHUP reopens the spool and rewrites the\n"
	    "metrics. One agent per node.\n"
	    "\n"
	    "      --spool DIR         where dumps go (default /var/lib/gpuctx), created 0700\n"
	    "      --fail-on SEV       error (default) or warning: what is worth a dump\n"
	    "      --window SECONDS    history kept in memory (default 600)\n"
	    "      --window-size SIZE  memory for that history (default 256M)\n"
	    "      --grace SECONDS     wait after an incident, so the crash or exit that follows\n"
	    "                          is in the dump (default 2)\n"
	    "      --spool-max SIZE    the dumps' total size at most; oldest go first (default "
	    "1G)\n"
	    "      --spool-files N     dumps kept at most (default 200)\n"
	    "      --metrics FILE      counters in Prometheus text format, rewritten atomically\n"
	    "      --group GROUP       dumps readable by this group (default root only)\n"
	    "      --syslog            incident lines to syslog (default standard output, which\n"
	    "                          is the journal under systemd)\n"
	    "      --device PATH:KIND  as gpuctx record: a GPU device file (KIND: nvidiactl,\n"
	    "                          nvidia, nvidia-uvm, kfd, drm-render)\n"
	    "      --libcuda PATH      as gpuctx record: probe this CUDA driver library too\n"
	    "      --libhip PATH       as gpuctx record: probe this HIP runtime library too\n"
	    "      --no-api            as gpuctx record: do not probe the CUDA/HIP libraries\n"
	    "      --no-stacks         as gpuctx record: no call stacks\n"
	    "      --no-hold           as gpuctx record: never hold a process\n"
	    "      --hold-timeout MS   as gpuctx record (default 500)\n"
	    "      --ring-size SIZE    as gpuctx record (default 8M)\n"
	    "  -v, --verbose           libbpf debug output\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx agent --metrics /var/lib/node_exporter/textfile/gpuctx.prom\n"
	    "  gpuctx report "
	    "/var/lib/gpuctx/20261128T101500Z-slurm-42.0-python3-1234-poison-fork.gctx\n");
}

static int parse_seconds(const char *opt, const char *arg, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*out) || *out < 0 || *out > max) {
		fprintf(stderr, "gpuctx: bad %s '%s': want seconds from 0 to %.0f\n", opt, arg,
			max);
		return -1;
	}
	return 0;
}

static int parse_size(const char *opt, const char *arg, __u64 min, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-')
		goto bad;
	switch (*end) {
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case 'M':
	case 'm':
		v <<= 20;
		end++;
		break;
	case 'G':
	case 'g':
		v <<= 30;
		end++;
		break;
	}
	if (*end || v < min || v > (1ull << 40))
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "gpuctx: bad %s '%s': want a size such as 64M or 2G (at least %lluK)\n",
		opt, arg, (unsigned long long)(min >> 10));
	return -1;
}

enum {
	OPT_SPOOL = 2000,
	OPT_FAIL_ON,
	OPT_WINDOW,
	OPT_WINDOW_SIZE,
	OPT_GRACE,
	OPT_SPOOL_MAX,
	OPT_SPOOL_FILES,
	OPT_METRICS,
	OPT_GROUP,
	OPT_SYSLOG,
	OPT_REC_VAL,
	OPT_REC_FLAG
};

/* Agent options to o; record options (and their values) to rargv after "record", "-a". */
static int parse_args(struct agent_opts *o, int argc, char **argv, char **rargv, int *rn)
{
	static const struct option opts[] = {
	    {"spool", required_argument, NULL, OPT_SPOOL},
	    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	    {"window", required_argument, NULL, OPT_WINDOW},
	    {"window-size", required_argument, NULL, OPT_WINDOW_SIZE},
	    {"grace", required_argument, NULL, OPT_GRACE},
	    {"spool-max", required_argument, NULL, OPT_SPOOL_MAX},
	    {"spool-files", required_argument, NULL, OPT_SPOOL_FILES},
	    {"metrics", required_argument, NULL, OPT_METRICS},
	    {"group", required_argument, NULL, OPT_GROUP},
	    {"syslog", no_argument, NULL, OPT_SYSLOG},
	    {"device", required_argument, NULL, OPT_REC_VAL},
	    {"libcuda", required_argument, NULL, OPT_REC_VAL},
	    {"libhip", required_argument, NULL, OPT_REC_VAL},
	    {"hold-timeout", required_argument, NULL, OPT_REC_VAL},
	    {"ring-size", required_argument, NULL, OPT_REC_VAL},
	    {"no-api", no_argument, NULL, OPT_REC_FLAG},
	    {"no-stacks", no_argument, NULL, OPT_REC_FLAG},
	    {"no-hold", no_argument, NULL, OPT_REC_FLAG},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int c, idx;
	double files;

	o->spool = "/var/lib/gpuctx";
	o->fail_on = GCTX_SEV_ERROR;
	o->window_s = 600;
	o->window_bytes = 256ull << 20;
	o->grace_s = 2;
	o->spool_max_bytes = 1ull << 30;
	o->spool_max_files = 200;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, &idx)) != -1) {
		switch (c) {
		case OPT_SPOOL:
			o->spool = optarg;
			break;
		case OPT_FAIL_ON:
			o->fail_on = cli_parse_fail_on(optarg);
			if (o->fail_on < 0 || o->fail_on > GCTX_SEV_ERROR) {
				fprintf(stderr,
					"gpuctx: bad --fail-on '%s': want error or warning\n",
					optarg);
				return -1;
			}
			break;
		case OPT_WINDOW:
			if (parse_seconds("--window", optarg, 7 * 24 * 3600, &o->window_s))
				return -1;
			break;
		case OPT_WINDOW_SIZE:
			if (parse_size("--window-size", optarg, 1 << 20, &o->window_bytes))
				return -1;
			break;
		case OPT_GRACE:
			if (parse_seconds("--grace", optarg, 600, &o->grace_s))
				return -1;
			break;
		case OPT_SPOOL_MAX:
			if (parse_size("--spool-max", optarg, 1 << 20, &o->spool_max_bytes))
				return -1;
			break;
		case OPT_SPOOL_FILES:
			if (parse_seconds("--spool-files", optarg, 1000000, &files) || files < 1 ||
			    files != (double)(__u32)files) {
				fprintf(stderr,
					"gpuctx: bad --spool-files '%s': want 1 to 1000000\n",
					optarg);
				return -1;
			}
			o->spool_max_files = files;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case OPT_GROUP: {
			struct group *g = getgrnam(optarg);

			if (!g) {
				fprintf(stderr, "gpuctx: no such group: %s\n", optarg);
				return -1;
			}
			o->group = optarg;
			o->gid = g->gr_gid;
			break;
		}
		case OPT_SYSLOG:
			o->syslog = true;
			break;
		case OPT_REC_VAL:
		case OPT_REC_FLAG:
			/* passed on to record as given: its checks and messages apply */
			if (*rn + 2 >= AGENT_MAX_ARGS) {
				fprintf(stderr, "gpuctx: too many options\n");
				return -1;
			}
			if (asprintf(&rargv[*rn], "--%s", opts[idx].name) < 0)
				return -1; /* freed with the process: the agent runs until it stops
					    */
			(*rn)++;
			if (c == OPT_REC_VAL)
				rargv[(*rn)++] = optarg;
			break;
		case 'v':
			rargv[(*rn)++] = "-v";
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuctx: agent follows every process: no command or trace "
				"(see gpuctx agent --help)\n");
		return -1;
	}
	return 0;
}

/* ---- what the window cannot lose: device registrations and probes ---- */

static void keep_global(struct agent *a, __u32 type, const void *data, __u32 len)
{
	void *copy;

	if (a->nglobals >= MAX_GLOBALS ||
	    gctx_grow(&a->globals, &a->cap_globals, a->nglobals + 1, sizeof(*a->globals)) ||
	    !(copy = malloc(len ? len : 1))) {
		a->globals_dropped++;
		return;
	}
	memcpy(copy, data, len);
	a->globals[a->nglobals].type = type;
	a->globals[a->nglobals].len = len;
	a->globals[a->nglobals++].data = copy;
}

/* ---- incidents ---- */

/* Programs that start jobs rather than belong to one: a tree's root is the child of one.
 * By name or by program (a shell script's comm is the script's name). */
static bool is_launcher_name(const char *comm)
{
	static const char *const names[] = {
	    "sh",      "bash", "dash",	     "zsh",	"fish",	      "ksh",  "tcsh",
	    "csh",     "sudo", "su",	     "runuser", "login",      "sshd", "screen",
	    "systemd", "init", "slurmstepd", "srun",	"conmon",     "runc", "crun",
	    "gpuctx",  "cron", "atd",	     "agetty",	"containerd",
	};

	if (!strncmp(comm, "tmux", 4) || !strncmp(comm, "containerd-shim", 15))
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(comm, names[i]))
			return true;
	return false;
}

static bool is_launcher(const struct gctx_proc *p)
{
	const char *base = strrchr(p->exe, '/');

	return is_launcher_name(p->comm) || (base && is_launcher_name(base + 1));
}

/* The job a process belongs to: its oldest ancestor in the same cgroup that is not started
 * by a launcher (shell, sshd, slurmstepd, container runtime) nor init. */
static __u32 tree_root(const struct gctx_model *m, __u32 idx)
{
	char cg[GCTX_CGROUP_LEN], pcg[GCTX_CGROUP_LEN];
	const struct gctx_proc *p = gctx_model__proc(m, idx);
	bool have = !p->exited && !gctx_proc_cgroup(p->pid, cg, sizeof(cg));

	for (int hops = 0; hops < 64 && p->parent_idx >= 0; hops++) {
		const struct gctx_proc *up = gctx_model__proc(m, p->parent_idx);

		if (up->pid <= 1 || (__u32)getpid() == up->pid || is_launcher(up))
			break;
		if (have && !up->exited && !gctx_proc_cgroup(up->pid, pcg, sizeof(pcg)) &&
		    strcmp(cg, pcg))
			break;
		p = up;
	}
	return p->idx;
}

static void incident(struct agent *a, const struct gctx_model *m, __u32 idx, bool crash)
{
	__u32 root = tree_root(m, idx);
	__u64 now = gctx_now_mono(), due = now + (__u64)(a->o.grace_s * 1e9);
	struct pending *p = NULL;

	for (__u32 i = 0; i < a->npend; i++)
		if (a->pend[i].root_idx == root)
			p = &a->pend[i];
	if (!p) {
		if (a->npend >= MAX_PENDING ||
		    gctx_grow(&a->pend, &a->cap_pend, a->npend + 1, sizeof(*a->pend))) {
			a->pend_dropped++;
			a->metrics_dirty = true;
			return;
		}
		p = &a->pend[a->npend++];
		memset(p, 0, sizeof(*p));
		p->root_idx = root;
		p->first_ns = now;
	}
	p->crash |= crash;
	if (!p->due_ns || p->due_ns < due)
		p->due_ns = due;
}

static void on_record(void *ctx, const struct gctx_model *m, __u32 type, const void *data,
		      __u32 len)
{
	struct agent *a = ctx;

	a->records++;
	if (type == GCTX_REC_DEVICE || type == GCTX_REC_PROBE) {
		keep_global(a, type, data, len);
		return;
	}
	if (type == GCTX_REC_DROPS && len >= sizeof(a->drops)) {
		memcpy(&a->drops, data, sizeof(a->drops));
		return;
	}
	/* a raw stack (8 KiB of a process's stack memory) is resolved into a GCTX_REC_STACK:
	 * only that goes to a dump or a client, as record writes only that to a trace */
	if (type != GCTX_EV_STACK) {
		gctx_window__push(a->win, gctx_now_mono(), type, data, len);
		agent_subs__on_record(a, type, data, len);
	}
	if (type == GCTX_EV_EXIT && len >= sizeof(struct gctx_ev_exit)) {
		struct gctx_ev_exit e;
		const struct gctx_proc *p;

		memcpy(&e, data, sizeof(e));
		/* a process killed by a signal that dumps core or is SIGKILL (seed 001: exit 139)
		 */
		if (!e.group_dead || !(e.exit_code & 0x7f))
			return;
		p = gctx_model__proc_by_pid(m, e.hdr.tgid);
		if (p && gctx_model__has_gpu_state(m, p->idx)) {
			a->crashes++;
			incident(a, m, p->idx, true);
		}
	}
}

static void on_finding(void *ctx, const struct gctx_model *m, const struct gctx_finding *f)
{
	struct agent *a = ctx;

	if ((int)f->severity >= a->o.fail_on)
		incident(a, m, f->proc_idx, false);
}

/* ---- dumps ---- */

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

void agent_log(struct agent *a, const char *fmt, ...)
{
	va_list ap;
	char line[8192];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one call each: the spool_sync thread logs too */
	if (a->o.syslog) {
		syslog(LOG_WARNING, "%s", line);
	} else {
		printf("gpuctx agent: %s\n", line);
		fflush(stdout);
	}
}

static void sync_log(void *ctx, const char *line)
{
	agent_log(ctx, "%s", line);
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

/* A stall of the event loop since t0: its total and its longest. */
static void stalled(__u64 t0, __u64 *total, __u64 *max)
{
	__u64 ns = gctx_now_mono() - t0;

	*total += ns;
	if (ns > *max)
		*max = ns;
}

static int write_dump(struct agent *a, const struct gctx_model *m, struct pending *p)
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
		/* the cgroup the model has (the root may have exited), else its /proc */
		spool_job_label(root->cgroup, job, sizeof(job));
		if (!job[0] && !root->exited)
			spool_job_of(root->pid, job, sizeof(job));
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
	stalled(now, &a->dump_ns, &a->dump_max_ns);
	return ret;
}

static bool tree_alive(const struct gctx_model *m, __u32 root)
{
	struct gctx_tree t = {};
	bool alive;

	if (gctx_tree__add(&t, m, root)) {
		gctx_tree__free(&t);
		return true;
	}
	alive = t.alive;
	gctx_tree__free(&t);
	return alive;
}

static void write_metrics(struct agent *a, const struct gctx_model *m);

/* Whether the stacks taken before p was first found due to be written (a loaded node takes
 * seconds to resolve them) are not all resolved yet. */
static bool stacks_pending(struct agent *a, struct pending *p)
{
	if (!p->stacks_mark)
		p->stacks_mark = a->stacks.accepted + 1; /* + 1: 0 is "not marked" */
	return a->stacks.done + 1 < p->stacks_mark;
}

/* Due dumps: a tree that ended, or one still running TREE_WAIT_NS after its incident. */
static void run_pending(struct agent *a, const struct gctx_model *m, bool final)
{
	__u64 now = gctx_now_mono();

	for (__u32 i = 0; i < a->npend;) {
		struct pending *p = &a->pend[i];
		bool alive;

		if (p->written && !p->due_ns && p->alive_at_write &&
		    !tree_alive(m, p->root_idx)) /* the end of a tree dumped while it ran */
			p->due_ns = now + (__u64)(a->o.grace_s * 1e9);
		if (p->due_ns && (final || now >= p->due_ns)) {
			alive = tree_alive(m, p->root_idx);
			if (!final && alive && now < p->first_ns + TREE_WAIT_NS) {
				p->due_ns = now + 1000000000ull; /* look again in a second */
			} else if (!final && stacks_pending(a, p) &&
				   now < p->due_ns + STACKS_WAIT_NS) {
				/* its lines of code are still being resolved: wait for them */
			} else {
				a->stacks_waits += stacks_pending(a, p);
				write_dump(a, m, p);
				p->due_ns = 0;
				p->stacks_mark = 0;
			}
		}
		if (p->written && !p->due_ns && !p->alive_at_write) {
			a->pend[i] = a->pend[--a->npend]; /* done with this tree */
			continue;
		}
		i++;
	}
}

/* NAME_seconds_total and NAME_max_seconds: a stall of the event loop, during which nothing
 * drains the ring buffer (what a --ring-size must absorb) */
static void metric_seconds(FILE *f, const char *name, const char *doing, __u64 total_ns,
			   __u64 max_ns)
{
	fprintf(f,
		"# HELP gpuctx_%s_seconds_total Time spent %s (no event read meanwhile).\n"
		"# TYPE gpuctx_%s_seconds_total counter\ngpuctx_%s_seconds_total %.6f\n",
		name, doing, name, name, total_ns / 1e9);
	fprintf(f,
		"# HELP gpuctx_%s_max_seconds The longest %s.\n"
		"# TYPE gpuctx_%s_max_seconds gauge\ngpuctx_%s_max_seconds %.6f\n",
		name, name, name, name, max_ns / 1e9);
}

/* What the model left out of the live processes it keeps (model.h, GCTX_KEEP_*). */
static void write_left_out(FILE *f, const struct gctx_model_trim *t)
{
	const struct {
		const char *kind;
		__u64 n;
	} k[] = {{"exited_thread", t->threads},	   {"exec", t->execs},
		 {"destroyed_object", t->objs},	   {"freed_allocation", t->mems},
		 {"context_current", t->currents}, {"closed_file", t->files}};

	fprintf(f, "# HELP gpuctx_model_left_out_total What live processes accumulated that the "
		   "model left out (the oldest), by kind.\n"
		   "# TYPE gpuctx_model_left_out_total counter\n");
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		fprintf(f, "gpuctx_model_left_out_total{kind=\"%s\"} %llu\n", k[i].kind,
			(unsigned long long)k[i].n);
}

/* The agent's own cost, for an admin's alert on it: CPU (all its threads) and resident
 * memory. Named gpuctx_agent_* (node_exporter has process_* of its own). */
static void write_self(FILE *f)
{
	struct rusage ru;
	unsigned long long resident;
	FILE *sm;

	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(f,
			"# HELP gpuctx_agent_cpu_seconds_total CPU time of the agent (user and "
			"system, all its threads).\n# TYPE gpuctx_agent_cpu_seconds_total "
			"counter\ngpuctx_agent_cpu_seconds_total %.3f\n",
			ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	sm = fopen("/proc/self/statm", "re");
	if (sm && fscanf(sm, "%*s %llu", &resident) == 1)
		fprintf(f,
			"# HELP gpuctx_agent_resident_memory_bytes Resident memory of the "
			"agent.\n# TYPE gpuctx_agent_resident_memory_bytes gauge\n"
			"gpuctx_agent_resident_memory_bytes %llu\n",
			resident * (unsigned long long)sysconf(_SC_PAGESIZE));
	if (sm)
		fclose(sm);
}

static void write_metrics(struct agent *a, const struct gctx_model *m)
{
	struct spool_usage su = {};
	struct gctx_outfile *out;
	char err[512];
	FILE *f;
	__u64 lost = a->drops.missed_stash + a->drops.unfollowed, dumps, sync_errors;

	if (!a->o.metrics)
		return;
	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		lost += a->drops.drops[i];
	/* tried: a failure is said once per METRICS_EVERY_NS, not every turn of the loop */
	a->metrics_dirty = false;
	a->last_metrics = gctx_now_mono();
	a->synced_seen = spool_sync__finished(a->sync); /* before the counts below */
	spool_usage(a->spool_fd, &su);
	out = gctx_outfile__new(a->o.metrics, err, sizeof(err));
	if (!out) {
		agent_log(a, "cannot write metrics: %s", err);
		return;
	}
	fchmod(gctx_outfile__fd(out), 0644);
	gctx_outfile__no_fsync(out); /* rewritten in 5 s: not worth a stall of the loop */
	f = fdopen(dup(gctx_outfile__fd(out)), "w");
	if (!f) {
		gctx_outfile__free(out);
		return;
	}
	fprintf(f, "# HELP gpuctx_incidents_total Incidents in the dumps written, by kind and "
		   "severity.\n# TYPE gpuctx_incidents_total counter\n");
	for (int k = 0; k < GCTX_INC_MAX; k++)
		for (int s = GCTX_SEV_WARNING; s <= GCTX_SEV_ERROR; s++)
			fprintf(f, "gpuctx_incidents_total{kind=\"%s\",severity=\"%s\"} %llu\n",
				gctx_incident_kind_name(k), gctx_severity_name(s),
				(unsigned long long)a->incidents[k][s]);
	fprintf(f,
		"# HELP gpuctx_crashes_total Processes with GPU state killed by a signal.\n"
		"# TYPE gpuctx_crashes_total counter\ngpuctx_crashes_total %llu\n",
		(unsigned long long)a->crashes);
	fprintf(f,
		"# HELP gpuctx_events_total Events recorded.\n# TYPE gpuctx_events_total "
		"counter\ngpuctx_events_total %llu\n",
		(unsigned long long)a->records);
	fprintf(f,
		"# HELP gpuctx_events_lost_total Events the kernel could not deliver.\n"
		"# TYPE gpuctx_events_lost_total counter\ngpuctx_events_lost_total %llu\n",
		(unsigned long long)lost);
	fprintf(f,
		"# HELP gpuctx_window_evicted_total Events older than the window, "
		"forgotten.\n# TYPE gpuctx_window_evicted_total counter\n"
		"gpuctx_window_evicted_total %llu\n",
		(unsigned long long)gctx_window__evicted(a->win));
	fprintf(f,
		"# HELP gpuctx_window_bytes Memory the window's events take.\n"
		"# TYPE gpuctx_window_bytes gauge\ngpuctx_window_bytes %llu\n",
		(unsigned long long)gctx_window__bytes(a->win));
	spool_sync__counts(a->sync, &dumps, &sync_errors);
	fprintf(f,
		"# HELP gpuctx_dumps_total Dumps written.\n# TYPE gpuctx_dumps_total counter\n"
		"gpuctx_dumps_total %llu\n",
		(unsigned long long)dumps);
	fprintf(f,
		"# HELP gpuctx_dump_errors_total Dumps that could not be written, or "
		"incidents past the pending limit.\n# TYPE gpuctx_dump_errors_total counter\n"
		"gpuctx_dump_errors_total %llu\n",
		(unsigned long long)(a->dump_errors + sync_errors + a->pend_dropped));
	fprintf(f,
		"# HELP gpuctx_dump_stacks_late_total Dumps written with stacks still being "
		"resolved (after waiting 10 s): lines of code may be missing.\n"
		"# TYPE gpuctx_dump_stacks_late_total counter\n"
		"gpuctx_dump_stacks_late_total %llu\n",
		(unsigned long long)a->stacks_waits);
	fprintf(f,
		"# HELP gpuctx_spool_bytes Bytes of dumps in the spool.\n"
		"# TYPE gpuctx_spool_bytes gauge\ngpuctx_spool_bytes %llu\n",
		(unsigned long long)su.bytes);
	fprintf(f,
		"# HELP gpuctx_spool_files Dumps in the spool.\n"
		"# TYPE gpuctx_spool_files gauge\ngpuctx_spool_files %u\n",
		su.files);
	fprintf(f,
		"# HELP gpuctx_processes Processes the agent's model holds.\n"
		"# TYPE gpuctx_processes gauge\ngpuctx_processes %u\n",
		gctx_model__nlive_slots(m));
	fprintf(f,
		"# HELP gpuctx_processes_folded_total Exited processes that never touched a "
		"GPU, forgotten.\n# TYPE gpuctx_processes_folded_total counter\n"
		"gpuctx_processes_folded_total %llu\n",
		(unsigned long long)gctx_model__folded(m));
	fprintf(f,
		"# HELP gpuctx_compactions_total Compactions of the model (exited GPU jobs "
		"dropped).\n# TYPE gpuctx_compactions_total counter\n"
		"gpuctx_compactions_total %llu\n",
		(unsigned long long)a->compactions);
	metric_seconds(f, "compaction", "compacting the model", a->compact_ns, a->compact_max_ns);
	metric_seconds(f, "dump", "writing dumps", a->dump_ns, a->dump_max_ns);
	write_left_out(f, gctx_model__trimmed(m));
	write_self(f);
	if (fclose(f) || gctx_outfile__commit(out, err, sizeof(err)))
		agent_log(a, "cannot write metrics %s", a->o.metrics);
	gctx_outfile__free(out);
}

/* Exited GPU jobs (and what only they held) go once the window has lost them and no pending
 * dump needs them; the pending roots' indices follow the compaction. */
static void compact(struct agent *a, struct gctx_model *m, __u64 before)
{
	__u64 oldest = gctx_window__oldest_ns(a->win), t0;
	__u32 pins[MAX_PENDING];

	if (!gctx_model__compact_due(m))
		return;
	t0 = gctx_now_mono();
	if (oldest && oldest < before)
		before = oldest;
	for (__u32 i = 0; i < a->npend; i++)
		pins[i] = a->pend[i].root_idx;
	if (!gctx_model__compact(m, before, pins, a->npend)) { /* else out of memory: as it was */
		for (__u32 i = 0; i < a->npend; i++)
			a->pend[i].root_idx = pins[i];
		malloc_trim(0); /* what the model gave back goes back to the system (RSS falls) */
		a->compactions++;
	}
	stalled(t0, &a->compact_ns, &a->compact_max_ns);
}

static void tick(void *ctx, struct gctx_model *m)
{
	struct agent *a = ctx;
	__u64 now = gctx_now_mono();
	char err[512];

	if (got_hup) {
		int fd;

		got_hup = 0;
		fd = spool_open(a->o.spool, err, sizeof(err));
		if (fd >= 0) {
			close(a->spool_fd);
			a->spool_fd = fd;
		} else {
			agent_log(a, "SIGHUP: %s (dumps go to the spool opened before)", err);
		}
		if (a->o.syslog) {
			closelog();
			openlog("gpuctx", LOG_PID, LOG_DAEMON);
		}
		a->metrics_dirty = true;
		agent_log(a, "SIGHUP: spool %s reopened", a->o.spool);
	}
	gctx_window__expire(a->win, now);
	agent_subs__tick(a, m);
	/* pending trees are walked in the model: ten times a second is enough, not every turn */
	if (a->npend && now >= a->last_pending + PENDING_EVERY_NS) {
		a->last_pending = now;
		run_pending(a, m, false);
	}
	/* bounded for weeks: exited subtrees that never touched a GPU are forgotten a while
	 * after they end (their records stay in the window for dumps), the others once the
	 * window has lost them too */
	if (now >= a->last_fold + FOLD_EVERY_NS && now > FOLD_AFTER_NS) {
		a->last_fold = now;
		gctx_model__fold(m, now - FOLD_AFTER_NS);
		compact(a, m, now - FOLD_AFTER_NS);
	}
	if (!a->o.metrics)
		return;
	if (spool_sync__finished(a->sync) != a->synced_seen)
		a->metrics_dirty = true; /* a dump landed (or failed) */
	if (now >= a->last_metrics + (a->metrics_dirty ? METRICS_SOON_NS : METRICS_EVERY_NS))
		write_metrics(a, m);
}

static void finish(void *ctx, const struct gctx_model *m)
{
	struct agent *a = ctx;
	__u64 dumps, errors;

	agent_subs__close(a);
	run_pending(a, m, true); /* SIGTERM: what is pending is written now */
	spool_sync__drain(a->sync);
	write_metrics(a, m);
	spool_sync__counts(a->sync, &dumps, &errors);
	agent_log(a, "stopped: %llu dumps, %llu events", (unsigned long long)dumps,
		  (unsigned long long)a->records);
}

int cmd_agent(int argc, char **argv)
{
	struct agent a = {.spool_fd = -1};
	struct cli_record_hooks hooks = {
	    .ctx = &a,
	    .on_record = on_record,
	    .on_finding = on_finding,
	    .tick = tick,
	    .finish = finish,
	    .drops = &a.drops,
	    .stacks = &a.stacks,
	};
	char *rargv[AGENT_MAX_ARGS] = {"record", "-a", "--silent"}, err[512];
	int rn = 3, lock_fd, ret;
	struct timespec ts;

	if (parse_args(&a.o, argc, argv, rargv, &rn))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "gpuctx: the agent follows every process and needs root\n");
		return 1;
	}
	lock_fd = open(AGENT_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		fprintf(stderr, "gpuctx: %s: %s\n", AGENT_LOCK,
			errno == EWOULDBLOCK ? "an agent is already running on this node"
					     : strerror(errno));
		if (lock_fd >= 0)
			close(lock_fd);
		return 1;
	}
	a.spool_fd = spool_open(a.o.spool, err, sizeof(err));
	if (a.spool_fd < 0) {
		fprintf(stderr, "gpuctx: %s\n", err);
		close(lock_fd);
		return 1;
	}
	a.win = gctx_window__new(a.o.window_bytes, (__u64)(a.o.window_s * 1e9));
	if (!a.win) {
		fprintf(stderr, "gpuctx: out of memory for a %llu-byte window\n",
			(unsigned long long)a.o.window_bytes);
		close(a.spool_fd);
		close(lock_fd);
		return 1;
	}
	a.sync = spool_sync__new(a.o.spool_max_bytes, a.o.spool_max_files, sync_log, &a);
	if (!a.sync) {
		fprintf(stderr, "gpuctx: out of memory\n");
		gctx_window__free(a.win);
		close(a.spool_fd);
		close(lock_fd);
		return 1;
	}
	if (a.o.syslog)
		openlog("gpuctx", LOG_PID, LOG_DAEMON);
	if (agent_subs__open(&a, err, sizeof(err)))
		agent_log(&a, "warning: %s: record --from-agent will not work", err);
	clock_gettime(CLOCK_REALTIME, &ts);
	a.start_mono = gctx_now_mono();
	a.start_wall = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	agent_log(&a,
		  "following every process; dumps to %s (at %s and above, window %.0f s / "
		  "%llu MiB)",
		  a.o.spool, gctx_severity_name(a.o.fail_on), a.o.window_s,
		  (unsigned long long)(a.o.window_bytes >> 20));
	ret = cli_record_run(rn, rargv, &hooks);
	spool_sync__free(a.sync); /* after what it has queued */
	for (__u32 i = 0; i < a.nglobals; i++)
		free(a.globals[i].data);
	free(a.globals);
	free(a.pend);
	gctx_window__free(a.win);
	close(a.spool_fd);
	close(lock_fd);
	return ret == 128 + SIGTERM || ret == 128 + SIGINT ? 0 : ret;
}
