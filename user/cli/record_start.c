// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record, what tracing starts from: the trace's meta (clocks, host, what was asked),
 * the command forked and held until tracing is live, the API probes with the watch on the
 * libraries mapped before them, and in the attach modes the processes already there with
 * their threads, GPU files and libraries.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include "collect/collector.h"
#include "collect/discover.h"
#include "collect/libwatch.h"
#include "collect/uprobes.h"
#include "lib/esc.h"
#include "lib/grow.h"
#include "trace/tracefile.h"
#include "cli/record.h"

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

void record_fill_meta(struct gctx_trace_meta *meta, const struct record_env *env, __u64 start_mono)
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
pid_t record_spawn_stopped(char **cmd, int *go_fd)
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

/* API probes share the ring buffer and the followed map of the kernel-side programs. */
int record_start_uprobes(struct record_state *st, struct gctx_collector *c,
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
	    .cb = record_feed,
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
	    .cb = record_feed,
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
	record_feed(ctx, GCTX_REC_THREAD_PRESENT, &r, sizeof(r));
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
			record_feed(st, GCTX_REC_FILE_PRESENT, &ss.files[k], sizeof(ss.files[k]));
			held = true;
		}
		/* only a process holding GPU files can have initialised a library: the maps of
		 * the others are not read (-a: thousands of processes) */
		r.vendors = held ? gctx_proc_api_libs(procs[i].pid) : 0;
		if (held)
			gctx_collector__holds_gpu(c, procs[i].pid);
		if (r.vendors)
			record_feed(st, GCTX_REC_API_PRESENT, &r, sizeof(r));
	}
	free(ss.files);
	if (ss.nomem)
		return -ENOMEM;
	return ret < 0 && ret != -EOPNOTSUPP ? ret : 0;
}

/* Attach modes: mark what exists now as present, parents first, then its GPU state. */
int record_present(struct record_state *st, struct gctx_collector *c, const struct gctx_pidset *set,
		   __u32 *npresent)
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
		record_feed(st, GCTX_REC_PROC_PRESENT, &procs[i], sizeof(procs[i]));
		record_note_cgroup(st, procs[i].pid, 0);
		gctx_proc_threads(procs[i].pid, on_thread, st);
	}
	ret = record_gpu_state(st, c, procs, n);
	free(procs);
	return ret;
}
