/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The diagnosis of a finished model: findings grouped into incidents by root cause, a fix per
 * incident chosen from the evidence, a verdict for the run, and per-process start-up times.
 * Pure: it reads the model through model.h only (call gctx_model__finish() first) and owns
 * copies of everything it returns, valid until gctx_analysis__free().
 *
 * One incident per (process that created the GPU state, kind of cause): a DataLoader with 4
 * workers over 3 epochs that all touch the inherited context is ONE poison-fork incident with
 * 12 members, not 36 findings.
 */
#ifndef __GPUCTX_ANALYSIS_H
#define __GPUCTX_ANALYSIS_H

#include <stdbool.h>
#include <linux/types.h>
#include "model/model.h"

enum gctx_incident_kind {
	GCTX_INC_POISON_FORK = 0, /* error: forked children used (or died with) inherited state */
	GCTX_INC_FORK_INHERIT,	  /* warning: children inherited GPU state, none used it */
	GCTX_INC_FOREIGN_USE,	  /* error: GPU files used by a process that got them otherwise */
	GCTX_INC_FD_ACROSS_EXEC,  /* warning: GPU fds kept across exec (no O_CLOEXEC) */
	GCTX_INC_SPAWN_STARTUP,	  /* error: spawned Python workers failed while starting */
	GCTX_INC_API_ERRORS,	  /* warning: CUDA/HIP calls that failed, per process */
	GCTX_INC_MAX,
};

/* Fixes, as evidence-driven choices; the text is in hints.c. */
enum gctx_fix {
	GCTX_FIX_MP_START_METHOD = 1u << 0, /* Python multiprocessing: "spawn"/"forkserver" */
	GCTX_FIX_DL_CONTEXT = 1u << 1,	    /* DataLoader(multiprocessing_context="spawn") */
	GCTX_FIX_PERSISTENT = 1u << 2,	    /* DataLoader(persistent_workers=True) */
	GCTX_FIX_INIT_AFTER_FORK = 1u << 3, /* initialise the GPU after the workers start */
	GCTX_FIX_IMPORT_INIT = 1u << 4,	    /* the parent never used it: an import initialised it */
	GCTX_FIX_EXEC_CHILD = 1u << 5,	    /* not Python: exec in the child (posix_spawn) */
	GCTX_FIX_MAIN_GUARD = 1u << 6,	    /* if __name__ == "__main__": */
	GCTX_FIX_CLOEXEC = 1u << 7,	    /* open GPU files with O_CLOEXEC */
	GCTX_FIX_FD_PASSING = 1u << 8,	    /* do not pass GPU fds between processes */
	GCTX_FIX_API_CHECK = 1u << 9,	    /* look at the failing calls */
};

/* Where in the code an incident's step happened (filled when stacks were recorded; issue 11
 * fills these; empty otherwise, and the outputs print only the ones set). */
enum gctx_site_role {
	GCTX_SITE_INIT = 0, /* where the GPU state was created (cuInit, first open) */
	GCTX_SITE_FORK,	    /* the fork that passed it on */
	GCTX_SITE_USE,	    /* the first inherited use */
	GCTX_SITE_MAX,
};

struct gctx_site {
	char text[160]; /* "train.py:42 in main()", "" when unknown */
};

/* Evidence about the stack a fix is chosen for (hints.c). */
struct gctx_hint_evidence {
	enum gctx_incident_kind kind;
	bool python;	   /* the source process runs a Python interpreter */
	bool dataloader;   /* members named like torch DataLoader workers (pt_data_worker) */
	bool mp_spawned;   /* members exec'd multiprocessing's spawn/forkserver entry */
	bool init_unused;  /* the source made no allocation before its first fork */
	bool hip;	   /* HIP (ROCm) rather than CUDA */
	bool no_api;	   /* seen at the driver only: say "GPU", not CUDA/HIP */
	__u32 generations; /* bursts of forks (epochs) */
};

struct gctx_incident {
	__u32 id; /* 1-based, in report order (most severe first) */
	enum gctx_incident_kind kind;
	enum gctx_severity severity;
	__u32 src_idx; /* process that created the state (or that failed) */
	__u32 src_pid;
	char api[8];  /* "CUDA", "HIP", "" (kernel-level only) */
	__u32 ctx_id; /* the source's API context, 0 none */
	bool ctx_primary;
	int device;		 /* -1 unknown */
	__u64 init_ns;		 /* when the source created the state, 0 unknown */
	__u64 first_ns, last_ns; /* first and last finding of the incident */
	__u32 ninherited;	 /* member processes that inherited it */
	__u32 nused;		 /* ... that used it (kernel- or API-level) */
	__u32 nunseen; /* ... not seen using it, whose CUDA/HIP calls could not all be seen */
	__u32 napi_used, nkernel_used;
	__u32 ncrashed;	 /* ... that died by a fatal signal */
	__u32 crash_pid; /* the first of those, 0 none */
	int crash_sig;
	__u32 generations;   /* bursts of forks: a new one starts once the last ended */
	char first_use[160]; /* "cuMemAlloc -> CUDA_ERROR_NOT_INITIALIZED", "RM_ALLOC ..." */
	/* what a member raised in Python (the first one about the GPU, else any), with its
	 * site: "RuntimeError: Cannot re-initialize CUDA in forked subprocess at t.py:9 in
	 * work"; nraised: members whose exception was about the GPU or fork */
	char raised[320];
	__u32 nraised;
	__u32 *pids;	/* affected processes, in fork order */
	__u32 *pid_gen; /* generation (1-based) of each */
	__u32 *members; /* process index of each */
	__u32 npids;
	__u32 *findings; /* finding ids */
	__u32 nfindings;
	__u32 fixes; /* enum gctx_fix bits */
	struct gctx_hint_evidence ev;
	struct gctx_site where[GCTX_SITE_MAX];
	char summary[768]; /* one paragraph: what happened */
	char init_at[40];  /* " at 1.200 s": the part of summary that is a time */
	char fix[768];	   /* what to change */
};

struct gctx_job_summary {
	__u32 nincidents, nerrors, nwarnings;
	enum gctx_severity worst; /* meaningful when nincidents */
	__u32 nprocs;
	__u64 ctx_created, ctx_destroyed; /* through the CUDA/HIP API (its probes) */
	/* at driver level, from the ioctls: NVIDIA channel groups (and channels outside one),
	 * AMD KFD processes and amdgpu contexts */
	__u64 drv_ctx_created, drv_ctx_destroyed;
	__u32 generations; /* most worker generations in one incident or spawn pool */
	__u32 nstartups;   /* processes with a gpu_init_ns */
	__u64 startup_median_ns, startup_max_ns;
	bool incomplete;    /* events lost, recording cut short: see coverage */
	char coverage[256]; /* why the verdict may miss something, "" when complete */
	/* with no incident: processes holding GPU state killed by a signal, the first's index */
	__u32 ncrashed, crash_idx;
	char verdict[1024]; /* the first line a user reads */
};

struct gctx_analysis;

/* start_ns: the trace's start (times in texts are seconds since it), 0 for raw. NULL: no
 * memory. */
struct gctx_analysis *gctx_analysis__new(const struct gctx_model *m, __u64 start_ns);
void gctx_analysis__free(struct gctx_analysis *a);

__u32 gctx_analysis__nincidents(const struct gctx_analysis *a);
const struct gctx_incident *gctx_analysis__incident(const struct gctx_analysis *a, __u32 i);
const struct gctx_job_summary *gctx_analysis__summary(const struct gctx_analysis *a);
/* Incident id a finding (1-based id) belongs to, 0 none. */
__u32 gctx_analysis__incident_of(const struct gctx_analysis *a, __u32 finding_id);
/* Time from a process's start (fork, or its exec) to its first GPU context or GPU file open;
 * -1 when it had none or its start is unknown. */
__s64 gctx_analysis__gpu_init_ns(const struct gctx_analysis *a, __u32 proc_idx);
/* Incidents at or above min (none when min is beyond GCTX_SEV_ERROR). */
__u32 gctx_analysis__count_at(const struct gctx_analysis *a, enum gctx_severity min);

/* "python3 train.py --epochs 3", "pt_data_worker, was python3": a process's latest name, the
 * arguments of its own exec, the name it had before a rename (printable, cut to len). */
void gctx_proc_label(const struct gctx_model *m, __u32 proc_idx, char *buf, size_t len);

const char *gctx_incident_kind_name(enum gctx_incident_kind k); /* "poison-fork", ... */
const char *gctx_site_role_name(enum gctx_site_role r);	    /* "GPU initialised", "forked", ... */
const char *gctx_incident_title(enum gctx_incident_kind k); /* "POISON FORK", ... */

/* hints.c: the fixes for this evidence (enum gctx_fix bits) and their text. */
__u32 gctx_hints__choose(const struct gctx_hint_evidence *ev);
void gctx_hints__text(__u32 fixes, const struct gctx_hint_evidence *ev, char *buf, size_t len);

#endif /* __GPUCTX_ANALYSIS_H */
