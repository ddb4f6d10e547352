// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the call site of each API call (model/callers.c, GCTX_REC_CALLER). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decode/api.h"
#include "model/model.h"
#include "trace/records.h"

#include "builders.h"

#define LIB_SITE  0x7f0000001234ULL /* in libwl_init.so */
#define MAIN_SITE 0x555500000abcULL /* in the executable */

static int setup(void **state)
{
	*state = gctx_model__new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	gctx_model__free(*state);
	return 0;
}

static void call(struct gctx_model *m, __u32 pid, __u64 ts, __u32 fn, __u64 caller, __u64 out)
{
	struct gctx_ev_api ev;

	ev_init(&ev, sizeof(ev), GCTX_EV_API, pid, pid, ts, "app");
	ev.fn = fn;
	ev.flags = GCTX_API_RETURNED | (out ? GCTX_API_OUT_OK : 0);
	ev.out = out;
	ev.caller = caller;
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
}

static const struct gctx_callsite *proc_site(struct gctx_model *m, __u32 pid, __u32 k)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(m, pid);
	const __u32 *ix;
	__u32 n;

	assert_non_null(p);
	ix = gctx_model__proc_callsites(m, p->idx, &n);
	return k < n ? gctx_model__callsite(m, ix[k]) : NULL;
}

/* cuInit from a library, a context made from the executable: each call names its caller,
 * and the context names the caller of the call that created it. */
static void test_sites_and_context(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_callsite *s;
	const struct gctx_api_ctx *x;
	__u32 n;

	do_caller(m, 100, LIB_SITE, "/opt/lib/libwl_init.so", "wl_gpu_init", 0x1a);
	call(m, 100, 1000, GCTX_CU_INIT, LIB_SITE, 0);
	call(m, 100, 1100, GCTX_CU_INIT, LIB_SITE, 0);
	do_caller(m, 100, MAIN_SITE, "/opt/bin/app", "main", 0x40);
	call(m, 100, 1200, GCTX_CU_CTX_CREATE_V4, MAIN_SITE, 0xc0);
	call(m, 100, 1300, GCTX_CU_INIT, MAIN_SITE, 0);

	gctx_model__proc_callsites(m, gctx_model__proc_by_pid(m, 100)->idx, &n);
	assert_int_equal(n, 3);
	s = proc_site(m, 100, 0);
	assert_int_equal(s->fn, GCTX_CU_INIT);
	assert_int_equal(s->calls, 2);
	assert_int_equal(s->first_ns, 1000);
	assert_non_null(s->caller);
	assert_string_equal(s->caller->frame.function, "wl_gpu_init");
	assert_string_equal(s->caller->frame.module, "/opt/lib/libwl_init.so");
	s = proc_site(m, 100, 1);
	assert_int_equal(s->fn, GCTX_CU_CTX_CREATE_V4);
	assert_string_equal(s->caller->frame.function, "main");
	s = proc_site(m, 100, 2);
	assert_int_equal(s->fn, GCTX_CU_INIT);
	assert_int_equal(s->calls, 1);
	assert_string_equal(s->caller->frame.function, "main");

	assert_int_equal(gctx_model__nctxs(m), 1);
	x = gctx_model__ctx(m, 0);
	assert_int_not_equal(x->create_site, 0);
	s = gctx_model__callsite(m, x->create_site - 1);
	assert_int_equal(s->fn, GCTX_CU_CTX_CREATE_V4);
	assert_string_equal(s->caller->frame.module, "/opt/bin/app");
	assert_ptr_equal(gctx_model__caller(m, 0, MAIN_SITE), s->caller);
	assert_null(gctx_model__caller(m, 0, 0x1234));
	assert_null(gctx_model__caller_drops(m));
}

/* A version 2 trace written before the caller field: its 192-byte API records are read, and
 * whatever follows them in the buffer is not taken for a caller. */
static void test_old_api_record(void **state)
{
	struct gctx_model *m = *state;
	__u8 buf[sizeof(struct gctx_ev_api)];
	struct gctx_ev_api ev;
	const struct gctx_callsite *s;
	union gctx_record r;

	ev_init(&ev, sizeof(ev), GCTX_EV_API, 200, 200, 1000, "old");
	ev.fn = GCTX_CU_INIT;
	ev.flags = GCTX_API_RETURNED;
	memset(buf, 0xab, sizeof(buf));
	memcpy(buf, &ev, GCTX_EV_API_V2_LEN);
	feed(m, GCTX_EV_API, buf, GCTX_EV_API_V2_LEN);
	assert_int_equal(gctx_model__api_calls(m, 0), 1);
	s = proc_site(m, 200, 0);
	assert_non_null(s);
	assert_int_equal(s->addr, 0);
	assert_null(s->caller);
	assert_int_equal(gctx_model__feed(m, GCTX_EV_API, buf, GCTX_EV_API_V2_LEN - 1), -EINVAL);
	/* the reader's copy: the missing tail is zeroed, not left as it was */
	memset(&r, 0xcd, sizeof(r));
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_API, buf, GCTX_EV_API_V2_LEN),
			 sizeof(struct gctx_ev_api));
	assert_int_equal(r.api.caller, 0);
	assert_int_equal(r.api.fn, GCTX_CU_INIT);
	assert_int_equal(gctx_record_copy(&r, GCTX_EV_API, buf, GCTX_EV_API_V2_LEN - 1), 0);
	assert_int_equal(gctx_record_copy(&r, 12345, buf, sizeof(buf)), 0);
}

/* After an exec the same address is other code: a new record names it. A record that came
 * before its process was known is still found. */
static void test_exec_and_unknown_process(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_exec ex;
	const struct gctx_callsite *s;

	do_caller(m, 300, LIB_SITE, "/a/liba.so", "a_init", 1);
	call(m, 300, 1000, GCTX_CU_INIT, LIB_SITE, 0);
	assert_string_equal(proc_site(m, 300, 0)->caller->frame.function, "a_init");
	ev_init(&ex, sizeof(ex), GCTX_EV_EXEC, 300, 300, 2000, "b");
	snprintf(ex.filename, sizeof(ex.filename), "/b/prog");
	feed(m, GCTX_EV_EXEC, &ex, sizeof(ex));
	do_caller(m, 300, LIB_SITE, "/b/libb.so", "b_init", 2);
	call(m, 300, 3000, GCTX_CU_INIT, LIB_SITE, 0);
	s = proc_site(m, 300, 1);
	assert_non_null(s);
	assert_string_equal(s->caller->frame.function, "b_init");
	assert_string_equal(proc_site(m, 300, 0)->caller->frame.function, "a_init");
	assert_string_equal(gctx_model__caller(m, 0, LIB_SITE)->frame.function, "b_init");
}

/* A process gone before the collector read its mappings: its call sites' records come after
 * its calls and its exit (from the mappings the kernel sent then), and still name them. */
static void test_late_record(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_fork f = ev_fork(1, 500, 10, "sh", false);
	struct gctx_ev_exit x = ev_exit(500, 500, 4000, "app", 0, true);
	const struct gctx_callsite *s;

	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	call(m, 500, 1000, GCTX_CU_INIT, LIB_SITE, 0);
	call(m, 500, 2000, GCTX_CU_INIT, MAIN_SITE, 0);
	feed(m, GCTX_EV_EXIT, &x, sizeof(x));
	assert_null(proc_site(m, 500, 0)->caller);
	do_caller(m, 500, LIB_SITE, "/opt/lib/libwl_init.so", "wl_gpu_init", 0x1a);
	s = proc_site(m, 500, 0);
	assert_non_null(s->caller);
	assert_string_equal(s->caller->frame.function, "wl_gpu_init");
	assert_null(proc_site(m, 500, 1)->caller); /* another address */
	assert_string_equal(gctx_model__caller(m, s->proc_idx, LIB_SITE)->frame.function,
			    "wl_gpu_init");
}

/* A process calling from more places than the model keeps: the rest in one site, counted. */
static void test_bound(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_callsite *s;
	struct gctx_rec_caller_drops d = {.resolved = 3, .capped = 9};
	__u32 n, i;

	for (i = 0; i < GCTX_MAX_CALLSITES + 10; i++)
		call(m, 400, 1000 + i, GCTX_CU_MEM_ALLOC, 0x1000 + i * 16, 0);
	gctx_model__proc_callsites(m, 0, &n);
	assert_int_equal(n, GCTX_MAX_CALLSITES + 1);
	s = proc_site(m, 400, GCTX_MAX_CALLSITES);
	assert_int_equal(s->addr, GCTX_CALLSITE_OTHER);
	assert_int_equal(s->calls, 10);
	assert_null(s->caller);
	feed(m, GCTX_REC_CALLER_DROPS, &d, sizeof(d));
	assert_int_equal(gctx_model__caller_drops(m)->capped, 9);
	/* malformed */
	assert_int_equal(gctx_model__feed(m, GCTX_REC_CALLER, &d, sizeof(d)), -EINVAL);
	assert_int_equal(gctx_model__ncallsites(NULL), 0);
	assert_null(gctx_model__callsite(m, 1u << 30));
	assert_null(gctx_model__proc_callsites(m, 1u << 30, &n));
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_sites_and_context, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_late_record, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_old_api_record, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exec_and_unknown_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
