// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record: follow a command, PIDs, a cgroup or the whole system; write every record to
 * the trace file, feed the live model, print events and findings as they happen.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "collect/collector.h"
#include "collect/detach.h"
#include "collect/discover.h"
#include "output/timeline/export.h"
#include "model/model.h"
#include "output/report/print.h"
#include "cli/cli.h"
#include "trace/records.h"
#include "trace/tracefile.h"
#include "collect/uprobes.h"
#include "lib/grow.h"
#include "lib/esc.h"
#include "lib/outfile.h"
#include "collect/stacks.h"
#include "collect/callers.h"
#include "collect/pyprobe.h"
#include "collect/libwatch.h"
#include "collect/jobcg.h"
#include "model/jobattr.h"

#define POLL_MS		10
#define MAX_DURATION_S	(366.0 * 24 * 3600)  /* --duration: a year at most */
#define SIGNAL_GRACE_NS (10 * 1000000000ull) /* -- CMD: how long a forwarded signal may take */
#define DROPS_EVERY_NS	(1000000000ull)	     /* hooks->drops refreshed this often */

struct record_env {
	const char *output;
	struct gctx_pidset pids; /* -p */
	const char *cgroup;
	bool all;
	bool quiet;
	bool silent; /* --silent (gpuctx check): no live findings, no summary */
	bool verbose;
	double duration;
	struct gctx_rec_device devs[GCTX_MAX_REGDEVS];
	__u32 ndevs;
	const char *libs[16]; /* --libcuda / --libhip */
	__u32 nlibs;
	bool no_api;
	bool no_stacks;
	bool launches;
	bool no_hold;	       /* --no-hold */
	bool from_agent;       /* --from-agent: the running agent's history, no BPF */
	const char *run_dir;   /* --run-dir: that agent's (NULL: the node's) */
	__u32 hold_timeout_ms; /* --hold-timeout */
	__u32 ring_bytes;      /* --ring-size, 0 = the default */
	const char *perfetto;  /* --perfetto FILE */
	const char *chrome;    /* --chrome FILE */
	char **cmd;
	const struct cli_record_hooks *hooks; /* gpuctx agent: no trace file, records to hooks */
};

struct record_state {
	struct record_env *env;
	struct gctx_trace_writer *w;
	struct gctx_outfile *out; /* the trace, renamed into place at the end */
	struct gctx_model *model;
	struct gctx_uprobes *uprobes;
	struct gctx_stacks *stacks;   /* resolves kernel stacks (blame) */
	struct gctx_callers *callers; /* API call sites (GCTX_REC_CALLER) */
	struct gctx_pyprobe *pyprobe; /* tells the kernel where Python lives */
	struct gctx_libwatch *libwatch;
	__u64 start_mono;
	__u64 records;
	int write_err;
	bool started;			  /* tracing was live: the trace file is worth keeping */
	char cgroup_rel[GCTX_CGROUP_LEN]; /* --cgroup DIR in its hierarchy ("/a/b"), else "" */
	struct gctx_cgpaths *cgpaths;	  /* exec records' cgroup ids to paths */
};

static volatile sig_atomic_t stop_signal, nsignals, signal_from_tty;

static void on_stop(int sig, siginfo_t *si, void *uc)
{
	stop_signal = sig;
	nsignals++;
	/* Ctrl-C: the terminal sent it to the command's process group too */
	signal_from_tty = si && si->si_code == SI_KERNEL;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx record [-o FILE] [-p PID[,PID...]] [--cgroup DIR] [-a]\n"
	    "                     [--device PATH:KIND]... [--duration SECONDS] [-q] [-v]\n"
	    "                     [-- CMD [ARG...]]\n"
	    "\n"
	    "Trace process lineage and GPU device file use; write a trace file.\n"
	    "\n"
	    "  -o, --output FILE       trace file to write (default gpuctx.gctx)\n"
	    "  -p, --pid PID[,PID...]  attach to running processes and their descendants\n"
	    "      --cgroup DIR        follow every process in a cgroup v2 directory\n"
	    "  -a, --all               follow every process on the system\n"
	    "      --device PATH:KIND  treat PATH as a GPU device file; KIND is one of\n"
	    "                          nvidiactl, nvidia, nvidia-uvm, kfd, drm-render\n"
	    "      --duration SECONDS  stop after this long (at most a year)\n"
	    "      --libcuda PATH      probe this CUDA driver library (libcuda.so.1) too\n"
	    "      --libhip PATH       probe this HIP runtime library (libamdhip64.so) too\n"
	    "      --launches          also count kernel launches (a probe per launch)\n"
	    "      --no-api            do not probe the CUDA/HIP libraries\n"
	    "      --no-stacks         no call stacks at GPU init, fork, inherited use, crash\n"
	    "      --no-hold           never stop a process that maps a CUDA/HIP library not\n"
	    "                          probed yet (its first calls may then be missed: reported)\n"
	    "      --hold-timeout MS   resume such a process after MS at most (default 500)\n"
	    "      --ring-size SIZE    kernel-to-gpuctx buffer, a power of two from 256K to\n"
	    "                          1G (default 8M): larger if events are lost\n"
	    "      --from-agent        with -p or --cgroup: take the trace from the running\n"
	    "                          gpuctx agent (its history, then live), load nothing\n"
	    "      --run-dir DIR       with --from-agent: the agent started with this --run-dir\n"
	    "                          (default /run/gpuctx, the node's)\n"
	    "      --perfetto FILE     also export the timeline for ui.perfetto.dev at the end\n"
	    "      --chrome FILE       also export a Chrome JSON timeline at the end\n"
	    "  -q, --quiet             do not print events as they happen\n"
	    "  -v, --verbose           libbpf debug output\n"
	    "\n"
	    "With -- CMD, SIGINT and SIGTERM are passed on to the command and recording goes on\n"
	    "until it exits (at most 10 s; a second signal stops at once).\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx record -o job.gctx -- python train.py\n"
	    "  gpuctx record -p 1234 --duration 60\n");
}

static int parse_pids(struct record_env *env, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(tok, &end, 10);
		if (errno || *end || pid <= 0 || pid > 0x3fffffff) {
			fprintf(stderr, "gpuctx: bad pid '%s'\n", tok);
			ret = -1;
			break;
		}
		gctx_pidset__add(&env->pids, pid);
	}
	free(copy);
	return ret;
}

enum {
	OPT_CGROUP = 1000,
	OPT_DEVICE,
	OPT_DURATION,
	OPT_LIB,
	OPT_LAUNCHES,
	OPT_NO_API,
	OPT_NO_STACKS,
	OPT_PERFETTO,
	OPT_CHROME,
	OPT_SILENT,
	OPT_NO_HOLD,
	OPT_HOLD_TIMEOUT,
	OPT_RING_SIZE,
	OPT_FROM_AGENT,
	OPT_RUN_DIR,
};

static int parse_args(struct record_env *env, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"pid", required_argument, NULL, 'p'},
	    {"cgroup", required_argument, NULL, OPT_CGROUP},
	    {"all", no_argument, NULL, 'a'},
	    {"device", required_argument, NULL, OPT_DEVICE},
	    {"duration", required_argument, NULL, OPT_DURATION},
	    {"libcuda", required_argument, NULL, OPT_LIB},
	    {"libhip", required_argument, NULL, OPT_LIB},
	    {"launches", no_argument, NULL, OPT_LAUNCHES},
	    {"no-api", no_argument, NULL, OPT_NO_API},
	    {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
	    {"perfetto", required_argument, NULL, OPT_PERFETTO},
	    {"chrome", required_argument, NULL, OPT_CHROME},
	    {"no-hold", no_argument, NULL, OPT_NO_HOLD},
	    {"hold-timeout", required_argument, NULL, OPT_HOLD_TIMEOUT},
	    {"ring-size", required_argument, NULL, OPT_RING_SIZE},
	    {"from-agent", no_argument, NULL, OPT_FROM_AGENT},
	    {"run-dir", required_argument, NULL, OPT_RUN_DIR},
	    {"quiet", no_argument, NULL, 'q'},
	    {"silent", no_argument, NULL, OPT_SILENT},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	char err[256], *end;
	int c, modes;

	env->output = "gpuctx.gctx";
	env->hold_timeout_ms = 500;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:p:aqvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!strcmp(optarg, "-")) {
				fprintf(stderr,
					"gpuctx: record writes a trace file, not standard "
					"output: give -o FILE (export -o - writes to stdout)\n");
				return -1;
			}
			env->output = optarg;
			break;
		case 'p':
			if (parse_pids(env, optarg))
				return -1;
			break;
		case OPT_CGROUP:
			env->cgroup = optarg;
			break;
		case 'a':
			env->all = true;
			break;
		case OPT_DEVICE:
			if (env->ndevs == GCTX_MAX_REGDEVS) {
				fprintf(stderr, "gpuctx: too many --device (max %d)\n",
					GCTX_MAX_REGDEVS);
				return -1;
			}
			if (gctx_parse_device(optarg, &env->devs[env->ndevs], err, sizeof(err))) {
				fprintf(stderr, "gpuctx: %s\n", err);
				return -1;
			}
			env->ndevs++;
			break;
		case OPT_DURATION:
			errno = 0;
			env->duration = strtod(optarg, &end);
			/* inf, nan and huge values would overflow the deadline in ns */
			if (errno || end == optarg || *end || !isfinite(env->duration) ||
			    env->duration <= 0 || env->duration > MAX_DURATION_S) {
				fprintf(stderr,
					"gpuctx: bad --duration '%s': want seconds, more than 0 "
					"and at most %.0f (a year)\n",
					optarg, MAX_DURATION_S);
				return -1;
			}
			break;
		case OPT_LIB:
			if (env->nlibs == sizeof(env->libs) / sizeof(env->libs[0])) {
				fprintf(stderr, "gpuctx: too many --libcuda/--libhip\n");
				return -1;
			}
			if (access(optarg, R_OK)) {
				fprintf(stderr, "gpuctx: cannot read library %s: %s\n", optarg,
					strerror(errno));
				return -1;
			}
			env->libs[env->nlibs++] = optarg;
			break;
		case OPT_LAUNCHES:
			env->launches = true;
			break;
		case OPT_NO_API:
			env->no_api = true;
			break;
		case OPT_NO_STACKS:
			env->no_stacks = true;
			break;
		case OPT_PERFETTO:
			env->perfetto = optarg;
			break;
		case OPT_CHROME:
			env->chrome = optarg;
			break;
		case OPT_NO_HOLD:
			env->no_hold = true;
			break;
		case OPT_HOLD_TIMEOUT: {
			long ms;

			errno = 0;
			ms = strtol(optarg, &end, 10);
			if (errno || *end || ms < 1 || ms > 10000) {
				fprintf(stderr,
					"gpuctx: bad --hold-timeout '%s': want 1 to 10000 "
					"milliseconds\n",
					optarg);
				return -1;
			}
			env->hold_timeout_ms = ms;
			break;
		}
		case OPT_RING_SIZE:
			if (gctx_ring_size_parse(optarg, &env->ring_bytes)) {
				fprintf(stderr,
					"gpuctx: bad --ring-size '%s': want a power of two "
					"from 256K to 1G, such as 64M (default 8M)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_FROM_AGENT:
			env->from_agent = true;
			break;
		case OPT_RUN_DIR:
			env->run_dir = optarg;
			break;
		case 'q':
			env->quiet = true;
			break;
		case OPT_SILENT:
			env->quiet = env->silent = true;
			break;
		case 'v':
			env->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		env->cmd = &argv[optind];
	if (env->run_dir && !env->from_agent) {
		fprintf(stderr, "gpuctx: --run-dir names the agent --from-agent asks\n");
		return -1;
	}
	if (env->from_agent && (env->cmd || env->all)) {
		fprintf(stderr, "gpuctx: --from-agent takes -p or --cgroup: the agent already "
				"follows every process\n");
		return -1;
	}
	/* the agent may still hold the history of one that exited: it answers for it */
	for (__u32 i = 0; !env->from_agent && i < env->pids.n; i++) {
		if (kill(env->pids.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "gpuctx: no such process: %u\n", env->pids.pids[i]);
			return -1;
		}
	}
	modes = !!env->cmd + !!env->pids.n + !!env->cgroup + env->all;
	if (modes == 0) {
		fprintf(stderr, "gpuctx: nothing to trace: give a command, -p PID, --cgroup DIR "
				"or -a (see gpuctx record --help)\n");
		return -1;
	}
	if (modes > 1) {
		fprintf(stderr, "gpuctx: choose one of a command, -p, --cgroup or -a\n");
		return -1;
	}
	return 0;
}

static int on_record(void *ctx, __u32 type, const void *data, __u32 len);

/* Write the oldest resolved stack. false when none is ready. */
static bool record_next_stack(struct record_state *st)
{
	struct gctx_rec_stack *r;
	__u32 rlen = 0;

	r = gctx_stacks__next(st->stacks, &rlen);
	if (!r)
		return false;
	on_record(st, GCTX_REC_STACK, r, rlen);
	free(r);
	return true;
}

/* The stacks the unwinding thread has resolved so far (all of them after a flush). */
static void record_next_stacks(struct record_state *st)
{
	while (record_next_stack(st))
		;
}

/* Stacks: what needs the process alive is done as each raw kernel stack arrives; a thread
 * unwinds them, and the main loop writes their records (record_next_stacks). */
static void record_stack_hook(struct record_state *st, __u32 type, const void *data, __u32 len)
{
	gctx_stacks__on_record(st->stacks, type, data, len);
	gctx_pyprobe__on_record(st->pyprobe, type, data, len);
	if (type == GCTX_EV_STACK)
		gctx_stacks__accept(st->stacks, data, len);
}

static void watch_python(void *ctx, __u32 pid)
{
	gctx_stacks__watch(ctx, pid);
}

static int on_record(void *ctx, __u32 type, const void *data, __u32 len);

/* The cgroup of pid, recorded when it is not the one the model already gives the process
 * (its parent's): one record per job root, not one per exec. cgid: the cgroup v2 id the
 * kernel gave at exec (0 unknown). When its path names a job it is the answer, and right for a
 * process that exited before we got here; else /proc/PID/cgroup (v1 job hierarchies). */
static void note_cgroup(struct record_state *st, __u32 pid, __u64 cgid)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(st->model, pid);
	struct gctx_rec_cgroup r = {.pid = pid, .ts_ns = gctx_now_mono()};
	struct gctx_job_attr a;

	if (!p)
		return;
	if ((gctx_cgpaths__path(st->cgpaths, cgid, r.path, sizeof(r.path)) ||
	     gctx_job_attr_parse(r.path, &a) == GCTX_JOB_NONE) &&
	    gctx_proc_cgroup(pid, r.path, sizeof(r.path)) &&
	    /* gone before we read it: under --cgroup it was followed for exec'ing in there */
	    (!st->cgroup_rel[0] ||
	     snprintf(r.path, sizeof(r.path), "%s", st->cgroup_rel) >= (int)sizeof(r.path)))
		return;
	if (!strncmp(p->cgroup, r.path, sizeof(r.path)))
		return;
	on_record(st, GCTX_REC_CGROUP, &r, sizeof(r));
}

static int on_record(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct record_state *st = ctx;
	int ret;

	st->records++;
	/* a call site is written before the first API record that names it */
	gctx_callers__on_record(st->callers, type, data, len);
	/* the drop counts are a closing record: after a write error they still get a try; a raw
	 * stack (user registers, 8 KiB of the user's stack, interpreter strings: under -a other
	 * users' memory) stays in memory until resolved: only its GCTX_REC_STACK is written */
	if (type == GCTX_EV_STACK || !st->w)
		ret = 0;
	else if (type == GCTX_REC_DROPS)
		ret = gctx_trace_writer__append_final(st->w, type, data, len);
	else
		ret = gctx_trace_writer__append(st->w, type, data, len);
	if (ret && !st->write_err)
		st->write_err = ret;
	if (!st->env->quiet)
		gctx_print_event(stdout, type, data, len, st->start_mono);
	gctx_model__feed(st->model, type, data, len);
	if (st->env->hooks)
		st->env->hooks->on_record(st->env->hooks->ctx, st->model, type, data, len);
	record_stack_hook(st, type, data, len);
	if (st->uprobes)
		gctx_uprobes__on_record(st->uprobes, type, data, len);
	gctx_libwatch__on_record(st->libwatch, type, data, len);
	if (type == GCTX_EV_EXEC && len >= GCTX_EV_EXEC_V3_LEN) {
		const struct gctx_ev_exec *e = data;

		note_cgroup(st, e->hdr.tgid, len >= sizeof(*e) ? e->cgroup_id : 0);
	}
	return 0;
}

/* API probes share the ring buffer and the followed map of the kernel-side programs. */
static int start_uprobes(struct record_state *st, struct gctx_collector *c,
			 const struct gctx_pidset *seeds)
{
	struct record_env *env = st->env;
	struct gctx_uprobes_opts uo = {
	    .events_fd = gctx_collector__map_fd(c, "events"),
	    .followed_fd = gctx_collector__map_fd(c, "followed"),
	    .own_fd = gctx_collector__map_fd(c, "own_procs"),
	    /* shared even without stacks: it asks for mappings at exit (call sites) */
	    .stk_state_fd = gctx_collector__map_fd(c, "stk_state"),
	    .pyinfo_fd = env->no_stacks ? -1 : gctx_collector__map_fd(c, "pyinfo"),
	    .task_fsbase_off = gctx_collector__task_fsbase_off(c),
	    .follow_all = env->all,
	    .self_tgid = getpid(),
	    .launches = env->launches,
	    .verbose = env->verbose,
	    .cb = on_record,
	    .cb_ctx = st,
	    .on_lib = gctx_libwatch__on_lib,
	};
	struct gctx_libwatch_opts wo = {
	    .known_fd = gctx_collector__map_fd(c, "known_libs"),
	    .holds_fd = gctx_collector__map_fd(c, "holds"),
	    .ctl_fd = gctx_collector__map_fd(c, "hold_ctl"),
	    .hold = !env->no_hold,
	    .hold_timeout_ms = env->hold_timeout_ms,
	    .verbose = env->verbose,
	    .cb = on_record,
	    .cb_ctx = st,
	};
	char err[512];

	st->libwatch = gctx_libwatch__new(&wo, err, sizeof(err));
	if (!st->libwatch) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return -1;
	}
	uo.on_lib_ctx = st->libwatch;
	st->uprobes = gctx_uprobes__new(&uo, err, sizeof(err));
	if (!st->uprobes) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return -1;
	}
	for (__u32 i = 0; i < env->nlibs; i++) {
		if (gctx_uprobes__add_lib(st->uprobes, env->libs[i], err, sizeof(err))) {
			fprintf(stderr, "gpuctx: %s\n", err);
			return -1;
		}
	}
	gctx_uprobes__add_system_libs(st->uprobes);
	gctx_libwatch__attach(st->libwatch, st->uprobes);
	gctx_collector__set_early(c, gctx_libwatch__early_wants, gctx_libwatch__early,
				  st->libwatch);
	for (__u32 i = 0; i < seeds->n; i++)
		gctx_uprobes__scan_pid(st->uprobes, seeds->pids[i]);
	/* what the processes will load next, found the way their loader will find it */
	if (env->cmd || env->all)
		gctx_libwatch__predict_cmd(st->libwatch, env->cmd);
	else
		for (__u32 i = 0; i < seeds->n; i++)
			gctx_libwatch__predict_pid(st->libwatch, seeds->pids[i]);
	return 0;
}

static void on_finding(const struct gctx_finding *f, void *ctx)
{
	struct record_state *st = ctx;

	if (st->env->hooks)
		st->env->hooks->on_finding(st->env->hooks->ctx, st->model, f);
	if (st->env->silent)
		return;
	gctx_print_finding(st->env->quiet ? stderr : stdout, f, st->start_mono);
}

/* CLOCK_BOOTTIME at the CLOCK_MONOTONIC instant mono (they differ by the time suspended). */
static __u64 boot_at(__u64 mono)
{
	struct timespec m, b;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_BOOTTIME, &b);
	return (__u64)b.tv_sec * 1000000000ull + b.tv_nsec -
	       ((__u64)m.tv_sec * 1000000000ull + m.tv_nsec - mono);
}

/* How far the wall clock may be off (the kernel's NTP state): merged hosts are aligned by it. */
static void fill_clock(struct gctx_trace_meta *meta)
{
	struct timex tx = {0};
	int state = adjtimex(&tx); /* modes 0: read only */

	if (state < 0)
		return;
	meta->clock_state =
	    state == TIME_ERROR || (tx.status & STA_UNSYNC) ? GCTX_CLOCK_UNSYNC : GCTX_CLOCK_SYNCED;
	meta->clock_esterror_us = tx.esterror > 0 ? (__u64)tx.esterror : 0;
	meta->clock_maxerror_us = tx.maxerror > 0 ? (__u64)tx.maxerror : 0;
}

static void fill_meta(struct gctx_trace_meta *meta, const struct record_env *env, __u64 start_mono)
{
	struct timespec ts;
	struct utsname u;
	size_t off = 0;

	memset(meta, 0, sizeof(*meta));
	clock_gettime(CLOCK_REALTIME, &ts);
	meta->start_wall_ns = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	meta->start_mono_ns = start_mono;
	meta->start_boot_ns = boot_at(start_mono);
	gethostname(meta->hostname, sizeof(meta->hostname) - 1);
	fill_clock(meta);
	if (!uname(&u))
		snprintf(meta->kernel, sizeof(meta->kernel), "%.63s", u.release);
	snprintf(meta->version, sizeof(meta->version), "%s", GPUCTX_VERSION);
	if (env->cmd) {
		off += snprintf(meta->cmdline, sizeof(meta->cmdline), "--");
		for (char **a = env->cmd; *a && off < sizeof(meta->cmdline); a++)
			off +=
			    snprintf(meta->cmdline + off, sizeof(meta->cmdline) - off, " %s", *a);
	} else if (env->pids.n) {
		off += snprintf(meta->cmdline, sizeof(meta->cmdline), "-p ");
		for (__u32 i = 0; i < env->pids.n && off < sizeof(meta->cmdline); i++)
			off += snprintf(meta->cmdline + off, sizeof(meta->cmdline) - off, "%s%u",
					i ? "," : "", env->pids.pids[i]);
	} else if (env->cgroup) {
		snprintf(meta->cmdline, sizeof(meta->cmdline), "--cgroup %s", env->cgroup);
	} else {
		snprintf(meta->cmdline, sizeof(meta->cmdline), "-a");
	}
}

/* Fork the command stopped on a pipe: it execs only once tracing is live. */
static pid_t spawn_stopped(char **cmd, int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char go;

		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(cmd[0], cmd);
		{
			char shown[GCTX_ESC_SIZE(256)];
			int e = errno;

			/* the path is the user's: shown escaped, as every traced string is */
			gctx_format_str(shown, sizeof(shown), cmd[0], strlen(cmd[0]));
			fprintf(stderr, "gpuctx: cannot run %s: %s\n", shown, strerror(e));
		}
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

/* The GPU files found at attach, kept to be written parents first: the model takes a file a
 * process shares with its parent as inherited only when it has the parent's already. */
struct scan_state {
	struct gctx_rec_file *files;
	__u32 n, cap;
	bool nomem;
};

static void on_found_file(void *ctx, const struct gctx_found_file *f)
{
	struct scan_state *ss = ctx;
	struct gctx_rec_file *r;

	if (gctx_grow(&ss->files, &ss->cap, ss->n + 1, sizeof(*ss->files))) {
		ss->nomem = true;
		return;
	}
	r = &ss->files[ss->n++];
	*r = (struct gctx_rec_file){
	    .pid = f->tgid,
	    .fd = f->fd,
	    .file = f->file,
	    .kind = f->kind,
	    .flags = f->f_flags,
	};
	gctx_fd_info(f->tgid, f->fd, r->path, sizeof(r->path), &r->cloexec);
}

static void on_thread(void *ctx, __u32 pid, __u32 tid, const char *comm)
{
	struct gctx_rec_thread r = {.pid = pid, .tid = tid};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	on_record(ctx, GCTX_REC_THREAD_PRESENT, &r, sizeof(r));
}

/* Each present process's GPU state: its GPU files (parents first), then the CUDA/HIP
 * libraries it has mapped, which with those files say it initialised them before attach
 * (docs/attach.md). */
static int record_gpu_state(struct record_state *st, struct gctx_collector *c,
			    const struct gctx_rec_proc *procs, __u32 n)
{
	struct scan_state ss = {};
	int ret;

	ret = gctx_collector__scan_files(c, on_found_file, &ss);
	if (ret == -EOPNOTSUPP)
		fprintf(stderr, "gpuctx: warning: no BPF task/file iterator on this kernel: GPU "
				"files open before attach are not known (see docs/attach.md)\n");
	for (__u32 i = 0; i < n; i++) {
		struct gctx_rec_api_present r = {.pid = procs[i].pid};
		bool held = false;

		for (__u32 k = 0; k < ss.n; k++) {
			if (ss.files[k].pid != procs[i].pid)
				continue;
			on_record(st, GCTX_REC_FILE_PRESENT, &ss.files[k], sizeof(ss.files[k]));
			held = true;
		}
		/* only a process holding GPU files can have initialised a library: the maps of
		 * the others are not read (-a: thousands of processes) */
		r.vendors = held ? gctx_proc_api_libs(procs[i].pid) : 0;
		if (held)
			gctx_collector__holds_gpu(c, procs[i].pid);
		if (r.vendors)
			on_record(st, GCTX_REC_API_PRESENT, &r, sizeof(r));
	}
	free(ss.files);
	if (ss.nomem)
		return -ENOMEM;
	return ret < 0 && ret != -EOPNOTSUPP ? ret : 0;
}

/* Attach modes: mark what exists now as present, parents first, then its GPU state. */
static int record_present(struct record_state *st, struct gctx_collector *c,
			  const struct gctx_pidset *set, __u32 *npresent)
{
	struct gctx_rec_proc *procs = calloc(set->n ? set->n : 1, sizeof(*procs));
	__u32 n = 0;
	int ret;

	if (!procs)
		return -ENOMEM;
	for (__u32 i = 0; i < set->n; i++)
		if (gctx_proc_alive(set->pids[i]) && !gctx_proc_info(set->pids[i], &procs[n]))
			n++; /* a process that exited mid-attach is simply not present */
	*npresent = n;
	gctx_sort_parents_first(procs, n);
	for (__u32 i = 0; i < n; i++) {
		on_record(st, GCTX_REC_PROC_PRESENT, &procs[i], sizeof(procs[i]));
		note_cgroup(st, procs[i].pid, 0);
		gctx_proc_threads(procs[i].pid, on_thread, st);
	}
	ret = record_gpu_state(st, c, procs, n);
	free(procs);
	return ret;
}

static bool any_alive(const struct gctx_pidset *s)
{
	for (__u32 i = 0; i < s->n; i++)
		if (gctx_proc_alive(s->pids[i]))
			return true;
	return false;
}

static void print_summary(struct record_state *st, const struct gctx_rec_drops *d,
			  const char *output)
{
	__u32 nerr = 0, nwarn = 0;
	__u64 lost = d->missed_stash + d->unfollowed, ring_lost = 0;

	for (__u32 i = 0; i < gctx_model__nfindings(st->model); i++) {
		const struct gctx_finding *f = gctx_model__finding(st->model, i);

		if (f->severity == GCTX_SEV_ERROR)
			nerr++;
		else if (f->severity == GCTX_SEV_WARNING)
			nwarn++;
	}
	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		ring_lost += d->drops[i]; /* records the ring had no room for */
	lost += ring_lost + gctx_trace_writer__lost(st->w);
	fprintf(stderr,
		"gpuctx: %u processes, %u GPU files, %llu events, %llu lost, %u findings "
		"(%u errors, %u warnings); trace written to %s (%llu bytes)\n",
		gctx_model__nprocs(st->model), gctx_model__nfiles(st->model),
		(unsigned long long)st->records, (unsigned long long)lost,
		gctx_model__nfindings(st->model), nerr, nwarn, output,
		(unsigned long long)gctx_trace_writer__bytes(st->w));
	if (gctx_trace_writer__lost(st->w))
		fprintf(stderr,
			"gpuctx: WARNING: stopped writing %s at %.3f s: %s; %llu records could not "
			"be written (the trace ends there)\n",
			output, (double)(gctx_trace_writer__error_ns(st->w) - st->start_mono) / 1e9,
			strerror(-gctx_trace_writer__error(st->w)),
			(unsigned long long)gctx_trace_writer__lost(st->w));
	if (lost > gctx_trace_writer__lost(st->w)) {
		fprintf(stderr, "gpuctx: WARNING: events lost:");
		for (int i = 1; i < GCTX_EV_KERNEL_MAX; i++)
			if (d->drops[i])
				fprintf(stderr, " %s=%llu", gctx_ev_type_name(i),
					(unsigned long long)d->drops[i]);
		if (d->missed_stash)
			fprintf(stderr, " unpaired-syscalls=%llu",
				(unsigned long long)d->missed_stash);
		if (d->unfollowed)
			fprintf(stderr, " unfollowed-children=%llu",
				(unsigned long long)d->unfollowed);
		fprintf(stderr, "\n");
		if (ring_lost) {
			__u32 now = st->env->ring_bytes ? st->env->ring_bytes : GCTX_RING_DEFAULT;
			__u64 more = 4ull * now > GCTX_RING_MAX ? GCTX_RING_MAX : 4ull * now;
			char a[16], b[16];

			fprintf(stderr,
				"gpuctx: the %s ring buffer overflowed: rerun with a larger "
				"--ring-size (such as %s)\n",
				gctx_ring_size_str(now, a, sizeof(a)),
				gctx_ring_size_str(more, b, sizeof(b)));
		}
	}
}

/* --perfetto / --chrome: export the finished trace; a failure fails the run. */
static void export_at_end(const char *trace, const char *out, int format, int *ret)
{
	char err[512] = "";

	if (!out)
		return;
	if (gctx_export_file(trace, out, format, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		if (!*ret)
			*ret = 1;
	} else {
		if (err[0])
			fprintf(stderr, "gpuctx: %s\n", err);
		fprintf(stderr, "gpuctx: timeline written to %s\n", out);
	}
}

/* --from-agent: -p's processes, or --cgroup's: the agent follows the cgroup itself (the
 * processes in it now, those that exec in it later, their descendants), as record does */
static int record_from_agent(struct record_env *env, const struct gctx_trace_meta *meta)
{
	struct cli_from_agent fa = {.output = env->output,
				    .duration = env->duration,
				    .quiet = env->quiet,
				    .silent = env->silent,
				    .meta = meta,
				    .pids = env->pids.pids,
				    .npids = env->pids.n,
				    .run_dir = env->run_dir};
	char dir[PATH_MAX];
	int ret;

	if (env->cgroup) {
		if (!realpath(env->cgroup, dir)) {
			fprintf(stderr, "gpuctx: --cgroup %s: %s\n", env->cgroup, strerror(errno));
			return 1;
		}
		fa.cgroup = dir;
	}
	ret = cli_record_from_agent(&fa);
	gctx_pidset__clear(&env->pids);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	return cli_record_run(argc, argv, NULL);
}

/* What the kernel and the API probes could not deliver so far. */
static void record_drops(struct gctx_collector *c, struct record_state *st,
			 struct gctx_rec_drops *d)
{
	__u64 api_drops, api_missed;

	gctx_collector__drops(c, d);
	gctx_uprobes__drops(st->uprobes, &api_drops, &api_missed);
	d->drops[GCTX_EV_API] += api_drops;
	d->missed_stash += api_missed;
}

int cli_record_run(int argc, char **argv, const struct cli_record_hooks *hooks)
{
	struct record_env env = {};
	struct record_state st = {.env = &env};
	struct gctx_collector_opts o = {};
	struct gctx_collector *c = NULL;
	struct gctx_trace_meta meta;
	struct gctx_rec_drops drops;
	struct gctx_rec_end end = {.exit_status = -1};
	struct gctx_pidset seeds = {};
	__u32 cg_skipped = 0;
	int cg_err;
	struct sigaction sa = {.sa_sigaction = on_stop, .sa_flags = SA_SIGINFO};
	char err[512];
	int go_fd = -1, status = 0, ret = 1, werr;
	pid_t child = 0;
	__u64 deadline = 0, grace_end = 0, drops_next = 0;
	bool child_done = false;
	__u32 npresent = 0;

	if (parse_args(&env, argc, argv))
		return 2;
	env.hooks = hooks;

	st.start_mono = gctx_now_mono();
	if (env.cgroup)
		gctx_cgroup_rel(env.cgroup, st.cgroup_rel, sizeof(st.cgroup_rel));
	fill_meta(&meta, &env, st.start_mono);
	if (hooks)
		goto no_trace_file; /* the agent writes its own files */
	if (env.from_agent)
		return record_from_agent(&env, &meta);
	/* a private temporary file beside the output, renamed over it at the end: a failed
	 * start leaves whatever was at the path untouched */
	st.out = gctx_outfile__new(env.output, err, sizeof(err));
	if (!st.out) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	/* CLOEXEC: the traced command must not inherit the trace */
	st.w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(st.out), F_DUPFD_CLOEXEC, 0), &meta,
					 &werr);
	if (!st.w) {
		fprintf(stderr, "gpuctx: cannot write %s: %s\n", env.output, strerror(-werr));
		gctx_outfile__free(st.out);
		return 1;
	}
no_trace_file:
	st.model = gctx_model__new();
	if (!st.model) {
		fprintf(stderr, "gpuctx: out of memory\n");
		goto cleanup_writer;
	}
	gctx_model__set_finding_cb(st.model, on_finding, &st);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (env.cmd) {
		child = spawn_stopped(env.cmd, &go_fd);
		if (child < 0) {
			fprintf(stderr, "gpuctx: cannot fork: %s\n", strerror(errno));
			goto cleanup_model;
		}
		gctx_pidset__add(&seeds, child);
	}

	o.follow_all = env.all;
	o.cgroup = env.cgroup;
	o.devs = env.devs;
	o.ndevs = env.ndevs;
	o.self_tgid = getpid();
	o.verbose = env.verbose;
	o.track_libs = !env.no_api;
	o.no_stacks = env.no_stacks;
	o.hold = !env.no_hold;
	o.ring_bytes = env.ring_bytes;
	o.cb = on_record;
	o.cb_ctx = &st;
	gctx_read_majors(&o.uvm_major, &o.kfd_major);
	c = gctx_collector__new(&o, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto cleanup_child;
	}
	st.cgpaths = gctx_cgpaths__new(); /* NULL: /proc alone tells the jobs */
	if (env.verbose) {
		char nodes[2 * GCTX_PATH_LEN + 256];

		gctx_gpu_nodes_describe("/dev", nodes, sizeof(nodes));
		fprintf(stderr, "gpuctx: %s\ngpuctx: GPU device nodes: %s\n",
			gctx_collector__features(c), nodes);
	}

	for (__u32 i = 0; i < env.ndevs; i++)
		on_record(&st, GCTX_REC_DEVICE, &env.devs[i], sizeof(env.devs[i]));

	/* Who is followed from the start. Descendants are rescanned once to catch the
	 * children forked while the first scan ran. */
	for (__u32 i = 0; i < env.pids.n; i++)
		gctx_pidset__add(&seeds, env.pids.pids[i]);
	if (env.cgroup && (cg_err = gctx_add_cgroup_procs(&seeds, env.cgroup, &cg_skipped))) {
		fprintf(stderr, "gpuctx: cannot read %s/cgroup.procs: %s\n", env.cgroup,
			strerror(-cg_err));
		goto cleanup_collector;
	}
	if (cg_skipped)
		fprintf(stderr,
			"gpuctx: warning: %u cgroups under %s not read (over %u, or paths over "
			"PATH_MAX): processes already in them are not followed\n",
			cg_skipped, env.cgroup, GCTX_CGROUP_WALK_MAX);
	if (env.all)
		gctx_add_all_procs(&seeds);
	for (int pass = 0; pass < 2; pass++) {
		if (env.pids.n || env.cgroup)
			gctx_add_descendants(&seeds);
		for (__u32 i = 0; !env.all && i < seeds.n; i++)
			if (seeds.pids[i] != (__u32)getpid()) /* -p 1: never gpuctx itself */
				gctx_collector__follow(c, seeds.pids[i]);
	}
	st.stacks = env.no_stacks ? NULL : gctx_stacks__new();
	st.pyprobe = env.no_stacks
			 ? NULL
			 : gctx_pyprobe__new(gctx_collector__map_fd(c, "pyinfo"),
					     gctx_collector__map_fd(c, "pyexe"), env.verbose);
	gctx_pyprobe__set_found_cb(st.pyprobe, watch_python, st.stacks);
	st.callers = env.no_api ? NULL : gctx_callers__new(st.stacks, on_record, &st);
	if (!env.no_api && !st.callers)
		fprintf(stderr,
			"gpuctx: warning: out of memory: API call sites are not recorded\n");
	for (__u32 i = 0; i < seeds.n; i++)
		gctx_pyprobe__scan_pid(st.pyprobe, seeds.pids[i]);
	if (env.cmd)
		gctx_pyprobe__learn_cmd(st.pyprobe, env.cmd[0]);
	if (!env.no_api && start_uprobes(&st, c, &seeds))
		goto cleanup_collector;
	if (env.cmd) {
		/* The command's fork by gpuctx, as the kernel would have reported it. */
		struct gctx_ev_fork f = {
		    .hdr = {.type = GCTX_EV_FORK,
			    .tid = getpid(),
			    .tgid = getpid(),
			    .ts_ns = gctx_now_mono()},
		    .child_tid = child,
		    .child_tgid = child,
		};

		snprintf(f.hdr.comm, sizeof(f.hdr.comm), "gpuctx");
		on_record(&st, GCTX_EV_FORK, &f, sizeof(f));
		note_cgroup(&st, child, 0);
	} else {
		ret = record_present(&st, c, &seeds, &npresent);
		if (ret) {
			fprintf(stderr, "gpuctx: attach discovery failed: %s\n", strerror(-ret));
			ret = 1;
			goto cleanup_collector;
		}
		ret = 1;
		if (env.pids.n && !npresent) {
			fprintf(stderr,
				"gpuctx: process %u is gone (it exited during attach): "
				"nothing to trace\n",
				env.pids.pids[0]);
			goto cleanup_collector;
		}
		fprintf(stderr, "gpuctx: attached to %u process%s; Ctrl-C to stop\n", npresent,
			npresent == 1 ? "" : "es");
	}

	st.started = true;
	if (env.duration > 0)
		deadline = gctx_now_mono() + (__u64)(env.duration * 1e9);
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1)
			fprintf(stderr, "gpuctx: cannot start %s: %s\n", env.cmd[0],
				strerror(errno));
		close(go_fd);
		go_fd = -1;
	}

	for (;;) {
		int n;

		if (stop_signal && !grace_end) {
			if (!child || child_done)
				break;
			/* -- CMD: the command gets the signal (Ctrl-C already reached it) and the
			 * trace covers its end; a second signal or the grace period stops now */
			if (!signal_from_tty)
				kill(child, stop_signal);
			fprintf(stderr,
				"gpuctx: %s passed on to %s (pid %d): recording until it "
				"exits (10 s at most; a second signal stops now)\n",
				strsignal(stop_signal), env.cmd[0], child);
			grace_end = gctx_now_mono() + SIGNAL_GRACE_NS;
		}
		if (nsignals > 1 || (grace_end && gctx_now_mono() >= grace_end)) {
			fprintf(stderr, "gpuctx: stopped recording; %s (pid %d) goes on untraced\n",
				env.cmd[0], child);
			break;
		}
		n = gctx_collector__poll(c, POLL_MS);
		if (n < 0) {
			fprintf(stderr, "gpuctx: polling the ring buffer: %s\n", strerror(-n));
			break;
		}
		gctx_callers__tick(st.callers, false);
		record_next_stacks(&st);
		gctx_libwatch__tick(st.libwatch);
		if (st.w)
			gctx_trace_writer__flush(st.w);
		if (hooks && hooks->drops && gctx_now_mono() >= drops_next) {
			record_drops(c, &st,
				     hooks->drops); /* the agent's dumps say what was lost */
			drops_next = gctx_now_mono() + DROPS_EVERY_NS;
		}
		if (hooks && hooks->stacks)
			gctx_stacks__progress(st.stacks, hooks->stacks);
		if (hooks)
			hooks->tick(hooks->ctx, st.model);
		gctx_pyprobe__tick(st.pyprobe);
		gctx_stacks__tick(st.stacks);
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = true;
			break;
		}
		if (!env.cmd && env.pids.n && !any_alive(&seeds))
			break;
		if (deadline && gctx_now_mono() >= deadline) {
			end.reason = 2;
			break;
		}
	}
	if (stop_signal && !child_done)
		end.reason = 1;
	/* Everything the kernel produced up to now. */
	gctx_collector__poll(c, 0);
	gctx_callers__tick(st.callers, true);
	gctx_stacks__flush(st.stacks);
	record_next_stacks(&st);
	/* the live lines before the closing warnings and summary on stderr: with both streams
	 * sent to one file, a buffered line must not be cut by them */
	fflush(stdout);

	record_drops(c, &st, &drops);
	gctx_libwatch__finish(st.libwatch, gctx_collector__apimap_lost(c));
	gctx_uprobes__finish(st.uprobes);
	on_record(&st, GCTX_REC_DROPS, &drops, sizeof(drops));
	if (st.stacks) {
		struct gctx_rec_stack_drops sd;

		gctx_stacks__stats(st.stacks, &sd);
		sd.lost = gctx_collector__stack_lost(c);

		on_record(&st, GCTX_REC_STACK_DROPS, &sd, sizeof(sd));
		if (gctx_collector__vmas_lost(c))
			fprintf(
			    stderr,
			    "gpuctx: WARNING: %llu stacks came without their mappings (ring "
			    "buffer full or address space locked): /proc/PID/maps was used while "
			    "the process lived\n",
			    (unsigned long long)gctx_collector__vmas_lost(c));
	}
	if (st.callers) {
		struct gctx_rec_caller_drops cd;

		gctx_callers__stats(st.callers, &cd);
		on_record(&st, GCTX_REC_CALLER_DROPS, &cd, sizeof(cd));
	}
	if (child && !child_done && waitpid(child, &status, WNOHANG) == child)
		child_done = true;
	end.end_ns = gctx_now_mono();
	end.exit_status = child_done ? status : -1;
	end.events = st.records;
	/* after a write error (disk full), one last try to close the file with the final loss
	 * count and the end record */
	gctx_trace_writer__append_final(st.w, GCTX_REC_WRITE_LOSS, NULL, 0);
	st.records++;
	gctx_trace_writer__append_final(st.w, GCTX_REC_END, &end, sizeof(end));
	gctx_model__feed(st.model, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(st.model);
	if (hooks)
		hooks->finish(hooks->ctx, st.model);
	if (!env.silent) {
		print_summary(&st, &drops, env.output);
		cli_verdict(st.model, &meta, GCTX_FAIL_NEVER, NULL, stderr, "gpuctx: ");
	}

	if (child_done && stop_signal && WIFSIGNALED(status) && WTERMSIG(status) == stop_signal)
		ret = 128 + stop_signal;
	else if (child_done)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	else if (stop_signal)
		ret = child ? 128 + stop_signal : 0;
	else
		ret = 0;
	gctx_detach_after_exit(); /* the links are released after we return */

cleanup_collector:
	gctx_collector__stop_early(c); /* it uses the probes freed below */
	gctx_cgpaths__free(st.cgpaths);
	gctx_uprobes__free(st.uprobes);
	gctx_callers__free(st.callers);
	gctx_stacks__free(st.stacks);
	gctx_pyprobe__free(st.pyprobe);
	gctx_collector__free(c);
	gctx_libwatch__free(st.libwatch); /* after the programs are gone: no hold is left */
cleanup_child:
	if (go_fd >= 0)
		close(go_fd); /* the stopped child sees EOF and exits */
	if (child > 0 && !child_done && ret == 1)
		waitpid(child, NULL, 0);
cleanup_model:
	gctx_model__free(st.model);
cleanup_writer:
	werr = gctx_trace_writer__free(st.w);
	if (werr || st.write_err) {
		fprintf(stderr, "gpuctx: writing %s failed: %s\n", env.output,
			strerror(-(werr ? werr : st.write_err)));
		if (!ret)
			ret = 1;
	}
	/* what was recorded, even cut short by a full disk, replaces the output; nothing
	 * traced: the temporary file goes and the path is left as it was */
	if (st.started && st.out && gctx_outfile__commit(st.out, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		if (!ret)
			ret = 1;
	}
	gctx_outfile__free(st.out);
	if (st.started) {
		export_at_end(env.output, env.perfetto, GCTX_EXPORT_PERFETTO, &ret);
		export_at_end(env.output, env.chrome, GCTX_EXPORT_CHROME, &ret);
	}
	gctx_pidset__clear(&seeds);
	gctx_pidset__clear(&env.pids);
	return ret;
}
