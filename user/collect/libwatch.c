// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* API coverage on the live side (see libwatch.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include "gpuctx_hold.h"
#include "lib/hmap.h"
#include "lib/esc.h"
#include "lib/ldso.h"
#include "lib/procmaps.h"
#include "lib/str.h"
#include "collect/childprobe.h"
#include "collect/discover.h"
#include "collect/libfile.h"
#include "collect/libwatch.h"

#define FIND_TRIES  20	  /* a held mapping may still be completing: retry the maps this often */
#define MAX_SEEN    65536 /* executable files looked at, remembered */
#define MAX_PENDING 1024  /* execs whose libraries are predicted after the ring is drained */
#define MAX_EARLY   64	  /* children acted on ahead, not yet in their turn */
#define MAX_SNAP    65536 /* file mappings of one process kept from its last maps read */
#define REREAD_MS   50	  /* a process's maps are read at most once per this (libraries) */
#define MAX_LATER   1024  /* library mappings waiting for that */
#define MAX_READ_AT 65536 /* processes whose last maps read time is kept */

/* A process's file mappings as its maps file last showed them. A library load maps dozens of
 * files, each reported on its own, and torch's process has ~1,700 mappings: reading the whole
 * file for each new library (350 reads for one `import torch`) was most of the collector's
 * work on it. The snapshot is read again only when it lacks the file asked for, and what it
 * names is only a hint: map_files is opened checked against (dev, ino). */
struct snap_ent {
	__u32 dev;
	__u64 ino, start, end;
	char *path;
};

struct maps_snap {
	__u32 pid;
	bool valid;
	struct snap_ent *v;
	__u32 n, cap;
};

/* A child's probes attached and its hold ended, ahead of the record's turn (the look ahead):
 * what to say about it once the records in front of it are in the trace and the model. */
struct fork_done {
	__u32 tgid;
	__u64 ts_ns;
	int n, rel;
	__u64 now;
};

struct gctx_libwatch {
	struct gctx_libwatch_opts o;
	struct gctx_uprobes *u;
	struct gctx_ldpath *p;
	struct gctx_hold *hold;
	struct gctx_childprobe *cp; /* probes of forked children with GPU state */
	/* Children acted on ahead of their record's turn, by the ring's look ahead thread (which
	 * alone adds) for the main loop (which alone takes out). */
	pthread_mutex_t early_mu;
	struct fork_done early[MAX_EARLY];
	__u32 nearly;
	struct gctx_hmap seen; /* (dev, ino) of executable mappings already looked at */
	struct maps_snap snap;
	__u64 maps_reads; /* /proc/PID/maps reads (verbose: said at the end) */
	/* A loader maps its libraries one by one, and the collector's turns fall between them
	 * as the scheduler has it: one maps read per new library on a quiet machine. So a
	 * process's maps are read for a library at most once per REREAD_MS (pid -> the read's
	 * time in ms); a library mapped since waits in later[] for the next read, and a burst of
	 * B ms costs at most 2 + B / (REREAD_MS - 1) reads whatever the scheduling (the times are
	 * whole ms). */
	struct gctx_hmap read_at;
	struct gctx_ev_libmap later[MAX_LATER];
	__u32 nlater;
	bool last_new; /* on_lib ran during the last add_lib: the file was new */
	int last_ret;
	/* Processes that exec'd since the last tick: predicted then, unless they exited in
	 * between (most of a fork/exec storm: its five /proc reads per process would fail). */
	__u32 pending[MAX_PENDING];
	__u32 npending;
	bool py_prepared; /* the Python probe's load started (gctx_uprobes__raise_prepare) */
};

struct gctx_libwatch *gctx_libwatch__new(const struct gctx_libwatch_opts *o, char *err,
					 size_t errlen)
{
	struct gctx_libwatch *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->o = *o;
	pthread_mutex_init(&w->early_mu, NULL);
	if (o->ctl_fd >= 0 && gctx_hold__set_self(o->ctl_fd) && o->verbose)
		fprintf(stderr, "gpuctx: cannot exempt gpuctx's own processes from holds\n");
	if (o->hold) {
		w->hold = gctx_hold__new(o->holds_fd, o->ctl_fd, o->hold_timeout_ms, err, errlen);
		if (!w->hold) {
			free(w);
			return NULL;
		}
		if (gctx_hold__unguarded(w->hold))
			fprintf(stderr,
				"gpuctx: warning: a held process is resumed by gpuctx's "
				"releaser alone, not by the kernel if both are killed: %s\n",
				gctx_hold__unguarded(w->hold));
	}
	return w;
}

void gctx_libwatch__attach(struct gctx_libwatch *w, struct gctx_uprobes *u)
{
	w->u = u;
	w->p = gctx_ldpath__new(u, w->o.verbose);
	w->cp = gctx_childprobe__new(u, w->o.verbose);
}

void gctx_libwatch__predict_cmd(struct gctx_libwatch *w, char *const *cmd)
{
	if (w)
		gctx_ldpath__predict_cmd(w->p, cmd);
}

void gctx_libwatch__predict_pid(struct gctx_libwatch *w, __u32 pid)
{
	if (w)
		gctx_ldpath__predict_pid(w->p, pid);
}

static __u32 kdev(dev_t d)
{
	return (major(d) << 20) | minor(d);
}

/* Mark the file in known_libs: GCTX_LIB_PROBED (probed, or not to be probed: never hold a
 * process for it again) or GCTX_LIB_SEEN (looked at, not an API library: the kernel holds
 * again only if the file's own name is an API library's). A full map only costs a hold
 * check (or a record) per later mapping. */
static void mark_known(struct gctx_libwatch *w, const struct gctx_lib_key *k, const char *path,
		       __u8 how)
{
	char esc[GCTX_ESC_SIZE(256)];

	if (w->o.known_fd >= 0 && bpf_map_update_elem(w->o.known_fd, k, &how, BPF_ANY) &&
	    w->o.verbose) {
		gctx_format_str(esc, sizeof(esc), path, 256);
		fprintf(stderr, "gpuctx: cannot mark %s as known: %s\n", esc, strerror(errno));
	}
}

void gctx_libwatch__on_lib(void *ctx, const char *path, dev_t dev, ino_t ino, int ret)
{
	struct gctx_libwatch *w = ctx;
	struct gctx_lib_key k = {.dev = kdev(dev), .ino = ino};

	w->last_new = true;
	w->last_ret = ret;
	mark_known(w, &k, path, GCTX_LIB_PROBED);
}

static void snap_clear(struct maps_snap *sn)
{
	for (__u32 i = 0; i < sn->n; i++)
		free(sn->v[i].path);
	sn->n = 0;
	sn->valid = false;
}

static int snap_add(void *ctx, const struct gctx_procmap *pm)
{
	struct maps_snap *sn = ctx;
	struct snap_ent *e;

	if (pm->path[0] != '/' || !pm->ino || sn->n >= MAX_SNAP)
		return 0;
	if (sn->n == sn->cap) {
		__u32 cap = sn->cap ? sn->cap * 2 : 256;
		struct snap_ent *v = realloc(sn->v, cap * sizeof(*v));

		if (!v)
			return 0;
		sn->v = v;
		sn->cap = cap;
	}
	e = &sn->v[sn->n];
	e->path = strdup(pm->path);
	if (!e->path)
		return 0;
	e->dev = gctx_procmap_kdev(pm);
	e->ino = pm->ino;
	e->start = pm->start;
	e->end = pm->end;
	sn->n++;
	return 0;
}

static void snap_read(struct gctx_libwatch *w, __u32 pid)
{
	char path[64];
	int fd;

	snap_clear(&w->snap);
	w->snap.pid = pid;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	w->maps_reads++;
	if (w->read_at.n < MAX_READ_AT || gctx_hmap__get(&w->read_at, pid, 0, &(__u32){0}))
		gctx_hmap__put(&w->read_at, pid, 0, (__u32)(gctx_now_mono() / 1000000));
	gctx_procmaps_read_fd(fd, snap_add, &w->snap, NULL);
	close(fd);
	w->snap.valid = true;
}

static const struct snap_ent *snap_find(const struct maps_snap *sn, __u32 pid, __u32 dev, __u64 ino)
{
	if (!sn->valid || sn->pid != pid)
		return NULL;
	for (__u32 i = 0; i < sn->n; i++)
		if (sn->v[i].dev == dev && sn->v[i].ino == ino)
			return &sn->v[i];
	return NULL;
}

/* Read pid's maps again now for a library the snapshot lacks? Not within REREAD_MS of the
 * last read (ms wrap after 49 days: a difference, not a comparison of times). */
static bool reread_now(const struct gctx_libwatch *w, __u32 pid)
{
	__u32 at;

	return !gctx_hmap__get(&w->read_at, pid, 0, &at) ||
	       (__u32)(gctx_now_mono() / 1000000) - at >= REREAD_MS;
}

/* The process exec'd or exited: what its maps showed is no longer so. Its libraries still
 * waiting are not looked at for it: forgotten as seen, so that the next process to map one
 * is heard of (the kernel reports a library until it is marked known). */
static void snap_forget(struct gctx_libwatch *w, __u32 pid)
{
	if (w->snap.valid && w->snap.pid == pid)
		snap_clear(&w->snap);
	gctx_hmap__del(&w->read_at, pid, 0);
	for (__u32 i = 0; i < w->nlater;) {
		const struct gctx_ev_libmap *m = &w->later[i];

		if (m->hdr.tgid != pid) {
			i++;
			continue;
		}
		gctx_hmap__del(&w->seen, m->dev, m->ino);
		w->later[i] = w->later[--w->nlater];
	}
}

/* Open the mapping e of pid through map_files, checked against (dev, ino). */
static int open_snap(__u32 pid, const struct snap_ent *e, const struct stat *want, struct stat *st,
		     char mpath[PATH_MAX])
{
	char line[128], err[PATH_MAX + 64];

	snprintf(line, sizeof(line), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	snprintf(mpath, PATH_MAX, "%s", e->path);
	return gctx_file_open_checked(line, true, want, st, err, sizeof(err));
}

/* Open pid's mapping or open fd of (dev, ino): the file itself, through /proc/PID/map_files or
 * /proc/PID/fd, never by its path (which the process may have pointed anywhere since). fd or
 * -errno; mpath is the path as the process sees it, out as shown (through /proc/PID/root when
 * its root is not ours). The maps file is read again only when the snapshot lacks the file or
 * its mapping there is gone. */
static int open_mapped(struct gctx_libwatch *w, __u32 pid, __u32 dev, __u64 ino, struct stat *st,
		       char *out, size_t len, char mpath[PATH_MAX])
{
	struct stat want = {.st_dev = makedev(dev >> 20, dev & 0xfffff), .st_ino = ino};
	char line[PATH_MAX + 128], root[64], fdp[64], err[PATH_MAX + 64];
	const struct snap_ent *e = snap_find(&w->snap, pid, dev, ino);
	struct dirent *d;
	int fd = -ENOENT;
	DIR *dp;

	gctx_ldpath__root(pid, root, sizeof(root));
	if (e)
		fd = open_snap(pid, e, &want, st, mpath);
	if (fd < 0) {
		snap_read(w, pid);
		e = snap_find(&w->snap, pid, dev, ino);
		if (e)
			fd = open_snap(pid, e, &want, st, mpath);
	}
	/* not mapped yet: the loader still has the file open */
	snprintf(fdp, sizeof(fdp), "/proc/%u/fd", pid);
	dp = e ? NULL : opendir(fdp);
	while (dp && fd < 0 && (d = readdir(dp))) {
		struct stat ls;
		ssize_t n;

		if (snprintf(line, sizeof(line), "%s/%s", fdp, d->d_name) >= (int)sizeof(line) ||
		    stat(line, &ls) || kdev(ls.st_dev) != dev || ls.st_ino != ino)
			continue;
		n = readlink(line, mpath, PATH_MAX - 1);
		if (n <= 0 || mpath[0] != '/')
			continue;
		mpath[n] = 0;
		fd = gctx_file_open_checked(line, true, &want, st, err, sizeof(err));
	}
	if (dp)
		closedir(dp);
	if (fd >= 0 && snprintf(out, len, "%s%s", root, mpath) >= (int)len) {
		close(fd);
		fd = -ENAMETOOLONG;
	}
	return fd;
}

/* Probe the library open at fd, found mapped by pid at mpath. */
static int add_mapped(struct gctx_libwatch *w, __u32 pid, int fd, const struct stat *st,
		      const char *shown, const char *mpath, char *err, size_t errlen)
{
	char root[64];

	gctx_ldpath__root(pid, root, sizeof(root));
	return gctx_uprobes__add_lib_fd(w->u, fd, st, shown, root[0] ? root : "/", mpath, err,
					errlen);
}

static void emit_gap(struct gctx_libwatch *w, const struct gctx_ev_hdr *h, __u32 reason, __u32 dev,
		     __u64 ino, __u64 to_ns, const char *lib)
{
	struct gctx_rec_api_gap g = {
	    .pid = h ? h->tgid : 0,
	    .tid = h ? h->tid : 0,
	    .reason = reason,
	    .dev = dev,
	    .ino = ino,
	    .from_ns = h ? h->ts_ns : 0,
	    .to_ns = to_ns,
	};

	snprintf(g.lib, sizeof(g.lib), "%.*s", (int)sizeof(g.lib) - 1, lib);
	if (w->o.verbose) {
		char esc[GCTX_ESC_SIZE(sizeof(g.lib))];

		gctx_format_str(esc, sizeof(esc), g.lib, sizeof(g.lib));
		fprintf(stderr, "gpuctx: API calls of %u in %s unseen (reason %u)\n", g.pid, esc,
			reason);
	}
	if (w->o.cb)
		w->o.cb(w->o.cb_ctx, GCTX_REC_API_GAP, &g, sizeof(g));
}

static void emit_hold(struct gctx_libwatch *w, const struct gctx_ev_apimap *m, __u32 by,
		      __u64 to_ns, const char *lib)
{
	struct gctx_rec_hold r = {
	    .pid = m->hdr.tgid,
	    .tid = m->hdr.tid,
	    .released_by = by,
	    .dev = m->dev,
	    .ino = m->ino,
	    .from_ns = m->hdr.ts_ns,
	    .to_ns = to_ns,
	    .flags = (m->flags & GCTX_APIMAP_FORK) ? GCTX_HOLD_REC_FORK : 0,
	};

	snprintf(r.lib, sizeof(r.lib), "%.*s", (int)sizeof(r.lib) - 1, lib);
	if (w->o.cb)
		w->o.cb(w->o.cb_ctx, GCTX_REC_HOLD, &r, sizeof(r));
}

/* Why calls could have been missed around a hold or a mapping not held (0: none). rel:
 * gctx_hold__release()'s answer for a held one. */
static __u32 gap_reason(struct gctx_libwatch *w, __u32 flags, int rel, bool probed)
{
	if ((flags & GCTX_APIMAP_HELD) && rel == 1)
		return probed ? 0 : GCTX_GAP_PROBE_FAILED;
	if (flags & GCTX_APIMAP_HELD)
		return rel == 1 + GCTX_HOLD_RESUMED_WAIT    ? GCTX_GAP_HOLD_WAIT
		       : rel == 1 + GCTX_HOLD_RESUMED_ABORT ? GCTX_GAP_HOLD_ABORT
		       : rel == 2			    ? GCTX_GAP_HOLD_FAILED
							    : GCTX_GAP_HOLD_TIMEOUT;
	if ((flags & GCTX_APIMAP_NO_HOLD) && gctx_hold__tripped(w->hold))
		return GCTX_GAP_HOLD_ABORT;
	if (flags & GCTX_APIMAP_NO_HOLD)
		return GCTX_GAP_NO_HOLD;
	if (flags & GCTX_APIMAP_OUTSIDE)
		return GCTX_GAP_OUTSIDE;
	if (flags & GCTX_APIMAP_WATCHED)
		return GCTX_GAP_WATCHED;
	return GCTX_GAP_HOLD_FAILED;
}

/* Attach a held forked child's probes and end its hold: what must not wait. */
static void fork_act(struct gctx_libwatch *w, const struct gctx_ev_apimap *m, struct fork_done *d)
{
	if (w->o.verbose)
		fprintf(stderr, "gpuctx: forked child %u: seen after %.2f ms\n", m->hdr.tgid,
			(gctx_now_mono() - m->hdr.ts_ns) / 1e6);
	d->tgid = m->hdr.tgid;
	d->ts_ns = m->hdr.ts_ns;
	d->n = gctx_childprobe__attach(w->cp, m->hdr.tgid);
	d->now = gctx_now_mono();
	d->rel = 0;
	if (m->flags & GCTX_APIMAP_HELD)
		d->rel = gctx_hold__release(w->hold, m->hdr.tgid, m->hdr.ts_ns);
}

/* The hold and gap records of a child acted on (in the record's turn). */
static void fork_say(struct gctx_libwatch *w, const struct gctx_ev_apimap *m,
		     const struct fork_done *d)
{
	char what[GCTX_PATH_LEN];
	__u32 reason;
	int n = d->n, rel = d->rel;

	if (n > 0)
		snprintf(what, sizeof(what), "forked child: %d API functions probed for it alone",
			 n);
	else
		snprintf(what, sizeof(what), "forked child: no API function probed for it (%s)",
			 n == 0		    ? "no probed API library mapped"
			 : n == -EDQUOT	    ? "over the cap of children probed at once"
			 : n == -EOPNOTSUPP ? "no uprobe_multi in this kernel"
					    : strerror(-n));
	if (m->flags & GCTX_APIMAP_HELD)
		emit_hold(w, m, rel == 1 ? 0 : rel >= 2 ? (__u32)rel : 1, d->now, what);
	/* no API library mapped: no call to miss; no uprobe_multi: the functions every process
	 * has probed are seen as before, the others never are (docs/not-recorded.md) */
	if (n == 0 || n == -EOPNOTSUPP)
		return;
	reason = gap_reason(w, m->flags, rel, n > 0);
	/* --no-hold says it once per library; a child not held misses little but says so */
	if (reason && reason != GCTX_GAP_NO_HOLD)
		emit_gap(w, &m->hdr, reason, 0, 0, n > 0 ? d->now : 0, what);
}

/* A child forked without exec from a process holding GPU state, back from fork: its own
 * probes on every API function, then resume it (done already when the look ahead saw it). */
static void on_fork_child(struct gctx_libwatch *w, const struct gctx_ev_apimap *m)
{
	struct fork_done d;
	bool found = false;

	pthread_mutex_lock(&w->early_mu);
	for (__u32 i = 0; i < w->nearly; i++) {
		if (w->early[i].tgid != m->hdr.tgid || w->early[i].ts_ns != m->hdr.ts_ns)
			continue;
		d = w->early[i];
		w->early[i] = w->early[--w->nearly];
		found = true;
		break;
	}
	pthread_mutex_unlock(&w->early_mu);
	if (!found)
		fork_act(w, m, &d);
	fork_say(w, m, &d);
}

bool gctx_libwatch__early_wants(const void *data, size_t len)
{
	const struct gctx_ev_apimap *m = data;

	return len >= sizeof(*m) && m->hdr.type == GCTX_EV_APIMAP && (m->flags & GCTX_APIMAP_FORK);
}

int gctx_libwatch__early(void *ctx, void *data, size_t len)
{
	struct gctx_libwatch *w = ctx;
	const struct gctx_ev_apimap *m = data;
	struct fork_done d;
	bool room;

	if (!w || !gctx_libwatch__early_wants(data, len))
		return 0;
	/* only this thread adds: room now is room after acting */
	pthread_mutex_lock(&w->early_mu);
	room = w->nearly < MAX_EARLY;
	pthread_mutex_unlock(&w->early_mu);
	if (!room)
		return 0; /* the main loop acts in the record's turn */
	fork_act(w, m, &d);
	pthread_mutex_lock(&w->early_mu);
	w->early[w->nearly++] = d;
	pthread_mutex_unlock(&w->early_mu);
	return 0;
}

/* A library named like an API library was mapped before its probes: probe it, resume the
 * process, and say whether calls could have been missed. */
static void on_apimap(struct gctx_libwatch *w, const struct gctx_ev_apimap *m)
{
	char path[PATH_MAX], ns[PATH_MAX], err[256], name[GCTX_APIMAP_NAME_LEN + 1];
	bool held = m->flags & GCTX_APIMAP_HELD, found = false, probed;
	int ret = -ENOENT, rel = 0, fd = -ENOENT;
	struct stat st;
	__u32 reason;
	__u64 now, t0;

	gctx_copy_str(name, sizeof(name), m->name, sizeof(m->name));
	t0 = gctx_now_mono();
	for (int i = 0; i < (held ? FIND_TRIES : 1) && fd < 0; i++) {
		fd = open_mapped(w, m->hdr.tgid, m->dev, m->ino, &st, path, sizeof(path), ns);
		if (fd < 0 && held)
			usleep(1000);
	}
	found = fd >= 0;
	if (found && w->u)
		ret = add_mapped(w, m->hdr.tgid, fd, &st, path, ns, err, sizeof(err));
	else if (found)
		close(fd);
	now = gctx_now_mono();
	if (w->o.verbose) {
		char esc[GCTX_ESC_SIZE(GCTX_APIMAP_NAME_LEN)];

		gctx_format_str(esc, sizeof(esc), name, sizeof(name));
		fprintf(stderr, "gpuctx: %s of pid %u: seen after %.2f ms, probed after %.2f ms\n",
			esc, m->hdr.tgid, (t0 - m->hdr.ts_ns) / 1e6, (now - m->hdr.ts_ns) / 1e6);
	}
	if (held) {
		rel = gctx_hold__release(w->hold, m->hdr.tgid, m->hdr.ts_ns);
		emit_hold(w, m, rel == 1 ? 0 : rel >= 2 ? (__u32)rel : 1, now, found ? path : name);
	}
	if (found && ret == -ENOENT)
		return; /* named like one, but exports none of the functions: nothing to miss */
	probed = found && !ret;
	reason = gap_reason(w, m->flags, rel, probed);
	/* not found: the process is gone or unmapped it, and its calls went unseen throughout */
	if (reason)
		emit_gap(w, &m->hdr, reason, m->dev, m->ino, probed ? now : 0, found ? path : name);
}

/* Any other executable mapping: its RUNPATH names where its own dependencies come from, and
 * a library not named like an API library may still be one (found by its exports). */
static void look_at_lib(struct gctx_libwatch *w, const struct gctx_ev_libmap *m)
{
	struct gctx_lib_key k = {.dev = m->dev, .ino = m->ino};
	char path[PATH_MAX], ns[PATH_MAX], err[256];
	const char *base;
	struct stat st;
	int fd;

	fd = open_mapped(w, m->hdr.tgid, m->dev, m->ino, &st, path, sizeof(path), ns);
	if (fd < 0) {
		gctx_hmap__del(&w->seen, m->dev, m->ino); /* gone: the next mapping says it again */
		return;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (gctx_ldso_is_api_name(base)) {
		close(fd);
		return; /* GCTX_EV_APIMAP covers it */
	}
	/* Looked at once is enough: from now on the kernel reports this file's mappings only to
	 * processes whose mappings are kept (bpf/gpuctx.bpf.c, lib_mapped). Should the file's
	 * own name be an API library's after all (the path cut at a space, a hard link), the
	 * kernel checks that name itself and treats the file as new. */
	mark_known(w, &k, path, GCTX_LIB_SEEN);
	if (!gctx_ldpath__predict_object(w->p, m->hdr.tgid, ns, fd)) {
		close(fd);
		return;
	}
	/* a CUDA/HIP library under another name (a renamed or statically wrapped driver) */
	w->last_new = false;
	if (!add_mapped(w, m->hdr.tgid, fd, &st, path, ns, err, sizeof(err)) && w->last_new &&
	    !w->last_ret)
		emit_gap(w, &m->hdr, GCTX_GAP_NOT_CANDIDATE, m->dev, m->ino, gctx_now_mono(), path);
}

static void on_libmap(struct gctx_libwatch *w, const struct gctx_ev_libmap *m)
{
	struct gctx_lib_key k = {.dev = m->dev, .ino = m->ino};
	__u32 v;

	if (!w->u || gctx_hmap__get(&w->seen, m->dev, m->ino, &v))
		return;
	if (w->seen.n < MAX_SEEN)
		gctx_hmap__put(&w->seen, m->dev, m->ino, 1);
	if (w->o.known_fd >= 0 && !bpf_map_lookup_elem(w->o.known_fd, &k, &v))
		return;
	if (!snap_find(&w->snap, m->hdr.tgid, m->dev, m->ino) && !reread_now(w, m->hdr.tgid) &&
	    w->nlater < MAX_LATER) {
		w->later[w->nlater++] = *m; /* mapped since the last read: at the next one */
		return;
	}
	look_at_lib(w, m);
}

/* The libraries waiting for their process's next maps read, once it is due (or all: end). */
static void later_run(struct gctx_libwatch *w, bool all)
{
	for (__u32 i = 0; i < w->nlater;) {
		struct gctx_ev_libmap m = w->later[i];

		if (!all && !snap_find(&w->snap, m.hdr.tgid, m.dev, m.ino) &&
		    !reread_now(w, m.hdr.tgid)) {
			i++;
			continue;
		}
		w->later[i] = w->later[--w->nlater];
		look_at_lib(w, &m);
	}
}

static void exec_seen(struct gctx_libwatch *w, __u32 pid)
{
	for (__u32 i = 0; i < w->npending; i++)
		if (w->pending[i] == pid)
			return;
	if (w->npending == MAX_PENDING)
		gctx_libwatch__tick(w);
	w->pending[w->npending++] = pid;
}

static void exit_seen(struct gctx_libwatch *w, __u32 pid)
{
	for (__u32 i = 0; i < w->npending; i++) {
		if (w->pending[i] == pid) {
			w->pending[i] = w->pending[--w->npending];
			return;
		}
	}
}

void gctx_libwatch__on_record(struct gctx_libwatch *w, __u32 type, const void *data, __u32 len)
{
	__u32 tgid;

	if (!w || len < sizeof(struct gctx_ev_hdr))
		return;
	tgid = ((const struct gctx_ev_hdr *)data)->tgid;
	/* a process has GPU state: a child it forks may need the Python probe, whose load
	 * should not lengthen that child's hold */
	if ((type == GCTX_EV_OPEN || type == GCTX_REC_FILE_PRESENT) && !w->py_prepared) {
		w->py_prepared = true;
		gctx_uprobes__raise_prepare(w->u);
	}
	if (type == GCTX_EV_APIMAP && len >= sizeof(struct gctx_ev_apimap)) {
		if (((const struct gctx_ev_apimap *)data)->flags & GCTX_APIMAP_FORK)
			on_fork_child(w, data);
		else
			on_apimap(w, data);
	} else if (type == GCTX_EV_LIBMAP && len >= sizeof(struct gctx_ev_libmap)) {
		on_libmap(w, data);
	} else if (type == GCTX_EV_EXEC && len >= GCTX_EV_EXEC_V3_LEN) {
		snap_forget(w, tgid);
		gctx_childprobe__forget(w->cp, tgid);
		exec_seen(w, tgid);
	} else if (type == GCTX_EV_EXIT && len >= sizeof(struct gctx_ev_exit) &&
		   ((const struct gctx_ev_exit *)data)->group_dead) {
		snap_forget(w, tgid);
		gctx_childprobe__forget(w->cp, tgid);
		exit_seen(w, tgid);
	}
}

void gctx_libwatch__tick(struct gctx_libwatch *w)
{
	if (!w)
		return;
	for (__u32 i = 0; i < w->npending; i++)
		gctx_ldpath__predict_pid(w->p, w->pending[i]);
	w->npending = 0;
	later_run(w, false);
}

void gctx_libwatch__finish(struct gctx_libwatch *w, __u64 apimap_lost)
{
	struct gctx_childprobe_stats cs;
	char what[64];

	if (!w)
		return;
	later_run(w, true);
	gctx_childprobe__stats(w->cp, &cs);
	if (cs.fns_over_cap)
		fprintf(stderr,
			"gpuctx: warning: %llu CUDA/HIP functions not probed in forked children: "
			"over %u per library\n",
			(unsigned long long)cs.fns_over_cap, GCTX_CHILDPROBE_MAX_FNS);
	if (w->o.verbose && (cs.children || cs.not_probed))
		fprintf(stderr,
			"gpuctx: %llu forked children probed alone (%.2f ms attaching), %llu "
			"not, %llu found gone without their exit record\n",
			(unsigned long long)cs.children, cs.attach_ns / 1e6,
			(unsigned long long)cs.not_probed, (unsigned long long)cs.reaped);
	if (!apimap_lost)
		return;
	snprintf(what, sizeof(what), "%llu library mapping(s) not reported",
		 (unsigned long long)apimap_lost);
	emit_gap(w, NULL, GCTX_GAP_LOST, 0, 0, 0, what);
}

void gctx_libwatch__free(struct gctx_libwatch *w)
{
	if (!w)
		return;
	if (w->o.verbose)
		fprintf(stderr, "gpuctx: %llu maps reads for new libraries\n",
			(unsigned long long)w->maps_reads);
	gctx_childprobe__free(w->cp);
	gctx_hold__free(w->hold);
	snap_clear(&w->snap);
	free(w->snap.v);
	gctx_ldpath__free(w->p);
	gctx_hmap__free(&w->seen);
	gctx_hmap__free(&w->read_at);
	pthread_mutex_destroy(&w->early_mu);
	free(w);
}
