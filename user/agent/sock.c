// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's side of `gpuctx record --from-agent`: a root-only unix socket. A client names
 * processes ("pids 12,34\n") or a cgroup ("cgroup DIR\n"); it gets their trees' history from
 * the window, then their records live, framed as (type, length, bytes), and an end frame once
 * every member has exited (a cgroup's: once the client says "end": more may join by exec).
 * A client never blocks the agent: its socket is non-blocking, what it has not read
 * waits in a bounded buffer, and one that falls too far behind is cut off (it is told).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/agent.h"
#include "agent/proto.h"
#include "collect/discover.h"
#include "collect/jobcg.h"
#include "lib/esc.h"
#include "lib/grow.h"
#include "trace/window.h"

#define SUB_MAX	       16
#define REQ_WAIT_NS    (3 * 1000000000ull)
#define SUB_BUF_MAX    (64u << 20) /* unread bytes a client may leave before it is cut off */
#define PRUNE_AFTER_NS (10 * 1000000000ull) /* an exit this old: its late records are in */
#define END_TICKS      2 /* turns of the event loop after "end": each drains the ring buffer */

struct sub {
	int fd;
	struct gctx_tree t;
	char req[PATH_MAX + 16]; /* "cgroup DIR\n" */
	size_t reqlen;
	bool live;	/* history sent, records follow */
	__u64 asked_ns; /* when the request came: its processes may not have reached the model */
	bool closing;	/* end frame queued: close once flushed */
	bool cg;	/* a cgroup followed: members also join by exec'ing in it */
	__u32 ending;	/* turns since the client said "end" (0: it did not) */
	char cg_rel[GCTX_CGROUP_LEN]; /* the cgroup below the cgroup2 mount ("/a/b") */
	char *buf;
	size_t len, off, cap;
};

struct agent_subs {
	int lfd;
	struct gctx_cgpaths *cgpaths; /* an exec record's cgroup id to its path */
	struct sub v[SUB_MAX];
	__u32 n;
};

int agent_subs__open(struct agent *a, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct agent_subs *s = calloc(1, sizeof(*s));
	struct stat st;
	mode_t old;

	if (!s)
		return -ENOMEM;
	/* bound in the run directory agent__start opened and checked, whatever its path is */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", a->run_fd,
		 AGENT_SOCK_NAME);
	/* a socket left by an agent that died: ours to replace (the lock says none runs) */
	if (!fstatat(a->run_fd, AGENT_SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) && S_ISSOCK(st.st_mode))
		unlinkat(a->run_fd, AGENT_SOCK_NAME, 0);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	old = umask(0077);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(s->lfd, 8)) {
		snprintf(err, errlen, "cannot listen on %s/%s: %s", a->o.run_dir, AGENT_SOCK_NAME,
			 strerror(errno));
		umask(old);
		if (s->lfd >= 0)
			close(s->lfd);
		free(s);
		return -1;
	}
	umask(old);
	s->cgpaths = gctx_cgpaths__new();
	a->subs = s;
	return 0;
}

static int put(struct sub *c, __u32 type, const void *data, __u32 len)
{
	struct agent_frame f = {.type = type, .len = len};
	size_t need = sizeof(f) + len;

	if (c->closing || c->fd < 0)
		return 0;
	if (c->len - c->off + need > SUB_BUF_MAX)
		return -ENOBUFS;
	if (c->off && c->len + need > c->cap) { /* reuse what was sent */
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len + need > c->cap) {
		size_t cap = c->cap ? c->cap : 65536;
		char *p;

		while (cap < c->len + need)
			cap *= 2;
		p = realloc(c->buf, cap);
		if (!p)
			return -ENOMEM;
		c->buf = p;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, &f, sizeof(f));
	memcpy(c->buf + c->len + sizeof(f), data, len);
	c->len += need;
	return 0;
}

static void put_end(struct sub *c, __u32 type, const char *msg)
{
	put(c, type, msg, msg ? strlen(msg) : 0);
	c->closing = true;
}

static int put_sink(void *ctx, __u32 type, const void *data, __u32 len)
{
	return put(ctx, type, data, len);
}

static void drop(struct agent_subs *s, __u32 i)
{
	struct sub *c = &s->v[i];

	if (c->fd >= 0)
		close(c->fd);
	gctx_tree__free(&c->t);
	free(c->buf);
	s->v[i] = s->v[--s->n];
}

/* The tree's history from the window, then live. */
static void go_live(struct agent *a, struct sub *c, const struct gctx_model *m)
{
	struct gctx_cut cut = {.t = &c->t, .sink = put_sink, .sink_ctx = c};
	int ret;

	ret = gctx_cut__scan(&cut, m, a->win);
	if (!ret)
		ret = agent_cut__emit(&cut, a, m);
	if (!ret)
		ret = put(c, AGENT_FRAME_LIVE, NULL, 0);
	if (ret) {
		put_end(c, AGENT_FRAME_ERROR, "the agent could not send the history");
		return;
	}
	c->live = true;
}

/* Whether a cgroup path ("/a/b/c") is rel ("/a/b") or below it. */
static bool cg_under(const char *path, const char *rel)
{
	size_t n = strlen(rel);

	if (!strcmp(rel, "/"))
		return path[0] == '/';
	return !strncmp(path, rel, n) && (path[n] == '/' || !path[n]);
}

static int add_member(struct sub *c, const struct gctx_model *m, const struct gctx_proc *p)
{
	if (p->pid == c->t.skip || p->pid == (__u32)getpid() ||
	    gctx_tree__span_at(&c->t, p->pid, p->start_ns, true) != GCTX_SPAN_NONE)
		return 0;
	return gctx_tree__add(&c->t, m, p->idx);
}

struct cg_window {
	struct agent_subs *s;
	struct sub *c;
	struct gctx_hmap ids; /* cgroup id -> 1: under the cgroup followed, 2: not */
};

/* A process that exec'd in the cgroup and that the model forgot (folded: it exited and never
 * touched a GPU): its exec record in the window names the cgroup. Each id resolved once. */
static int cg_window_one(void *ctx, __u64 ts, __u32 type, const void *data, __u32 len)
{
	struct cg_window *x = ctx;
	struct gctx_ev_exec e;
	char path[GCTX_CGROUP_LEN];
	__u32 under, pid;

	if (type != GCTX_EV_EXEC || len < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	pid = e.hdr.tgid;
	if (!e.cgroup_id || pid == x->c->t.skip || pid == (__u32)getpid())
		return 0;
	if (!gctx_hmap__get(&x->ids, e.cgroup_id, 0, &under)) {
		under = !gctx_cgpaths__path(x->s->cgpaths, e.cgroup_id, path, sizeof(path)) &&
				cg_under(path, x->c->cg_rel)
			    ? 1
			    : 2;
		if (gctx_hmap__put(&x->ids, e.cgroup_id, 0, under))
			return -ENOMEM;
	}
	if (under != 1 || gctx_tree__span_at(&x->c->t, pid, e.hdr.ts_ns, true) != GCTX_SPAN_NONE)
		return 0;
	return gctx_tree__put(&x->c->t, pid, e.hdr.ts_ns, 0, GCTX_SPAN_NONE, NULL);
}

/* "cgroup DIR": the processes in its subtree now and those the window saw in it (exited
 * ones too), then, live, every process that execs in it (as record --cgroup follows). */
static void start_cgroup(struct agent *a, struct sub *c, const struct gctx_model *m, char *dir)
{
	struct gctx_pidset now = {};
	__u32 skipped = 0;
	int ret = 0;

	dir[strcspn(dir, "\n")] = '\0';
	if (dir[0] != '/' || gctx_cgroup_rel(dir, c->cg_rel, sizeof(c->cg_rel))) {
		put_end(c, AGENT_FRAME_ERROR, "not a cgroup v2 directory");
		return;
	}
	if (gctx_add_cgroup_procs(&now, dir, &skipped)) {
		put_end(c, AGENT_FRAME_ERROR, "cannot read the cgroup's processes");
		return;
	}
	c->cg = true;
	for (__u32 i = 0; !ret && i < now.n; i++) {
		const struct gctx_proc *p = gctx_model__proc_by_pid(m, now.pids[i]);

		if (p)
			ret = add_member(c, m, p);
	}
	gctx_pidset__clear(&now);
	for (__u32 i = 0; !ret && i < gctx_model__nprocs(m); i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (p->cgroup[0] && cg_under(p->cgroup, c->cg_rel))
			ret = add_member(c, m, p);
	}
	if (!ret) {
		struct cg_window x = {.s = a->subs, .c = c};

		ret = gctx_window__foreach(a->win, cg_window_one, &x);
		gctx_hmap__free(&x.ids);
	}
	if (ret) {
		put_end(c, AGENT_FRAME_ERROR, "the agent is out of memory");
		return;
	}
	go_live(a, c, m);
	if (c->live) {
		/* a delegated cgroup's user names its directories (ESC and all) */
		char shown[4096];

		gctx_format_str(shown, sizeof(shown), dir, strlen(dir));
		agent_log(a, "record --from-agent: following cgroup %s (%u processes in it now)%s",
			  shown, c->t.n, skipped ? " (some of its cgroups not read)" : "");
	}
}

/* "pids 12,34": their trees, history then live. */
static void start(struct agent *a, struct sub *c, const struct gctx_model *m)
{
	char *p = c->req, *end;
	int ret = 0;

	if (!strncmp(p, "cgroup ", 7)) {
		start_cgroup(a, c, m, p + 7);
		return;
	}
	if (strncmp(p, "pids ", 5)) {
		put_end(c, AGENT_FRAME_ERROR, "bad request");
		return;
	}
	for (p += 5; *p && !ret; p = *end ? end + 1 : end) {
		unsigned long pid = strtoul(p, &end, 10);
		const struct gctx_proc *pr;
		__u64 since;

		if (end == p)
			break;
		/* one that already exited is served too: the agent may learn of a process only
		 * after its client asked (events still in the ring buffer on a busy node) */
		pr = gctx_model__proc_by_pid(m, pid);
		if (pr)
			ret = gctx_tree__add(&c->t, m, pr->idx);
		/* one the model forgot (it exited and never touched a GPU: folded) is in the
		 * window still, as its dumps find it: its fork, then its records and children */
		else if (pid != c->t.skip && gctx_cut__find_pid(a->win, pid, &since))
			ret = gctx_tree__put(&c->t, pid, since, 0, GCTX_SPAN_NONE, NULL);
	}
	if (!c->t.n) {
		/* the ring buffer may still hold the process's fork: look again for a while */
		if (gctx_now_mono() < c->asked_ns + REQ_WAIT_NS)
			return;
		put_end(c, AGENT_FRAME_ERROR,
			"the agent knows no such process: it is not running and the window holds "
			"no record of its start (older than --window, or never seen)");
		return;
	}
	if (ret) {
		put_end(c, AGENT_FRAME_ERROR, "the agent could not send the history");
		return;
	}
	go_live(a, c, m);
	if (c->live)
		agent_log(a, "record --from-agent: sending pid %u's tree (%u processes)",
			  c->t.s[0].pid, c->t.n);
}

static void accept_new(struct agent *a)
{
	struct agent_subs *s = a->subs;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fd;

	while ((fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		/* the socket is 0600 root's; the peer's credentials say so again */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.uid != 0 ||
		    s->n == SUB_MAX) {
			close(fd);
			continue;
		}
		memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
		s->v[s->n].t.skip = cr.pid; /* in the job's cgroup maybe, never in its trace */
		s->v[s->n++].fd = fd;
	}
}

/* Every member exited: the end frame. */
static bool tree_ended(const struct gctx_tree *t, const struct gctx_model *m)
{
	for (__u32 i = 0; i < t->n; i++) {
		const struct gctx_span *s = &t->s[i];
		const struct gctx_proc *p;

		if (s->until)
			continue;
		/* its exit may have been lost: the model says whether it runs (a later process
		 * with its pid started after it) */
		p = gctx_model__proc_by_pid(m, s->pid);
		if (p && !p->exited && p->start_ns <= s->since)
			return false;
	}
	return true;
}

void agent_subs__tick(struct agent *a, const struct gctx_model *m)
{
	struct agent_subs *s = a->subs;

	if (!s)
		return;
	accept_new(a);
	for (__u32 i = 0; i < s->n;) {
		struct sub *c = &s->v[i];
		__u64 now;
		ssize_t n;

		if (!c->live && !c->closing) {
			n = read(c->fd, c->req + c->reqlen, sizeof(c->req) - 1 - c->reqlen);
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				drop(s, i);
				continue;
			}
			if (n > 0)
				c->reqlen += n;
			c->req[c->reqlen] = 0;
			if (strchr(c->req, '\n')) {
				if (!c->asked_ns)
					c->asked_ns = gctx_now_mono();
				start(a, c, m);
			} else if (c->reqlen == sizeof(c->req) - 1)
				put_end(c, AGENT_FRAME_ERROR, "request too long");
		} else if (c->live && !c->closing) {
			char b[8];

			/* "end" (the client stopped), or the client gone */
			n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
			if (n == 0) {
				drop(s, i);
				continue;
			}
			if (n > 0 && !c->ending)
				c->ending = 1;
			/* a job that forks for weeks: its live members and recent exits only (out
			 * of memory, the tree stays as it is) */
			now = gctx_now_mono();
			gctx_tree__prune(&c->t, now > PRUNE_AFTER_NS ? now - PRUNE_AFTER_NS : 0);
			if (c->ending ? c->ending++ > END_TICKS : !c->cg && tree_ended(&c->t, m))
				put_end(c, AGENT_FRAME_END, NULL);
		}
		while (c->off < c->len) {
			n = write(c->fd, c->buf + c->off, c->len - c->off);
			if (n <= 0)
				break;
			c->off += n;
		}
		if ((c->off < c->len && errno != EAGAIN && errno != EINTR) ||
		    (c->closing && c->off == c->len)) {
			drop(s, i);
			continue;
		}
		i++;
	}
}

/* An exec in the followed cgroup: the process joins, and its cgroup record (*r) goes after the
 * exec. The agent's own cgroup record may have gone before, while it was no member: a shell
 * that moved itself into the cgroup before the agent read its /proc at its previous exec. */
static bool cg_exec(struct agent_subs *s, struct sub *c, const struct gctx_ev_exec *e,
		    struct gctx_rec_cgroup *r)
{
	__u32 pid = e->hdr.tgid;

	*r = (struct gctx_rec_cgroup){.pid = pid, .ts_ns = e->hdr.ts_ns};
	if (pid == c->t.skip ||
	    gctx_tree__span_at(&c->t, pid, e->hdr.ts_ns, true) != GCTX_SPAN_NONE ||
	    /* the kernel's cgroup at exec; /proc where the id does not resolve */
	    ((gctx_cgpaths__path(s->cgpaths, e->cgroup_id, r->path, sizeof(r->path)) &&
	      gctx_proc_cgroup(pid, r->path, sizeof(r->path))) ||
	     !cg_under(r->path, c->cg_rel)))
		return false;
	return !gctx_tree__put(&c->t, pid, e->hdr.ts_ns, 0, GCTX_SPAN_NONE, NULL);
}

void agent_subs__on_record(struct agent *a, __u32 type, const void *data, __u32 len)
{
	struct agent_subs *s = a->subs;

	if (!s)
		return;
	for (__u32 i = 0; i < s->n; i++) {
		struct sub *c = &s->v[i];
		struct gctx_rec_cgroup cr;
		bool joined;

		if (!c->live || c->closing)
			continue;
		/* a process that execs in a followed cgroup joins, as record --cgroup follows it */
		joined = c->cg && type == GCTX_EV_EXEC && len >= sizeof(struct gctx_ev_exec) &&
			 cg_exec(s, c, data, &cr);
		/* a member's new child joins its tree, a member's exit ends its span (a later
		 * process with its pid is not the tree's); out of memory, the child is missed */
		gctx_tree__on_record(&c->t, type, data, len);
		if ((gctx_tree__wants(&c->t, type, data, len, ~0ull, NULL) &&
		     put(c, type, data, len)) ||
		    (joined && put(c, GCTX_REC_CGROUP, &cr, sizeof(cr)))) {
			c->len = c->off = 0; /* what was queued is dropped with the client */
			put_end(c, AGENT_FRAME_ERROR, "the client read too slowly: cut off");
			agent_log(a, "record --from-agent: a client read too slowly: cut off");
		}
	}
}

void agent_subs__close(struct agent *a)
{
	struct agent_subs *s = a->subs;

	if (!s)
		return;
	for (__u32 i = 0; i < s->n; i++) {
		struct sub *c = &s->v[i];

		put_end(c, AGENT_FRAME_ERROR, "the agent stopped");
		fcntl(c->fd, F_SETFL, 0); /* a last flush, bounded by the client's buffer */
	}
	while (s->n) {
		struct sub *c = &s->v[0];

		while (c->off < c->len) {
			ssize_t n = send(c->fd, c->buf + c->off, c->len - c->off, MSG_DONTWAIT);

			if (n <= 0)
				break;
			c->off += n;
		}
		drop(s, 0);
	}
	close(s->lfd);
	unlinkat(a->run_fd, AGENT_SOCK_NAME, 0);
	gctx_cgpaths__free(s->cgpaths);
	free(s);
	a->subs = NULL;
}
