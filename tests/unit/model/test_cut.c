// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the agent's cut (model/cut.c): which records of the flight recorder's window
 * a process tree's dump (or record --from-agent) holds. The records go to a model and to a
 * window, as in gpuctx agent; the cut's output goes to a second model, as report reads it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/analysis.h"
#include "model/cut.h"
#include "model/model.h"
#include "trace/window.h"

#include "builders.h"
#include "model_tests.h"

/* ---- a model and a window fed the same records, as the agent's ---- */

/* Every pid in these tests is past any real one (PID_MAX_LIMIT is 4,194,304): the cut never
 * takes the process that runs it (the agent), whatever pid this test has. */
#define PID(x) (5000000u + (x))

struct world {
	struct gctx_model *m;
	struct gctx_window *w;
};

static void both(struct world *w, __u32 type, const void *rec, __u32 len, __u64 ts)
{
	feed(w->m, type, rec, len);
	assert_int_equal(gctx_window__push(w->w, ts, type, rec, len), 0);
}

static void w_fork(struct world *w, __u32 parent, __u32 child, __u64 ts)
{
	struct gctx_ev_fork e = ev_fork(PID(parent), PID(child), ts, "p", false);

	both(w, GCTX_EV_FORK, &e, sizeof(e), ts);
}

static void w_exec(struct world *w, __u32 pid, __u64 ts, const char *file)
{
	struct gctx_ev_exec e = ev_exec(PID(pid), ts, "x", file, file, strlen(file) + 1);

	both(w, GCTX_EV_EXEC, &e, sizeof(e), ts);
}

static void w_exit(struct world *w, __u32 pid, __u64 ts)
{
	struct gctx_ev_exit e = ev_exit(PID(pid), PID(pid), ts, "x", 0, true);

	both(w, GCTX_EV_EXIT, &e, sizeof(e), ts);
}

/* pid opens /dev/nvidiactl as file (fd 5) and allocates an RM client on it: GPU state */
static void w_gpu(struct world *w, __u32 pid, __u64 ts, __u64 file)
{
	struct gctx_ev_open o =
	    ev_open_dev(PID(pid), ts, "gpu", file, 5, O_RDWR, GCTX_DEV_NVIDIACTL);
	struct gctx_ev_ioctl io;

	both(w, GCTX_EV_OPEN, &o, sizeof(o), ts);
	ioctl_ev(&io, PID(pid), PID(pid), ts + 1, "gpu", file, 5, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC,
		 48);
	rm_alloc_params(&io, 0, 0, 0xc1d00000 + pid, CLS_CLIENT, 0);
	both(w, GCTX_EV_IOCTL, &io, sizeof(io), ts + 1);
}

/* A resolved stack of pid taken at ts (no frames), as the collector writes it at arrived
 * (the window alone: the model is not the point here). */
static void stack(struct world *w, __u32 pid, __u64 ts, __u64 arrived)
{
	struct gctx_rec_stack s = {
	    .pid = PID(pid), .tid = PID(pid), .ts_ns = ts, .role = GCTX_STACK_USE};

	assert_int_equal(gctx_window__push(w->w, arrived, GCTX_REC_STACK, &s, sizeof(s)), 0);
}

static int world_setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	w->m = gctx_model__new();
	w->w = gctx_window__new(256 << 20, 0);
	*state = w;
	return w->m && w->w ? 0 : -1;
}

static int world_teardown(void **state)
{
	struct world *w = *state;

	gctx_model__free(w->m);
	gctx_window__free(w->w);
	free(w);
	return 0;
}

/* ---- what the cut emitted ---- */

#define GOT_TS 64

struct got {
	struct gctx_model *m; /* the cut as a trace's reader sees it, or NULL: count only */
	__u64 n;
	__u64 ts[GOT_TS]; /* the first kernel records' times */
	__u32 nts;
};

static int sink(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct got *g = ctx;
	struct gctx_ev_hdr h;
	struct gctx_rec_stack s;

	g->n++;
	if (type < GCTX_REC_PROC_PRESENT && len >= sizeof(h) && g->nts < GOT_TS) {
		memcpy(&h, data, sizeof(h));
		g->ts[g->nts++] = h.ts_ns;
	} else if (type == GCTX_REC_STACK && len >= sizeof(s) && g->nts < GOT_TS) {
		memcpy(&s, data, sizeof(s));
		g->ts[g->nts++] = s.ts_ns;
	}
	return g->m && gctx_model__feed(g->m, type, data, len) == -ENOMEM ? -ENOMEM : 0;
}

static bool got_ts(const struct got *g, __u64 ts)
{
	for (__u32 i = 0; i < g->nts; i++)
		if (g->ts[i] == ts)
			return true;
	return false;
}

/* Cut pid root's tree (the model's process) out of the window, reading it from from_ns. */
static void cut_from(struct world *w, __u32 root, __u32 max_minor, __u64 from_ns,
		     struct gctx_tree *t, struct gctx_cut *c, struct got *g)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(w->m, PID(root));

	assert_non_null(p);
	*c = (struct gctx_cut){
	    .t = t, .sink = sink, .sink_ctx = g, .max_minor = max_minor, .from_ns = from_ns};
	assert_int_equal(gctx_tree__add(t, w->m, p->idx), 0);
	assert_int_equal(gctx_cut__scan(c, w->m, w->w), 0);
	assert_int_equal(gctx_cut__emit(c, w->m, w->w), 0);
}

static void cut(struct world *w, __u32 root, __u32 max_minor, struct gctx_tree *t,
		struct gctx_cut *c, struct got *g)
{
	cut_from(w, root, max_minor, 0, t, c, g);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A driver forks 150,000 short-lived processes (pids wrap five times within its tree) that
 * the model folds: every one of their records is in the cut, and the cut takes a hash lookup
 * per record (a search through the members per record took minutes and lost the agent's
 * events meanwhile). */
static void test_big_tree_whole(void **state)
{
	struct world *w = *state;
	const __u32 n = 150000;
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {};
	struct gctx_model *cm = gctx_model__new();
	double t0;
	__u64 ts = 100;

	gctx_model__fold(w->m, 0);
	w_fork(w, 1, 1000, ts++);
	for (__u32 i = 0; i < n; i++) {
		w_fork(w, 1000, 2000 + i % 30000, ts++);
		w_exit(w, 2000 + i % 30000, ts++);
		if (i % 5000 == 4999)
			gctx_model__fold(w->m, ts - 100);
	}
	assert_true(gctx_model__folded(w->m) > n - 100);
	t0 = now_s();
	cut(w, 1000, 0, &t, &c, &g);
	assert_true(now_s() - t0 < 8);
	assert_int_equal(g.n, 2 * n + 1); /* the driver's fork, each child's fork and exit */
	assert_int_equal(c.omitted_procs, 0);
	/* read back, the driver has every child */
	g = (struct got){.m = cm};
	assert_int_equal(gctx_cut__emit(&c, w->m, w->w), 0);
	assert_int_equal(gctx_model__proc_by_pid(cm, PID(1000))->nchildren, n);
	gctx_tree__free(&t);
	gctx_model__free(cm);
}

/* A member exits; an unrelated process gets its pid and forks: neither that fork's child
 * nor any of their records is the tree's, whether the model still holds the member or
 * folded it (then the tree learns it from the window). */
static void test_fork_after_pid_reuse(void **state)
{
	struct world *w = *state;
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {};

	gctx_model__fold(w->m, 0);
	w_fork(w, 1, 50, 10);	/* the job's root, still running */
	w_fork(w, 50, 100, 20); /* a member */
	w_exit(w, 100, 25);
	gctx_model__fold(w->m, 26); /* forgotten: the window has it */
	assert_null(gctx_model__proc_by_pid(w->m, PID(100)));
	w_fork(w, 7, 100, 30); /* another job's process gets pid 100 */
	w_fork(w, 100, 101, 40);
	w_exec(w, 101, 41, "/bin/other");
	w_exit(w, 101, 42);
	cut(w, 50, 0, &t, &c, &g);
	assert_true(got_ts(&g, 10) && got_ts(&g, 20) && got_ts(&g, 25));
	assert_false(got_ts(&g, 30) || got_ts(&g, 40) || got_ts(&g, 41) || got_ts(&g, 42));
	assert_int_equal(g.n, 3);
	assert_false(gctx_tree__has(&t, PID(101)));
	gctx_tree__free(&t);
}

/* Any record of a process that had a member's pid before or after the member is not the
 * tree's: here GPU use, which would make the dump's verdict about another job. */
static void test_records_after_pid_reuse(void **state)
{
	struct world *w = *state;
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {.m = gctx_model__new()};

	w_fork(w, 7, 300, 1); /* another job's 300 uses a GPU, then exits */
	w_gpu(w, 300, 2, CTL_FILE2);
	w_exit(w, 300, 5);
	w_fork(w, 1, 50, 10);
	w_fork(w, 50, 100, 20);
	w_exit(w, 100, 25);
	w_fork(w, 7, 100, 30); /* another job's process gets pid 100 and uses a GPU */
	w_gpu(w, 100, 31, CTL_FILE);
	w_fork(w, 50, 300, 60); /* the member 300, after the other 300 */
	w_exec(w, 300, 61, "/bin/member");
	/* stacks resolved late: the other 100's (taken at 33) and the member 100's (at 22) */
	stack(w, 100, 33, 70);
	stack(w, 100, 22, 71);
	cut(w, 50, 0, &t, &c, &g);
	assert_true(got_ts(&g, 10) && got_ts(&g, 20) && got_ts(&g, 25) && got_ts(&g, 60) &&
		    got_ts(&g, 61));
	assert_false(got_ts(&g, 1) || got_ts(&g, 2) || got_ts(&g, 3) || got_ts(&g, 5));
	assert_false(got_ts(&g, 30) || got_ts(&g, 31) || got_ts(&g, 32) || got_ts(&g, 33));
	assert_true(got_ts(&g, 22));
	assert_int_equal(g.n, 6);
	assert_int_equal(gctx_model__nfiles(g.m), 0); /* no GPU use in the job */
	gctx_tree__free(&t);
	gctx_model__free(g.m);
}

/* record --from-agent follows the tree live: a member's fork adds its child, a member's exit
 * ends it, and the next process with its pid is not followed. */
static void test_live_follow(void **state)
{
	struct world *w = *state;
	struct gctx_tree t = {};
	struct gctx_ev_fork f1 = ev_fork(PID(50), PID(400), 40, "root", false);
	struct gctx_ev_fork f2 = ev_fork(PID(7), PID(100), 50, "o", false);
	struct gctx_ev_exit x = ev_exit(PID(100), PID(100), 30, "m", 0, true);
	struct gctx_ev_exec e1 = ev_exec(PID(400), 41, "w", "/bin/w", "w", 2);
	struct gctx_ev_exec e2 = ev_exec(PID(100), 51, "o", "/bin/o", "o", 2);

	w_fork(w, 1, 50, 10);
	w_fork(w, 50, 100, 20);
	assert_int_equal(gctx_tree__add(&t, w->m, gctx_model__proc_by_pid(w->m, PID(50))->idx), 0);
	assert_true(t.alive);
	/* live: as agent/sock.c feeds them */
	assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_EXIT, &x, sizeof(x)), 0);
	assert_true(gctx_tree__wants(&t, GCTX_EV_EXIT, &x, sizeof(x), ~0ull, NULL));
	assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_FORK, &f1, sizeof(f1)), 0);
	assert_true(gctx_tree__wants(&t, GCTX_EV_FORK, &f1, sizeof(f1), ~0ull, NULL));
	assert_true(gctx_tree__wants(&t, GCTX_EV_EXEC, &e1, sizeof(e1), ~0ull, NULL));
	assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_FORK, &f2, sizeof(f2)), 0);
	assert_false(gctx_tree__wants(&t, GCTX_EV_FORK, &f2, sizeof(f2), ~0ull, NULL));
	assert_false(gctx_tree__wants(&t, GCTX_EV_EXEC, &e2, sizeof(e2), ~0ull, NULL));
	gctx_tree__free(&t);
}

/* A job followed live for weeks (record --from-agent of a server that forks a worker per
 * request): pruning keeps its live members and its recent exits, so the tree stays the size
 * of ten seconds of forks, and what it follows is unchanged: the root's next child, the
 * recent workers' records, never a later process that took a forgotten worker's pid. */
static void test_live_prune(void **state)
{
	struct world *w = *state;
	struct gctx_tree t = {};
	const __u64 ms = 1000000, nforks = 100000;
	__u32 max_n = 0, sp, root, mid;
	__u64 ts = 0;

	w_fork(w, 1, 2, 1);
	assert_int_equal(gctx_tree__add(&t, w->m, gctx_model__proc_by_pid(w->m, PID(2))->idx), 0);
	for (__u64 i = 0; i < nforks; i++) {
		/* one worker a millisecond, 3,000 pids: each is reused every 3 s */
		__u32 pid = PID(1000 + i % 3000);
		struct gctx_ev_fork f;
		struct gctx_ev_exit x;

		ts = 1000 * ms + i * ms;
		f = ev_fork(PID(2), pid, ts, "srv", false);
		x = ev_exit(pid, pid, ts + ms / 2, "w", 0, true);
		assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_FORK, &f, sizeof(f)), 0);
		assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_EXIT, &x, sizeof(x)), 0);
		if (i % 100 == 0)
			assert_true(gctx_tree__prune(&t, ts - 10000 * ms) >= 0);
		if (t.n > max_n)
			max_n = t.n;
	}
	/* 10 s of workers (10,000), twice that before a prune is due, and the slack */
	assert_true(max_n < 2 * 10002 + 1024 + 200);
	assert_true(t.pruned > nforks - 25000);
	assert_int_equal(t.n + t.pruned, nforks + 1);

	/* the server is followed: its next worker joins */
	{
		struct gctx_ev_fork f = ev_fork(PID(2), PID(9999), ts + ms, "srv", false);
		struct gctx_ev_exec e = ev_exec(PID(9999), ts + 2 * ms, "w", "/bin/w", "w", 2);

		assert_int_equal(gctx_tree__on_record(&t, GCTX_EV_FORK, &f, sizeof(f)), 0);
		assert_true(gctx_tree__wants(&t, GCTX_EV_FORK, &f, sizeof(f), ~0ull, NULL));
		assert_true(gctx_tree__wants(&t, GCTX_EV_EXEC, &e, sizeof(e), ~0ull, NULL));
	}
	/* a worker of 5 s ago (kept, a pid with older kept spans before it): its records are the
	 * tree's, its span is its own and its parent the server's */
	mid = (__u32)(nforks - 5000);
	{
		__u32 pid = PID(1000 + mid % 3000);
		__u64 at = 1000 * ms + mid * ms + ms / 4;
		struct gctx_ev_exec e = ev_exec(pid, at, "w", "/bin/w", "w", 2);

		sp = gctx_tree__span_at(&t, pid, at, true);
		assert_int_not_equal(sp, GCTX_SPAN_NONE);
		assert_int_equal(t.s[sp].pid, pid);
		assert_true(t.s[sp].since <= at && at <= t.s[sp].until);
		assert_int_not_equal(t.s[sp].prev, GCTX_SPAN_NONE); /* its pid's earlier worker */
		assert_true(t.s[t.s[sp].prev].until < t.s[sp].since);
		root = t.s[sp].parent;
		assert_int_not_equal(root, GCTX_SPAN_NONE);
		assert_int_equal(t.s[root].pid, PID(2));
		assert_true(gctx_tree__wants(&t, GCTX_EV_EXEC, &e, sizeof(e), ~0ull, NULL));
	}
	/* a forgotten worker's pid, now another's (not forked by the server): not the tree's */
	{
		__u32 pid = PID(1000 + 7);
		struct gctx_ev_exec e = ev_exec(pid, ts + 3 * ms, "o", "/bin/o", "o", 2);

		assert_false(gctx_tree__wants(&t, GCTX_EV_EXEC, &e, sizeof(e), ~0ull, NULL));
	}
	gctx_tree__free(&t);
}

/* The incidents of a model: kind, severity, source pid and affected pids of each; the verdict
 * in verdict. */
static __u32 incidents(const struct gctx_model *m, __u32 out[][4], __u32 max, char *verdict,
		       size_t len)
{
	struct gctx_analysis *a = gctx_analysis__new(m, 0);
	__u32 n;

	assert_non_null(a);
	n = gctx_analysis__nincidents(a);
	for (__u32 i = 0; i < n && i < max; i++) {
		const struct gctx_incident *in = gctx_analysis__incident(a, i);

		out[i][0] = in->kind;
		out[i][1] = in->severity;
		out[i][2] = in->src_pid;
		out[i][3] = in->npids;
	}
	snprintf(verdict, len, "%s", gctx_analysis__summary(a)->verdict);
	gctx_analysis__free(a);
	return n;
}

/* A long-lived driver that never touched a GPU forks 5,000 short-lived processes (most
 * folded, the last ones not yet), then initialises the GPU and has a poison fork; one helper
 * still runs. Its dump, bounded to 100 such processes, keeps the newest 100, says how many
 * it left out (with their records), and gives the verdict of the whole. */
static void test_bounded_dump(void **state)
{
	struct world *w = *state;
	const __u32 n = 5000, cap = 100;
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {.m = gctx_model__new()};
	__u32 full[4][4], got[4][4], nfull, ngot;
	char vfull[1024], vgot[1024];
	__u64 ts = 100;

	gctx_model__fold(w->m, 0);
	w_fork(w, 1, 1000, ts++);
	w_exec(w, 1000, ts++, "/usr/bin/python3");
	w_fork(w, 1000, 1500, ts++); /* a helper that runs on */
	for (__u32 i = 0; i < n; i++) {
		w_fork(w, 1000, 2000 + i, ts++);
		w_exec(w, 2000 + i, ts++, "/bin/true");
		w_exit(w, 2000 + i, ts++);
		if (i == 4000)
			gctx_model__fold(w->m, ts);
	}
	w_gpu(w, 1000, ts, CTL_FILE);
	ts += 2;
	w_fork(w, 1000, 9000, ts++); /* the poison fork: the child exits on inherited state */
	w_exit(w, 9000, ts++);
	assert_true(gctx_model__folded(w->m) > 4000);
	cut(w, 1000, cap, &t, &c, &g);
	gctx_model__finish(g.m);

	assert_int_equal(c.omitted_procs, n - cap);
	assert_int_equal(c.omitted_records, 3 * (n - cap)); /* fork, exec, exit of each */
	/* the driver's fork and exec, the helper's fork, the driver's GPU open and ioctl, the
	 * poison fork and its child's exit, the newest 100 (3 records each) */
	assert_int_equal(g.n, 2 + 1 + 2 + 2 + 3 * cap);
	assert_non_null(gctx_model__proc_by_pid(g.m, PID(2000 + n - 1)));
	assert_non_null(gctx_model__proc_by_pid(g.m, PID(2000 + n - cap)));
	assert_null(gctx_model__proc_by_pid(g.m, PID(2000 + n - cap - 1)));
	assert_null(gctx_model__proc_by_pid(g.m, PID(2000)));
	assert_non_null(gctx_model__proc_by_pid(g.m, PID(1500)));
	assert_true(gctx_model__proc_by_pid(g.m, PID(9000))->exited);
	/* the verdict of the whole */
	gctx_model__finish(w->m);
	nfull = incidents(w->m, full, 4, vfull, sizeof(vfull));
	ngot = incidents(g.m, got, 4, vgot, sizeof(vgot));
	assert_true(nfull >= 1);
	assert_int_equal(ngot, nfull);
	assert_memory_equal(got, full, sizeof(got[0]) * (nfull < 4 ? nfull : 4));
	assert_int_equal(full[0][2], PID(1000));
	assert_string_equal(vgot, vfull);
	assert_int_equal(gctx_model__nfindings(g.m), gctx_model__nfindings(w->m));
	assert_int_equal(gctx_model__finding(g.m, 0)->kind, gctx_model__finding(w->m, 0)->kind);
	gctx_tree__free(&t);
	gctx_model__free(g.m);
}

/* A dump whose processes are older than the window says its history is cut; one that started
 * within the window does not, nor does any dump while the window forgot nothing. */
static void test_history_cut(void **state)
{
	struct world *w = *state;
	struct gctx_window *small = gctx_window__new(64 << 10, 0);
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {};
	struct gctx_ev_fork f;

	assert_non_null(small);
	gctx_window__free(w->w);
	w->w = small;
	w_fork(w, 1, 50, 10); /* an old job */
	cut(w, 50, 0, &t, &c, &g);
	assert_false(c.history_cut); /* nothing forgotten yet */
	gctx_tree__free(&t);
	for (__u32 i = 0; i < 5000; i++) { /* others' records push it out */
		f = ev_fork(PID(2), PID(3), 100 + i, "o", true);
		assert_int_equal(gctx_window__push(w->w, 100 + i, GCTX_EV_FORK, &f, sizeof(f)), 0);
	}
	assert_true(gctx_window__evicted(w->w) > 0);
	w_fork(w, 1, 60, 6000); /* a new job */
	g = (struct got){};
	cut(w, 50, 0, &t, &c, &g);
	assert_true(c.history_cut);
	/* its start is not in the window: it appears as at attach */
	assert_int_equal(g.n, 1);
	gctx_tree__free(&t);
	cut(w, 60, 0, &t, &c, &g);
	assert_false(c.history_cut);
	gctx_tree__free(&t);
}

/* When the window forgot a tree's start, its members appear as at attach: with the GPU files
 * they held when the cut's records start (closed since: the dump is written after the end),
 * so its poison fork is still found; a member that ended before then does not appear. */
static void test_history_cut_state(void **state)
{
	struct world *w = *state;
	struct gctx_window *small = gctx_window__new(64 << 10, 0);
	struct gctx_tree t = {};
	struct gctx_cut c;
	struct got g = {.m = gctx_model__new()};
	struct gctx_ev_fork f;

	assert_non_null(small);
	gctx_window__free(w->w);
	w->w = small;
	w_fork(w, 1, 50, 10);
	w_fork(w, 50, 51, 11); /* a helper, done long ago */
	w_exit(w, 51, 12);
	w_gpu(w, 50, 13, CTL_FILE);
	for (__u32 i = 0; i < 5000; i++) { /* others' records push it all out */
		f = ev_fork(PID(2), PID(3), 100 + i, "o", true);
		assert_int_equal(gctx_window__push(w->w, 100 + i, GCTX_EV_FORK, &f, sizeof(f)), 0);
	}
	w_fork(w, 50, 60, 6000); /* the poison fork */
	w_exit(w, 60, 6001);
	w_exit(w, 50, 6002);
	cut(w, 50, 0, &t, &c, &g);
	gctx_model__finish(g.m);
	gctx_model__finish(w->m);
	assert_true(c.history_cut);
	assert_int_equal(g.n, 2 + 3); /* 50 present with its file; the fork and the exits */
	assert_null(gctx_model__proc_by_pid(g.m, PID(51)));
	assert_int_equal(gctx_model__nfiles(g.m), 1);
	assert_true(gctx_model__proc_by_pid(g.m, PID(50))->present_at_attach);
	assert_int_equal(gctx_model__nfindings(g.m), 1);
	assert_int_equal(gctx_model__finding(g.m, 0)->kind, GCTX_FIND_FORK_WITH_GPU_STATE);
	assert_int_equal(gctx_model__finding(w->m, 0)->kind, GCTX_FIND_FORK_WITH_GPU_STATE);
	gctx_tree__free(&t);
	gctx_model__free(g.m);
}

/* The agent reads a dump's window from its root's fork on (a job's records are the newest of
 * the node's): the same records, findings and verdict as reading the whole window. */
static void test_from_root_start(void **state)
{
	struct world *w = *state;
	const __u64 S = 1000000000ull, t0 = 20 * S;
	struct gctx_tree t1 = {}, t2 = {};
	struct gctx_cut c1, c2;
	struct got g1 = {.m = gctx_model__new()}, g2 = {.m = gctx_model__new()};
	__u32 i1[4][4], i2[4][4], n1, n2;
	char v1[1024], v2[1024];
	struct gctx_ev_fork f;

	for (__u32 i = 0; i < 200000; i++) { /* the node's churn before the job */
		f = ev_fork(PID(2), PID(3), S + i * 1000ull, "o", false);
		assert_int_equal(
		    gctx_window__push(w->w, S + i * 1000ull, GCTX_EV_FORK, &f, sizeof(f)), 0);
	}
	w_fork(w, 1, 1000, t0);
	w_exec(w, 1000, t0 + 10, "/usr/bin/python3");
	w_gpu(w, 1000, t0 + 20, CTL_FILE);
	for (__u32 k = 0; k < 4; k++) { /* workers forked with the parent's GPU state */
		w_fork(w, 1000, 1100 + k, t0 + 100 + k * 10);
		w_exit(w, 1100 + k, t0 + 105 + k * 10);
	}
	w_exit(w, 1000, t0 + 200);
	gctx_model__finish(w->m);
	cut_from(w, 1000, 0, 0, &t1, &c1, &g1);
	cut_from(w, 1000, 0, gctx_model__proc_by_pid(w->m, PID(1000))->start_ns, &t2, &c2, &g2);
	gctx_model__finish(g1.m);
	gctx_model__finish(g2.m);
	assert_int_equal(g1.n, 1 + 1 + 2 + 4 * 2 + 1);
	assert_int_equal(g2.n, g1.n);
	assert_int_equal(c2.first_ns, c1.first_ns);
	n1 = incidents(g1.m, i1, 4, v1, sizeof(v1));
	n2 = incidents(g2.m, i2, 4, v2, sizeof(v2));
	assert_true(n1 >= 1);
	assert_int_equal(n2, n1);
	assert_memory_equal(i2, i1, sizeof(i1[0]) * (n1 < 4 ? n1 : 4));
	assert_string_equal(v2, v1);
	gctx_tree__free(&t1);
	gctx_tree__free(&t2);
	gctx_model__free(g1.m);
	gctx_model__free(g2.m);
}

/* record --from-agent -p of a process the model folded finds its start in the window, the
 * latest one with that pid; a pid the window never saw start is not found. */
static void test_find_folded(void **state)
{
	struct world *w = *state;
	__u64 since = 0;

	gctx_model__fold(w->m, 0);
	w_fork(w, 1, 70, 10);
	w_exit(w, 70, 11);
	w_fork(w, 1, 70, 20);
	w_exec(w, 70, 21, "/bin/true");
	w_exit(w, 70, 22);
	gctx_model__fold(w->m, 100);
	assert_null(gctx_model__proc_by_pid(w->m, PID(70)));
	assert_true(gctx_cut__find_pid(w->w, PID(70), &since));
	assert_int_equal(since, 20);
	assert_false(gctx_cut__find_pid(w->w, PID(71), &since));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_big_tree_whole, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_fork_after_pid_reuse, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_records_after_pid_reuse, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_live_follow, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_live_prune, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_bounded_dump, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_history_cut, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_history_cut_state, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_find_folded, world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_from_root_start, world_setup, world_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
