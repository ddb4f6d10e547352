// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Raw stacks to resolved stack records (interface in stacks.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "collect/pymem.h"
#include "collect/stacks.h"
#include "collect/unwind.h"
#include "decode/pystack.h"
#include "lib/grow.h"
#include "lib/hmap.h"

#define MAX_PROCS 4096 /* processes whose mappings are kept for late resolution */
#define MAX_HOPS  32   /* parent links followed for mappings */

struct sproc {
	__u32 pid, ppid;
	bool exec_since_fork;	 /* exec'd: its parent's mappings no longer apply */
	bool maps_stale;	 /* a library was mapped since the last read */
	struct gctx_maps maps;	 /* last mappings read, n == 0 if none */
	struct gctx_maps kmaps;	 /* last complete set the kernel sent (GCTX_EV_VMAS) */
	struct gctx_maps kbuild; /* the set being received */
	__u64 maps_ns, kmaps_ns; /* when each was taken (CLOCK_MONOTONIC) */
	__u32 kbuild_tid, kbuild_seq;
	bool kbuild_bad;
	bool kmaps_kept; /* their files were kept (once, when first used) */
	bool gone;	 /* its exit record came (the last thread) */
};

/* A process loading its libraries (torch: 300 of them) is read again at most this often. */
#define MAPS_REREAD_NS (100ULL * 1000 * 1000)

/* A raw stack whose fast part is done (Python frames and lines, the mappings, read while the
 * process still lives) and whose native unwinding waits its turn. */
struct stack_job {
	struct stack_job *next;
	void *raw;
	__u32 len;
	struct gctx_maps maps; /* a copy (n == 0: none): later loads do not change this stack's */
	__u32 pid;
	bool wait_maps; /* process gone, mappings none or older: wait for those of its exit */
	bool no_wait;	/* mappings or not, unwind it as it is (its process exec'd) */
	int np, nolines;
	__u64 prep_ns;
	struct gctx_rec_frame py[GCTX_STACK_MAX_PY];
	__u8 pyflags[GCTX_STACK_MAX_PY];
};

static void job_free(struct stack_job *j);
static void enqueue(struct gctx_stacks *st, struct stack_job *j);

#define MAX_JOBS 256 /* raw stacks waiting for their unwinding; past it, accept() waits */
#define MAX_WAIT 256 /* stacks held for their process's exit mappings; past it, let go */

/* A resolved stack waiting to be written by the main thread. */
struct stack_done {
	struct stack_done *next;
	struct gctx_rec_stack *r;
	__u32 len;
};

struct gctx_stacks {
	/* Jobs go from the main thread (accept) to the unwinding thread, records come back
	 * (next); lock guards both lists, njobs, stop and the worker's counters. */
	pthread_mutex_t lock;
	pthread_cond_t work, space;
	pthread_t worker;
	bool started, stop;
	struct stack_job *head, *tail;
	__u32 njobs;
	struct stack_done *done, *done_tail;
	/* Main thread only: stacks of a process that was gone before its mappings were read,
	 * held until its exit record (the kernel sends its mappings right before it), and those
	 * accepted after them (stacks come back in order). */
	struct stack_job *wait_head, *wait_tail;
	__u32 nwait;
	__u64 w_unresolved;
	/* at most MAX_PROCS, found by pid (by_pid: pid -> index): every fork, exec and exit of
	 * the node looks here (record -a, the agent); once full, a ring whose oldest goes
	 * first */
	struct sproc *procs;
	__u32 n, cap, oldest;
	struct gctx_hmap by_pid;
	__u64 unresolved, resolved, resolve_ns, resolve_max_ns;
	__u64 accepted, returned; /* main thread: accepted, and returned by next() */
	__u64 given_up;		  /* under lock: jobs the worker made no record of */
	struct gctx_maps tmp;	  /* scratch for a fresh read */
	bool any_stale;		  /* some process has maps_stale set (tick has work) */
	struct gctx_rec_frame native[GCTX_STACK_MAX_FRAMES];
	struct gctx_pymem *pymem; /* line tables longer than the kernel's prefix */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sproc_clear(struct sproc *p)
{
	gctx_maps__clear(&p->maps);
	gctx_maps__clear(&p->kmaps);
	gctx_maps__clear(&p->kbuild);
}

struct gctx_stacks *gctx_stacks__new(void)
{
	struct gctx_stacks *st;
	struct rlimit rl;

	/* the symbolisation sessions hold the mapped files of a few address spaces open */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->pymem = gctx_pymem__new(); /* NULL: lines past the prefix stay unknown */
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->work, NULL);
	pthread_cond_init(&st->space, NULL);
	return st;
}

void gctx_stacks__free(struct gctx_stacks *st)
{
	if (!st)
		return;
	gctx_stacks__flush(st);
	while (st->done) {
		struct stack_done *d = st->done;

		st->done = d->next;
		free(d->r);
		free(d);
	}
	for (__u32 i = 0; i < st->n; i++)
		sproc_clear(&st->procs[i]);
	free(st->procs);
	gctx_hmap__free(&st->by_pid);
	gctx_maps__clear(&st->tmp);
	gctx_pymem__free(st->pymem);
	gctx_unwind_cache_clear();
	free(st);
}

void gctx_stacks__stats(const struct gctx_stacks *st, struct gctx_rec_stack_drops *out)
{
	memset(out, 0, sizeof(*out));
	if (!st)
		return;
	out->unresolved = st->unresolved + st->w_unresolved;
	out->resolved = st->resolved;
	out->resolve_ns = st->resolve_ns;
	out->resolve_max_ns = st->resolve_max_ns;
}

static struct sproc *sproc_find(struct gctx_stacks *st, __u32 pid)
{
	__u32 i;

	return gctx_hmap__get(&st->by_pid, pid, 0, &i) ? &st->procs[i] : NULL;
}

static struct sproc *sproc_get(struct gctx_stacks *st, __u32 pid)
{
	struct sproc *p = sproc_find(st, pid);
	__u32 i, was;

	if (p)
		return p;
	if (st->n >= MAX_PROCS) {
		/* forget the oldest: its stacks were resolved long ago */
		i = st->oldest;
		st->oldest = (st->oldest + 1) % MAX_PROCS;
		if (gctx_hmap__get(&st->by_pid, st->procs[i].pid, 0, &was) && was == i)
			gctx_hmap__del(&st->by_pid, st->procs[i].pid, 0);
		sproc_clear(&st->procs[i]);
	} else {
		if (gctx_grow(&st->procs, &st->cap, st->n + 1, sizeof(*st->procs)))
			return NULL;
		i = st->n++;
	}
	p = &st->procs[i];
	memset(p, 0, sizeof(*p));
	if (gctx_hmap__put(&st->by_pid, pid, 0, i))
		return NULL; /* out of memory: the slot stays, found by no pid */
	p->pid = pid;
	return p;
}

/* One record of the mappings the kernel sent with a stack: a set is one or more records of
 * one thread (seq 0, 1, ...); complete, it replaces the process's last one. */
static void on_vmas(struct gctx_stacks *st, const struct gctx_ev_vmas *r, __u32 len)
{
	struct sproc *p = sproc_get(st, r->hdr.tgid);
	struct gctx_maps t;

	if (!p)
		return;
	if (r->seq == 0) {
		p->kbuild.n = 0;
		p->kbuild_tid = r->hdr.tid;
		p->kbuild_seq = 0;
		p->kbuild_bad = false;
	} else if (r->hdr.tid != p->kbuild_tid || r->seq != p->kbuild_seq + 1) {
		p->kbuild_bad = true; /* a record of the set was lost */
	}
	p->kbuild_seq = r->seq;
	if (p->kbuild_bad || gctx_maps__add_vmas(&p->kbuild, r->hdr.tgid, r, len)) {
		p->kbuild_bad = true;
		return;
	}
	if (!(r->flags & GCTX_VMAS_LAST) || !p->kbuild.n)
		return;
	t = p->kmaps;
	p->kmaps = p->kbuild;
	p->kbuild = t;
	p->kbuild.n = 0;
	p->kmaps_ns = r->hdr.ts_ns;
	p->kmaps_kept = false;
}

void gctx_stacks__on_record(struct gctx_stacks *st, __u32 type, const void *data, __u32 len)
{
	struct sproc *p;

	if (!st)
		return;
	if (type == GCTX_EV_FORK && len >= sizeof(struct gctx_ev_fork)) {
		const struct gctx_ev_fork *f = data;

		/* only the children of processes that matter here (they had a stack, or run
		 * Python): no bookkeeping per process for everything else that forks */
		if ((f->flags & GCTX_FORK_THREAD) || !sproc_find(st, f->hdr.tgid))
			return;
		p = sproc_get(st, f->child_tgid);
		if (p) {
			sproc_clear(p);
			p->ppid = f->hdr.tgid;
			p->exec_since_fork = false;
			p->gone = false;
		}
	} else if (type == GCTX_EV_EXEC && len >= GCTX_EV_EXEC_V3_LEN) {
		const struct gctx_ev_exec *e = data;

		p = sproc_find(st, e->hdr.tgid);
		if (p) {
			p->maps.n = 0;
			p->kmaps.n = 0;
			p->exec_since_fork = true;
		}
		/* a held stack of the old image must not get the new one's mappings */
		for (struct stack_job *j = st->wait_head; j; j = j->next)
			if (j->pid == e->hdr.tgid)
				j->no_wait = true;
	} else if (type == GCTX_EV_EXIT && len >= sizeof(struct gctx_ev_exit)) {
		const struct gctx_ev_exit *x = data;

		p = x->group_dead ? sproc_find(st, x->hdr.tgid) : NULL;
		if (p)
			p->gone = true;
	} else if (type == GCTX_EV_LIBMAP && len >= sizeof(struct gctx_ev_libmap)) {
		/* A library was mapped: keep the mappings while the process lives (read in
		 * gctx_stacks__tick, not once per library). */
		const struct gctx_ev_libmap *l = data;

		p = sproc_find(st, l->hdr.tgid);
		if (p)
			p->maps_stale = st->any_stale = true;
	} else if (type == GCTX_EV_VMAS && len >= GCTX_EV_VMAS_HDR_LEN) {
		on_vmas(st, data, len);
	}
}

/* Read p's mappings now; false (the last ones kept) when it has none left: a process in exit
 * still has a maps file, empty. */
static bool sproc_read_maps(struct gctx_stacks *st, struct sproc *p)
{
	struct gctx_maps t;

	p->maps_stale = false;
	if (gctx_maps__read(&st->tmp, p->pid) || !st->tmp.n)
		return false;
	t = p->maps;
	p->maps = st->tmp;
	st->tmp = t;
	p->maps_ns = mono_ns();
	return true;
}

static void release_waiting(struct gctx_stacks *st, bool all);

void gctx_stacks__tick(struct gctx_stacks *st)
{
	__u64 now;

	if (!st)
		return;
	release_waiting(st, false);
	if (!st->any_stale)
		return;
	now = mono_ns();
	st->any_stale = false;
	for (__u32 i = 0; i < st->n; i++) {
		struct sproc *p = &st->procs[i];

		if (p->maps_stale && now - p->maps_ns >= MAPS_REREAD_NS)
			sproc_read_maps(st, p);
		st->any_stale |= p->maps_stale;
	}
}

void gctx_stacks__watch(struct gctx_stacks *st, __u32 pid)
{
	if (st)
		sproc_get(st, pid);
}

/* The mappings the kernel sent, their files kept when first used: after the Python lines
 * were read from the process's memory (the first keeping of a large address space takes a
 * while, and the process may exit meanwhile). */
static const struct gctx_maps *kernel_maps(struct sproc *p)
{
	if (!p->kmaps_kept) {
		gctx_maps__keep(&p->kmaps);
		p->kmaps_kept = true;
	}
	return &p->kmaps;
}

/* The newer of the mappings read from /proc and those the kernel sent, NULL if none. */
static const struct gctx_maps *newest(struct sproc *p)
{
	if (p->kmaps.n && (!p->maps.n || p->kmaps_ns >= p->maps_ns))
		return kernel_maps(p);
	return p->maps.n ? &p->maps : NULL;
}

/* Mappings for pid: the ones the kernel sent with this stack (kernel), else read now, else the
 * last ones known for it or its pre-exec ancestors. *fresh (when not NULL): one of the first
 * two, true to the process as it is or was at the event. */
static const struct gctx_maps *maps_for(struct gctx_stacks *st, __u32 pid, bool kernel, bool *fresh)
{
	struct sproc *p = sproc_get(st, pid);
	const struct gctx_maps *m;

	if (fresh)
		*fresh = true;
	if (!p)
		return NULL;
	if (kernel && p->kmaps.n)
		return kernel_maps(p);
	if (sproc_read_maps(st, p))
		return &p->maps;
	if (fresh)
		*fresh = false;
	for (int hop = 0; p && hop < MAX_HOPS; hop++) {
		m = newest(p);
		if (m)
			return m;
		if (p->exec_since_fork || !p->ppid)
			break;
		p = sproc_find(st, p->ppid);
	}
	return NULL;
}

const struct gctx_maps *gctx_stacks__maps(struct gctx_stacks *st, __u32 pid, bool *fresh)
{
	if (fresh)
		*fresh = false;
	return st ? maps_for(st, pid, false, fresh) : NULL;
}

bool gctx_stacks__gone(struct gctx_stacks *st, __u32 pid)
{
	struct sproc *p = st ? sproc_find(st, pid) : NULL;

	return !p || p->gone;
}

/* The Python frames' lines past their table's prefix, read from pid's memory or that of the
 * processes it was forked from (the same memory until exec). Returns the lines left unknown. */
static int py_lines(struct gctx_stacks *st, const struct gctx_ev_stack *s, int np,
		    struct gctx_rec_frame *py)
{
	__u32 pids[8];
	struct sproc *p = sproc_find(st, s->hdr.tgid);
	int n = 0;

	pids[n++] = s->hdr.tgid;
	while (p && n < (int)(sizeof(pids) / sizeof(pids[0])) && !p->exec_since_fork && p->ppid) {
		pids[n++] = p->ppid;
		p = sproc_find(st, p->ppid);
	}
	return gctx_pymem__fill_lines(st->pymem, s, np, pids, n, py);
}

static const char *py_status_note(__u32 status)
{
	switch (status) {
	case GCTX_PY_UNSUPPORTED:
		return "Python frames unavailable: unknown interpreter layout";
	case GCTX_PY_NO_THREAD:
		return "Python frames unavailable: no Python thread state for this thread";
	case GCTX_PY_FAULT:
		return "Python frames unavailable: interpreter memory could not be read";
	case GCTX_PY_TRUNCATED:
		return "outermost Python frames cut";
	default:
		return NULL;
	}
}

/* dst = src (dst left empty when out of memory: the stack then goes without native frames). */
static void maps_copy(struct gctx_maps *dst, const struct gctx_maps *src)
{
	dst->pid = src->pid;
	dst->n = 0;
	if (gctx_grow(&dst->v, &dst->cap, src->n, sizeof(*dst->v)))
		return;
	memcpy(dst->v, src->v, src->n * sizeof(*src->v));
	dst->n = src->n;
}

static void job_free(struct stack_job *j)
{
	gctx_maps__clear(&j->maps);
	free(j->raw);
	free(j);
}

/* The part that needs the process alive, done as the raw stack arrives: Python frames and
 * the lines past their table's prefix (from its memory), and its mappings. */
static struct stack_job *job_prepare(struct gctx_stacks *st, const struct gctx_ev_stack *s,
				     __u32 len)
{
	struct stack_job *j = calloc(1, sizeof(*j));
	const struct gctx_maps *maps;
	bool fresh;
	__u64 t0 = mono_ns();

	if (!j || !(j->raw = malloc(len))) {
		free(j);
		return NULL;
	}
	memcpy(j->raw, s, len);
	j->len = len;
	j->pid = s->hdr.tgid;
	if (s->py_status == GCTX_PY_OK || s->py_status == GCTX_PY_TRUNCATED) {
		j->np = s->npy < GCTX_STACK_MAX_PY ? s->npy : GCTX_STACK_MAX_PY;
		for (int i = 0; i < j->np; i++) {
			gctx_py_frame_resolve(&s->py[i], &j->py[i]);
			j->pyflags[i] = s->py[i].flags;
		}
		j->nolines = py_lines(st, s, j->np, j->py);
	}
	maps = maps_for(st, s->hdr.tgid, s->flags & GCTX_STK_VMAS, &fresh);
	if (maps)
		maps_copy(&j->maps, maps);
	j->wait_maps = !fresh;
	j->prep_ns = mono_ns() - t0;
	return j;
}

/* The slow part: native unwinding and symbols (the first stack of an address space takes
 * libdw a while), and the record. */
static struct gctx_rec_stack *job_finish(struct gctx_stacks *st, struct stack_job *j, __u32 *outlen)
{
	const struct gctx_ev_stack *s = j->raw;
	const struct gctx_maps *maps = j->maps.n ? &j->maps : NULL;
	struct gctx_rec_stack *r;
	const char *how = "no mappings", *pn;
	char note[256] = "", ver[16];
	int nn = 0, np = j->np, n, nolines = j->nolines;
	__u64 t0 = mono_ns(), dt;
	size_t o = 0;

	if (maps)
		nn = gctx_unwind(s, j->len, maps, st->native, GCTX_STACK_MAX_FRAMES, &how);
	r = calloc(1, sizeof(*r) + GCTX_STACK_MAX_FRAMES * sizeof(struct gctx_rec_frame));
	if (!r) {
		st->w_unresolved++;
		return NULL;
	}
	n = gctx_py_splice(st->native, nn, j->py, j->pyflags, np, r->frames, GCTX_STACK_MAX_FRAMES);
	r->pid = s->hdr.tgid;
	r->tid = s->hdr.tid;
	r->ts_ns = s->hdr.ts_ns;
	r->role = s->role;
	r->trigger = s->trigger;
	r->key = s->key;
	r->nframes = n;
	r->py_status = s->py_status;
	r->py_version = s->py_version;
	r->native_frames = nn;
	if (!maps)
		o += snprintf(note + o, sizeof(note) - o,
			      "native frames unavailable: process gone before its mappings were "
			      "read%s; ",
			      s->flags & GCTX_STK_NO_VMAS ? " (not sent: ring full or mm locked)"
							  : "");
	else if (strcmp(how, "dwarf"))
		o += snprintf(note + o, sizeof(note) - o, "native frames: %s; ", how);
	if (maps && gctx_unwind_note()[0] && o < sizeof(note))
		o += snprintf(note + o, sizeof(note) - o, "%s; ", gctx_unwind_note());
	if ((s->flags & GCTX_STK_COPY_CUT) && !s->stack_len && o < sizeof(note))
		o += snprintf(note + o, sizeof(note) - o,
			      "user stack unreadable at the event (paged out?); ");
	pn = py_status_note(s->py_status);
	if (pn && o < sizeof(note)) {
		gctx_py_version_str(s->py_version, ver, sizeof(ver));
		o += snprintf(note + o, sizeof(note) - o, "%s%s%s%s; ", pn,
			      s->py_version ? " (Python " : "", s->py_version ? ver : "",
			      s->py_version ? ")" : "");
	}
	if (nolines && o < sizeof(note))
		o += snprintf(note + o, sizeof(note) - o,
			      "%d Python line%s unknown: line table cut at %d bytes, "
			      "process gone or changed; ",
			      nolines, nolines > 1 ? "s" : "", GCTX_PY_LT_LEN);
	if (o >= sizeof(note))
		o = sizeof(note) - 1;
	if (o >= 2 && note[o - 2] == ';')
		note[o - 2] = 0;
	snprintf(r->note, sizeof(r->note), "%s", note);
	*outlen = sizeof(*r) + n * sizeof(struct gctx_rec_frame);
	dt = mono_ns() - t0 + j->prep_ns;
	st->resolved++;
	st->resolve_ns += dt;
	if (dt > st->resolve_max_ns)
		st->resolve_max_ns = dt;
	return r;
}

/* The unwinding thread: the oldest job, unwound with no lock held but the unwinder's. */
static void *worker_main(void *arg)
{
	struct gctx_stacks *st = arg;

	for (;;) {
		struct stack_done *d;
		struct stack_job *j;
		__u32 len = 0;

		pthread_mutex_lock(&st->lock);
		while (!st->head && !st->stop)
			pthread_cond_wait(&st->work, &st->lock);
		j = st->head;
		if (!j) {
			pthread_mutex_unlock(&st->lock);
			return NULL;
		}
		st->head = j->next;
		if (!st->head)
			st->tail = NULL;
		st->njobs--;
		pthread_cond_signal(&st->space);
		pthread_mutex_unlock(&st->lock);

		d = calloc(1, sizeof(*d));
		gctx_unwind_lock();
		if (d)
			d->r = job_finish(st, j, &len);
		gctx_unwind_unlock();
		job_free(j);
		if (!d || !d->r) {
			free(d);
			pthread_mutex_lock(&st->lock);
			st->given_up++;
			pthread_mutex_unlock(&st->lock);
			continue;
		}
		d->len = len;
		pthread_mutex_lock(&st->lock);
		if (st->done_tail)
			st->done_tail->next = d;
		else
			st->done = d;
		st->done_tail = d;
		pthread_mutex_unlock(&st->lock);
	}
}

static bool start_worker(struct gctx_stacks *st)
{
	sigset_t all, old;
	int err;

	if (st->started)
		return true;
	/* signals are the main thread's (stop, forward to the command) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&st->worker, NULL, worker_main, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	st->started = !err;
	return st->started;
}

int gctx_stacks__accept(struct gctx_stacks *st, const void *data, __u32 len)
{
	struct stack_job *j;

	if (!st)
		return -EINVAL;
	if (len < GCTX_EV_STACK_HDR_LEN) {
		st->unresolved++;
		return -EINVAL;
	}
	j = job_prepare(st, data, len);
	if (!j || !start_worker(st)) {
		if (j)
			job_free(j);
		st->unresolved++;
		return -ENOMEM;
	}
	if (j->wait_maps || st->wait_head) {
		if (st->nwait >= MAX_WAIT)
			release_waiting(st, true);
		if (st->wait_tail)
			st->wait_tail->next = j;
		else
			st->wait_head = j;
		st->wait_tail = j;
		st->nwait++;
	} else {
		enqueue(st, j);
	}
	st->accepted++;
	return 0;
}

void gctx_stacks__progress(struct gctx_stacks *st, struct gctx_stack_progress *out)
{
	out->accepted = out->done = 0;
	if (!st)
		return;
	out->accepted = st->accepted;
	pthread_mutex_lock(&st->lock);
	out->done = st->returned + st->given_up;
	pthread_mutex_unlock(&st->lock);
}

/* The held stacks, in order, up to the first whose process has not exited yet (all: every
 * one): each with the newest mappings known now, the kernel's at its exit if they came. */
static void release_waiting(struct gctx_stacks *st, bool all)
{
	struct stack_job *j;

	while ((j = st->wait_head)) {
		if (j->wait_maps && !j->no_wait) {
			struct sproc *p = sproc_find(st, j->pid);
			const struct gctx_maps *m;

			if (!all && p && !p->gone)
				break;
			m = p ? maps_for(st, j->pid, false, NULL) : NULL;
			if (m)
				maps_copy(&j->maps, m);
		}
		st->wait_head = j->next;
		if (!st->wait_head)
			st->wait_tail = NULL;
		st->nwait--;
		j->next = NULL;
		enqueue(st, j);
	}
}

static void enqueue(struct gctx_stacks *st, struct stack_job *j)
{
	pthread_mutex_lock(&st->lock);
	/* bounded: a burst of stacks waits for the unwinder rather than growing without end */
	while (st->njobs >= MAX_JOBS)
		pthread_cond_wait(&st->space, &st->lock);
	if (st->tail)
		st->tail->next = j;
	else
		st->head = j;
	st->tail = j;
	st->njobs++;
	pthread_cond_signal(&st->work);
	pthread_mutex_unlock(&st->lock);
}

struct gctx_rec_stack *gctx_stacks__next(struct gctx_stacks *st, __u32 *outlen)
{
	struct gctx_rec_stack *r = NULL;
	struct stack_done *d;

	if (!st)
		return NULL;
	pthread_mutex_lock(&st->lock);
	d = st->done;
	if (d) {
		st->done = d->next;
		if (!st->done)
			st->done_tail = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	if (d) {
		r = d->r;
		*outlen = d->len;
		free(d);
		st->returned++;
	}
	return r;
}

void gctx_stacks__flush(struct gctx_stacks *st)
{
	if (!st)
		return;
	release_waiting(st, true);
	if (!st->started)
		return;
	pthread_mutex_lock(&st->lock);
	st->stop = true;
	pthread_cond_signal(&st->work);
	pthread_mutex_unlock(&st->lock);
	pthread_join(st->worker, NULL);
	st->started = false;
}
