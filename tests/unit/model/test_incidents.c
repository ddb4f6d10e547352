// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the diagnosis (model/analysis.h): event sequences of training jobs built with
 * builders.h, grouped into incidents, with the verdict, the fix and the start-up times a user
 * reads; and the model's side of it (no api-error repeating an inherited call, cuGetProcAddress
 * probing not an error, crash findings linked to API-level inherited use).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "decode/api.h"
#include "model/analysis.h"
#include "model/model.h"

#include "builders.h"

#define CTL	       0xffff888100001000ULL
#define CTL2	       0xffff888100002000ULL
#define PCTX	       0x7ffc0000a000ULL
#define HCTX	       0x5555a000ULL
#define HCTX2	       0x5555b000ULL
#define NOT_INI	       3 /* CUDA_ERROR_NOT_INITIALIZED */
#define SIGSEGV_STATUS 11

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

/* ---- steps ---- */

static void fork_(struct gctx_model *m, __u32 parent, __u32 child, __u64 ts, const char *comm)
{
	struct gctx_ev_fork e = ev_fork(parent, child, ts, comm, false);

	feed(m, GCTX_EV_FORK, &e, sizeof(e));
}

static void exec_(struct gctx_model *m, __u32 pid, __u64 ts, const char *comm, const char *args,
		  __u32 len)
{
	struct gctx_ev_exec e = ev_exec(pid, ts, comm, "/usr/bin/python3", args, len);

	feed(m, GCTX_EV_EXEC, &e, sizeof(e));
}

static void exit_(struct gctx_model *m, __u32 pid, __u64 ts, const char *comm, __u32 status)
{
	struct gctx_ev_exit e = ev_exit(pid, pid, ts, comm, status, true);

	feed(m, GCTX_EV_EXIT, &e, sizeof(e));
}

static void open_(struct gctx_model *m, __u32 pid, __u64 ts, __u64 file, __u32 flags)
{
	struct gctx_ev_open e = ev_open_dev(pid, ts, "python3", file, 3, flags, GCTX_DEV_NVIDIACTL);

	feed(m, GCTX_EV_OPEN, &e, sizeof(e));
}

static void call(struct gctx_model *m, __u32 pid, __u64 ts, const char *comm, __u32 fn, __s64 ret,
		 __u64 out, __u64 a0, __u64 a1)
{
	struct gctx_ev_api e = ev_api(pid, pid, ts, comm, 1000, fn, ret, out);

	e.args[0] = a0;
	e.args[1] = a1;
	feed(m, GCTX_EV_API, &e, sizeof(e));
}

static const char trainer_args[] = "python3\0train.py\0--epochs\0003";

/* pid execs python3 train.py at ts, opens nvidiactl, initialises CUDA (primary context on
 * device 0), and allocates unless import_only: what `import torch; x.cuda()` does. */
static void trainer(struct gctx_model *m, __u32 pid, __u64 ts, __u64 file, __u64 h,
		    bool import_only)
{
	fork_(m, 1, pid, ts - 100, "bash");
	exec_(m, pid, ts, "python3", trainer_args, sizeof(trainer_args));
	open_(m, pid, ts + 100, file, O_RDWR | O_CLOEXEC);
	call(m, pid, ts + 200, "python3", GCTX_CU_INIT, 0, 0, 0, 0);
	call(m, pid, ts + 300, "python3", GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, h, PCTX, 0);
	call(m, pid, ts + 350, "python3", GCTX_CU_CTX_SET_CURRENT, 0, 0, h, 0);
	if (!import_only)
		call(m, pid, ts + 400, "python3", GCTX_CU_MEM_ALLOC, 0, 0x7f0000000000ULL, PCTX,
		     1 << 20);
}

/* nw workers per epoch for ne epochs, each forked by pid, calling cuMemAlloc (touch) on the
 * inherited state, exiting before the next epoch. */
static void epochs(struct gctx_model *m, __u32 pid, __u32 first_child, __u32 nw, __u32 ne, __u64 ts,
		   bool touch, const char *comm)
{
	for (__u32 e = 0; e < ne; e++) {
		__u64 base = ts + e * 100000;

		for (__u32 w = 0; w < nw; w++) {
			__u32 c = first_child + e * 100 + w;

			fork_(m, pid, c, base + w * 10, "python3");
			if (touch)
				call(m, c, base + 1000 + w, comm, GCTX_CU_MEM_ALLOC, NOT_INI, 0,
				     PCTX, 4096);
		}
		for (__u32 w = 0; w < nw; w++)
			exit_(m, first_child + e * 100 + w, base + 50000 + w, comm, 0);
	}
}

static void end(struct gctx_model *m)
{
	struct gctx_rec_end e = {.end_ns = 10000000, .exit_status = 0};

	feed(m, GCTX_REC_END, &e, sizeof(e));
	gctx_model__finish(m);
}

static __u32 count_kind(const struct gctx_model *m, enum gctx_finding_kind k)
{
	__u32 n = 0;

	for (__u32 i = 0; i < gctx_model__nfindings(m); i++)
		n += gctx_model__finding(m, i)->kind == k;
	return n;
}

static const struct gctx_finding *find_kind(const struct gctx_model *m, enum gctx_finding_kind k,
					    __u32 pid)
{
	for (__u32 i = 0; i < gctx_model__nfindings(m); i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		if (f->kind == k && f->pid == pid)
			return f;
	}
	return NULL;
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("missing \"%s\" in \"%s\"\n", needle, hay);
		fail();
	}
}

/* ---- tests ---- */

/* A call of a function probed for a forked child alone (GCTX_*_OTHER), named in the record. */
static void named_call(struct gctx_model *m, __u32 pid, __u64 ts, __u32 fn, const char *name,
		       __s64 ret)
{
	struct gctx_ev_api e = ev_api(pid, pid, ts, "python3", 1000, fn, ret, 0);

	e.flags = GCTX_API_RETURNED | GCTX_API_NAMED;
	snprintf(e.str, sizeof(e.str), "%s", name);
	feed(m, GCTX_EV_API, &e, sizeof(e));
}

/* Issue 42: the child's only calls never reach the kernel (the real libcuda refuses in user
 * space). A table look-up that works, then a refused device query: a poison fork, an error,
 * naming the refused call and its result, and the first call. */
static void test_refused_query_is_poison_fork(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	const struct gctx_finding *f;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	fork_(m, 100, 200, 2000000, "python3");
	named_call(m, 200, 2001000, GCTX_CU_OTHER, "cuGetErrorName", 0);
	named_call(m, 200, 2002000, GCTX_CU_OTHER, "cuDeviceGetCount", NOT_INI);
	named_call(m, 200, 2003000, GCTX_CU_OTHER, "cuCtxGetCurrent", NOT_INI);
	exit_(m, 200, 2100000, "python3", 1);
	end(m);

	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 200);
	assert_non_null(f);
	assert_string_equal(f->call, "cuGetErrorName");
	assert_string_equal(f->api_ret_name, "CUDA_SUCCESS");
	assert_string_equal(f->refused_call, "cuDeviceGetCount");
	assert_int_equal(f->refused_ret, NOT_INI);
	assert_string_equal(f->refused_ret_name, "CUDA_ERROR_NOT_INITIALIZED");
	assert_int_equal(f->uses, 3);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);

	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	in = gctx_analysis__incident(a, 0);
	assert_non_null(in);
	assert_int_equal(in->kind, GCTX_INC_POISON_FORK);
	assert_int_equal(in->severity, GCTX_SEV_ERROR);
	assert_int_equal(in->nused, 1);
	assert_string_equal(in->first_use,
			    "cuDeviceGetCount -> CUDA_ERROR_NOT_INITIALIZED, after cuGetErrorName");
	assert_has(in->summary, "1 used it (first use: cuDeviceGetCount -> "
				"CUDA_ERROR_NOT_INITIALIZED, after cuGetErrorName)");
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_ERROR), 1);
	gctx_analysis__free(a);
}

static void py_raise(struct gctx_model *m, __u32 pid, __u64 ts, __u32 seq, const char *type,
		     const char *msg, __u32 flags)
{
	struct gctx_ev_pyexc e;

	ev_init(&e, sizeof(e), GCTX_EV_PYEXC, pid, pid, ts, "python3");
	e.seq = seq;
	e.flags = flags | (flags & GCTX_PYEXC_COUNT ? 0 : GCTX_PYEXC_TYPE_OK | GCTX_PYEXC_MSG_OK);
	snprintf(e.type, sizeof(e.type), "%s", type);
	snprintf(e.msg, sizeof(e.msg), "%s", msg);
	feed(m, GCTX_EV_PYEXC, &e, sizeof(e));
}

/* PyTorch refuses in Python, before any driver call: the exception is the use. The one about
 * CUDA is shown, not the noise around it; count-only records raise the total. */
static void test_python_refusal_is_poison_fork(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	const struct gctx_pyexc *e;
	struct gctx_analysis *a;
	__u32 total;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	fork_(m, 100, 200, 2000000, "python3");
	py_raise(m, 200, 2001000, 1, "KeyError", "x", 0);
	py_raise(m, 200, 2002000, 2, "RuntimeError",
		 "Cannot re-initialize CUDA in forked subprocess", 0);
	py_raise(m, 200, 2003000, 3, "AttributeError", "no attribute '__cuda_array_interface__'",
		 0);
	py_raise(m, 200, 2004000, 64, "", "", GCTX_PYEXC_COUNT);
	exit_(m, 200, 2100000, "python3", 1);
	end(m);

	e = gctx_model__pyexc_of(m, gctx_model__proc_by_pid(m, 200)->idx, &total);
	assert_non_null(e);
	assert_string_equal(e->type, "RuntimeError");
	assert_int_equal(total, 64);
	assert_int_equal(gctx_model__npyexcs(m), 3);
	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_POISON_FORK);
	assert_int_equal(in->severity, GCTX_SEV_ERROR);
	assert_int_equal(in->nused, 1);
	assert_int_equal(in->nraised, 1);
	assert_string_equal(in->raised,
			    "RuntimeError: Cannot re-initialize CUDA in forked subprocess");
	assert_has(in->summary, "1 used it; raised RuntimeError: Cannot re-initialize CUDA in "
				"forked subprocess.");
	gctx_analysis__free(a);
}

/* An exception about nothing GPU is told, but is no use: a warning still. */
static void test_python_noise_is_warning(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	fork_(m, 100, 200, 2000000, "python3");
	py_raise(m, 200, 2001000, 1, "KeyError", "relationship\x01", 0);
	exit_(m, 200, 2100000, "python3", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_FORK_INHERIT);
	assert_int_equal(in->nraised, 0);
	/* the traced program's text, made printable */
	assert_string_equal(in->raised, "KeyError: relationship?");
	assert_has(in->summary, "none used it.");
	assert_null(strstr(in->summary, "raised"));
	gctx_analysis__free(a);
}

/* A message in any language reads as written; what would act on a terminal (a C1 control, a
 * right-to-left override) or is not UTF-8 becomes '?', byte for byte. */
static void test_python_message_utf8(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	fork_(m, 100, 200, 2000000, "python3");
	py_raise(m, 200, 2001000, 1, "RuntimeError",
		 "d\xc3\xa9j\xc3\xa0 CUDA \xf0\x9f\x9a\xab \xe2\x80\xae"
		 "evil\xc2\x9b\xff\x21",
		 0);
	exit_(m, 200, 2100000, "python3", 1);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_POISON_FORK);
	assert_string_equal(in->raised,
			    "RuntimeError: d\xc3\xa9j\xc3\xa0 CUDA \xf0\x9f\x9a\xab ???evil???"
			    "!");
	gctx_analysis__free(a);
}

/* A HIP child: a call recorded with no result (hipGetErrorName returns a string) is a use
 * but refuses nothing; the first refusal named is the later hipMalloc's. */
static void test_call_without_result_refuses_nothing(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;
	struct gctx_ev_api e;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	call(m, 100, 1500000, "python3", GCTX_HIP_INIT, 0, 0, 0, 0);
	fork_(m, 100, 200, 2000000, "python3");
	named_call(m, 200, 2001000, GCTX_HIP_OTHER, "hipGetDeviceCount", 0);
	e = ev_api(200, 200, 2002000, "python3", 0, GCTX_HIP_OTHER, 685500103, 0);
	e.flags = GCTX_API_NAMED; /* entry only: no GCTX_API_RETURNED */
	snprintf(e.str, sizeof(e.str), "%s", "hipGetErrorName");
	feed(m, GCTX_EV_API, &e, sizeof(e));
	call(m, 200, 2003000, "python3", GCTX_HIP_MALLOC, 2, 0, PCTX, 1 << 26);
	end(m);
	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 200);
	assert_non_null(f);
	assert_string_equal(f->call, "hipGetDeviceCount");
	assert_string_equal(f->refused_call, "hipMalloc");
	assert_string_equal(f->refused_ret_name, "hipErrorOutOfMemory");
	assert_int_equal(f->uses, 3);
}

/* A child that calls nothing is still only a warning: "none used it". */
static void test_child_without_calls_is_warning(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	fork_(m, 100, 200, 2000000, "python3");
	exit_(m, 200, 2100000, "python3", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	in = gctx_analysis__incident(a, 0);
	assert_non_null(in);
	assert_int_equal(in->kind, GCTX_INC_FORK_INHERIT);
	assert_int_equal(in->severity, GCTX_SEV_WARNING);
	assert_has(in->summary, "none used it");
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_ERROR), 0);
	gctx_analysis__free(a);
}

/* 4 DataLoader workers x 3 epochs touching the inherited context: ONE incident. */
static void test_dataloader_4x3_is_one_incident(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	const struct gctx_job_summary *s;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	epochs(m, 100, 200, 4, 3, 2000000, true, "python3");
	exit_(m, 100, 9000000, "python3", 0);
	end(m);

	/* the model: one inherited-context-call per worker and no api-error repeating it */
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 12);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
	assert_int_equal(count_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE), 12);
	/* fork-with-gpu-state agrees with the API-level use */
	assert_true(find_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 201)->later_used);
	assert_has(find_kind(m, GCTX_FIND_FORK_WITH_GPU_STATE, 201)->detail, "the child used");

	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_POISON_FORK);
	assert_int_equal(in->severity, GCTX_SEV_ERROR);
	assert_int_equal(in->src_pid, 100);
	assert_int_equal(in->npids, 12);
	assert_int_equal(in->ninherited, 12);
	assert_int_equal(in->nused, 12);
	assert_int_equal(in->napi_used, 12);
	assert_int_equal(in->ncrashed, 0);
	assert_int_equal(in->generations, 3);
	assert_int_equal(in->pids[0], 200);
	assert_int_equal(in->pid_gen[0], 1);
	assert_int_equal(in->pids[4], 300);
	assert_int_equal(in->pid_gen[4], 2);
	assert_int_equal(in->pid_gen[11], 3);
	assert_int_equal(in->nfindings, 24);
	assert_string_equal(in->api, "CUDA");
	assert_true(in->ctx_primary);
	assert_int_equal(in->device, 0);
	assert_string_equal(in->first_use, "cuMemAlloc -> CUDA_ERROR_NOT_INITIALIZED");
	for (__u32 i = 1; i <= gctx_model__nfindings(m); i++)
		assert_int_equal(gctx_analysis__incident_of(a, i), 1);
	assert_true(in->fixes & GCTX_FIX_MP_START_METHOD);
	assert_true(in->fixes & GCTX_FIX_DL_CONTEXT);
	assert_true(in->fixes & GCTX_FIX_PERSISTENT);
	assert_false(in->fixes & GCTX_FIX_IMPORT_INIT);
	assert_has(in->summary, "POISON FORK: pid 100 (python3 train.py --epochs 3) initialised "
				"CUDA (primary context, device 0) at 0.001 s, then forked 12 "
				"processes without exec in 3 generations");
	assert_has(in->summary, "12 inherited its GPU state, 12 used it (first use: cuMemAlloc -> "
				"CUDA_ERROR_NOT_INITIALIZED).");
	assert_has(in->fix, "set_start_method(\"spawn\")");
	assert_has(in->fix, "persistent_workers=True");

	s = gctx_analysis__summary(a);
	assert_int_equal(s->nerrors, 1);
	assert_int_equal(s->worst, GCTX_SEV_ERROR);
	assert_int_equal(s->generations, 3);
	assert_false(s->incomplete);
	assert_true(!strncmp(s->verdict, "POISON FORK: pid 100 ", 21));
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_ERROR), 1);
	/* seed 002: the trainer's exec to its first GPU file open */
	assert_int_equal(gctx_analysis__gpu_init_ns(a, gctx_model__proc_by_pid(m, 100)->idx), 100);
	assert_int_equal(gctx_analysis__gpu_init_ns(a, gctx_model__proc_by_pid(m, 200)->idx), -1);
	gctx_analysis__free(a);
}

/* A worker killed by SIGSEGV after its inherited call: the crash is linked to that call. */
static void test_crash_linked_to_api_use(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *icc, *crash;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	fork_(m, 100, 201, 2000000, "python3");
	fork_(m, 100, 202, 2000010, "python3");
	call(m, 201, 2001000, "python3", GCTX_CU_MEM_ALLOC, NOT_INI, 0, PCTX, 4096);
	exit_(m, 201, 2002000, "python3", SIGSEGV_STATUS);
	exit_(m, 202, 2003000, "python3", 0);
	end(m);

	icc = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 201);
	crash = find_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, 201);
	assert_non_null(icc);
	assert_non_null(crash);
	assert_int_equal(crash->related_finding, icc->id);
	assert_true(crash->later_used);
	assert_has(crash->detail, "had used it");
	assert_null(strstr(crash->detail, "never used"));

	a = gctx_analysis__new(m, 0);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	assert_int_equal(in->ncrashed, 1);
	assert_int_equal(in->crash_pid, 201);
	assert_int_equal(in->nused, 1);
	assert_int_equal(in->ninherited, 2);
	assert_has(in->summary, "2 inherited its GPU state, 1 used it");
	assert_has(in->summary, "1 died by SIGSEGV (pid 201)");
	gctx_analysis__free(a);
}

/* A crash of a child that inherited CUDA state but no GPU file is still linked. */
static void test_crash_api_only_inheritance(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *crash;

	fork_(m, 1, 100, 900, "bash");
	call(m, 100, 1000, "app", GCTX_CU_INIT, 0, 0, 0, 0);
	fork_(m, 100, 101, 2000, "app");
	call(m, 101, 3000, "app", GCTX_CU_MEM_ALLOC, NOT_INI, 0, PCTX, 64);
	exit_(m, 101, 4000, "app", SIGSEGV_STATUS);
	end(m);
	crash = find_kind(m, GCTX_FIND_CRASH_AFTER_INHERITANCE, 101);
	assert_non_null(crash);
	assert_int_equal(crash->related_finding,
			 find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 101)->id);
	assert_int_equal(crash->opener_pid, 100);
	assert_int_equal(crash->nchain, 2);
}

/* Two trainers, two GPU states: two incidents, never merged. */
static void test_two_trainers_two_incidents(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	trainer(m, 500, 1100000, CTL2, HCTX2, false);
	epochs(m, 100, 200, 2, 1, 2000000, true, "python3");
	epochs(m, 500, 600, 3, 1, 3000000, true, "python3");
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 2);
	assert_int_equal(gctx_analysis__incident(a, 0)->src_pid, 100);
	assert_int_equal(gctx_analysis__incident(a, 0)->npids, 2);
	assert_int_equal(gctx_analysis__incident(a, 1)->src_pid, 500);
	assert_int_equal(gctx_analysis__incident(a, 1)->npids, 3);
	assert_has(gctx_analysis__summary(a)->verdict, "(+1 more incident)");
	gctx_analysis__free(a);
}

/* Spawned workers (fork then exec python) carry nothing: no problem found. */
static void test_spawn_is_clean(void **state)
{
	static const char spawn_args[] =
	    "python3\0-c\0from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5)\0"
	    "--multiprocessing-fork";
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	for (__u32 w = 0; w < 4; w++) {
		fork_(m, 100, 200 + w, 2000000 + w, "python3");
		exec_(m, 200 + w, 2000500 + w, "python3", spawn_args, sizeof(spawn_args));
		open_(m, 200 + w, 2500000 + w, CTL2 + w, O_RDWR | O_CLOEXEC);
		call(m, 200 + w, 2600000 + w, "python3", GCTX_CU_INIT, 0, 0, 0, 0);
		exit_(m, 200 + w, 3000000 + w, "python3", 0);
	}
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 0);
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_WARNING), 0);
	assert_has(gctx_analysis__summary(a)->verdict, "NO PROBLEM FOUND");
	/* start-up of each spawned worker: its exec to its first GPU file */
	assert_int_equal(gctx_analysis__gpu_init_ns(a, gctx_model__proc_by_pid(m, 201)->idx),
			 2500001 - 2000501);
	assert_int_equal(gctx_analysis__summary(a)->nstartups, 5);
	assert_int_equal(gctx_analysis__summary(a)->startup_max_ns, 499500);
	assert_int_equal(gctx_analysis__summary(a)->generations, 1); /* one pool, all alive */
	gctx_analysis__free(a);
}

/* Spawned workers that exit 1 while the main script is re-run (no main guard). */
static void test_spawn_without_main_guard(void **state)
{
	static const char spawn_args[] = "python3\0-c\0from multiprocessing.spawn import "
					 "spawn_main\0--multiprocessing-fork";
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	fork_(m, 100, 200, 2000000, "python3");
	exec_(m, 200, 2000500, "python3", spawn_args, sizeof(spawn_args));
	exit_(m, 200, 2900000, "python3", 1 << 8);
	exit_(m, 100, 3000000, "python3", 1 << 8);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_SPAWN_STARTUP);
	assert_int_equal(in->severity, GCTX_SEV_ERROR);
	assert_int_equal(in->pids[0], 200);
	assert_true(in->fixes & GCTX_FIX_MAIN_GUARD);
	assert_has(in->fix, "if __name__ == \"__main__\":");
	assert_has(in->summary, "status 1");
	gctx_analysis__free(a);
}

/* `with Pool(...)` on spawn: leaving the block terminates the workers (SIGTERM from the live
 * parent), which is no failure; a worker that crashed still is. */
static void test_spawn_pool_terminated_is_clean(void **state)
{
	const struct gctx_incident *spawn_inc = NULL;
	static const char spawn_args[] = "python3\0-c\0from multiprocessing.spawn import "
					 "spawn_main\0--multiprocessing-fork";
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	for (__u32 w = 0; w < 3; w++) {
		fork_(m, 100, 200 + w, 2000000 + w, "python3");
		exec_(m, 200 + w, 2000500 + w, "python3", spawn_args, sizeof(spawn_args));
		exit_(m, 200 + w, 2900000 + w, "python3", SIGTERM);
	}
	exit_(m, 100, 3000000, "python3", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 0);
	assert_has(gctx_analysis__summary(a)->verdict, "NO PROBLEM FOUND");
	gctx_analysis__free(a);

	/* the same pool with a worker that crashed, and one terminated after its parent died */
	gctx_model__free(m);
	*state = m = gctx_model__new();
	trainer(m, 100, 1000000, CTL, HCTX, false);
	for (__u32 w = 0; w < 3; w++) {
		fork_(m, 100, 200 + w, 2000000 + w, "python3");
		exec_(m, 200 + w, 2000500 + w, "python3", spawn_args, sizeof(spawn_args));
	}
	exit_(m, 200, 2900000, "python3", SIGSEGV);
	exit_(m, 201, 2900001, "python3", SIGTERM);
	exit_(m, 100, 3000000, "python3", 0);
	exit_(m, 202, 3100000, "python3", SIGTERM);
	end(m);
	a = gctx_analysis__new(m, 0);
	for (__u32 i = 0; i < gctx_analysis__nincidents(a); i++) {
		const struct gctx_incident *in = gctx_analysis__incident(a, i);

		if (in->kind != GCTX_INC_SPAWN_STARTUP)
			continue;
		spawn_inc = in;
	}
	assert_non_null(spawn_inc);
	assert_int_equal(spawn_inc->npids, 2); /* 200 (SIGSEGV) and 202 (its parent gone) */
	assert_has(spawn_inc->summary, "pids 200 202");
	gctx_analysis__free(a);
}

/* Initialised (an import did it), never allocated, forked children that never touched it. */
static void test_import_only_inherit_is_a_warning(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, true);
	epochs(m, 100, 200, 2, 1, 2000000, false, "python3");
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->kind, GCTX_INC_FORK_INHERIT);
	assert_int_equal(in->severity, GCTX_SEV_WARNING);
	assert_int_equal(in->nused, 0);
	assert_true(in->fixes & GCTX_FIX_IMPORT_INIT);
	assert_has(in->summary, "none used it");
	assert_has(in->fix, "allocated nothing before forking");
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_ERROR), 0);
	assert_int_equal(gctx_analysis__count_at(a, GCTX_SEV_WARNING), 1);
	gctx_analysis__free(a);
}

/* The same with the init stack recorded (issue 11): every incident step has its where, and
 * the fix names the library whose import initialised the GPU. */
static void test_import_init_names_the_library(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	struct gctx_analysis *a;
	struct {
		struct gctx_rec_stack h;
		struct gctx_rec_frame f[3];
	} r;
	static const struct {
		__u32 kind;
		const char *fn, *file, *module;
		__u32 line;
	} fr[3] = {
	    {GCTX_FRAME_NATIVE, "cuInit", "", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", 0},
	    {GCTX_FRAME_PYTHON, "_init_driver",
	     "/venv/lib/python3.11/site-packages/gpulib/__init__.py", "", 12},
	    {GCTX_FRAME_PYTHON, "<module>", "/srv/train.py", "", 3},
	};

	trainer(m, 100, 1000000, CTL, HCTX, true);
	memset(&r, 0, sizeof(r));
	r.h.pid = r.h.tid = 100;
	r.h.role = GCTX_STACK_INIT;
	r.h.nframes = 3;
	for (int i = 0; i < 3; i++) {
		r.f[i].kind = fr[i].kind;
		r.f[i].line = fr[i].line;
		snprintf(r.f[i].function, sizeof(r.f[i].function), "%s", fr[i].fn);
		snprintf(r.f[i].file, sizeof(r.f[i].file), "%s", fr[i].file);
		snprintf(r.f[i].module, sizeof(r.f[i].module), "%s", fr[i].module);
	}
	assert_int_equal(gctx_model__feed(m, GCTX_REC_STACK, &r, sizeof(r)), 0);
	epochs(m, 100, 200, 2, 1, 2000000, false, "python3");
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_true(in->fixes & GCTX_FIX_IMPORT_INIT);
	assert_string_equal(in->where[GCTX_SITE_INIT].text,
			    "/srv/train.py:3 in <module> <- gpulib/__init__.py:12 in _init_driver");
	assert_has(in->fix, "(the GPU was initialised at /srv/train.py:3 in <module> <- "
			    "gpulib/__init__.py:12 in _init_driver)");
	assert_string_equal(in->where[GCTX_SITE_USE].text, ""); /* no stack recorded for it */
	gctx_analysis__free(a);
}

/* Workers that rename themselves pt_data_worker: DataLoader evidence, names with history. */
static void test_renamed_workers(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_incident *in;
	const struct gctx_proc *w;
	struct gctx_analysis *a;
	char label[64];

	trainer(m, 100, 1000000, CTL, HCTX, false);
	epochs(m, 100, 200, 2, 1, 2000000, true, "pt_data_worker");
	end(m);
	w = gctx_model__proc_by_pid(m, 200);
	assert_string_equal(w->comm, "pt_data_worker");
	assert_int_equal(w->ncomm_prev, 1);
	assert_string_equal(w->comm_prev[0], "python3");
	gctx_proc_label(m, w->idx, label, sizeof(label));
	assert_string_equal(label, "pt_data_worker, was python3");
	a = gctx_analysis__new(m, 0);
	in = gctx_analysis__incident(a, 0);
	assert_true(in->ev.dataloader);
	assert_true(!strncmp(in->fix, "Create the DataLoader with multiprocessing_context", 50));
	assert_has(in->summary, "forked 2 processes (pt_data_worker, was python3) without exec");
	gctx_analysis__free(a);
}

/* The CUDA runtime probing optional symbols is counted, not an error. */
static void test_procaddr_not_found_is_not_an_error(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	for (int i = 0; i < 5; i++)
		call(m, 100, 1500000 + i, "python3", GCTX_CU_GET_PROC_ADDRESS, 500, 0, 0, 0);
	call(m, 100, 1600000, "python3", GCTX_CU_MEM_ALLOC, 2, 0, PCTX, 1ULL << 40);
	end(m);
	assert_int_equal(gctx_model__procaddr_not_found(m), 5);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 1);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	assert_int_equal(gctx_analysis__incident(a, 0)->kind, GCTX_INC_API_ERRORS);
	assert_int_equal(gctx_analysis__incident(a, 0)->severity, GCTX_SEV_WARNING);
	assert_has(gctx_analysis__incident(a, 0)->summary,
		   "cuMemAlloc -> CUDA_ERROR_OUT_OF_MEMORY (1 call)");
	gctx_analysis__free(a);
}

/* A GPU fd without O_CLOEXEC kept across exec: its own incident, fixed by O_CLOEXEC. */
static void test_fd_across_exec(void **state)
{
	static const char sh[] = "sh\0-c\0true";
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	struct gctx_ev_fd kept =
	    ev_fd(GCTX_EV_FD_KEPT, 101, 2999, "sh", CTL, 3, GCTX_DEV_NVIDIACTL);
	struct gctx_ev_exec ex = ev_exec(101, 3000, "sh", "/bin/sh", sh, sizeof(sh));

	fork_(m, 1, 100, 900, "bash");
	open_(m, 100, 1000, CTL, O_RDWR);
	fork_(m, 100, 101, 2000, "app");
	/* the kernel found the fd open after the exec */
	feed(m, GCTX_EV_FD_KEPT, &kept, sizeof(kept));
	ex.fds_kept = 1;
	feed(m, GCTX_EV_EXEC, &ex, sizeof(ex));
	exit_(m, 101, 4000, "sh", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	assert_int_equal(gctx_analysis__incident(a, 0)->kind, GCTX_INC_FD_ACROSS_EXEC);
	assert_has(gctx_analysis__incident(a, 0)->fix, "O_CLOEXEC");
	gctx_analysis__free(a);
}

/* Events lost: the verdict says its coverage is incomplete. */
static void test_incomplete_coverage(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_rec_drops d = {};
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	d.drops[GCTX_EV_IOCTL] = 7;
	feed(m, GCTX_REC_DROPS, &d, sizeof(d));
	gctx_model__finish(m); /* and no END record */
	a = gctx_analysis__new(m, 0);
	assert_true(gctx_analysis__summary(a)->incomplete);
	assert_has(gctx_analysis__summary(a)->verdict, "NO PROBLEM FOUND");
	assert_has(gctx_analysis__summary(a)->verdict,
		   "Coverage incomplete: 7 events lost; the recording did not end cleanly.");
	gctx_analysis__free(a);
}

/* API calls a process could make unseen: no incident of its own, the verdict says the
 * coverage is incomplete (issue 12's gap records). */
static void test_api_gap_in_verdict(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_rec_api_gap g;
	struct gctx_analysis *a;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	memset(&g, 0, sizeof(g));
	g.pid = g.tid = 100;
	g.reason = GCTX_GAP_NO_HOLD;
	g.from_ns = 1000050;
	g.to_ns = 1000090;
	snprintf(g.lib, sizeof(g.lib), "/usr/lib/libcuda.so.1");
	feed(m, GCTX_REC_API_GAP, &g, sizeof(g));
	end(m);
	assert_int_equal(count_kind(m, GCTX_FIND_API_CALLS_UNSEEN), 1);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 0);
	assert_true(gctx_analysis__summary(a)->incomplete);
	assert_has(gctx_analysis__summary(a)->verdict,
		   "NO PROBLEM FOUND: 2 processes, 0 GPU contexts created at driver level and 1 "
		   "through the CUDA/HIP API, no GPU state passed on through fork. Coverage "
		   "incomplete: CUDA/HIP calls of 1 process "
		   "could not be seen (api-calls-unseen).");
	gctx_analysis__free(a);
}

/* NV_ESC_RM_ALLOC of cls by pid on the trainer's nvidiactl (CTL, fd 3), NV_OK. */
static void rm_alloc(struct gctx_model *m, __u32 pid, __u64 ts, __u32 root, __u32 parent,
		     __u32 handle, __u32 cls)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, pid, pid, ts, "trainer", CTL, 3, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC, 48);
	rm_alloc_params(&ev, root, parent, handle, cls, 0);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

/* The demo's trainer (issue 26): raw ioctls make a client, a device, a channel group with a
 * channel and a compute object under it; with standalone, a channel outside any group too. */
static void raw_trainer(struct gctx_model *m, __u32 pid, __u64 ts, bool standalone)
{
	const __u32 c = 0xc1d00001;

	fork_(m, 1, pid, ts - 100, "bash");
	exec_(m, pid, ts, "trainer", trainer_args, sizeof(trainer_args));
	open_(m, pid, ts + 100, CTL, O_RDWR | O_CLOEXEC);
	rm_alloc(m, pid, ts + 200, 0, 0, c, 0x41);
	rm_alloc(m, pid, ts + 210, c, c, 0xcaf00000, 0x80);
	rm_alloc(m, pid, ts + 220, c, 0xcaf00000, 0xcaf00003, 0xa06c);
	rm_alloc(m, pid, ts + 230, c, 0xcaf00003, 0xcaf00005, 0xc86f);
	rm_alloc(m, pid, ts + 240, c, 0xcaf00005, 0xcaf00006, 0xcbc0);
	if (standalone)
		rm_alloc(m, pid, ts + 250, c, 0xcaf00000, 0xcaf00009, 0xc86f);
}

/* Three workers forked within a millisecond, the first done before the next fork: one
 * generation, no "re-created" claim; the channel group made by raw ioctls is a GPU context. */
static void test_demo_workers_one_generation(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_job_summary *s;
	const struct gctx_incident *in;
	struct gctx_analysis *a;

	raw_trainer(m, 100, 1000000, false);
	fork_(m, 100, 201, 2000000, "trainer");
	exit_(m, 201, 2000200, "dl_worker_1", 0);
	fork_(m, 100, 202, 2000300, "trainer");
	fork_(m, 100, 203, 2000400, "trainer");
	exit_(m, 202, 2000700, "dl_worker_2", 0);
	exit_(m, 203, 2000800, "dl_worker_3", 0);
	exit_(m, 100, 3000000, "trainer", 0);
	end(m);

	a = gctx_analysis__new(m, 0);
	assert_non_null(a);
	assert_int_equal(gctx_analysis__nincidents(a), 1);
	in = gctx_analysis__incident(a, 0);
	assert_int_equal(in->npids, 3);
	assert_int_equal(in->generations, 1);
	for (__u32 i = 0; i < in->npids; i++)
		assert_int_equal(in->pid_gen[i], 1);
	assert_null(strstr(in->summary, "generation"));
	assert_null(strstr(in->summary, "re-created"));
	assert_false(in->fixes & GCTX_FIX_PERSISTENT);
	s = gctx_analysis__summary(a);
	assert_true(s->generations <= 1);
	assert_int_equal(s->ctx_created, 0);
	assert_int_equal(s->drv_ctx_created, 1);
	gctx_analysis__free(a);
}

/* Workers one at a time (each done before the next fork), three times: no pattern of a pool
 * made again, one generation. Pools of two, twice: re-created. */
static void test_generation_needs_a_pattern(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	raw_trainer(m, 100, 1000000, false);
	for (__u32 w = 0; w < 3; w++) {
		fork_(m, 100, 201 + w, 2000000 + w * 1000, "trainer");
		exit_(m, 201 + w, 2000500 + w * 1000, "w", 0);
	}
	exit_(m, 100, 3000000, "trainer", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__incident(a, 0)->generations, 1);
	gctx_analysis__free(a);
	gctx_model__free(m);

	*state = m = gctx_model__new();
	raw_trainer(m, 100, 1000000, false);
	epochs(m, 100, 200, 2, 2, 2000000, false, "python3");
	exit_(m, 100, 3000000, "trainer", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__incident(a, 0)->generations, 2);
	assert_has(gctx_analysis__incident(a, 0)->summary, "in 2 generations (re-created");
	gctx_analysis__free(a);
}

/* A channel made outside any channel group is a GPU context of its own; a channel in a
 * group and a compute object are not counted again. */
static void test_driver_contexts_counted(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	raw_trainer(m, 100, 1000000, true);
	exit_(m, 100, 3000000, "trainer", 0);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 0);
	assert_int_equal(gctx_analysis__summary(a)->drv_ctx_created, 2);
	assert_has(gctx_analysis__summary(a)->verdict,
		   "NO PROBLEM FOUND: 2 processes, 2 GPU contexts created at driver level and 0 "
		   "through the CUDA/HIP API");
	gctx_analysis__free(a);
}

/* A GPU process that dies by SIGSEGV with no fork (seed 001's exit 139 in one run of five)
 * is no incident, but the verdict must not say "no problem": it names the crash; a process
 * without GPU state killed by a signal changes nothing. */
static void test_crash_without_fork_is_named(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;
	const char *v;

	trainer(m, 100, 1000000, CTL, HCTX, false);
	fork_(m, 1, 300, 1500000, "bash");
	exit_(m, 300, 1600000, "sleep", 9);	      /* SIGKILL, no GPU state */
	exit_(m, 100, 2000000, "python3", 0x80 | 11); /* SIGSEGV, core dumped */
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_int_equal(gctx_analysis__nincidents(a), 0);
	v = gctx_analysis__summary(a)->verdict;
	assert_has(v, "CRASH, NOT A POISON FORK: pid 100 (python3");
	assert_has(v, "killed by SIGSEGV (core dumped) holding GPU state");
	assert_null(strstr(v, "NO PROBLEM FOUND"));
	assert_null(strstr(v, "more process"));
	gctx_analysis__free(a);
}

static void test_signal_without_gpu_is_no_problem(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_analysis *a;

	fork_(m, 1, 300, 1500000, "bash");
	exit_(m, 300, 1600000, "sleep", 9);
	end(m);
	a = gctx_analysis__new(m, 0);
	assert_has(gctx_analysis__summary(a)->verdict, "NO PROBLEM FOUND");
	gctx_analysis__free(a);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_dataloader_4x3_is_one_incident),
	    TEST(test_crash_linked_to_api_use),
	    TEST(test_crash_api_only_inheritance),
	    TEST(test_two_trainers_two_incidents),
	    TEST(test_spawn_is_clean),
	    TEST(test_spawn_pool_terminated_is_clean),
	    TEST(test_spawn_without_main_guard),
	    TEST(test_import_only_inherit_is_a_warning),
	    TEST(test_import_init_names_the_library),
	    TEST(test_renamed_workers),
	    TEST(test_procaddr_not_found_is_not_an_error),
	    TEST(test_fd_across_exec),
	    TEST(test_incomplete_coverage),
	    TEST(test_api_gap_in_verdict),
	    TEST(test_demo_workers_one_generation),
	    TEST(test_generation_needs_a_pattern),
	    TEST(test_driver_contexts_counted),
	    TEST(test_crash_without_fork_is_named),
	    TEST(test_signal_without_gpu_is_no_problem),
	    TEST(test_refused_query_is_poison_fork),
	    TEST(test_child_without_calls_is_warning),
	    TEST(test_call_without_result_refuses_nothing),
	    TEST(test_python_refusal_is_poison_fork),
	    TEST(test_python_noise_is_warning),
	    TEST(test_python_message_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
