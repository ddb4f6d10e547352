// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe of a forked child's Python exceptions (bpf/pyraise.bpf.c): an object of its own,
 * loaded on a thread of its own once a process has GPU state (libwatch.c: the first GPU file
 * opened or present at attach), or else the first time a child that maps CPython is attached
 * (childprobe.c), while that child is held. A recording with no GPU process never pays for
 * verifying it, and the command starts without waiting for it either way
 * (docs/performance.md). Every map it declares that the API object
 * has too (the ring buffer, the followed processes, the Python layouts, the stack state and
 * scratch) is the API object's, by fd: that object reuses the main object's already.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "api.skel.h"
#include "pyraise.skel.h"
#include "collect/discover.h"
#include "collect/uprobes_priv.h"

static struct pyraise_bpf *load(const struct gctx_uprobes *u, int *err)
{
	const struct api_bpf__rodata *k = u->skel->rodata; /* its knobs, readable after load */
	struct pyraise_bpf *py = pyraise_bpf__open();
	const struct bpf_map *a;
	struct bpf_map *m;

	if (!py) {
		*err = -errno;
		return NULL;
	}
	py->rodata->follow_all = k->follow_all;
	py->rodata->self_tgid = k->self_tgid;
	py->rodata->wakeup_bytes = k->wakeup_bytes;
	py->rodata->stacks_on = k->stacks_on;
	py->rodata->task_fsbase_off = k->task_fsbase_off;
	bpf_program__set_expected_attach_type(py->progs.py_raise, ATTACH_UPROBE_MULTI);
	bpf_object__for_each_map (m, py->obj) {
		if (bpf_map__is_internal(m))
			continue;
		a = bpf_object__find_map_by_name(u->skel->obj, bpf_map__name(m));
		if (a && bpf_map__reuse_fd(m, bpf_map__fd(a))) {
			*err = -errno;
			goto err_destroy;
		}
	}
	*err = pyraise_bpf__load(py);
	if (!*err)
		return py;
err_destroy:
	pyraise_bpf__destroy(py);
	return NULL;
}

int gctx_uprobes__raise_prog(struct gctx_uprobes *u)
{
	struct pyraise_bpf *py;
	__u64 t0;
	int ret;

	if (!u || !u->multi)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&u->py_mu);
	if (!u->py && !u->py_err) {
		t0 = gctx_now_mono();
		py = load(u, &u->py_err);
		if (py) {
			__atomic_store_n(&u->py, py, __ATOMIC_RELEASE);
			if (u->o.verbose)
				fprintf(stderr,
					"gpuctx: the Python exception probe loaded in %.2f ms\n",
					(gctx_now_mono() - t0) / 1e6);
		} else {
			if (!u->py_err)
				u->py_err = -EINVAL;
			fprintf(stderr,
				"gpuctx: warning: cannot load the Python exception probe: %s: the "
				"exceptions of forked children are not recorded\n",
				strerror(-u->py_err));
		}
	}
	ret = u->py ? bpf_program__fd(u->py->progs.py_raise) : u->py_err;
	pthread_mutex_unlock(&u->py_mu);
	return ret;
}

static void *loader(void *arg)
{
	gctx_uprobes__raise_prog(arg);
	return NULL;
}

void gctx_uprobes__raise_prepare(struct gctx_uprobes *u)
{
	if (!u || !u->multi || u->py_loading)
		return;
	/* no thread: the first child that needs it loads it while held, as before */
	u->py_loading = !pthread_create(&u->py_loader, NULL, loader, u);
}

__u64 uprb_raise_drops(const struct gctx_uprobes *u)
{
	const struct pyraise_bpf *py = __atomic_load_n(&u->py, __ATOMIC_ACQUIRE);

	return py ? __atomic_load_n(&py->bss->pyexc_drops, __ATOMIC_RELAXED) : 0;
}

void uprb_raise_wait(struct gctx_uprobes *u)
{
	if (u->py_loading)
		pthread_join(u->py_loader, NULL);
	u->py_loading = false;
}

void uprb_raise_free(struct gctx_uprobes *u)
{
	pyraise_bpf__destroy(u->py);
	pthread_mutex_destroy(&u->py_mu);
}
