// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Skeleton lifecycle: open -> configure rodata -> load -> fill maps -> attach -> poll. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "collect/ringread.h"
#include "collect/tpformat.h"
#include "decode/pystack.h"
#include "gpuctx.skel.h"

struct gctx_collector {
	struct gpuctx_bpf *skel;
	struct gctx_ringread *rb;
	struct bpf_link *iter_link;
	struct bpf_link *open_links[2]; /* open_exit_all on sys_exit_open and sys_exit_openat2 */
	gctx_record_fn cb;
	void *cb_ctx;
	bool have_iter;
	char features[96];
};

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* libbpf's own warnings are noise when a feature probe falls back: -v shows them */
	return verbose_libbpf ? vfprintf(stderr, fmt, args) : 0;
}

/* A Python child's exception message as raw code units (non-ASCII): UTF-8 from here on. */
static int pyexc_utf8(struct gctx_collector *c, const struct gctx_ev_pyexc *raw)
{
	struct gctx_ev_pyexc e = *raw;
	__u32 n = GCTX_PYEXC_RAW_BYTES(raw->flags);

	memset(e.msg, 0, sizeof(e.msg));
	e.flags &= ~GCTX_PYEXC_RAW_MASK;
	if (n <= sizeof(raw->msg) &&
	    gctx_py_str_utf8(raw->msg, n, GCTX_PYEXC_RAW_KIND(raw->flags), e.msg, sizeof(e.msg)))
		e.flags |= GCTX_PYEXC_MSG_OK;
	return c->cb(c->cb_ctx, e.hdr.type, &e, sizeof(e));
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct gctx_collector *c = ctx;

	if (size < sizeof(__u32) || !c->cb)
		return 0;
	if (*(__u32 *)data == GCTX_EV_PYEXC && size == sizeof(struct gctx_ev_pyexc) &&
	    (((struct gctx_ev_pyexc *)data)->flags & GCTX_PYEXC_MSG_RAW))
		return pyexc_utf8(c, data);
	/* as the kernel sent it: a packed ioctl record is stored packed (trace/ring.h) */
	return c->cb(c->cb_ctx, *(__u32 *)data, data, size);
}

/* Program variants: tp_btf is preferred for lineage, raw_tp is the fallback. */
static void choose_lineage(struct gpuctx_bpf *s, bool btf)
{
	bpf_program__set_autoload(s->progs.fork_btf, btf);
	bpf_program__set_autoload(s->progs.exec_btf, btf);
	bpf_program__set_autoload(s->progs.exit_btf, btf);
	bpf_program__set_autoload(s->progs.fork_raw, !btf);
	bpf_program__set_autoload(s->progs.exec_raw, !btf);
	bpf_program__set_autoload(s->progs.exit_raw, !btf);
}

static bool tracepoint_exists(const char *cat, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/format", cat, name);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/%s/format", cat, name);
	return !access(path, F_OK);
}

/* Syscall tracepoints need tracefs; mount it where the kernel expects it when it is not. */
static int ensure_tracefs(char *err, size_t errlen)
{
	if (!access("/sys/kernel/tracing/events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/events", F_OK))
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    access("/sys/kernel/tracing/events", F_OK)) {
		if (errno == EPERM || errno == EACCES)
			snprintf(err, errlen,
				 "permission denied: gpuctx needs root, or CAP_BPF and "
				 "CAP_PERFMON with access to /sys/kernel/tracing");
		else
			snprintf(err, errlen,
				 "tracefs is not mounted and mounting it on "
				 "/sys/kernel/tracing failed (%s): mount it and retry",
				 strerror(errno));
		return -1;
	}
	return 0;
}

/* The kernel's programs see the host's pids, and gpuctx tells them its own, the processes to
 * follow and the ones to hold by the pids it sees: in another PID namespace (a container
 * without the host's) those differ, and holds and their guard would act on other processes.
 * The initial namespace has a fixed inode (PROC_PID_INIT_INO). */
static int check_pid_ns(char *err, size_t errlen)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);

	if (n <= 0)
		return 0; /* no /proc/self/ns: nothing to say */
	link[n] = 0;
	if (!strcmp(link, "pid:[4026531836]"))
		return 0;
	snprintf(err, errlen,
		 "running in a PID namespace of its own (%s), where pids are not "
		 "the kernel's: run it in the host's (docker --pid=host, Kubernetes hostPID: true)",
		 link);
	return -1;
}

static struct gpuctx_bpf *open_configured(const struct gctx_collector_opts *o, bool btf, bool iter)
{
	struct gpuctx_bpf *s = gpuctx_bpf__open();

	if (!s)
		return NULL;
	s->rodata->follow_all = o->follow_all;
	s->rodata->follow_cgroup = o->cgroup != NULL;
	s->rodata->self_tgid = o->self_tgid;
	s->rodata->uvm_major = o->uvm_major;
	s->rodata->kfd_major = o->kfd_major;
	s->rodata->nr_regdevs = o->ndevs;
	for (__u32 i = 0; i < o->ndevs && i < GCTX_MAX_REGDEVS; i++) {
		s->rodata->regdev_dev[i] = o->devs[i].dev;
		s->rodata->regdev_ino[i] = o->devs[i].ino;
		s->rodata->regdev_kind[i] = o->devs[i].kind;
	}
	s->rodata->track_libs = o->track_libs;
	s->rodata->stacks_on = !o->no_stacks;
	s->rodata->hold_on = o->track_libs && o->hold;
	if (o->ring_bytes && bpf_map__set_max_entries(s->maps.events, o->ring_bytes)) {
		gpuctx_bpf__destroy(s);
		return NULL;
	}
	s->rodata->wakeup_bytes = gctx_ring_wakeup_bytes(bpf_map__max_entries(s->maps.events));
	choose_lineage(s, btf);
	/* a forked child is held for its own API probes only when there are API probes */
	bpf_program__set_autoload(s->progs.clone_exit, o->track_libs);
	bpf_program__set_autoload(s->progs.clone3_exit, o->track_libs);
	bpf_program__set_autoload(s->progs.fork_exit, o->track_libs);
	bpf_program__set_autoload(s->progs.gpu_file_iter, iter);
	bpf_program__set_autoattach(s->progs.gpu_file_iter, false);
	return s;
}

/* The members of the struct prog's context argument points to, from the object's BTF: their
 * number (0 for a void * context, which reads no field), -1 when they cannot be told. */
static int ctx_members(const struct btf *btf, const struct bpf_program *prog,
		       struct gctx_tp_member *m, int max)
{
	const struct btf_type *t;
	const struct btf_member *mem;
	int id, n;

	id = btf__find_by_name_kind(btf, bpf_program__name(prog), BTF_KIND_FUNC);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return -1;
	id = btf__resolve_type(btf, btf_params(t)[0].type);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (!t || !btf_is_ptr(t))
		return -1;
	id = btf__resolve_type(btf, t->type);
	t = id >= 0 ? btf__type_by_id(btf, id) : NULL;
	if (!t || !btf_is_struct(t))
		return 0;
	mem = btf_members(t);
	n = btf_vlen(t);
	if (n > max)
		return -1;
	for (int i = 0; i < n; i++) {
		long size = btf__resolve_size(btf, mem[i].type);

		if (size < 0)
			return -1;
		m[i].name = btf__name_by_offset(btf, mem[i].name_off);
		m[i].off = btf_member_bit_offset(t, i) / 8;
		m[i].size = size;
	}
	return n;
}

/* prog reads the record of tracepoint cat/name through its context struct: it must lay the
 * fields out as the kernel's format file does (collect/tpformat.c), or it would read other
 * bytes than it names. */
static int check_tp(const struct bpf_object *obj, const struct bpf_program *prog, const char *cat,
		    const char *name, char *err, size_t errlen)
{
	struct gctx_tp_member m[32];
	char format[4096], why[160];
	int n, ret;

	n = ctx_members(bpf_object__btf(obj), prog, m, 32);
	if (n < 0) {
		snprintf(err, errlen, "BPF program %s: no BTF for its context struct",
			 bpf_program__name(prog));
		return -EINVAL;
	}
	if (!n)
		return 0;
	ret = gctx_tpformat__read(cat, name, format, sizeof(format));
	if (ret) {
		snprintf(err, errlen, "cannot read the format of tracepoint %s:%s: %s", cat, name,
			 strerror(-ret));
		return ret;
	}
	if (gctx_tpformat__match(format, m, n, why, sizeof(why))) {
		snprintf(err, errlen,
			 "BPF program %s does not match tracepoint %s:%s of this "
			 "kernel: %s",
			 bpf_program__name(prog), cat, name, why);
		return -EINVAL;
	}
	return 0;
}

int gctx_check_tracepoints(const struct bpf_object *obj, char *err, size_t errlen)
{
	struct bpf_program *prog;

	bpf_object__for_each_program (prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		char cat[64], name[64];

		if (!bpf_program__autoload(prog) || strncmp(sec, "tp/", 3) ||
		    sscanf(sec + 3, "%63[^/]/%63s", cat, name) != 2)
			continue;
		if (check_tp(obj, prog, cat, name, err, errlen))
			return -1;
	}
	return 0;
}

/* The program on sys_exit_openat also serves open(2) and openat2(2), where the kernel has their
 * tracepoints (not every kernel has both): one program for the three, its stack code verified
 * once. */
static int attach_opens(struct gctx_collector *c, char *err, size_t errlen)
{
	static const char *const tps[2] = {"sys_exit_open", "sys_exit_openat2"};

	for (int i = 0; i < 2; i++) {
		if (!tracepoint_exists("syscalls", tps[i]))
			continue;
		if (check_tp(c->skel->obj, c->skel->progs.open_exit_all, "syscalls", tps[i], err,
			     errlen))
			return -1;
		c->open_links[i] = bpf_program__attach_tracepoint(c->skel->progs.open_exit_all,
								  "syscalls", tps[i]);
		if (!c->open_links[i]) {
			snprintf(err, errlen, "cannot attach BPF programs: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Kernel layout facts the API object reads without CO-RE (bpf/gpuctx.bpf.c task_offsets):
 * a failed run leaves them 0, and the API object's stacks then go without Python frames. */
static void task_offsets(struct gctx_collector *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.task_offsets), &opts))
		c->skel->bss->task_fsbase_off = 0;
}

__u32 gctx_collector__task_fsbase_off(const struct gctx_collector *c)
{
	return c->skel->bss->task_fsbase_off;
}

static int set_cgroup(struct gctx_collector *c, const char *dir, char *err, size_t errlen)
{
	__u32 key = 0;
	int cg, ret = 0;

	cg = open(dir, O_RDONLY | O_DIRECTORY);
	if (cg < 0) {
		snprintf(err, errlen, "cannot open cgroup %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.cgroup_map), &key, &cg, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "%s is not a cgroup v2 directory: %s", dir, strerror(errno));
	}
	close(cg);
	return ret;
}

struct gctx_collector *gctx_collector__new(const struct gctx_collector_opts *o, char *err,
					   size_t errlen)
{
	static const struct {
		bool btf, iter;
	} variants[] = {{true, true}, {false, true}, {true, false}, {false, false}};
	struct gctx_collector *c;
	int ret = 0;

	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen,
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux): gpuctx "
			 "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return NULL;
	}
	if (check_pid_ns(err, errlen) || ensure_tracefs(err, errlen))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->cb = o->cb;
	c->cb_ctx = o->cb_ctx;

	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		c->skel = open_configured(o, variants[i].btf, variants[i].iter);
		if (!c->skel) {
			ret = -errno;
			snprintf(err, errlen, "cannot open BPF object: %s", strerror(-ret));
			goto err_free;
		}
		ret = gpuctx_bpf__load(c->skel);
		if (!ret) {
			c->have_iter = variants[i].iter;
			snprintf(c->features, sizeof(c->features), "lineage=%s discovery=%s",
				 variants[i].btf ? "tp_btf" : "raw_tp",
				 variants[i].iter ? "task_file-iterator" : "procfs");
			break;
		}
		gpuctx_bpf__destroy(c->skel);
		c->skel = NULL;
		if (ret == -EPERM || ret == -EACCES) {
			snprintf(err, errlen,
				 "loading BPF programs was refused (%s): run as root or "
				 "with CAP_BPF and CAP_PERFMON",
				 strerror(-ret));
			goto err_free;
		}
	}
	if (!c->skel) {
		snprintf(err, errlen,
			 "cannot load BPF programs: %s (rerun with -v for the "
			 "verifier log)",
			 strerror(-ret));
		goto err_free;
	}
	if (o->cgroup && set_cgroup(c, o->cgroup, err, errlen))
		goto err_destroy;
	task_offsets(c);
	if (gctx_check_tracepoints(c->skel->obj, err, errlen))
		goto err_destroy;
	ret = gpuctx_bpf__attach(c->skel);
	if (ret) {
		snprintf(err, errlen, "cannot attach BPF programs: %s", strerror(-ret));
		goto err_destroy;
	}
	if (attach_opens(c, err, errlen))
		goto err_destroy;
	c->rb = gctx_ringread__new(bpf_map__fd(c->skel->maps.events), on_sample, c);
	if (!c->rb) {
		snprintf(err, errlen, "cannot create ring buffer: %s", strerror(errno));
		goto err_destroy;
	}
	return c;

err_destroy:
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(c->open_links[i]);
	gpuctx_bpf__destroy(c->skel);
err_free:
	free(c);
	return NULL;
}

/* SIZE[K|M|G]: a power of two in [GCTX_RING_MIN, GCTX_RING_MAX]. 0, or -1 when it is not. */
int gctx_ring_size_parse(const char *arg, __u32 *out)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-')
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		end++;
		break;
	}
	if (*end || v > GCTX_RING_MAX / mult)
		return -1;
	v *= mult;
	if (v < GCTX_RING_MIN || (v & (v - 1)))
		return -1;
	*out = v;
	return 0;
}

/* A ring size as --ring-size takes it: 256K, 8M, 1G. */
const char *gctx_ring_size_str(__u64 bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 30))
		snprintf(buf, len, "%lluG", (unsigned long long)(bytes >> 30));
	else if (bytes >= (1u << 20))
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, len, "%lluK", (unsigned long long)(bytes >> 10));
	return buf;
}

int gctx_collector__follow(struct gctx_collector *c, __u32 tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.followed), &tgid, &one, BPF_ANY))
		return -errno;
	return 0;
}

int gctx_collector__holds_gpu(struct gctx_collector *c, __u32 tgid)
{
	int fd = bpf_map__fd(c->skel->maps.stk_state);
	__u32 v = 0;

	bpf_map_lookup_elem(fd, &tgid, &v); /* absent: 0 */
	v |= GCTX_STK_HOLDS;
	return bpf_map_update_elem(fd, &tgid, &v, BPF_ANY) ? -errno : 0;
}

void gctx_collector__set_early(struct gctx_collector *c, bool (*want)(const void *, size_t),
			       int (*fn)(void *, void *, size_t), void *ctx)
{
	int err = gctx_ringread__set_early(c->rb, want, fn, ctx);

	if (err)
		fprintf(stderr,
			"gpuctx: warning: no thread to act on held children at once (%s): the "
			"main loop does, between records\n",
			strerror(-err));
}

void gctx_collector__stop_early(struct gctx_collector *c)
{
	if (c)
		gctx_ringread__stop_early(c->rb);
}

int gctx_collector__poll(struct gctx_collector *c, int timeout_ms)
{
	/* Records are mostly submitted without wakeup: this reads whatever is there. */
	return gctx_ringread__poll(c->rb, timeout_ms);
}

/* A process found holding a GPU file at attach: its forks read the child's GPU fds from then on
 * (bpf/gpuctx.bpf.c on_fork), as those of a process seen opening one do. */
static void mark_gpu_fds(struct gctx_collector *c, __u32 tgid)
{
	int fd = bpf_map__fd(c->skel->maps.stk_state);
	__u32 v = 0;

	bpf_map_lookup_elem(fd, &tgid, &v);
	v |= GCTX_STK_GPU_FDS;
	bpf_map_update_elem(fd, &tgid, &v, BPF_ANY);
}

int gctx_collector__scan_files(struct gctx_collector *c,
			       void (*fn)(void *ctx, const struct gctx_found_file *f), void *ctx)
{
	struct gctx_iter_rec r;
	int fd, n = 0;
	ssize_t got;

	if (!c->have_iter)
		return -EOPNOTSUPP;
	if (!c->iter_link) {
		c->iter_link = bpf_program__attach_iter(c->skel->progs.gpu_file_iter, NULL);
		if (!c->iter_link)
			return -errno;
	}
	fd = bpf_iter_create(bpf_link__fd(c->iter_link));
	if (fd < 0)
		return -errno;
	while ((got = read(fd, &r, sizeof(r))) == sizeof(r)) {
		struct gctx_found_file f = {
		    .tgid = r.tgid,
		    .fd = r.fd,
		    .file = r.file,
		    .kind = r.kind,
		    .f_flags = r.f_flags,
		};

		mark_gpu_fds(c, r.tgid);
		fn(ctx, &f);
		n++;
	}
	if (got < 0)
		n = -errno;
	close(fd);
	return n;
}

void gctx_collector__drops(const struct gctx_collector *c, struct gctx_rec_drops *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		out->drops[i] = __atomic_load_n(&c->skel->bss->drops[i], __ATOMIC_RELAXED);
	out->missed_stash = __atomic_load_n(&c->skel->bss->missed_stash, __ATOMIC_RELAXED);
	out->unfollowed = __atomic_load_n(&c->skel->bss->follow_full, __ATOMIC_RELAXED);
}

__u64 gctx_collector__stack_lost(const struct gctx_collector *c)
{
	return __atomic_load_n(&c->skel->bss->stack_lost, __ATOMIC_RELAXED);
}

__u64 gctx_collector__vmas_lost(const struct gctx_collector *c)
{
	return __atomic_load_n(&c->skel->bss->vmas_lost, __ATOMIC_RELAXED);
}

__u64 gctx_collector__apimap_lost(const struct gctx_collector *c)
{
	return __atomic_load_n(&c->skel->bss->apimap_lost, __ATOMIC_RELAXED);
}

int gctx_collector__map_fd(const struct gctx_collector *c, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(c->skel->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

const char *gctx_collector__features(const struct gctx_collector *c)
{
	return c->features;
}

void gctx_collector__free(struct gctx_collector *c)
{
	if (!c)
		return;
	gctx_ringread__free(c->rb);
	bpf_link__destroy(c->iter_link);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(c->open_links[i]);
	gpuctx_bpf__destroy(c->skel);
	free(c);
}
