// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of what a live process may accumulate for weeks (model/trim.c, contexts.c): one
 * that churns threads, one that creates and destroys driver objects on a file it holds, one
 * that makes a context current on every request, one that execs in a loop. Compacted as the
 * agent does, the model stays bounded; live threads, live objects and what kept records name
 * stay, and so do findings and the verdict; what was left out is counted and reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis.h"
#include "model/model.h"
#include "output/report/report.h"

#include "builders.h"
#include "model_tests.h"

#define LAG    1000 /* compact what exited more than this before the latest event */
#define PCTX   0x7ffc0000a000ULL
#define SITE   0x555500000abcULL
#define CLIENT 0xc1d00001u
#define DEVICE 0xcaf00000u

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* As the agent's tick: fold, then compact when due. */
static void agent_tick(struct gctx_model *m, __u64 ts)
{
	gctx_model__fold(m, ts - LAG);
	if (gctx_model__compact_due(m))
		assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
}

static void api_call(struct gctx_model *m, __u32 pid, __u32 tid, __u64 ts, __u32 fn, __s64 ret,
		     __u64 out, __u64 a0, __u64 a1)
{
	struct gctx_ev_api ev = ev_api(pid, tid, ts, "srv", 100, fn, ret, out);

	ev.args[0] = a0;
	ev.args[1] = a1;
	ev.caller = SITE;
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
}

static const struct gctx_thread *thread_of(const struct gctx_proc *p, __u32 tid)
{
	for (__u32 i = p->nthreads; i-- > 0;)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/* The server 500 under init: three threads that live throughout (501-503). */
static __u64 server_up(struct gctx_model *m, __u64 ts)
{
	do_fork(m, 1, 2, ts++, "init");
	do_fork(m, 2, 500, ts++, "srv");
	for (__u32 t = 501; t <= 503; t++)
		do_thread(m, 500, t, ts++, "srv");
	return ts;
}

/*
 * 100,000 threads started and ended by one live process: its thread list stays a few thousand
 * (what comes before a compaction is due), the heap after them that after the first 20,000, and
 * it ends at its live threads, its first one and the newest GCTX_KEEP_EXITED_THREADS exited
 * ones; the others are counted. A live thread is still the same thread: a call of it adds none.
 */
static void test_thread_churn_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 100000;
	const struct gctx_proc *p;
	__u32 max_threads = 0, nth;
	__u64 ts = server_up(m, 1000);
	size_t heap_warm = 0;

	gctx_model__fold(m, 0); /* as the agent: exits are queued from the start */
	for (__u32 i = 0; i < n; i++) {
		do_thread(m, 500, 1000000 + i, ts++, "pool");
		do_exit(m, 500, 1000000 + i, ts++, 0, false);
		if (i % 1000 == 999) {
			agent_tick(m, ts);
			p = gctx_model__proc_by_pid(m, 500);
			if (p->nthreads > max_threads)
				max_threads = p->nthreads;
		}
		if (i == 20000)
			heap_warm = heap_used();
	}
	assert_true(heap_used() < heap_warm + 1024 * 1024); /* 0 under ASan: no mallinfo */
	assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
	p = gctx_model__proc_by_pid(m, 500);
	assert_true(max_threads < 8000);
	assert_true(gctx_model__nthreads(m) < 8000);
	assert_int_equal(p->nthreads, 1 + 3 + GCTX_KEEP_EXITED_THREADS);
	assert_int_equal(p->nthreads + p->nthreads_dropped, 1 + 3 + n);
	assert_int_equal(gctx_model__trimmed(m)->threads, p->nthreads_dropped);
	assert_int_equal(p->threads[0].tid, 500);
	for (__u32 t = 501; t <= 503; t++) {
		assert_non_null(thread_of(p, t));
		assert_false(thread_of(p, t)->exited);
	}
	assert_non_null(thread_of(p, 1000000 + n - 1));
	assert_true(thread_of(p, 1000000 + n - 1)->exited);
	assert_null(thread_of(p, 1000000 + n - 1 - GCTX_KEEP_EXITED_THREADS));
	/* a call of a live thread finds it; one of a dropped thread's tid is a new thread */
	nth = p->nthreads;
	api_call(m, 500, 502, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	assert_int_equal(p->nthreads, nth);
	do_exit(m, 500, 501, ts++, 0, false);
	assert_true(thread_of(p, 501)->exited);
	assert_int_equal(p->nthreads, nth);
}

/* The server opens nvidiactl, makes an RM client and a device under it. */
static __u64 rm_up(struct gctx_model *m, __u64 ts)
{
	do_open(m, 500, ts++, "srv", CTL_FILE, 5, GCTX_DEV_NVIDIACTL, O_RDWR);
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, 0, 0, CLIENT, CLS_CLIENT, 0);
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, CLIENT, DEVICE, CLS_DEVICE, 0);
	return ts;
}

static const struct gctx_gpu_obj *obj_by_handle(const struct gctx_model *m, __u64 handle)
{
	for (__u32 i = gctx_model__nobjs(m); i-- > 0;)
		if (gctx_model__obj(m, i)->handle == handle)
			return gctx_model__obj(m, i);
	return NULL;
}

/* The context made during a call that created the RM object 0xbeef, destroyed at once. */
static __u64 ctx_with_kobj(struct gctx_model *m, __u64 ts)
{
	api_call(m, 500, 500, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	do_rm_alloc(m, 500, 500, ts + 1, "srv", CTL_FILE, 5, CLIENT, DEVICE, 0xbeef, CLS_TSG, 0);
	api_call(m, 500, 500, ts, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, PCTX, 0, 0);
	ts += 2;
	do_rm_free(m, 500, ts++, CTL_FILE, 5, CLIENT, DEVICE, 0xbeef);
	return ts;
}

/*
 * 100,000 RM objects made and freed on a file the server holds: the model keeps its live
 * objects, the newest GCTX_KEEP_DESTROYED_OBJS destroyed ones and the one its context names,
 * counted on the file. The links still work: freeing the device frees its new child, freeing
 * the client frees the device, closing the file ends an object made after the compaction.
 */
static void test_object_churn_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 100000;
	const struct gctx_gpu_file *f;
	const struct gctx_gpu_obj *dev, *o;
	const struct gctx_api_ctx *c;
	__u32 max_objs = 0, ndestroyed = 0;
	__u64 ts = server_up(m, 1000);

	gctx_model__fold(m, 0);
	ts = rm_up(m, ts);
	ts = ctx_with_kobj(m, ts);
	/* a child 0x66 of a device that a new one of the same handle replaces: the old one is
	 * destroyed, and kept, as the live child names it */
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, DEVICE, 0x66, 0x90f1, 0);
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, CLIENT, DEVICE, CLS_DEVICE, 0);
	/* a child of the device older than the churn: the device's links to it cross drops */
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, DEVICE, 0x77, 0x90f1, 0);
	for (__u32 i = 0; i < n; i++) {
		__u32 h = 0x5c000000 + (i % 4096);

		do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, DEVICE, h, 0x90f1, 0);
		do_rm_free(m, 500, ts++, CTL_FILE, 5, CLIENT, DEVICE, h);
		if (i % 1000 == 999) {
			agent_tick(m, ts);
			if (gctx_model__nobjs(m) > max_objs)
				max_objs = gctx_model__nobjs(m);
		}
	}
	assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
	assert_true(max_objs < 8000);
	for (__u32 i = 0; i < gctx_model__nobjs(m); i++) {
		o = gctx_model__obj(m, i);
		assert_int_equal(o->id, i + 1);
		ndestroyed += o->destroyed;
	}
	assert_int_equal(ndestroyed, GCTX_KEEP_DESTROYED_OBJS + 2); /* + 0xbeef, the old device */
	assert_int_equal(gctx_model__nobjs(m), 4 + ndestroyed);
	o = obj_by_handle(m, 0x66);
	assert_false(o->destroyed);
	assert_true(o->parent_obj >= 0);
	assert_int_equal(gctx_model__obj(m, o->parent_obj)->handle, DEVICE);
	assert_true(gctx_model__obj(m, o->parent_obj)->destroyed);
	f = gctx_model__file_by_addr(m, CTL_FILE);
	assert_int_equal(f->nobjs_dropped, n - GCTX_KEEP_DESTROYED_OBJS);
	assert_int_equal(gctx_model__trimmed(m)->objs, f->nobjs_dropped);
	dev = obj_by_handle(m, DEVICE);
	assert_false(dev->destroyed);
	assert_int_equal(gctx_model__obj(m, dev->parent_obj)->handle, CLIENT);
	assert_false(gctx_model__obj(m, dev->parent_obj)->destroyed);
	c = gctx_model__ctx(m, 0);
	assert_int_equal(c->nkobjs, 1);
	assert_int_equal(gctx_model__obj(m, c->kobjs[0])->handle, 0xbeef);

	/* the links across what was dropped: the device's older child goes with it (its
	 * newer children all dropped), an object of a client whose allocation was not seen
	 * with that client (only the client's list has it), one made before the drops with its
	 * file */
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, 0xc1d00003, 0xc1d00003, 0x54, 0x90f1, 0);
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, 0, 0, 0xc1d00002, CLS_CLIENT, 0);
	for (__u32 i = 0; i < 500; i++) {
		__u32 cl = i < 300 ? 0xc1d00003 : CLIENT;

		if (i == 100)
			do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, cl, cl, 0x55, 0x90f1, 0);

		do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, cl, cl, 0x99, 0x90f1, 0);
		do_rm_free(m, 500, ts++, CTL_FILE, 5, cl, cl, 0x99);
	}
	assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
	assert_int_equal(gctx_model__obj(m, obj_by_handle(m, 0x77)->parent_obj)->handle, DEVICE);
	do_rm_free(m, 500, ts++, CTL_FILE, 5, CLIENT, CLIENT, DEVICE);
	assert_true(obj_by_handle(m, DEVICE)->destroyed);
	assert_true(obj_by_handle(m, 0x77)->destroyed);
	assert_int_equal(obj_by_handle(m, 0x55)->parent_obj, -1);
	do_rm_free(m, 500, ts++, CTL_FILE, 5, 0xc1d00003, 0, 0xc1d00003);
	assert_true(obj_by_handle(m, 0x55)->destroyed);
	assert_true(obj_by_handle(m, 0x54)->destroyed);
	assert_false(obj_by_handle(m, 0xc1d00002)->destroyed);
	do_fd(m, GCTX_EV_CLOSE, 500, ts++, CTL_FILE, 5, GCTX_DEV_NVIDIACTL);
	assert_true(obj_by_handle(m, 0xc1d00002)->destroyed);
	assert_true(obj_by_handle(m, CLIENT)->destroyed);
}

/*
 * 100,000 times a thread of 100 makes the context current: each of the first GCTX_CUR_TIDS
 * threads keeps its first time and its latest GCTX_CUR_LATEST, the rest is counted on the
 * context and in the model, and the report says so. No compaction needed: record has the cap.
 */
static void test_currents_capped(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 100000, nt = 100;
	const struct gctx_api_ctx *c;
	__u64 ts = server_up(m, 1000), first_ts = 0;
	char *text = NULL, note[128];
	size_t len = 0;
	FILE *out;

	api_call(m, 500, 500, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	api_call(m, 500, 500, ts++, GCTX_CU_CTX_CREATE, 0, PCTX, 0, 0);
	for (__u32 i = 0; i < n; i++) {
		if (i == nt)
			first_ts = ts; /* thread 600's second time */
		api_call(m, 500, 600 + i % nt, ts++, GCTX_CU_CTX_SET_CURRENT, 0, 0, PCTX, 0);
	}
	assert_int_equal(gctx_model__nctxs(m), 1);
	c = gctx_model__ctx(m, 0);
	assert_int_equal(c->ncurrent_tids, GCTX_CUR_TIDS);
	/* the creating thread's one time, and 63 of the 100 threads' first and latest 3 */
	assert_int_equal(c->ncurrents, 1 + (GCTX_CUR_TIDS - 1) * (1 + GCTX_CUR_LATEST));
	assert_int_equal(c->ncurrents + c->ncurrents_dropped, 1 + n);
	assert_int_equal(gctx_model__trimmed(m)->currents, c->ncurrents_dropped);
	for (__u32 k = 0; k < c->ncurrents; k++) {
		const struct gctx_ctx_current *cu = &c->currents[k];

		if (cu->tid == 500)
			continue;
		assert_true(cu->tid >= 600 && cu->tid < 600 + GCTX_CUR_TIDS - 1);
		assert_true(cu->ts_ns < first_ts || cu->ts_ns >= ts - GCTX_CUR_LATEST * nt);
	}
	snprintf(note, sizeof(note),
		 "NOTE: %llu times a thread made an API context current left out",
		 (unsigned long long)c->ncurrents_dropped);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(gctx_report__text(out, m, NULL), 0);
	fclose(out);
	assert_non_null(
	    strstr(text, "more times left out (kept: each thread's first and latest 3"));
	assert_non_null(strstr(text, note));
	free(text);
}

/*
 * A process that execs 20,000 times keeps its first exec and the latest GCTX_KEEP_EXECS - 1
 * (its image, its argv); the others are counted. Its calls from the same site after the
 * compaction count on the same call site: the image did not change.
 */
static void test_exec_loop_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 20000;
	const struct gctx_proc *p;
	const __u32 *sites;
	__u32 max_execs = 0, nsites;
	char file[64];
	__u64 ts = server_up(m, 1000);

	gctx_model__fold(m, 0);
	for (__u32 i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "/bin/step%u", i);
		do_exec(m, 500, 500, ts++, "step", file);
		if (i % 1000 == 500) { /* the last one 499 execs before the calls */
			agent_tick(m, ts);
			p = gctx_model__proc_by_pid(m, 500);
			if (p->nexecs > max_execs)
				max_execs = p->nexecs;
		}
	}
	do_caller(m, 500, SITE, "step", "main", 0);
	api_call(m, 500, 500, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
	api_call(m, 500, 500, ts++, GCTX_CU_INIT, 0, 0, 0, 0);
	p = gctx_model__proc_by_pid(m, 500);
	assert_true(max_execs < 8000);
	assert_true(gctx_model__nexecs(m) < 8000);
	assert_true(gctx_model__nstrings(m) < 100);
	assert_int_equal(p->nexecs, GCTX_KEEP_EXECS);
	assert_int_equal(p->nexecs_dropped, n - GCTX_KEEP_EXECS);
	assert_int_equal(gctx_model__trimmed(m)->execs, p->nexecs_dropped);
	assert_string_equal(p->execs[0].filename, "/bin/step0");
	assert_string_equal(p->execs[1].filename, "/bin/step19993");
	assert_string_equal(p->execs[p->nexecs - 1].filename, "/bin/step19999");
	assert_string_equal(p->exe, "/bin/step19999");
	sites = gctx_model__proc_callsites(m, p->idx, &nsites);
	assert_int_equal(nsites, 1);
	assert_int_equal(gctx_model__callsite(m, sites[0])->calls, 2);
	assert_non_null(gctx_model__callsite(m, sites[0])->caller);
}

/*
 * A process that opens the GPU, makes an RM client and closes it again, 100,000 times (NVML per
 * request), beside a file it holds throughout: the model keeps the files closed in the last LAG
 * ns and the held one, counts the others; the held file still works, and a child forked after
 * it inherits it and uses it: an inherited-use finding that names the server as the opener.
 */
static void test_open_close_bounded(void **state)
{
	struct gctx_model *m = *state;
	const __u32 n = 100000;
	__u32 max_files = 0;
	__u64 ts = server_up(m, 1000);
	const struct gctx_finding *f;

	gctx_model__fold(m, 0);
	ts = rm_up(m, ts);
	for (__u32 i = 0; i < n; i++) {
		do_open(m, 500, ts++, "srv", CTL_FILE2, 7, GCTX_DEV_NVIDIACTL, O_RDWR);
		do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE2, 7, 0, 0, 0xc1d00009, CLS_CLIENT,
			    0);
		do_fd(m, GCTX_EV_CLOSE, 500, ts++, CTL_FILE2, 7, GCTX_DEV_NVIDIACTL);
		if (i % 1000 == 999) {
			agent_tick(m, ts);
			if (gctx_model__nfiles(m) > max_files)
				max_files = gctx_model__nfiles(m);
		}
	}
	assert_int_equal(gctx_model__compact(m, ts - LAG, NULL, 0), 0);
	assert_true(max_files < 8000);
	/* the held file and those closed in the last LAG ns (3 ns a cycle) */
	assert_true(gctx_model__nfiles(m) <= 2 + LAG / 3);
	assert_int_equal(gctx_model__nfiles(m) + gctx_model__trimmed(m)->files, 1 + n);
	assert_false(gctx_model__file_by_addr(m, CTL_FILE)->closed);
	assert_true(gctx_model__nobjs(m) <= 2 + LAG / 3 + 1);
	do_rm_alloc(m, 500, 500, ts++, "srv", CTL_FILE, 5, CLIENT, DEVICE, 0x77, 0x90f1, 0);
	assert_int_equal(gctx_model__file_by_addr(m, CTL_FILE)->nholders, 1);
	do_fork(m, 500, 700, ts++, "srv");
	do_rm_alloc(m, 700, 700, ts++, "srv", CTL_FILE, 5, CLIENT, DEVICE, 0x78, 0x90f1, 0);
	f = nth_kind(m, GCTX_FIND_INHERITED_GPU_USE, 0);
	assert_non_null(f);
	assert_int_equal(f->pid, 700);
	assert_int_equal(f->opener_pid, 500);
	assert_int_equal(gctx_model__file(m, f->file_id - 1)->file, CTL_FILE);
}

/* A small job of everything above with a poison fork in the middle. */
static __u64 churn_job(struct gctx_model *m, bool compact)
{
	char file[64];
	__u64 ts = server_up(m, 1000);

	gctx_model__fold(m, 0);
	ts = rm_up(m, ts);
	ts = ctx_with_kobj(m, ts);
	api_call(m, 500, 500, ts++, GCTX_CU_MEM_ALLOC, 0, 0x7f0000000000ULL, PCTX, 4096);
	for (__u32 i = 0; i < 300; i++) {
		snprintf(file, sizeof(file), "/bin/step%u", i % 30);
		do_thread(m, 500, 10000 + i, ts++, "pool");
		do_rm_alloc(m, 500, 10000 + i, ts++, "pool", CTL_FILE, 5, CLIENT, DEVICE,
			    0x5c000000 + i, 0x90f1, 0);
		do_rm_free(m, 500, ts++, CTL_FILE, 5, CLIENT, DEVICE, 0x5c000000 + i);
		api_call(m, 500, 10000 + i, ts++, GCTX_CU_CTX_SET_CURRENT, 0, 0, PCTX, 0);
		do_exit(m, 500, 10000 + i, ts++, 0, false);
		if (i == 150) { /* the poison fork: a child uses the inherited file and crashes */
			do_fork(m, 500, 700, ts++, "srv");
			do_rm_alloc(m, 700, 700, ts++, "srv", CTL_FILE, 5, CLIENT, CLIENT,
				    0xcaf00001, CLS_DEVICE, 0);
			api_call(m, 700, 700, ts++, GCTX_CU_MEM_ALLOC, 3, 0, PCTX, 4096);
			do_exit(m, 700, 700, ts++, 11 | 0x80, true);
		}
		if (i % 50 == 49) {
			do_fork(m, 2, 800 + i, ts++, "sh");
			do_exec(m, 800 + i, 800 + i, ts++, "step", file);
			do_exit(m, 800 + i, 800 + i, ts++, 0, true);
		}
		if (compact && i % 20 == 19)
			assert_int_equal(gctx_model__compact(m, 0, NULL, 0), 0);
	}
	return ts;
}

/* The verdict's first line, from a fresh analysis of m. */
static void verdict_of(const struct gctx_model *m, char *buf, size_t len)
{
	struct gctx_analysis *an = gctx_analysis__new(m, 1000);

	assert_non_null(an);
	snprintf(buf, len, "%s", gctx_analysis__summary(an)->verdict);
	gctx_analysis__free(an);
}

/*
 * The same small job compacted all along (before 0: every process kept, only trimming acts) and
 * never: the same live threads, live objects, findings and verdict.
 */
static void test_trimmed_same_verdict(void **state)
{
	struct gctx_model *m = *state, *ref = gctx_model__new();
	const struct gctx_proc *p, *q;
	char va[1024], vb[1024];
	__u32 live_a = 0, live_b = 0;

	assert_non_null(ref);
	churn_job(m, true);
	churn_job(ref, false);
	assert_true(gctx_model__trimmed(m)->threads > 0);
	assert_true(gctx_model__trimmed(m)->objs > 0);
	assert_int_equal(gctx_model__trimmed(ref)->threads, 0);
	assert_int_equal(gctx_model__nfindings(m), gctx_model__nfindings(ref));
	assert_true(gctx_model__nfindings(ref) >= 2);
	for (__u32 i = 0; i < gctx_model__nfindings(m); i++) {
		const struct gctx_finding *fa = gctx_model__finding(m, i),
					  *fb = gctx_model__finding(ref, i);

		assert_int_equal(fa->kind, fb->kind);
		assert_int_equal(fa->pid, fb->pid);
		assert_int_equal(fa->uses, fb->uses);
		assert_int_equal(fa->nchain, fb->nchain);
		assert_string_equal(fa->detail, fb->detail);
	}
	p = gctx_model__proc_by_pid(m, 500);
	q = gctx_model__proc_by_pid(ref, 500);
	assert_true(p->nthreads < q->nthreads);
	for (__u32 i = 0; i < q->nthreads; i++)
		if (!q->threads[i].exited)
			assert_false(thread_of(p, q->threads[i].tid)->exited);
	for (__u32 i = 0; i < p->nthreads; i++)
		live_a += !p->threads[i].exited;
	for (__u32 i = 0; i < q->nthreads; i++)
		live_b += !q->threads[i].exited;
	assert_int_equal(live_a, live_b);
	live_a = live_b = 0;
	for (__u32 i = 0; i < gctx_model__nobjs(ref); i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(ref, i);

		if (o->destroyed)
			continue;
		live_b++;
		assert_false(obj_by_handle(m, o->handle)->destroyed);
	}
	for (__u32 i = 0; i < gctx_model__nobjs(m); i++)
		live_a += !gctx_model__obj(m, i)->destroyed;
	assert_int_equal(live_a, live_b);
	verdict_of(m, va, sizeof(va));
	verdict_of(ref, vb, sizeof(vb));
	assert_string_equal(va, vb);
	gctx_model__free(ref);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_thread_churn_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_object_churn_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_currents_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_loop_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_close_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trimmed_same_verdict, setup, teardown),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
