// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attached mid-job (issue 26): a process that initialised CUDA or HIP before attach, workers it
 * forked before attach that still share its GPU files, and workers forked after; every worker's
 * call fails on the inherited state. The diagnosis is the one a trace from the start gives: one
 * poison-fork error, from the attach records alone (the libraries mapped, the files held) and,
 * without the library records, from the failing calls in a child that carries the parent's GPU
 * files. A library mapped without GPU files is loaded, not initialised.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "decode/api.h"
#include "model/analysis.h"

#include "model_tests.h"

#define NOT_INI	 3 /* CUDA_ERROR_NOT_INITIALIZED */
#define HIP_OOM	 2 /* hipErrorOutOfMemory, what the double's forked hipMalloc gives */
#define NO_LIBS	 0
#define WITH_LIB 1

static void api_call(struct gctx_model *m, __u32 pid, __u64 ts, __u32 fn, __s64 ret)
{
	struct gctx_ev_api e = ev_api(pid, pid, ts, "python3", 1000, fn, ret, 0);

	feed(m, GCTX_EV_API, &e, sizeof(e));
}

static void api_present(struct gctx_model *m, __u32 pid, __u32 vendor)
{
	struct gctx_rec_api_present r = {.pid = pid, .vendors = 1u << vendor};

	feed(m, GCTX_REC_API_PRESENT, &r, sizeof(r));
}

static void end_at(struct gctx_model *m, __u64 ts)
{
	struct gctx_rec_end e = {.end_ns = ts};

	feed(m, GCTX_REC_END, &e, sizeof(e));
	gctx_model__finish(m);
}

/* Job 10 holds its GPU file (file, of kind); worker 11, forked before attach, shares it; with
 * lib, both have the vendor's library mapped. After attach 10 forks 12; 11 and 12 each make
 * one failing call fn -> ret. */
static void attached_job(struct gctx_model *m, __u64 file, __u32 kind, __u32 vendor, bool lib,
			 __u32 fn, __s64 ret)
{
	rec_proc(m, 10, 1, 5000, "python3");
	rec_proc(m, 11, 10, 6000, "python3");
	rec_file(m, 10, 3, file, kind, true);
	rec_file(m, 11, 3, file, kind, true);
	if (lib) {
		api_present(m, 10, vendor);
		api_present(m, 11, vendor);
	}
	do_fork(m, 10, 12, 100000, "python3");
	api_call(m, 11, 110000, fn, ret);
	api_call(m, 12, 120000, fn, ret);
	do_exit(m, 11, 11, 130000, 0, true);
	do_exit(m, 12, 12, 140000, 0, true);
	do_exit(m, 10, 10, 150000, 0, true);
	end_at(m, 200000);
}

static void assert_one_poison_fork(struct gctx_model *m, const char *api)
{
	struct gctx_analysis *a = gctx_analysis__new(m, 0);
	const struct gctx_incident *in;

	assert_non_null(a);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 2);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_POISON_FORK);
	assert_int_equal(in->severity, GCTX_SEV_ERROR);
	assert_int_equal(in->src_pid, 10);
	assert_int_equal(in->nused, 2);
	assert_string_equal(in->api, api);
	assert_non_null(strstr(in->summary, "before attach, then forked 2 processes"));
	assert_null(strstr(in->fix, "not caused by a fork"));
	gctx_analysis__free(a);
}

static void test_cuda_attached(void **state)
{
	attached_job(*state, CTL_FILE, GCTX_DEV_NVIDIACTL, GCTX_VENDOR_CUDA, WITH_LIB,
		     GCTX_CU_MEM_ALLOC, NOT_INI);
	assert_one_poison_fork(*state, "CUDA");
}

static void test_hip_attached(void **state)
{
	attached_job(*state, KFD_FILE, GCTX_DEV_KFD, GCTX_VENDOR_HIP, WITH_LIB, GCTX_HIP_MALLOC,
		     HIP_OOM);
	assert_one_poison_fork(*state, "HIP");
}

/* Without the library records (no /proc/PID/maps, or a library of another name): the
 * failing calls of children that carry the job's GPU files are inherited use all the same. */
static void test_failing_call_in_child_with_gpu_files(void **state)
{
	attached_job(*state, CTL_FILE, GCTX_DEV_NVIDIACTL, GCTX_VENDOR_CUDA, NO_LIBS,
		     GCTX_CU_MEM_ALLOC, NOT_INI);
	assert_one_poison_fork(*state, "CUDA");
}

/* The library mapped, no GPU file held: loaded, not initialised; a forked child's failing call
 * is its own error, not inherited use. */
static void test_library_without_gpu_files(void **state)
{
	struct gctx_model *m = *state;

	rec_proc(m, 10, 1, 5000, "python3");
	api_present(m, 10, GCTX_VENDOR_CUDA);
	do_fork(m, 10, 12, 100000, "python3");
	api_call(m, 12, 120000, GCTX_CU_MEM_ALLOC, NOT_INI);
	do_exit(m, 12, 12, 140000, 0, true);
	end_at(m, 200000);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 1);
}

/* A CUDA library with only AMD files held: CUDA was not initialised by them. */
static void test_files_of_the_other_vendor(void **state)
{
	struct gctx_model *m = *state;

	rec_proc(m, 10, 1, 5000, "python3");
	rec_file(m, 10, 3, KFD_FILE, GCTX_DEV_KFD, true);
	api_present(m, 10, GCTX_VENDOR_CUDA);
	do_fork(m, 10, 12, 100000, "python3");
	api_call(m, 12, 120000, GCTX_CU_MEM_ALLOC, NOT_INI);
	end_at(m, 200000);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_cuda_attached),
	    TEST(test_hip_attached),
	    TEST(test_failing_call_in_child_with_gpu_files),
	    TEST(test_library_without_gpu_files),
	    TEST(test_files_of_the_other_vendor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
