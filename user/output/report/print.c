// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Live one-line printing of kernel records and findings, and the string formatters shared
 * with the text report. Records are copied into a local union before use: the caller's buffer
 * may be unaligned (trace file) and is never trusted beyond len.
 */
#include <stdbool.h>
#include <string.h>

#include "lib/errcode.h"
#include "decode/decode.h"
#include "decode/api.h"
#include "output/report/print.h"
#include "trace/records.h"

#define NS_PER_SEC 1000000000ULL
#define NS_PER_US  1000ULL

/* Kernel open flag values (asm-generic/fcntl.h, which x86 uses); O_LARGEFILE is 0 in x86-64
 * userspace headers but the kernel reports it, so spell the values out. */
static const struct {
	__u32 bit;
	const char *name;
} gctx_open_flag_names[] = {
    {00000100, "O_CREAT"},     {00000200, "O_EXCL"},	   {00000400, "O_NOCTTY"},
    {00001000, "O_TRUNC"},     {00002000, "O_APPEND"},	   {00004000, "O_NONBLOCK"},
    {00010000, "O_DSYNC"},     {00020000, "FASYNC"},	   {00040000, "O_DIRECT"},
    {00100000, "O_LARGEFILE"}, {00200000, "O_DIRECTORY"},  {00400000, "O_NOFOLLOW"},
    {01000000, "O_NOATIME"},   {02000000, "O_CLOEXEC"},	   {04000000, "__O_SYNC"},
    {010000000, "O_PATH"},     {020000000, "__O_TMPFILE"},
};

void gctx_format_open_flags(char *dst, size_t dstlen, __u32 flags)
{
	static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};
	struct gctx_sbuf sb;
	char rest[16];
	size_t i;

	gctx_sbuf__init(&sb, dst, dstlen);
	gctx_sbuf__put(&sb, acc[flags & 3], strlen(acc[flags & 3]));
	flags &= ~3u;
	for (i = 0; i < sizeof(gctx_open_flag_names) / sizeof(gctx_open_flag_names[0]); i++) {
		if (!(flags & gctx_open_flag_names[i].bit))
			continue;
		gctx_sbuf__put(&sb, "|", 1);
		gctx_sbuf__put(&sb, gctx_open_flag_names[i].name,
			       strlen(gctx_open_flag_names[i].name));
		flags &= ~gctx_open_flag_names[i].bit;
	}
	if (flags) {
		snprintf(rest, sizeof(rest), "|0x%x", flags);
		gctx_sbuf__put(&sb, rest, strlen(rest));
	}
}

void gctx_format_reltime(char *dst, size_t dstlen, __u64 ts_ns, __u64 start_ns)
{
	unsigned long long d;
	const char *sign = "";

	if (!dstlen)
		return;
	if (ts_ns >= start_ns) {
		d = ts_ns - start_ns;
	} else {
		d = start_ns - ts_ns;
		sign = "-";
	}
	snprintf(dst, dstlen, "%s%llu.%06llu", sign, d / NS_PER_SEC, d % NS_PER_SEC / NS_PER_US);
}

/* name, or "<what> <v>" when it is NULL (a number the name tables do not know). */
static void gctx_format_named(char *dst, size_t dstlen, const char *name, const char *what, int v)
{
	if (!dstlen)
		return;
	if (name)
		snprintf(dst, dstlen, "%s", name);
	else
		snprintf(dst, dstlen, "%s %d", what, v);
}

void gctx_format_signal(char *dst, size_t dstlen, int sig)
{
	gctx_format_named(dst, dstlen, gctx_signal_name(sig), "signal", sig);
}

void gctx_format_errno(char *dst, size_t dstlen, int err)
{
	gctx_format_named(dst, dstlen, gctx_errno_name(err), "errno", err);
}

/* "cuMemAlloc(size=2097152) -> CUDA_SUCCESS out=0x7f0000000000" */
static void gctx_print_api(FILE *out, const struct gctx_ev_api *a)
{
	const char *rn = gctx_api_result_name(a->fn, a->ret);
	int size_arg = gctx_api_size_arg(a->fn), dev_arg = gctx_api_device_arg(a->fn);
	char str[GCTX_ESC_SIZE(GCTX_API_STR_LEN)], name[GCTX_API_STR_LEN];

	fprintf(out, " %s(", gctx_api_ev_name(a, name, sizeof(name)));
	if (a->flags & GCTX_API_STR_OK) {
		gctx_format_str(str, sizeof(str), a->str, strnlen(a->str, sizeof(a->str)));
		fprintf(out, "\"%s\" version=%llu flags=0x%llx", str,
			(unsigned long long)a->args[2], (unsigned long long)a->args[3]);
	} else if (size_arg >= 0) {
		fprintf(out, "size=%llu", (unsigned long long)a->args[size_arg]);
	} else if (dev_arg >= 0) {
		fprintf(out, "dev=%lld", (long long)(int)a->args[dev_arg]);
	} else if (a->fn != GCTX_CU_INIT && a->fn != GCTX_HIP_INIT) {
		fprintf(out, "0x%llx", (unsigned long long)a->args[0]);
	}
	fputc(')', out);
	if (!(a->flags & GCTX_API_RETURNED)) {
		fputc('\n', out);
		return;
	}
	if (rn)
		fprintf(out, " -> %s", rn);
	else
		fprintf(out, " -> %lld", (long long)a->ret);
	if (a->flags & GCTX_API_OUT_OK)
		fprintf(out, " out=0x%llx", (unsigned long long)a->out);
	fputc('\n', out);
}

/* "   0.001234 1234/1234     trainer         fork    " (no trailing separator) */
static void gctx_print_prefix(FILE *out, const struct gctx_ev_hdr *h, __u64 start, const char *verb)
{
	char t[32], ids[24], comm[GCTX_ESC_SIZE(GCTX_COMM_LEN)];

	gctx_format_reltime(t, sizeof(t), h->ts_ns, start);
	snprintf(ids, sizeof(ids), "%u/%u", h->tgid, h->tid);
	gctx_format_str(comm, sizeof(comm), h->comm, GCTX_COMM_LEN);
	fprintf(out, "%11s %-13s %-15s %-8s", t, ids, comm, verb);
}

static void gctx_print_exec(FILE *out, const struct gctx_ev_exec *e)
{
	char file[GCTX_ESC_SIZE(GCTX_PATH_LEN)], argv[GCTX_ESC_SIZE(GCTX_ARGS_LEN)];
	__u32 len = e->args_len < GCTX_ARGS_LEN ? e->args_len : GCTX_ARGS_LEN;
	const char *end;
	__u32 skip = 0;

	gctx_format_str(file, sizeof(file), e->filename, GCTX_PATH_LEN);
	/* The filename stands for argv[0]; print the arguments after it. */
	end = memchr(e->args, '\0', len);
	if (file[0])
		skip = end ? (__u32)(end - e->args) + 1 : len;
	gctx_format_argv(argv, sizeof(argv), e->args + skip, len - skip);
	fprintf(out, " %s%s%s\n", file, file[0] && argv[0] ? " " : "", argv);
}

static void gctx_print_exit(FILE *out, const struct gctx_ev_exit *e)
{
	char sig[32];
	int signo = e->exit_code & 0x7f;

	if (signo) {
		gctx_format_signal(sig, sizeof(sig), signo);
		fprintf(out, " killed by %s%s\n", sig, e->exit_code & 0x80 ? " (core dumped)" : "");
	} else {
		fprintf(out, " status %u\n", (e->exit_code >> 8) & 0xff);
	}
}

static void gctx_print_open(FILE *out, const struct gctx_ev_open *e)
{
	char path[GCTX_ESC_SIZE(GCTX_PATH_LEN)], flags[256], err[32];

	gctx_format_str(path, sizeof(path), e->path, GCTX_PATH_LEN);
	gctx_format_open_flags(flags, sizeof(flags), e->flags);
	if (e->fd >= 0) {
		fprintf(out, " %s %s fd=%d %s\n", gctx_dev_kind_name(e->kind), path, e->fd, flags);
	} else {
		gctx_format_errno(err, sizeof(err), gctx_ret_errno(e->fd));
		fprintf(out, " %s %s %s -> -1 %s\n", gctx_dev_kind_name(e->kind), path, flags, err);
	}
}

static void gctx_print_ioctl(FILE *out, const struct gctx_ev_ioctl *e)
{
	struct gctx_ioctl_desc d;
	char res[64];

	memset(&d, 0, sizeof(d));
	gctx_decode_ioctl(e, &d);
	d.name[sizeof(d.name) - 1] = '\0';
	d.detail[sizeof(d.detail) - 1] = '\0';
	d.status_name[sizeof(d.status_name) - 1] = '\0';
	if (d.err) {
		strcpy(res, "-1 ");
		gctx_format_errno(res + 3, sizeof(res) - 3, d.err);
	} else if (d.has_status) {
		snprintf(res, sizeof(res), "%s", d.status_name);
	} else {
		snprintf(res, sizeof(res), "%lld", (long long)e->ret);
	}
	fprintf(out, " %s fd=%d %s%s%s -> %s\n", gctx_dev_kind_name(e->kind), e->fd, d.name,
		d.detail[0] ? " " : "", d.detail, res);
}

static void gctx_print_mmap(FILE *out, const struct gctx_ev_mmap *e)
{
	char prot[4], off[32] = "", res[48];

	prot[0] = e->prot & 0x1 ? 'r' : '-';
	prot[1] = e->prot & 0x2 ? 'w' : '-';
	prot[2] = e->prot & 0x4 ? 'x' : '-';
	prot[3] = '\0';
	if (e->off)
		snprintf(off, sizeof(off), " off=0x%llx", (unsigned long long)e->off);
	if (e->ret < 0 && e->ret > -4096) {
		strcpy(res, "-1 ");
		gctx_format_errno(res + 3, sizeof(res) - 3, gctx_ret_errno(e->ret));
	} else {
		snprintf(res, sizeof(res), "0x%llx", (unsigned long long)e->ret);
	}
	fprintf(out, " %s fd=%d len=%llu%s prot=%s -> %s\n", gctx_dev_kind_name(e->kind), e->fd,
		(unsigned long long)e->len, off, prot, res);
}

void gctx_print_event(FILE *out, __u32 type, const void *data, __u32 len, __u64 start_mono_ns)
{
	union gctx_record ev;
	const char *verb;

	if (!out || !gctx_record_copy(&ev, type, data, len))
		return;

	switch (type) {
	case GCTX_EV_FORK:
		verb = ev.fork.flags & GCTX_FORK_THREAD ? "clone" : "fork";
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, verb);
		if (ev.fork.flags & GCTX_FORK_THREAD)
			fprintf(out, " -> thread %u\n", ev.fork.child_tid);
		else
			fprintf(out, " -> pid %u\n", ev.fork.child_tgid);
		break;
	case GCTX_EV_EXEC:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "exec");
		gctx_print_exec(out, &ev.exec);
		break;
	case GCTX_EV_EXIT:
		if (!ev.exit.group_dead) {
			gctx_print_prefix(out, &ev.hdr, start_mono_ns, "thread-exit");
			fputc('\n', out);
			break;
		}
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "exit");
		gctx_print_exit(out, &ev.exit);
		break;
	case GCTX_EV_OPEN:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "open");
		gctx_print_open(out, &ev.open);
		break;
	case GCTX_EV_IOCTL:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "ioctl");
		gctx_print_ioctl(out, &ev.ioctl);
		break;
	case GCTX_EV_MMAP:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "mmap");
		gctx_print_mmap(out, &ev.mmap);
		break;
	case GCTX_EV_CLOSE:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "close");
		fprintf(out, " %s fd=%d\n", gctx_dev_kind_name(ev.fd.kind), ev.fd.fd);
		break;
	case GCTX_EV_FD_KEPT:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "fd-kept");
		fprintf(out, " %s fd=%d survived exec\n", gctx_dev_kind_name(ev.fd.kind), ev.fd.fd);
		break;
	case GCTX_EV_API:
		gctx_print_prefix(out, &ev.hdr, start_mono_ns, "api");
		gctx_print_api(out, &ev.api);
		break;
	}
}

void gctx_print_finding(FILE *out, const struct gctx_finding *f, __u64 start_mono_ns)
{
	char t[32], detail[GCTX_ESC_SIZE(sizeof(f->detail))];

	if (!out || !f)
		return;
	gctx_format_reltime(t, sizeof(t), f->time_ns, start_mono_ns);
	gctx_format_str(detail, sizeof(detail), f->detail, sizeof(f->detail));
	fprintf(out, "%11s FINDING %s %s pid %u: %s\n", t, gctx_severity_name(f->severity),
		gctx_finding_kind_name(f->kind), f->pid, detail);
}
