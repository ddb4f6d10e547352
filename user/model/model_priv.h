/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The lineage model's private state, shared by its files (model.c, lineage.c, files.c,
 * objects.c, contexts.c, findings.c); callers see only model.h.
 *
 * Storage: processes, files, objects and findings live in chunked arrays (a growable table of
 * fixed-size chunks), so a record never moves once created and the pointers handed to callers
 * stay valid until the model is freed. Each public record is the first member of a private
 * wrapper that carries the bookkeeping callers do not see. Lookups go through open-addressing
 * hash tables keyed by two 64-bit words: pid -> latest process, file address -> latest file,
 * (process, tid) -> thread, (process, file) -> holder and -> use finding, (file, handle) ->
 * object, (file, RM client) -> objects of that client.
 */
#ifndef __GPUCTX_MODEL_PRIV_H
#define __GPUCTX_MODEL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "lib/chunks.h"
#include "lib/hmap.h"
#include "lib/strpool.h"
#include "model/model.h"

/* ---- private wrappers ---- */

struct kept_fd {
	__u64 file;
	__s32 fd;
	__u32 kind;
	__u32 fork_tid; /* FD_FORK: the thread forking the child that got it; 0: FD_KEPT */
};

/* One holder record of this process: file index and index in that file's holders. */
struct href {
	__u32 file_idx;
	__u32 holder_idx;
};

struct proc_priv {
	struct gctx_proc pub;
	__u32 cap_execs, cap_threads, cap_children;
	struct href *hrefs; /* every holder record of this process, in creation order */
	__u32 nhrefs, cap_hrefs;
	/* FD_KEPT records waiting for this process's EXEC, FD_FORK ones for a FORK of it */
	struct kept_fd *kept;
	__u32 nkept, cap_kept;
	/* fork-with-gpu-state waiting for this child to exec (cancel) or end (raise) */
	bool fws_pending;
	__u64 fws_ts;
	__u32 fws_parent_idx;
	__u32 fws_file_idx;
	__u32 fws_nfiles;
	/* API state, per vendor (enum gctx_api_vendor): 1 + index of the process whose
	 * initialised CUDA/HIP state this one carries (itself after its own init, an ancestor
	 * after fork without exec), 0 none; and the fork that brought it. */
	__u32 api_src[2];
	__u64 api_fork_ns[2];
	__u32 api_icc_id[2]; /* its inherited-context-call finding, 0 none */
	__u64 api_calls;
	int hip_device;
	__u32 *ctxs; /* API context ids of this process */
	__u32 nctxs, cap_ctxs;
	bool pinned; /* something outside the lineage names it (API coverage, call sites) */
	__u32 gen;   /* reuses of this slot after folding (fold.c) */
	/* fold.c, within one gctx_model__fold: this slot was folded; children of this one
	 * folded and still listed (they leave its children at the end, all at once) */
	bool folded;
	__u32 gone_children;
};

/* An exited process waiting to be folded (fold.c): its slot and that slot's generation. */
struct fold_ent {
	__u32 idx, gen;
};

struct file_priv {
	struct gctx_gpu_file pub;
	__u32 cap_holders;
	__u32 nheld;			 /* holders with held == true */
	__u64 kept_mark;		 /* exec serial that listed this file in FD_KEPT */
	__s32 kept_fd;			 /* first kept fd of that exec */
	char opener_comm[GCTX_COMM_LEN]; /* the opener's comm when it opened (it may exec since) */
	int first_obj; /* objects on this file, newest first, linked by next_in_file */
};

struct obj_priv {
	struct gctx_gpu_obj pub;
	int first_child; /* RM tree, linked by next_sibling */
	int next_sibling;
	int next_in_client;
	int next_in_file;
};

struct gctx_model {
	struct gctx_chunks procs, files, objs, findings;
	struct gctx_strpool *strs;    /* exec filenames and argv */
	struct gctx_hmap pid_map;     /* (pid, 0) -> latest process */
	struct gctx_hmap file_map;    /* (address, 0) -> latest file */
	struct gctx_hmap thread_map;  /* (proc, tid) -> latest thread index in proc */
	struct gctx_hmap holder_map;  /* (proc, file) -> holder index in file */
	struct gctx_hmap finding_map; /* (proc, file) -> inherited/foreign use finding */
	struct gctx_hmap obj_map;     /* (family << 32 | file, key) -> latest object */
	struct gctx_hmap client_map;  /* (file, client) -> newest object of that RM client */
	struct gctx_rec_device *devices;
	__u32 ndevices, cap_devices;
	struct gctx_chunks ctxs, mems;
	struct gctx_hmap mem_map;    /* (proc, ptr) -> live API allocation */
	struct gctx_hmap apierr_map; /* (proc, fn << 32 | code) -> api-error finding */
	struct gctx_rec_probe *probes;
	__u32 nprobes, cap_probes;
	struct gctx_rec_drops drops;
	struct gctx_rec_end end;
	bool has_end;
	struct gctx_rec_write_loss wloss; /* the trace could not be written past wloss.ts_ns */
	bool has_wloss;
	__u64 events[GCTX_EV_KERNEL_MAX];
	__u64 total;
	__u64 unknown_records;
	__u64 ignored_closes;
	/* execs whose list of kept GPU fds was not whole, and the GPU files held before them
	 * whose state after them is unknown for that */
	__u64 exec_fds_unknown, exec_files_unknown;
	__u64 procaddr_not_found; /* cuGetProcAddress -> CUDA_ERROR_NOT_FOUND: optional symbols */
	__u64 exec_serial;
	int *stack; /* scratch for object tree walks */
	__u32 cap_stack;
	gctx_finding_cb cb;
	void *cb_ctx;
	struct mdl_stacks *stk;	     /* stacks.c */
	struct mdl_coverage *cov;    /* API coverage (coverage.c), NULL until a record needs it */
	struct mdl_callers *callers; /* callers.c, NULL until a record needs it */
	struct mdl_pyexc *pyexc;     /* pyexc.c, NULL until a record needs it */
	/* fold.c: exited processes in exit order, free slots, processes folded so far */
	bool fold_on;
	struct fold_ent *exq;
	__u32 exq_head, nexq, cap_exq;
	__u32 *free_procs;
	__u32 nfree, cap_free;
	__u32 *fold_dirty; /* parents with gone_children, this fold */
	__u32 nfold_dirty, cap_fold_dirty;
	__u64 folded;
	__u64 compactions;	     /* compact.c */
	__u64 size_compacted;	     /* records held after the latest compaction */
	__u64 nthreads, nexecs;	     /* over all processes: what a live one accumulates counts */
	struct gctx_model_trim trim; /* what was left out of the processes kept (trim.c) */
};

static inline struct proc_priv *P(const struct gctx_model *m, __u32 idx)
{
	return gctx_chunks__at(&m->procs, idx);
}

static inline struct file_priv *F(const struct gctx_model *m, __u32 idx)
{
	return gctx_chunks__at(&m->files, idx);
}

static inline struct obj_priv *O(const struct gctx_model *m, __u32 idx)
{
	return gctx_chunks__at(&m->objs, idx);
}

static inline struct gctx_finding *FIND(const struct gctx_model *m, __u32 idx)
{
	return gctx_chunks__at(&m->findings, idx);
}

static inline __u32 fidx(const struct file_priv *f)
{
	return f->pub.id - 1;
}

/* API context by id (1-based), NULL for 0 or an unknown id. */
static inline struct gctx_api_ctx *CTX(const struct gctx_model *m, __u32 id)
{
	return id && id <= m->ctxs.n ? gctx_chunks__at(&m->ctxs, id - 1) : NULL;
}

/* model.c: snprintf for human-readable text, where cutting a long line short is fine */
__attribute__((format(printf, 3, 4))) void mdl_textf(char *buf, size_t len, const char *fmt, ...);

/* compact.c: where each record of a model being compacted goes (old index -> new index,
 * MDL_GONE when it is dropped); the pids of the processes kept */
#define MDL_GONE 0xffffffffu

struct mdl_remap {
	__u32 *proc, *file, *obj, *finding, *ctx, *mem, *site;
	/* per old object: the new index of the first kept object from it along the RM tree's
	 * sibling links, its client's and its file's (trim.c), MDL_GONE none */
	__u32 *obj_sib, *obj_client, *obj_file;
	__u32 nprocs, old_nprocs; /* processes kept, and before */
	struct gctx_hmap pids;	  /* (pid, 0) of every kept process */
};

static inline __u32 mdl_re(const __u32 *map, __u32 idx)
{
	return map ? map[idx] : MDL_GONE;
}

/* 1-based ids (0 none) through a map of 0-based indices: 0 when dropped */
static inline __u32 mdl_re_id(const __u32 *map, __u32 id)
{
	return id && map[id - 1] != MDL_GONE ? map[id - 1] + 1 : 0;
}

/* An index map of n entries, all MDL_GONE; NULL when out of memory. */
__u32 *mdl_gone_map(__u32 n);
/* Move the elements of c whose map entry is not MDL_GONE to their new index (in order);
 * the chunks past the new end are freed (compact.c). */
void mdl_chunks_squeeze(struct gctx_chunks *c, const __u32 *map);
/* A map's entries through index maps (NULL: as they are): k1's low 32 bits by m1 (the high
 * bits kept), k2 by m2, the value by mv; entries whose index is gone are left out. */
int mdl_map_remap(const struct gctx_hmap *from, struct gctx_hmap *to, const __u32 *m1,
		  const __u32 *m2, const __u32 *mv);

/* Subsystems of a compaction: plan (allocates; on failure nothing changed, and abort
 * releases what plan made), then apply (cannot fail). Stacks and API gaps keep what names a
 * kept process. */
int mdl_callers_plan(struct gctx_model *m, struct mdl_remap *r);
void mdl_callers_apply(struct gctx_model *m, const struct mdl_remap *r);
void mdl_callers_abort(struct gctx_model *m);
void mdl_stacks_compact(struct gctx_model *m, const struct mdl_remap *r);
void mdl_coverage_compact(struct gctx_model *m, const struct mdl_remap *r);
void mdl_pyexc_compact(struct gctx_model *m, const struct mdl_remap *r);

/* trim.c: what a compaction keeps of what kept live processes accumulated (plan: the
 * objects kept, r->obj and its chains, after r->file and r->ctx; the new thread map, after
 * r->proc), and the apply of each (cannot fail) */
bool mdl_trim_exec_kept(const struct gctx_proc *p, __u32 i);
void mdl_shrink(void *pp, __u32 *cap, __u32 n, size_t elem);
__u8 *mdl_trim_plan_files(const struct gctx_model *m, const struct mdl_remap *r, __u64 before_ns);
int mdl_trim_plan_objs(const struct gctx_model *m, struct mdl_remap *r);
int mdl_trim_plan_threads(const struct gctx_model *m, const struct mdl_remap *r,
			  struct gctx_hmap *thread_map);
void mdl_trim_apply_proc(struct gctx_model *m, struct proc_priv *p);
void mdl_trim_apply_objs(struct gctx_model *m, const struct mdl_remap *r);

/* fold.c: a slot for a new process (a folded one first); an exited one to fold later */
struct proc_priv *mdl_proc_slot(struct gctx_model *m);
void mdl_fold_note_exit(struct gctx_model *m, struct proc_priv *p);
void mdl_fold_free(struct gctx_model *m);

/* stacks.c: GCTX_REC_STACK and friends */
int mdl_stack_feed(struct gctx_model *m, __u32 type, const void *data, __u32 len);
void mdl_stacks_free(struct gctx_model *m);

/* lineage.c: processes, threads, fork/exec/exit, present-at-attach records */
struct proc_priv *mdl_proc_lookup(const struct gctx_model *m, __u32 pid);
void mdl_proc_rename(struct proc_priv *p, const char *comm);
struct gctx_thread *mdl_thread_live(struct gctx_model *m, struct proc_priv *p, __u32 tid,
				    const char *comm);
struct proc_priv *mdl_proc_for_event(struct gctx_model *m, const struct gctx_ev_hdr *hdr,
				     bool want_thread);
int mdl_ev_fork(struct gctx_model *m, const struct gctx_ev_fork *ev);
int mdl_ev_exec(struct gctx_model *m, const struct gctx_ev_exec *ev);
int mdl_ev_exit(struct gctx_model *m, const struct gctx_ev_exit *ev);
int mdl_ev_proc_present(struct gctx_model *m, const struct gctx_rec_proc *r);
int mdl_ev_cgroup(struct gctx_model *m, const struct gctx_rec_cgroup *r);
int mdl_ev_thread_present(struct gctx_model *m, const struct gctx_rec_thread *r);

/* files.c: GPU file descriptions and their holders; open, use, close, kept fds */
struct file_priv *mdl_file_new(struct gctx_model *m, __u64 addr, __u32 kind, const char *path,
			       bool map_it);
struct file_priv *mdl_file_lookup(const struct gctx_model *m, __u64 addr);
struct gctx_holder *mdl_holder_find(const struct gctx_model *m, __u32 proc_idx,
				    struct file_priv *f);
struct file_priv *mdl_file_resolve(const struct gctx_model *m, __u64 addr, struct proc_priv *p);
void mdl_holder_add_fd(struct gctx_holder *h, __s32 fd);
struct gctx_holder *mdl_holder_add(struct gctx_model *m, struct proc_priv *p, struct file_priv *f,
				   enum gctx_hold_how how, __u32 from, __u64 since,
				   const __s32 *fds, __u32 nfds);
void mdl_holder_end(struct gctx_model *m, struct file_priv *f, struct gctx_holder *h, __u64 ts);
void mdl_holder_revive(struct file_priv *f, struct gctx_holder *h);
int mdl_ev_open(struct gctx_model *m, const struct gctx_ev_open *ev);
int mdl_ev_ioctl(struct gctx_model *m, const struct gctx_ev_ioctl *ev);
int mdl_ev_mmap(struct gctx_model *m, const struct gctx_ev_mmap *ev);
int mdl_ev_close(struct gctx_model *m, const struct gctx_ev_fd *ev);
int mdl_ev_fd_kept(struct gctx_model *m, const struct gctx_ev_fd *ev, bool fork);
int mdl_ev_file_present(struct gctx_model *m, const struct gctx_rec_file *r);

/* objects.c: driver objects decoded from ioctls */
struct obj_priv *mdl_obj_add(struct gctx_model *m, struct file_priv *f, __u32 fam,
			     const struct gctx_ioctl_desc *d, __u64 client,
			     struct proc_priv *creator, __u32 tid, __u64 ts);
int mdl_objs_apply(struct gctx_model *m, struct file_priv *f, struct proc_priv *p, __u32 tid,
		   __u64 ts, const struct gctx_ioctl_desc *d);

/* contexts.c: API contexts and allocations (CUDA driver API / HIP runtime uprobes) */
bool mdl_ctx_gone(const struct proc_priv *p, const struct gctx_api_ctx *c);
int mdl_ev_api(struct gctx_model *m, const struct gctx_ev_api *ev);
int mdl_ev_api_present(struct gctx_model *m, const struct gctx_rec_api_present *r);

/* findings.c: the finding rules */
int mdl_use_finding(struct gctx_model *m, const struct gctx_ev_hdr *hdr, struct proc_priv *p,
		    struct file_priv *f, const struct gctx_holder *h, __s32 fd_no,
		    const struct gctx_ioctl_desc *d, const struct gctx_ev_ioctl *ioc, __s64 ret,
		    bool unknown);
int mdl_fws_raise(struct gctx_model *m, struct proc_priv *c, bool at_finish);
int mdl_crash_check(struct gctx_model *m, struct proc_priv *p, __u32 tid, __u64 ts);
int mdl_across_exec_raise(struct gctx_model *m, struct proc_priv *p, struct file_priv *f,
			  __s32 fd_no, const struct gctx_ev_exec *ev);
int mdl_icc_raise(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev, __u32 v);
void mdl_icc_refused(struct gctx_finding *fd, const struct gctx_ev_api *ev);
int mdl_apierr_count(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev);
int mdl_unseen_raise(struct gctx_model *m, struct proc_priv *p, const struct gctx_rec_api_gap *g);

/* callers.c: the call site of each API call (GCTX_REC_CALLER); mdl_callers_api after
 * mdl_ev_api, with the number of contexts before it */
int mdl_callers_api(struct gctx_model *m, const struct gctx_ev_api *ev, __u32 nctxs_before);
int mdl_callers_feed(struct gctx_model *m, __u32 type, const void *rec);
void mdl_callers_free(struct gctx_model *m);

/* coverage.c */
int mdl_coverage_feed(struct gctx_model *m, __u32 type, const void *rec);
void mdl_coverage_free(struct gctx_model *m);
int mdl_pyexc_feed(struct gctx_model *m, const struct gctx_ev_pyexc *e);
void mdl_pyexc_free(struct gctx_model *m);

void mdl_proc_free_arrays(struct proc_priv *p);

#endif /* __GPUCTX_MODEL_PRIV_H */
