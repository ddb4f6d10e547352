/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Map layouts shared by bpf/hold.bpf.h and the collector (collect/hold.c, collect/libwatch.c):
 * which library files are probed already, and which processes are held until they are.
 * Userspace includes <linux/types.h> before this header.
 */
#ifndef __GPUCTX_HOLD_H
#define __GPUCTX_HOLD_H

#define GCTX_MAX_HOLDS	       1024
#define GCTX_MAX_KNOWN_LIBS    4096
#define GCTX_MAX_STOP_WATCHERS 4096

/* Values of known_libs: the library's probes are live (or it is known not to need them), or
 * the collector has only looked at it once (not named like a CUDA/HIP library then). */
#define GCTX_LIB_PROBED 1
#define GCTX_LIB_SEEN	2

/* A library file, by filesystem (kernel dev_t) and inode. */
struct gctx_lib_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

/* Value of the holds map (key: tgid): the process was stopped at since_ns. */
struct gctx_hold_val {
	__u64 since_ns; /* CLOCK_MONOTONIC */
	__u32 tid;	/* the thread that mapped the library */
	__u32 dev;
	__u64 ino;
	__u32 resumed; /* resumed before the probes: GCTX_HOLD_RESUMED_* */
	__u32 ptgid;   /* its parent, when held */
	__u32 restops; /* stopped again after another gpuctx's SIGCONT (guard) */
	__u32 pad;
};

/* Who resumed a hold before the collector had probed the library (gctx_hold_val.resumed). */
#define GCTX_HOLD_RESUMED_ELSEWHERE 1 /* a SIGCONT from elsewhere (the job's shell, a tracer) */
#define GCTX_HOLD_RESUMED_WAIT	    2 /* its parent began waiting for stops: resumed first */
#define GCTX_HOLD_RESUMED_ABORT	    3 /* gpuctx or the releaser was sent a fatal or stop signal */

/* hold_ctl[0]: whether holds may be made, and gpuctx's own executable, whose processes (the
 * cuGetProcAddress resolver child, which maps a library being probed) are never held. */
struct gctx_hold_ctl {
	__u32 armed;	/* 1 while a releaser runs */
	__u32 self_dev; /* kernel dev_t and inode of gpuctx's executable */
	__u64 self_ino;
	__u64 last_hold_ns; /* when the latest hold was made */
	__u32 collector;    /* tgids the guard (bpf/guard.bpf.c) watches for signals */
	__u32 releaser;
	__u32 tripped;	      /* the signal that made the guard end every hold, or 0 */
	__u32 restop;	      /* 1: the guard stops a held process again after another
			       * gpuctx's SIGCONT (hold.bpf.h leaves such a hold alone) */
	__u64 last_restop_ns; /* when the guard last did (CLOCK_MONOTONIC) */
};

#endif /* __GPUCTX_HOLD_H */
