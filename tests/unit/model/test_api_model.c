// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the model's API layer: CUDA driver API / HIP runtime call records (as the
 * uprobes report them) built by hand, with the fork/exec/exit and ioctl records around them,
 * checked for contexts, current-context changes, memory, the kernel-object join, and the
 * inherited-context-call and api-error findings.
 */
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

#include "builders.h"

#define CTL_FILE  0xffff888100001000ULL
#define CTL_FILE2 0xffff888100002000ULL

#define CLS_CLIENT   0x41
#define CLS_DEVICE   0x80
#define CLS_TSG	     0xa06c /* KEPLER_CHANNEL_GROUP_A */
#define CLS_CTXSHARE 0x9067 /* FERMI_CONTEXT_SHARE_A */

#define CU_NOT_INITIALIZED 3
#define CU_STUB_LIBRARY	   34
#define CU_NO_DEVICE	   100
#define HIP_OUT_OF_MEMORY  2

#define MIB (1024ULL * 1024)

#define API_DUR 1000 /* ns every call takes unless told */

static int setup(void **state)
{
	struct gctx_model *m = gctx_model__new();

	if (!m)
		return -1;
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	gctx_model__free(*state);
	return 0;
}

/* ---- record builders ---- */

static void do_fork(struct gctx_model *m, __u32 parent, __u32 child, __u64 ts)
{
	struct gctx_ev_fork ev = ev_fork(parent, child, ts, "app", false);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static void do_thread(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts)
{
	struct gctx_ev_fork ev = ev_fork(tgid, tid, ts, "app", true);

	feed(m, GCTX_EV_FORK, &ev, sizeof(ev));
}

static void do_exec(struct gctx_model *m, __u32 tgid, __u64 ts, const char *filename)
{
	struct gctx_ev_exec ev = ev_exec(tgid, ts, "app", filename, filename, strlen(filename) + 1);

	feed(m, GCTX_EV_EXEC, &ev, sizeof(ev));
}

static void do_exit(struct gctx_model *m, __u32 tgid, __u64 ts)
{
	struct gctx_ev_exit ev = ev_exit(tgid, tgid, ts, "app", 0, true);

	feed(m, GCTX_EV_EXIT, &ev, sizeof(ev));
}

static void do_open(struct gctx_model *m, __u32 tgid, __u64 ts, __u64 file, int fd)
{
	struct gctx_ev_open ev = ev_open_dev(tgid, ts, "app", file, fd, 02, GCTX_DEV_NVIDIACTL);

	ev.rdev = NVIDIACTL_RDEV;
	feed(m, GCTX_EV_OPEN, &ev, sizeof(ev));
}

/* NV_ESC_RM_ALLOC, NVOS64, NV_OK. */
static void do_rm_alloc(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, __u64 file, int fd,
			__u32 client, __u32 parent, __u32 handle, __u32 cls)
{
	struct gctx_ev_ioctl ev;

	ioctl_ev(&ev, tgid, tid, ts, "app", file, fd, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC, 48);
	ev.dur_ns = 50;
	rm_alloc_params(&ev, client, parent, handle, cls, 0);
	feed(m, GCTX_EV_IOCTL, &ev, sizeof(ev));
}

/* One returned API call: args a0..a3 as the registers held them, out as read at return. */
static void api_dur(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, __u64 dur,
		    enum gctx_api_fn fn, __s64 ret, __u64 out, __u64 a0, __u64 a1, __u64 a2,
		    __u64 a3)
{
	struct gctx_ev_api ev = ev_api(tgid, tid, ts, "app", dur, fn, ret, out);

	ev.args[0] = a0;
	ev.args[1] = a1;
	ev.args[2] = a2;
	ev.args[3] = a3;
	ev.ip = 0x7f1234560000ULL;
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
}

static void api(struct gctx_model *m, __u32 tgid, __u32 tid, __u64 ts, enum gctx_api_fn fn,
		__s64 ret, __u64 out, __u64 a0, __u64 a1, __u64 a2, __u64 a3)
{
	api_dur(m, tgid, tid, ts, API_DUR, fn, ret, out, a0, a1, a2, a3);
}

#define PCTX 0x7ffc0000a000ULL /* user pointer to the out argument */

static void cu_init(struct gctx_model *m, __u32 pid, __u64 ts, __s64 ret)
{
	api(m, pid, pid, ts, GCTX_CU_INIT, ret, 0, 0, 0, 0, 0);
}

static void cu_retain(struct gctx_model *m, __u32 pid, __u64 ts, __s64 ret, __u64 ctx, int dev)
{
	api(m, pid, pid, ts, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, ret, ctx, PCTX, (__u64)dev, 0, 0);
}

static void cu_alloc(struct gctx_model *m, __u32 pid, __u32 tid, __u64 ts, __u64 ptr, __u64 size)
{
	api(m, pid, tid, ts, GCTX_CU_MEM_ALLOC, 0, ptr, PCTX, size, 0, 0);
}

/* ---- lookups ---- */

static __u32 count_kind(const struct gctx_model *m, enum gctx_finding_kind k)
{
	__u32 i, n = 0;

	for (i = 0; i < gctx_model__nfindings(m); i++)
		n += gctx_model__finding(m, i)->kind == k;
	return n;
}

static const struct gctx_finding *find_kind(const struct gctx_model *m, enum gctx_finding_kind k,
					    __u32 pid)
{
	__u32 i;

	for (i = 0; i < gctx_model__nfindings(m); i++) {
		const struct gctx_finding *f = gctx_model__finding(m, i);

		if (f->kind == k && f->pid == pid)
			return f;
	}
	return NULL;
}

static const struct gctx_api_ctx *ctx_by_handle(const struct gctx_model *m, __u64 handle)
{
	__u32 i;

	for (i = 0; i < gctx_model__nctxs(m); i++)
		if (gctx_model__ctx(m, i)->handle == handle)
			return gctx_model__ctx(m, i);
	return NULL;
}

static const struct gctx_api_mem *mem_by_ptr(const struct gctx_model *m, __u64 ptr)
{
	__u32 i;

	for (i = gctx_model__nmems(m); i-- > 0;)
		if (gctx_model__mem(m, i)->ptr == ptr)
			return gctx_model__mem(m, i);
	return NULL;
}

static bool has_current(const struct gctx_api_ctx *c, __u32 tid, enum gctx_api_fn fn)
{
	__u32 i;

	for (i = 0; i < c->ncurrents; i++)
		if (c->currents[i].tid == tid && c->currents[i].fn == fn)
			return true;
	return false;
}

static int obj_idx_by_class(const struct gctx_model *m, __u32 cls, __u32 pid)
{
	__u32 i;

	for (i = 0; i < gctx_model__nobjs(m); i++) {
		const struct gctx_gpu_obj *o = gctx_model__obj(m, i);

		if (o->cls == cls && gctx_model__proc(m, o->creator_idx)->pid == pid)
			return (int)i;
	}
	return -1;
}

static bool ctx_has_kobj(const struct gctx_api_ctx *c, int idx)
{
	__u32 i;

	for (i = 0; idx >= 0 && i < c->nkobjs; i++)
		if (c->kobjs[i] == (__u32)idx)
			return true;
	return false;
}

/* ---- CUDA contexts ---- */

static void test_cuda_primary_context(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;
	const struct gctx_proc *p;

	cu_init(m, 100, 1000, 0);
	cu_retain(m, 100, 2000, 0, 0x5555a000, 1);
	assert_int_equal(gctx_model__nctxs(m), 1);
	c = gctx_model__ctx(m, 0);
	assert_int_equal(c->id, 1);
	assert_true(c->primary);
	assert_false(c->green);
	assert_int_equal(c->vendor, GCTX_VENDOR_CUDA);
	assert_int_equal(c->device, 1);
	assert_int_equal(c->handle, 0x5555a000);
	assert_int_equal(c->create_fn, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN);
	assert_int_equal(c->create_ns, 2000);
	assert_int_equal(c->creator_tid, 100);
	assert_int_equal(c->refs, 1);
	assert_false(c->destroyed);
	p = gctx_model__proc_by_pid(m, 100);
	assert_non_null(p);
	assert_int_equal(c->creator_idx, p->idx);
	assert_int_equal(gctx_model__api_calls(m, p->idx), 2);

	/* a second retain of the same device is the same context; releases count down */
	cu_retain(m, 100, 3000, 0, 0x5555a000, 1);
	assert_int_equal(gctx_model__nctxs(m), 1);
	assert_int_equal(c->refs, 2);
	api(m, 100, 100, 4000, GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE, 0, 0, 1, 0, 0, 0);
	assert_false(c->destroyed);
	api(m, 100, 100, 5000, GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE, 0, 0, 1, 0, 0, 0);
	assert_true(c->destroyed);
	assert_int_equal(c->destroy_ns, 5000);
	/* another device is another primary context */
	cu_retain(m, 100, 6000, 0, 0x5555b000, 0);
	assert_int_equal(gctx_model__nctxs(m), 2);
	assert_int_equal(gctx_model__ctx(m, 1)->device, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
}

static void test_cuda_ctx_create_current_and_memory(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;
	const struct gctx_api_mem *mm;

	do_thread(m, 100, 101, 500);
	do_thread(m, 100, 102, 600);
	cu_init(m, 100, 1000, 0);
	/* cuCtxCreate_v4(pctx, params, flags, dev) on thread 101 */
	api(m, 100, 101, 2000, GCTX_CU_CTX_CREATE_V4, 0, 0xc0c0a000, PCTX, 0, 0, 2);
	assert_int_equal(gctx_model__nctxs(m), 1);
	c = gctx_model__ctx(m, 0);
	assert_false(c->primary);
	assert_int_equal(c->device, 2);
	assert_int_equal(c->handle, 0xc0c0a000);
	assert_int_equal(c->creator_tid, 101);
	assert_int_equal(c->create_fn, GCTX_CU_CTX_CREATE_V4);
	assert_int_equal(c->ncurrents, 1);
	assert_true(has_current(c, 101, GCTX_CU_CTX_CREATE_V4));
	assert_int_equal(c->currents[0].ts_ns, 2000);

	/* memory of thread 101 goes to its current context */
	cu_alloc(m, 100, 101, 3000, 0xdead0000, 2 * MIB);
	cu_alloc(m, 100, 101, 3100, 0xdead1000, 1 * MIB);
	assert_int_equal(gctx_model__nmems(m), 2);
	mm = mem_by_ptr(m, 0xdead0000);
	assert_non_null(mm);
	assert_int_equal(mm->ctx_id, c->id);
	assert_int_equal(mm->size, 2 * MIB);
	assert_int_equal(mm->fn, GCTX_CU_MEM_ALLOC);
	assert_int_equal(mm->alloc_ns, 3000);
	assert_false(mm->freed);
	assert_int_equal(c->mem_live, 3 * MIB);
	assert_int_equal(c->mem_total, 3 * MIB);
	assert_int_equal(c->nallocs, 2);
	api(m, 100, 101, 3200, GCTX_CU_MEM_FREE, 0, 0, 0xdead0000, 0, 0, 0);
	assert_true(mm->freed);
	assert_int_equal(mm->free_ns, 3200);
	assert_int_equal(c->mem_live, 1 * MIB);
	assert_int_equal(c->mem_total, 3 * MIB);
	/* a second free of the same pointer changes nothing */
	api(m, 100, 101, 3300, GCTX_CU_MEM_FREE, 0, 0, 0xdead0000, 0, 0, 0);
	assert_int_equal(c->mem_live, 1 * MIB);

	/* thread 102 has no current context: its memory belongs to none */
	cu_alloc(m, 100, 102, 4000, 0xbeef0000, 4096);
	assert_int_equal(mem_by_ptr(m, 0xbeef0000)->ctx_id, 0);
	assert_int_equal(c->nallocs, 2);
	/* until it makes the context current */
	api(m, 100, 102, 4100, GCTX_CU_CTX_SET_CURRENT, 0, 0, 0xc0c0a000, 0, 0, 0);
	assert_true(has_current(c, 102, GCTX_CU_CTX_SET_CURRENT));
	cu_alloc(m, 100, 102, 4200, 0xbeef1000, 4096);
	assert_int_equal(mem_by_ptr(m, 0xbeef1000)->ctx_id, c->id);

	/* a failed allocation records nothing but an api-error */
	api(m, 100, 102, 4300, GCTX_CU_MEM_ALLOC, 2, 0, PCTX, 1ULL << 40, 0, 0);
	assert_int_equal(gctx_model__nmems(m), 4);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 1);
	assert_string_equal(find_kind(m, GCTX_FIND_API_ERROR, 100)->api_ret_name,
			    "CUDA_ERROR_OUT_OF_MEMORY");

	/* pop on 101: nothing current there any more */
	api(m, 100, 101, 5000, GCTX_CU_CTX_POP_CURRENT, 0, 0xc0c0a000, PCTX, 0, 0, 0);
	cu_alloc(m, 100, 101, 5100, 0xcafe0000, 4096);
	assert_int_equal(mem_by_ptr(m, 0xcafe0000)->ctx_id, 0);
	/* push makes it current again, and is recorded as such */
	api(m, 100, 101, 5200, GCTX_CU_CTX_PUSH_CURRENT, 0, 0, 0xc0c0a000, 0, 0, 0);
	assert_true(has_current(c, 101, GCTX_CU_CTX_PUSH_CURRENT));
	assert_int_equal(c->ncurrents, 3);

	/* destroyed: memory after it goes nowhere */
	api(m, 100, 101, 6000, GCTX_CU_CTX_DESTROY, 0, 0, 0xc0c0a000, 0, 0, 0);
	assert_true(c->destroyed);
	assert_int_equal(c->destroy_ns, 6000);
	cu_alloc(m, 100, 101, 6100, 0xcafe1000, 4096);
	assert_int_equal(mem_by_ptr(m, 0xcafe1000)->ctx_id, 0);
}

static void test_launches_count_on_current(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;

	cu_init(m, 100, 1000, 0);
	cu_retain(m, 100, 2000, 0, 0x5555a000, 0);
	api(m, 100, 100, 2500, GCTX_CU_CTX_SET_CURRENT, 0, 0, 0x5555a000, 0, 0, 0);
	api(m, 100, 100, 3000, GCTX_CU_LAUNCH_KERNEL, 0, 0, 0x1, 0, 0, 0);
	api(m, 100, 100, 3100, GCTX_CU_LAUNCH_KERNEL_EX, 0, 0, 0x1, 0, 0, 0);
	c = ctx_by_handle(m, 0x5555a000);
	assert_non_null(c);
	assert_int_equal(c->launches, 2);
	assert_true(has_current(c, 100, GCTX_CU_CTX_SET_CURRENT));
}

/* ---- inherited-context-call ---- */

static void test_fork_child_calls_cuda(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *pc;
	const struct gctx_finding *f;
	const struct gctx_proc *child;

	cu_init(m, 200, 1000, 0);
	cu_retain(m, 200, 2000, 0, 0x5555a000, 0);
	pc = gctx_model__ctx(m, 0);
	do_fork(m, 200, 201, 3000);
	cu_init(m, 201, 4000, CU_NOT_INITIALIZED);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 1);
	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 201);
	assert_non_null(f);
	assert_int_equal(f->severity, GCTX_SEV_ERROR);
	assert_int_equal(f->pid, 201);
	assert_int_equal(f->tid, 201);
	assert_int_equal(f->opener_pid, 200);
	assert_string_equal(f->call, "cuInit");
	assert_true(f->has_api_ret);
	assert_int_equal(f->api_ret, CU_NOT_INITIALIZED);
	assert_string_equal(f->api_ret_name, "CUDA_ERROR_NOT_INITIALIZED");
	assert_int_equal(f->ctx_id, pc->id);
	assert_int_equal(f->ctx_handle, 0x5555a000);
	assert_int_equal(f->event_type, GCTX_EV_API);
	assert_int_equal(f->time_ns, 4000);
	assert_int_equal(f->nchain, 2);
	assert_int_equal(f->chain[0], 200);
	assert_int_equal(f->chain[1], 201);
	child = gctx_model__proc_by_pid(m, 201);
	assert_int_equal(f->proc_idx, child->idx);
	assert_non_null(strstr(f->detail, "CUDA_ERROR_NOT_INITIALIZED"));
	assert_non_null(strstr(f->detail, "0x5555a000"));

	/* the child's next calls add no second finding, and are counted in it */
	assert_int_equal(f->uses, 1);
	cu_retain(m, 201, 5000, CU_NOT_INITIALIZED, 0, 0);
	cu_init(m, 201, 5100, CU_NOT_INITIALIZED);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 1);
	assert_int_equal(f->uses, 3);
	/* an inherited call's failure is told once, by that finding: no api-error repeats it */
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
	/* the child made no context of its own */
	assert_int_equal(gctx_model__nctxs(m), 1);

	/* a grandchild carries the same state: chain through the child */
	do_fork(m, 201, 202, 6000);
	cu_init(m, 202, 7000, CU_NOT_INITIALIZED);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 2);
	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 202);
	assert_non_null(f);
	assert_int_equal(f->opener_pid, 200);
	assert_int_equal(f->nchain, 3);
	assert_int_equal(f->chain[0], 200);
	assert_int_equal(f->chain[1], 201);
	assert_int_equal(f->chain[2], 202);
}

static void test_fork_before_init_and_exec_are_clean(void **state)
{
	struct gctx_model *m = *state;

	/* forked before the parent initialised CUDA: the child's calls are its own */
	do_fork(m, 300, 301, 500);
	cu_init(m, 300, 1000, 0);
	cu_init(m, 301, 1100, 0);
	/* forked after, but exec'd before calling */
	do_fork(m, 300, 302, 2000);
	do_exec(m, 302, 2100, "/usr/bin/python3");
	cu_init(m, 302, 2200, 0);
	cu_retain(m, 302, 2300, 0, 0x7777a000, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
	/* and the exec'd child's own children inherit from it, not from 300 */
	do_fork(m, 302, 303, 3000);
	cu_init(m, 303, 3100, CU_NOT_INITIALIZED);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 1);
	assert_int_equal(find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 303)->opener_pid, 302);
	assert_int_equal(find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 303)->ctx_handle,
			 0x7777a000);
}

static void test_exec_starts_new_contexts(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *a, *b;

	cu_init(m, 310, 1000, 0);
	cu_retain(m, 310, 1100, 0, 0x1111a000, 0);
	api(m, 310, 310, 1200, GCTX_CU_CTX_SET_CURRENT, 0, 0, 0x1111a000, 0, 0, 0);
	a = ctx_by_handle(m, 0x1111a000);
	do_exec(m, 310, 2000, "/usr/bin/next");
	/* the new program's memory does not go to the old program's context */
	cu_alloc(m, 310, 310, 2100, 0xd0000000, 4096);
	assert_int_equal(mem_by_ptr(m, 0xd0000000)->ctx_id, 0);
	/* and its primary context is a new one, even on the same device */
	cu_init(m, 310, 2200, 0);
	cu_retain(m, 310, 2300, 0, 0x2222a000, 0);
	assert_int_equal(gctx_model__nctxs(m), 2);
	b = ctx_by_handle(m, 0x2222a000);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->refs, 1);
	assert_int_equal(a->refs, 1);
	assert_int_equal(b->create_ns, 2300);
}

static void test_long_fork_chain_keeps_offender(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;
	__u32 i, n = GCTX_MAX_CHAIN + 4;

	cu_init(m, 1000, 100, 0);
	for (i = 0; i < n; i++)
		do_fork(m, 1000 + i, 1001 + i, 200 + i);
	cu_init(m, 1000 + n, 1000, CU_NOT_INITIALIZED);
	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 1000 + n);
	assert_non_null(f);
	assert_int_equal(f->nchain, GCTX_MAX_CHAIN);
	assert_int_equal(f->chain[0], 1000);			  /* the process that initialised */
	assert_int_equal(f->chain[GCTX_MAX_CHAIN - 1], 1000 + n); /* the offender */
	assert_int_equal(f->chain[GCTX_MAX_CHAIN - 2], 1000 + n - 1);
	assert_null(find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 1000));
}

/* ---- api-error ---- */

static void test_api_error_aggregated(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_finding *f;

	cu_init(m, 400, 1000, CU_STUB_LIBRARY);
	cu_init(m, 400, 2000, CU_STUB_LIBRARY);
	cu_init(m, 400, 3000, CU_STUB_LIBRARY);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 1);
	f = find_kind(m, GCTX_FIND_API_ERROR, 400);
	assert_non_null(f);
	assert_int_equal(f->severity, GCTX_SEV_WARNING);
	assert_int_equal(f->uses, 3);
	assert_true(f->has_api_ret);
	assert_int_equal(f->api_ret, CU_STUB_LIBRARY);
	assert_string_equal(f->api_ret_name, "CUDA_ERROR_STUB_LIBRARY");
	assert_string_equal(f->call, "cuInit");
	assert_int_equal(f->time_ns, 1000); /* the first one */
	assert_int_equal(f->ctx_id, 0);

	/* another code, another call, another process: separate findings */
	cu_init(m, 400, 4000, CU_NO_DEVICE);
	cu_retain(m, 400, 4100, CU_STUB_LIBRARY, 0, 0);
	cu_init(m, 401, 5000, CU_STUB_LIBRARY);
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 4);
	assert_int_equal(f->uses, 3);
	/* a code without a name is shown as its number */
	cu_init(m, 402, 6000, 12345);
	f = find_kind(m, GCTX_FIND_API_ERROR, 402);
	assert_non_null(f);
	assert_string_equal(f->api_ret_name, "12345");
	/* success is no error, and no inherited call either: nothing was initialised */
	cu_init(m, 403, 7000, 0);
	assert_null(find_kind(m, GCTX_FIND_API_ERROR, 403));
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
}

static void test_call_without_return_is_not_an_error(void **state)
{
	struct gctx_model *m = *state;
	struct gctx_ev_api ev;

	ev_init(&ev, sizeof(ev), GCTX_EV_API, 450, 450, 1000, "app");
	ev.fn = GCTX_CU_INIT;
	ev.ret = 999; /* not valid: GCTX_API_RETURNED is clear */
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
	assert_int_equal(count_kind(m, GCTX_FIND_API_ERROR), 0);
	assert_int_equal(gctx_model__api_calls(m, gctx_model__proc_by_pid(m, 450)->idx), 1);
	/* unknown function numbers are counted as records and otherwise ignored */
	ev.fn = GCTX_API_MAX + 7;
	feed(m, GCTX_EV_API, &ev, sizeof(ev));
	assert_int_equal(gctx_model__events(m, GCTX_EV_API), 2);
	/* a record shorter than the oldest API record is refused */
	assert_int_equal(gctx_model__feed(m, GCTX_EV_API, &ev, GCTX_EV_API_V2_LEN - 1), -EINVAL);
}

/* ---- HIP ---- */

static void test_hip_implicit_primary_and_fork(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;
	const struct gctx_finding *f;

	api(m, 500, 500, 1000, GCTX_HIP_INIT, 0, 0, 0, 0, 0, 0);
	api(m, 500, 500, 1100, GCTX_HIP_SET_DEVICE, 0, 0, 1, 0, 0, 0);
	api(m, 500, 500, 1200, GCTX_HIP_MALLOC, 0, 0xa0000000, PCTX, 8 * MIB, 0, 0);
	assert_int_equal(gctx_model__nctxs(m), 1);
	c = gctx_model__ctx(m, 0);
	assert_int_equal(c->vendor, GCTX_VENDOR_HIP);
	assert_true(c->primary);
	assert_int_equal(c->device, 1);
	assert_int_equal(c->handle, 0);
	assert_int_equal(c->create_fn, GCTX_HIP_MALLOC);
	assert_int_equal(c->mem_live, 8 * MIB);
	assert_int_equal(c->nallocs, 1);
	assert_int_equal(mem_by_ptr(m, 0xa0000000)->ctx_id, c->id);
	/* a later explicit retain of that device names the same context */
	api(m, 500, 500, 1300, GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN, 0, 0x4141a000, PCTX, 1, 0, 0);
	assert_int_equal(gctx_model__nctxs(m), 1);
	assert_int_equal(c->handle, 0x4141a000);
	api(m, 500, 500, 1400, GCTX_HIP_FREE, 0, 0, 0xa0000000, 0, 0, 0);
	assert_int_equal(c->mem_live, 0);
	assert_int_equal(c->mem_total, 8 * MIB);
	/* device 0 gets its own */
	api(m, 500, 500, 1500, GCTX_HIP_SET_DEVICE, 0, 0, 0, 0, 0, 0);
	api(m, 500, 500, 1600, GCTX_HIP_MALLOC, 0, 0xa1000000, PCTX, 4096, 0, 0);
	assert_int_equal(gctx_model__nctxs(m), 2);
	assert_int_equal(gctx_model__ctx(m, 1)->device, 0);

	do_fork(m, 500, 501, 2000);
	api(m, 501, 501, 3000, GCTX_HIP_MALLOC, HIP_OUT_OF_MEMORY, 0, PCTX, 4096, 0, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 1);
	f = find_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL, 501);
	assert_non_null(f);
	assert_int_equal(f->opener_pid, 500);
	assert_string_equal(f->call, "hipMalloc");
	assert_string_equal(f->api_ret_name, "hipErrorOutOfMemory");
	assert_int_equal(f->ctx_id, gctx_model__ctx(m, 1)->id); /* the parent's newest */
	assert_int_equal(f->nchain, 2);
	assert_non_null(strstr(f->detail, "HIP"));
	/* the failed call made no context in the child */
	assert_int_equal(gctx_model__nctxs(m), 2);
	assert_null(find_kind(m, GCTX_FIND_API_ERROR, 501));
}

static void test_hip_and_cuda_state_are_separate(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *hc;

	/* CUDA initialised and current on the thread; HIP memory still goes to HIP's context */
	cu_init(m, 550, 1000, 0);
	cu_retain(m, 550, 1100, 0, 0x5555a000, 0);
	api(m, 550, 550, 1200, GCTX_CU_CTX_SET_CURRENT, 0, 0, 0x5555a000, 0, 0, 0);
	api(m, 550, 550, 1300, GCTX_HIP_INIT, 0, 0, 0, 0, 0, 0);
	api(m, 550, 550, 1400, GCTX_HIP_MALLOC, 0, 0xa0000000, PCTX, 4096, 0, 0);
	assert_int_equal(gctx_model__nctxs(m), 2);
	hc = gctx_model__ctx(m, 1);
	assert_int_equal(hc->vendor, GCTX_VENDOR_HIP);
	assert_int_equal(mem_by_ptr(m, 0xa0000000)->ctx_id, hc->id);
	assert_int_equal(gctx_model__ctx(m, 0)->nallocs, 0);

	/* a child that only uses HIP after a CUDA-only parent is not an inherited HIP call */
	cu_init(m, 560, 2000, 0);
	do_fork(m, 560, 561, 2100);
	api(m, 561, 561, 2200, GCTX_HIP_INIT, 0, 0, 0, 0, 0, 0);
	assert_int_equal(count_kind(m, GCTX_FIND_INHERITED_CONTEXT_CALL), 0);
}

/* ---- kernel-object join ---- */

static void test_kernel_objects_joined(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;
	int client, tsg, share, other, late;

	do_thread(m, 600, 601, 100);
	do_open(m, 600, 1000, CTL_FILE, 3);
	do_rm_alloc(m, 600, 600, 1100, CTL_FILE, 3, 0xc1d00001, 0, 0xc1d00001, CLS_CLIENT);
	do_open(m, 700, 1200, CTL_FILE2, 4);
	do_rm_alloc(m, 700, 700, 1300, CTL_FILE2, 4, 0xc1d00002, 0, 0xc1d00002, CLS_CLIENT);
	/* cuCtxCreate_v2(pctx, flags, dev) on thread 600 runs from 2000 to 3000 */
	do_rm_alloc(m, 600, 600, 2100, CTL_FILE, 3, 0xc1d00001, 0xc1d00001, 0x5c000010, CLS_TSG);
	do_rm_alloc(m, 600, 600, 2200, CTL_FILE, 3, 0xc1d00001, 0x5c000010, 0x5c000011,
		    CLS_CTXSHARE);
	/* another process in the window */
	do_rm_alloc(m, 700, 700, 2300, CTL_FILE2, 4, 0xc1d00002, 0xc1d00002, 0x5c000020, CLS_TSG);
	/* a long ioctl of another thread of 600 that began before the call and ended in it:
	 * recorded after the call's objects, with an earlier time */
	do_rm_alloc(m, 600, 601, 1900, CTL_FILE, 3, 0xc1d00001, 0xc1d00001, 0x5c000030, CLS_DEVICE);
	api_dur(m, 600, 600, 2000, 1000, GCTX_CU_CTX_CREATE, 0, 0xc0c0a000, PCTX, 0, 0, 0);
	/* after the call */
	do_rm_alloc(m, 600, 600, 3500, CTL_FILE, 3, 0xc1d00001, 0x5c000010, 0x5c000040,
		    CLS_CTXSHARE);

	assert_int_equal(gctx_model__nctxs(m), 1);
	c = gctx_model__ctx(m, 0);
	client = obj_idx_by_class(m, CLS_CLIENT, 600);
	tsg = obj_idx_by_class(m, CLS_TSG, 600);
	share = obj_idx_by_class(m, CLS_CTXSHARE, 600);
	other = obj_idx_by_class(m, CLS_TSG, 700);
	late = obj_idx_by_class(m, CLS_DEVICE, 600);
	assert_true(client >= 0 && tsg >= 0 && share >= 0 && other >= 0 && late >= 0);
	assert_int_equal(gctx_model__obj(m, tsg)->kind, GCTX_OBJ_RM_CHANNEL_GROUP);
	assert_int_equal(gctx_model__obj(m, share)->kind, GCTX_OBJ_RM_CTXSHARE);
	assert_int_equal(c->nkobjs, 2);
	assert_true(ctx_has_kobj(c, tsg));
	assert_true(ctx_has_kobj(c, share));
	assert_false(ctx_has_kobj(c, client));
	assert_false(ctx_has_kobj(c, other));
	assert_false(ctx_has_kobj(c, late));
}

static void test_kernel_objects_joined_for_primary(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_api_ctx *c;
	int tsg;

	do_open(m, 650, 1000, CTL_FILE, 3);
	do_rm_alloc(m, 650, 650, 1100, CTL_FILE, 3, 0xc1d00001, 0, 0xc1d00001, CLS_CLIENT);
	cu_init(m, 650, 1200, 0);
	do_rm_alloc(m, 650, 650, 2500, CTL_FILE, 3, 0xc1d00001, 0xc1d00001, 0x5c000010, CLS_TSG);
	api_dur(m, 650, 650, 2000, 5000, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, 0x5555a000, PCTX, 0,
		0, 0);
	c = gctx_model__ctx(m, 0);
	tsg = obj_idx_by_class(m, CLS_TSG, 650);
	assert_int_equal(c->nkobjs, 1);
	assert_true(ctx_has_kobj(c, tsg));
	/* a retain of an existing primary context joins nothing more */
	do_rm_alloc(m, 650, 650, 8100, CTL_FILE, 3, 0xc1d00001, 0x5c000010, 0x5c000011,
		    CLS_CTXSHARE);
	api_dur(m, 650, 650, 8000, 500, GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, 0x5555a000, PCTX, 0,
		0, 0);
	assert_int_equal(c->nkobjs, 1);
	do_exit(m, 650, 9000);
}

/* ---- probe records ---- */

static void test_probe_record_kept(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_rec_probe *got;
	struct gctx_rec_probe r, r2;
	static const __u8 insn[8] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};

	assert_int_equal(gctx_model__nprobes(m), 0);
	assert_null(gctx_model__probe(m, 0));
	memset(&r, 0, sizeof(r));
	r.fn = GCTX_CU_CTX_CREATE_V4;
	r.how = GCTX_PROBE_SYMBOL;
	r.sym_offset = 0x2f1a0;
	r.offset = 0x2f1a4;
	r.retprobe = 1;
	memcpy(r.insn, insn, sizeof(insn));
	snprintf(r.symbol, sizeof(r.symbol), "cuCtxCreate_v4");
	snprintf(r.lib, sizeof(r.lib), "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05");
	feed(m, GCTX_REC_PROBE, &r, sizeof(r));
	r2 = r;
	r2.fn = GCTX_CU_MEM_ALLOC;
	r2.how = GCTX_PROBE_PROC_ADDRESS;
	r2.offset = r2.sym_offset = 0x41000;
	r2.err = -ENOENT;
	r2.retprobe = 0;
	snprintf(r2.symbol, sizeof(r2.symbol), "cuMemAlloc");
	feed(m, GCTX_REC_PROBE, &r2, sizeof(r2));

	assert_int_equal(gctx_model__nprobes(m), 2);
	got = gctx_model__probe(m, 0);
	assert_non_null(got);
	assert_memory_equal(got, &r, sizeof(r));
	got = gctx_model__probe(m, 1);
	assert_int_equal(got->how, GCTX_PROBE_PROC_ADDRESS);
	assert_int_equal(got->err, -ENOENT);
	assert_string_equal(got->symbol, "cuMemAlloc");
	assert_null(gctx_model__probe(m, 2));
	assert_int_equal(gctx_model__feed(m, GCTX_REC_PROBE, &r, sizeof(r) - 1), -EINVAL);
	assert_int_equal(gctx_model__nprobes(m), 2);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		TEST(test_cuda_primary_context),
		TEST(test_cuda_ctx_create_current_and_memory),
		TEST(test_launches_count_on_current),
		TEST(test_fork_child_calls_cuda),
		TEST(test_fork_before_init_and_exec_are_clean),
		TEST(test_exec_starts_new_contexts),
		TEST(test_long_fork_chain_keeps_offender),
		TEST(test_api_error_aggregated),
		TEST(test_call_without_return_is_not_an_error),
		TEST(test_hip_implicit_primary_and_fork),
		TEST(test_hip_and_cuda_state_are_separate),
		TEST(test_kernel_objects_joined),
		TEST(test_kernel_objects_joined_for_primary),
		TEST(test_probe_record_kept),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
