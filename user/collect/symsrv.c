// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symboliser: libdw (unwind.c) in a sandboxed helper process (lib/sandbox.h), driven from
 * here (interface in unwind.h). gpuctx opens each module file (modfiles.c: map_files, checked
 * device and inode) when the helper asks for it and passes the descriptor; the helper maps
 * and parses it, unwinds, and sends back frames with their raw names, which gpuctx demangles
 * (lib/demangle.h, itself bounded). A helper that crashes (a file truncated under libdw's
 * mapping: SIGBUS), loops or stalls past the deadline is killed: that stack keeps its frame-
 * pointer addresses with module and offset, and a new helper serves the next one. Failures are
 * counted per user (the real uid of the process whose stack it was): one user's files can
 * turn symbols off for that user's stacks for an hour, never for another user's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/libfile.h"
#include "collect/unwind_priv.h"
#include "lib/failbudget.h"
#include "lib/grow.h"
#include "lib/sandbox.h"
#include "lib/str.h"

#define SYMSRV_TIMEOUT_MS     10000 /* one stack: libdw's first look at torch takes seconds */
#define SYMSRV_MAX_FAILS      8	    /* helpers lost on one user's stacks in an hour, then none */
#define SYMSRV_FAIL_WINDOW_MS (3600 * 1000ull)
#define MAPS_CHUNK	      128 /* mappings per message (a message is at most ~200 KiB) */
#define MAX_MAPS	      4096
#define NEVER		      (~0ull)

enum { REQ_UNWIND = 1, REQ_SYMBOLISE = 2 };
enum { MSG_OPEN = 1, MSG_FRAME = 2, MSG_DONE = 3 };

struct req {
	__u32 op, nmaps, rawlen, max;
	__u64 addr;
	__u32 pid, pad;
};

struct msg_open {
	__u32 type, idx;
};

struct msg_frame {
	__u32 type, pad;
	struct gctx_rec_frame f;
	char name[UW_NAME_MAX];
};

struct msg_done {
	__u32 type;
	__s32 ret;
	char how[32];
	char note[96];
};

union msg {
	__u32 type;
	struct msg_open open;
	struct msg_frame frame;
	struct msg_done done;
};

/* ---- in the helper ---- */

static int h_sock;

static int h_open(__u32 idx)
{
	struct msg_open m = {MSG_OPEN, idx};
	__s32 err = 0;
	int fd = -1;

	if (gctx_sandbox_send(h_sock, &m, sizeof(m), NULL, 0, -1, NEVER) ||
	    gctx_sandbox_recv(h_sock, &err, sizeof(err), &fd, NEVER) != sizeof(err))
		_exit(1);
	if (err || fd < 0) {
		if (fd >= 0)
			close(fd);
		return err ? err : -ENOENT;
	}
	return fd;
}

static void h_send_frames(const struct gctx_rec_frame *f, char (*names)[UW_NAME_MAX], int n)
{
	static struct msg_frame m;

	for (int i = 0; i < n; i++) {
		size_t nl = strnlen(names[i], UW_NAME_MAX - 1);

		m.type = MSG_FRAME;
		m.f = f[i];
		memcpy(m.name, names[i], nl);
		m.name[nl] = 0;
		if (gctx_sandbox_send(h_sock, &m, offsetof(struct msg_frame, name) + nl + 1, NULL,
				      0, -1, NEVER))
			_exit(1);
	}
}

static void helper_main(int sock)
{
	static union {
		struct gctx_ev_stack s;
		__u8 b[sizeof(struct gctx_ev_stack)];
	} raw;
	static struct gctx_rec_frame out[GCTX_STACK_MAX_FRAMES];
	static char names[GCTX_STACK_MAX_FRAMES][UW_NAME_MAX];
	struct gctx_maps maps = {0};
	struct msg_done done;
	struct req q;

	h_sock = sock;
	for (;;) {
		const char *how = "";
		__u32 got = 0;
		int n = 0;

		if (gctx_sandbox_recv(sock, &q, sizeof(q), NULL, NEVER) != sizeof(q) ||
		    q.nmaps > MAX_MAPS || q.rawlen > sizeof(raw) || q.max > GCTX_STACK_MAX_FRAMES ||
		    gctx_grow(&maps.v, &maps.cap, q.nmaps, sizeof(*maps.v)))
			_exit(1);
		while (got < q.nmaps) {
			__u32 k = q.nmaps - got < MAPS_CHUNK ? q.nmaps - got : MAPS_CHUNK;

			if (gctx_sandbox_recv(sock, maps.v + got, k * sizeof(*maps.v), NULL,
					      NEVER) != (ssize_t)(k * sizeof(*maps.v)))
				_exit(1);
			got += k;
		}
		/* gpuctx kills a helper past its deadline; one whose gpuctx is gone ends here */
		alarm(SYMSRV_TIMEOUT_MS / 1000 + 2);
		for (__u32 i = 0; i < q.nmaps; i++)
			maps.v[i].path[sizeof(maps.v[i].path) - 1] = 0;
		maps.n = q.nmaps;
		maps.pid = q.pid;
		memset(&done, 0, sizeof(done));
		done.type = MSG_DONE;
		if (q.op == REQ_UNWIND) {
			if (q.rawlen < GCTX_EV_STACK_HDR_LEN ||
			    gctx_sandbox_recv(sock, raw.b, q.rawlen, NULL, NEVER) != q.rawlen)
				_exit(1);
			n = uw_unwind(&raw.s, q.rawlen, &maps, h_open, out, names, q.max, &how);
			snprintf(done.note, sizeof(done.note), "%s", uw_note());
			done.ret = n;
		} else {
			done.ret = uw_symbolise(&maps, h_open, q.addr, out, names[0]);
			n = 1;
		}
		snprintf(done.how, sizeof(done.how), "%s", how);
		h_send_frames(out, names, n);
		if (gctx_sandbox_send(sock, &done, sizeof(done), NULL, 0, -1, NEVER))
			_exit(1);
		alarm(0);
	}
}

/* ---- in gpuctx ---- */

static const struct gctx_sandbox_opts srv_opts = {
    .mem_bytes = 16ul << 30, /* libdw maps whole libraries (torch's: gigabytes) */
    .cpu_s = 600,
    .nofile = 8192,	/* the sessions keep their module files open */
    .read_files = true, /* separate debug info, by build-id and debuglink, as nobody */
};

static struct {
	pthread_mutex_t lock; /* held by the callers of unwind.h around calls and note */
	struct gctx_sandbox sb;
	struct gctx_failbudget fails; /* per uid */
	char note[128];
	char names[GCTX_STACK_MAX_FRAMES][UW_NAME_MAX];
} srv = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .fails = {.max = SYMSRV_MAX_FAILS, .window_ms = SYMSRV_FAIL_WINDOW_MS},
};

void gctx_unwind_lock(void)
{
	pthread_mutex_lock(&srv.lock);
}

void gctx_unwind_unlock(void)
{
	pthread_mutex_unlock(&srv.lock);
}

const char *gctx_unwind_note(void)
{
	return srv.note;
}

void gctx_unwind_cache_clear(void)
{
	gctx_sandbox__stop(&srv.sb);
	gctx_failbudget_init(&srv.fails, SYMSRV_MAX_FAILS, SYMSRV_FAIL_WINDOW_MS);
	srv.note[0] = 0;
	gctx_modfiles_clear();
	gctx_demangle_stop();
}

/* Strings terminated, a kind the record knows. */
static void frame_clean(struct gctx_rec_frame *f)
{
	f->function[sizeof(f->function) - 1] = 0;
	f->file[sizeof(f->file) - 1] = 0;
	f->module[sizeof(f->module) - 1] = 0;
	if (f->kind != GCTX_FRAME_NATIVE && f->kind != GCTX_FRAME_INLINE)
		f->kind = GCTX_FRAME_NATIVE;
}

/* Whom pid's stack is charged to: its real uid (from its status, where gpuctx's own checks read
 * it; /proc/PID's owner is root for a process that made itself not dumpable). (__u32)-1, a
 * user of its own, when it cannot be read. */
static __u32 uid_of(__u32 pid)
{
	struct gctx_cred c;

	return gctx_cred__of_pid(pid, &c) ? (__u32)-1 : (__u32)c.ruid;
}

/* Send a request with its mappings (and raw stack), answer the helper's requests for files,
 * collect up to max frames with their names. 0 with *n and *done, or -errno (-EPERM: this
 * user's budget of failures is spent). */
static int call(const struct req *q, __u32 uid, const struct gctx_maps *maps, const void *raw,
		struct gctx_rec_frame *out, int max, int *n, struct msg_done *done)
{
	static union msg m;
	__u64 deadline = gctx_sandbox_now_ms() + SYMSRV_TIMEOUT_MS;
	int err;

	*n = 0;
	if (!gctx_failbudget_ok(&srv.fails, uid, gctx_sandbox_now_ms()))
		return -EPERM;
	if (srv.sb.pid <= 0) {
		err = gctx_sandbox__start(&srv.sb, &srv_opts, helper_main);
		if (err)
			return err;
	}
	err = gctx_sandbox_send(srv.sb.fd, q, sizeof(*q), NULL, 0, -1, deadline);
	for (__u32 got = 0; !err && got < q->nmaps; got += MAPS_CHUNK) {
		__u32 k = q->nmaps - got < MAPS_CHUNK ? q->nmaps - got : MAPS_CHUNK;

		err = gctx_sandbox_send(srv.sb.fd, maps->v + got, k * sizeof(*maps->v), NULL, 0, -1,
					deadline);
	}
	if (!err && q->op == REQ_UNWIND)
		err = gctx_sandbox_send(srv.sb.fd, raw, q->rawlen, NULL, 0, -1, deadline);
	while (!err) {
		ssize_t len = gctx_sandbox_recv(srv.sb.fd, &m, sizeof(m), NULL, deadline);

		if (len < 0)
			return len;
		if (len == sizeof(m.open) && m.type == MSG_OPEN) {
			int fd = m.open.idx < maps->n ? gctx_map_open(maps, &maps->v[m.open.idx])
						      : -EINVAL;
			__s32 e = fd < 0 ? fd : 0;

			err = gctx_sandbox_send(srv.sb.fd, &e, sizeof(e), NULL, 0, fd, deadline);
			if (fd >= 0)
				close(fd);
		} else if (len > (ssize_t)offsetof(struct msg_frame, name) && m.type == MSG_FRAME &&
			   !((char *)&m)[len - 1]) {
			if (*n < max && *n < GCTX_STACK_MAX_FRAMES) {
				/* the helper parsed hostile files: its frames are input too */
				out[*n] = m.frame.f;
				frame_clean(&out[*n]);
				memcpy(srv.names[*n], m.frame.name,
				       len - offsetof(struct msg_frame, name));
				(*n)++;
			}
		} else if (len == sizeof(m.done) && m.type == MSG_DONE) {
			*done = m.done;
			done->how[sizeof(done->how) - 1] = 0;
			done->note[sizeof(done->note) - 1] = 0;
			return 0;
		} else {
			err = -EPROTO;
		}
	}
	return err;
}

/* The helper failed on a request for uid's stack: kill it, and say why in the stack's note. */
static void lost(int err, __u32 uid)
{
	if (err == -EPERM) {
		snprintf(srv.note, sizeof(srv.note),
			 "no native symbols: the symboliser failed %u times within an hour on "
			 "this user's files, turned off for them",
			 SYMSRV_MAX_FAILS);
		return;
	}
	gctx_sandbox__stop(&srv.sb);
	gctx_failbudget_fail(&srv.fails, uid, gctx_sandbox_now_ms());
	snprintf(srv.note, sizeof(srv.note), "no native symbols: the symboliser %s on these files",
		 err == -ETIMEDOUT ? "timed out" : "crashed");
}

/* Frame names as the files have them, for display: demangled, fitted (bounded). */
static void names_out(struct gctx_rec_frame *out, int n)
{
	for (int i = 0; i < n; i++)
		if (srv.names[i][0])
			gctx_demangle(srv.names[i], UW_NAME_MAX, out[i].function,
				      sizeof(out[i].function));
}

/* Without the symboliser: the frame-pointer walk (or the pc), with module and offset. */
static int unsymbolised(const struct gctx_ev_stack *s, const struct gctx_maps *maps,
			struct gctx_rec_frame *out, int max)
{
	__u32 k = s->nips < GCTX_STACK_MAX_IPS ? s->nips : GCTX_STACK_MAX_IPS;
	int n = 0;

	for (__u32 i = 0; i < k && n < max; i++, n++) {
		memset(&out[n], 0, sizeof(out[n]));
		out[n].kind = GCTX_FRAME_NATIVE;
		out[n].addr = s->ips[i];
		uw_frame_from_maps(maps, &out[n]);
	}
	if (!n && max > 0) {
		memset(&out[0], 0, sizeof(out[0]));
		out[0].kind = GCTX_FRAME_NATIVE;
		out[0].addr = s->regs[16];
		uw_frame_from_maps(maps, &out[0]);
		n = 1;
	}
	return n;
}

int gctx_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
		struct gctx_rec_frame *out, int max, const char **how)
{
	static char how_buf[32];
	struct req q = {.op = REQ_UNWIND, .pid = maps->pid};
	__u32 uid = uid_of(maps->pid);
	unsigned long refused;
	struct msg_done done;
	int n, err;

	srv.note[0] = 0;
	*how = "no registers";
	if (!(s->flags & GCTX_STK_REGS_OK) || max <= 0)
		return 0;
	if (max > GCTX_STACK_MAX_FRAMES)
		max = GCTX_STACK_MAX_FRAMES;
	q.max = max;
	q.nmaps = maps->n < MAX_MAPS ? maps->n : MAX_MAPS;
	q.rawlen = len < sizeof(*s) ? len : sizeof(*s);
	err = call(&q, uid, maps, s, out, max, &n, &done);
	if (err == -EPIPE) {
		/* crashed (a file truncated under its mapping): a new helper sees the file as it
		 * is now, and symbolises what is left */
		lost(err, uid);
		err = call(&q, uid, maps, s, out, max, &n, &done);
	}
	if (err) {
		lost(err, uid);
		*how = "no symboliser";
		return unsymbolised(s, maps, out, max);
	}
	snprintf(how_buf, sizeof(how_buf), "%s", done.how);
	snprintf(srv.note, sizeof(srv.note), "%s", done.note);
	*how = how_buf;
	refused = gctx_demangle_refused();
	names_out(out, n);
	refused = gctx_demangle_refused() - refused;
	if (refused) {
		size_t o = strlen(srv.note);

		snprintf(srv.note + o, sizeof(srv.note) - o,
			 "%s%lu C++ name%s kept mangled (over the demangler's budget)",
			 o ? "; " : "", refused, refused > 1 ? "s" : "");
	}
	return n;
}

int gctx_unwind_symbolise(const struct gctx_maps *maps, __u64 addr, struct gctx_rec_frame *out)
{
	struct req q = {.op = REQ_SYMBOLISE, .addr = addr, .max = 1};
	__u32 uid = maps ? uid_of(maps->pid) : (__u32)-1;
	struct msg_done done;
	int n, err;

	memset(out, 0, sizeof(*out));
	out->kind = GCTX_FRAME_NATIVE;
	out->addr = addr;
	if (!maps || !maps->n || !addr)
		return -ENOENT;
	q.pid = maps->pid;
	q.nmaps = maps->n < MAX_MAPS ? maps->n : MAX_MAPS;
	err = call(&q, uid, maps, NULL, out, 1, &n, &done);
	if (err) {
		lost(err, uid);
		memset(out, 0, sizeof(*out));
		out->kind = GCTX_FRAME_NATIVE;
		out->addr = addr;
		return -ENOENT;
	}
	if (n != 1 || done.ret) {
		memset(out, 0, sizeof(*out));
		out->kind = GCTX_FRAME_NATIVE;
		out->addr = addr;
		return -ENOENT;
	}
	names_out(out, 1);
	return 0;
}
