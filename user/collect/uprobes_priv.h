/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the API probes (uprobes.h): the library table and the probe machinery of uprobes.c,
 * shared with procaddr.c, which probes the addresses cuGetProcAddress hands out, caps them and
 * releases them, and pyraise.c, which loads the Python exception probe. Callers hold u->mu
 * (every public function takes it), but for pyraise.c's (py_mu).
 */
#ifndef __GPUCTX_UPROBES_PRIV_H
#define __GPUCTX_UPROBES_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "decode/api.h"
#include "lib/hmap.h"
#include "collect/uprobes.h"

#define MAX_SEEN 4096
#define RT_OFFS	 4 /* offsets a runtime probe keeps for its release (more: never released) */

/* From the kernel's UAPI (Linux 6.6), newer than the headers libbpf 1.1 builds against. */
#define ATTACH_UPROBE_MULTI 48 /* BPF_TRACE_UPROBE_MULTI */

struct probe_at {
	__u64 off; /* probed file offset */
	enum gctx_api_fn fn;
};

struct lib {
	dev_t dev;
	ino_t ino;
	int fd; /* the file checked; probes attach through /proc/self/fd/N */
	__u64 size;
	char path[4096 + 64]; /* as named (shown in probe records) */
	char at[32];	      /* "/proc/self/fd/N": the path handed to the kernel */
	struct probe_at *probes;
	__u32 nprobes;
	__u32 nexports; /* CUDA/HIP functions it exports: it defines the API (0: fd closed) */
	__u64 *entries; /* function entries its own symbol tables name (sorted file offsets) */
	__u32 nentries;
	bool entries_read;
	__u32 nprocaddr;  /* probes cuGetProcAddress addresses caused here */
	bool has_getproc; /* exports cuGetProcAddress_v2 */
};

struct file_id {
	__u32 dev; /* kernel encoding */
	__u64 ino;
};

/* A probe waiting to be attached with the others of its library. */
struct pending {
	struct gctx_rec_probe r;
	__u64 cookie_entry;
	__u64 cookie_ret;
	bool entry_only;
};

/* Probes a process's cuGetProcAddress answer caused: released (links closed, the user's share
 * given back) once no process maps their library. */
struct rt_probe {
	dev_t dev;
	ino_t ino;
	__u32 uid, pid;	     /* whose share it takes: the process's and its user's */
	__u64 offs[RT_OFFS]; /* probed offsets (lib->probes) */
	__u32 noffs;
	__u32 mfd_from, mfd_to;	  /* u->mfds[from, to) */
	__u32 link_from, link_to; /* u->links[from, to) */
};

struct gctx_uprobes {
	/* The forked-child probes (childprobe.c) read the library table from the ring's look
	 * ahead thread while the main loop adds to it: every public function takes mu
	 * (uprb_lock). The probe records made meanwhile wait in outq and go to the record
	 * callback once mu is let go (uprb_unlock): the callback may block (live lines to a
	 * full pipe, an agent's dump), and the look ahead must not wait behind it. */
	pthread_mutex_t mu;
	__u32 depth; /* uprb_lock()s held (by the thread holding mu) */
	struct gctx_rec_probe *outq;
	__u32 noutq, cap_outq;
	struct api_bpf *skel;
	struct gctx_uprobes_opts o;
	bool multi;		 /* uprobe_multi links work here */
	struct bpf_link **links; /* one-probe links (fallback) */
	__u32 nlinks, caplinks;
	int *mfds; /* uprobe_multi link fds */
	__u32 nmfds;
	struct pending *pend;
	__u32 npend, cappend;
	struct lib *libs;
	__u32 nlibs;
	struct file_id seen[MAX_SEEN]; /* executable files already looked at */
	__u32 nseen;
	struct gctx_hmap per_proc; /* tgid -> probes its cuGetProcAddress calls caused */
	__u32 nprocaddr;	   /* all such probes */
	struct gctx_hmap per_user; /* uid -> those of its processes, not yet released */
	struct rt_probe *rt;	   /* the releasable ones */
	__u32 nrt;
	bool rt_armed; /* the next flush attaches a runtime probe of next_rt.uid */
	struct rt_probe next_rt;
	__u64 last_reclaim;
	__u64 refused[2]; /* addresses not probed: [0] not a function entry, [1] caps */
	/* The Python exception probe's object (pyraise.c), loaded at the first forked child that
	 * needs it, on whichever thread attaches that child: py_mu orders the load (not mu,
	 * which the main loop's library probing takes). */
	pthread_mutex_t py_mu;
	struct pyraise_bpf *py; /* once loaded (stored and read atomically: drops) */
	int py_err;		/* its load failed (-errno): never tried again */
	pthread_t py_loader;	/* gctx_uprobes__raise_prepare's, joined at free */
	bool py_loading;
};

struct mapping {
	__u32 pid;
	__u64 start, end, pgoff, ino;
	__u32 kdev;	  /* kernel encoding */
	bool exec;	  /* mapped executable */
	const char *path; /* as /proc/PID/maps shows it: for display, never opened */
};

extern const __u8 uprb_endbr64[4];

/* uprobes.c */
void uprb_lock(struct gctx_uprobes *u);
void uprb_unlock(struct gctx_uprobes *u);
/* A probe record for the record callback: at once, or once mu is let go. */
void uprb_emit(struct gctx_uprobes *u, const struct gctx_rec_probe *r);
struct lib *uprb_find_lib(const struct gctx_uprobes *u, dev_t dev, ino_t ino);
bool uprb_lib_has_probe(const struct lib *l, __u64 off);
/* Queue entry (and return) probes at a function's file offset, past an endbr64. */
void uprb_probe_one(struct gctx_uprobes *u, struct lib *l, const struct gctx_api_sym *s,
		    const char *symbol, __u64 sym_off, __u32 how);
/* Attach what uprb_probe_one queued for this library; how many are attached. */
int uprb_flush_probes(struct gctx_uprobes *u, struct lib *l);
/* fn(ctx, m) for the file mappings of /proc/PID/maps until it returns nonzero. */
int uprb_walk_maps(__u32 pid, int (*fn)(void *ctx, const struct mapping *m), void *ctx);
/* Open a mapped GPU library through map_files and add it. */
void uprb_add_mapped_lib(struct gctx_uprobes *u, const struct mapping *m);

/* procaddr.c */
/* Probe an address cuGetProcAddress hands out (asked by pid, 0: pre-resolution): 0 when
 * probed or already probed, -EPERM or -EDQUOT (over a cap) when refused. */
int uprb_probe_procaddr(struct gctx_uprobes *u, struct lib *l, __u32 pid, enum gctx_api_fn fn,
			const char *name, __u64 off);
/* uprb_flush_probes attached the runtime probe uprb_probe_procaddr armed: keep it to release. */
void uprb_keep_rt(struct gctx_uprobes *u, struct lib *l, __u32 mfd_from, __u32 link_from);
/* A cuGetProcAddress answer (a GCTX_EV_API record): probe the address it handed out. */
void uprb_follow_proc_address(struct gctx_uprobes *u, const struct gctx_ev_api *ev);

/* pyraise.c */
void uprb_raise_wait(struct gctx_uprobes *u); /* the loader thread ended */
/* Python exceptions lost (ring buffer full), 0 before the probe is loaded. From any thread. */
__u64 uprb_raise_drops(const struct gctx_uprobes *u);
void uprb_raise_free(struct gctx_uprobes *u);

#endif /* __GPUCTX_UPROBES_PRIV_H */
