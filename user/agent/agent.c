// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx agent: a node-wide flight recorder. Follows every process (as record -a) with no
 * trace file; keeps the latest records in a bounded window (trace/window.h) and writes a
 * trace of one process tree into a spool directory only when it matters: an incident at or
 * above --fail-on, or a fatal signal in a process holding or inheriting GPU state. Those
 * dumps are ordinary traces: report, check and export read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "agent/spool.h"
#include "collect/discover.h"
#include "collect/jobcg.h"
#include "lib/grow.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/records.h"
#include "trace/window.h"

#define MAX_GLOBALS	 4096 /* device registrations and probes kept for every dump */
#define TREE_WAIT_NS	 (30 * 1000000000ull) /* a tree still running is dumped after this */
#define STACKS_WAIT_NS	 (10 * 1000000000ull) /* a due dump waits this long for its stacks */
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

/* Whose tree it is (spool_owner): its job, else the user of a root still running. */
static void tree_owner(const struct gctx_model *m, __u32 root, char *owner, size_t len)
{
	const struct gctx_proc *p = gctx_model__proc(m, root);
	char job[SPOOL_JOB_LEN], path[32];
	struct stat st;

	spool_job_label(p->cgroup, job, sizeof(job));
	if (!job[0] && !p->exited)
		spool_job_of(p->pid, job, sizeof(job));
	snprintf(path, sizeof(path), "/proc/%u", p->pid);
	if (!job[0] && !p->exited && !stat(path, &st))
		snprintf(job, sizeof(job), "uid%u", (unsigned)st.st_uid);
	spool_owner(job, owner, len);
}

static void incident(struct agent *a, const struct gctx_model *m, __u32 idx, bool crash)
{
	__u32 root = tree_root(m, idx);
	__u64 now = gctx_now_mono(), due = now + (__u64)(a->o.grace_s * 1e9);
	struct pending *p = NULL;

	for (__u32 i = 0; i < a->pend.n; i++)
		if (a->pend.v[i].root_idx == root)
			p = &a->pend.v[i];
	if (!p) {
		char owner[AGENT_OWNER_LEN];
		__u64 dropped = a->pend.dropped;

		tree_owner(m, root, owner, sizeof(owner));
		p = pending_admit(&a->pend, owner, now);
		if (a->pend.dropped != dropped) {
			a->metrics_dirty = true;
			if (now >= a->last_drop_log + 60 * 1000000000ull) {
				a->last_drop_log = now;
				agent_log(
				    a,
				    "an incident in pid %u's tree (%s) not dumped: %s; %llu so "
				    "far",
				    gctx_model__proc(m, root)->pid, owner[0] ? owner : "no job",
				    p ? "another owner's newest pending tree given up for it"
				      : "its owner has the most trees pending",
				    (unsigned long long)a->pend.dropped);
			}
		}
		if (!p)
			return;
		p->root_idx = root;
	}
	p->crash |= crash;
	if (!p->due_ns || p->due_ns < due)
		p->due_ns = due;
}

void agent__on_record(void *ctx, const struct gctx_model *m, __u32 type, const void *data,
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
	/* A child forked with GPU state that raised about the GPU, its driver or fork (PyTorch
	 * refuses in Python, before any driver call): a poison fork with no finding of its own,
	 * as the model's incidents have it (only such children are probed for exceptions) */
	if (type == GCTX_EV_PYEXC && len >= sizeof(struct gctx_ev_pyexc) &&
	    gctx_model__npyexcs(m)) {
		const struct gctx_ev_pyexc *r = data;
		const struct gctx_pyexc *e = gctx_model__pyexc(m, gctx_model__npyexcs(m) - 1);
		const struct gctx_proc *p = e ? gctx_model__proc_by_pid(m, e->pid) : NULL;

		/* the model's newest is this record's unless it was only a count (or one past
		 * what the model keeps) */
		if (p && e->pid == r->hdr.tgid && e->seq == r->seq && !e->count_only &&
		    gctx_pyexc_about_gpu(e) && (int)GCTX_SEV_ERROR >= a->o.fail_on)
			incident(a, m, p->idx, false);
		return;
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

void agent__on_finding(void *ctx, const struct gctx_model *m, const struct gctx_finding *f)
{
	struct agent *a = ctx;

	if ((int)f->severity >= a->o.fail_on)
		incident(a, m, f->proc_idx, false);
}

/* ---- due dumps ---- */

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

	for (__u32 i = 0; i < a->pend.n;) {
		struct pending *p = &a->pend.v[i];
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
				agent_dump__write(a, m, p);
				p->due_ns = 0;
				p->stacks_mark = 0;
			}
		}
		if (p->written && !p->due_ns && !p->alive_at_write) {
			pending_remove(&a->pend, i); /* done with this tree */
			continue;
		}
		i++;
	}
}

/* Exited GPU jobs (and what only they held) go once the window has lost them and no pending
 * dump needs them; the pending roots' indices follow the compaction. */

static void compact(struct agent *a, struct gctx_model *m, __u64 before)
{
	__u64 oldest = gctx_window__oldest_ns(a->win), t0;
	__u32 *pins;

	if (!gctx_model__compact_due(m))
		return;
	pins = malloc((a->pend.n + 1) * sizeof(*pins));
	if (!pins)
		return; /* next time */
	t0 = gctx_now_mono();
	if (oldest && oldest < before)
		before = oldest;
	for (__u32 i = 0; i < a->pend.n; i++)
		pins[i] = a->pend.v[i].root_idx;
	if (!gctx_model__compact(m, before, pins, a->pend.n)) { /* else out of memory: as it was */
		for (__u32 i = 0; i < a->pend.n; i++)
			a->pend.v[i].root_idx = pins[i];
		malloc_trim(0); /* what the model gave back goes back to the system (RSS falls) */
		a->compactions++;
	}
	free(pins);
	agent_stalled(t0, &a->compact_ns, &a->compact_max_ns);
}

void agent__tick(void *ctx, struct gctx_model *m)
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
	if (a->pend.n && now >= a->last_pending + PENDING_EVERY_NS) {
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
		agent_metrics__write(a, m);
}

void agent__finish(void *ctx, const struct gctx_model *m)
{
	struct agent *a = ctx;
	__u64 dumps, errors;

	agent_subs__close(a);
	run_pending(a, m, true); /* SIGTERM: what is pending is written now */
	spool_sync__drain(a->sync);
	agent_metrics__write(a, m);
	spool_sync__counts(a->sync, &dumps, &errors);
	agent_log(a, "stopped: %llu dumps, %llu events", (unsigned long long)dumps,
		  (unsigned long long)a->records);
}

int agent__start(struct agent *a, char *err, size_t errlen)
{
	struct timespec ts;

	a->spool_fd = a->lock_fd = -1;
	a->run_fd = spool_root_dir(a->o.run_dir, "run directory", err, errlen);
	if (a->run_fd < 0)
		return -1;
	a->lock_fd =
	    openat(a->run_fd, AGENT_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (a->lock_fd < 0 || flock(a->lock_fd, LOCK_EX | LOCK_NB)) {
		snprintf(err, errlen, "%s/%s: %s", a->o.run_dir, AGENT_LOCK_NAME,
			 errno == EWOULDBLOCK
			     ? "an agent is already running with this run "
			       "directory (--run-dir: another one for a second agent)"
			     : strerror(errno));
		goto fail;
	}
	a->spool_fd = spool_open(a->o.spool, err, errlen);
	if (a->spool_fd < 0)
		goto fail;
	a->win = gctx_window__new(a->o.window_bytes, (__u64)(a->o.window_s * 1e9));
	if (!a->win) {
		snprintf(err, errlen, "out of memory for a %llu-byte window",
			 (unsigned long long)a->o.window_bytes);
		goto fail;
	}
	a->sync = spool_sync__new(a->o.spool_max_bytes, a->o.spool_max_files, agent_log_line, a);
	if (!a->sync) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (a->o.syslog)
		openlog("gpuctx", LOG_PID, LOG_DAEMON);
	if (agent_subs__open(a, err, errlen))
		agent_log(a, "warning: %s: record --from-agent will not work", err);
	clock_gettime(CLOCK_REALTIME, &ts);
	a->start_mono = gctx_now_mono();
	a->start_wall = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	agent_log(a,
		  "following every process; dumps to %s (at %s and above, window %.0f s / "
		  "%llu MiB); run directory %s",
		  a->o.spool, gctx_severity_name(a->o.fail_on), a->o.window_s,
		  (unsigned long long)(a->o.window_bytes >> 20), a->o.run_dir);
	return 0;
fail:
	gctx_window__free(a->win);
	a->win = NULL;
	if (a->spool_fd >= 0)
		close(a->spool_fd);
	if (a->lock_fd >= 0)
		close(a->lock_fd);
	close(a->run_fd);
	a->spool_fd = a->lock_fd = a->run_fd = -1;
	return -1;
}

void agent__stop(struct agent *a)
{
	spool_sync__free(a->sync); /* after what it has queued */
	for (__u32 i = 0; i < a->nglobals; i++)
		free(a->globals[i].data);
	free(a->globals);
	pending_free(&a->pend);
	gctx_window__free(a->win);
	close(a->spool_fd);
	close(a->lock_fd);
	close(a->run_fd);
}
