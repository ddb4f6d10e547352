/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * API coverage on the live side: reacts to the kernel's reports of API libraries mapped before
 * their probes (GCTX_EV_APIMAP), of executable mappings (GCTX_EV_LIBMAP) and of execs: probes
 * what was found, resumes held processes, predicts the next libraries (ldpath.h), and writes a
 * GCTX_REC_HOLD for each hold and a GCTX_REC_API_GAP wherever calls could have been missed.
 */
#ifndef __GPUCTX_LIBWATCH_H
#define __GPUCTX_LIBWATCH_H

#include <sys/types.h>
#include <linux/types.h>
#include "collect/collector.h"
#include "collect/hold.h"
#include "collect/ldpath.h"
#include "collect/uprobes.h"

struct gctx_libwatch_opts {
	int known_fd; /* BPF maps of bpf/hold.bpf.h (the collector's) */
	int holds_fd;
	int ctl_fd;
	bool hold; /* hold mapping processes (else: only report the gaps) */
	__u32 hold_timeout_ms;
	bool verbose;
	gctx_record_fn cb; /* receives the GCTX_REC_HOLD / GCTX_REC_API_GAP records */
	void *cb_ctx;
};

struct gctx_libwatch;

/* Starts the releaser when holding is on. NULL + err on failure. */
struct gctx_libwatch *gctx_libwatch__new(const struct gctx_libwatch_opts *o, char *err,
					 size_t errlen);
/* The probes to add to (owned by the caller; made with on_lib = gctx_libwatch__on_lib). */
void gctx_libwatch__attach(struct gctx_libwatch *w, struct gctx_uprobes *u);
/* Probe ahead what the command (cmd) or a running process (pid) will load. */
void gctx_libwatch__predict_cmd(struct gctx_libwatch *w, char *const *cmd);
void gctx_libwatch__predict_pid(struct gctx_libwatch *w, __u32 pid);
/* For gctx_uprobes_opts.on_lib: a library file was looked at (probed, or found not to be one). */
void gctx_libwatch__on_lib(void *ctx, const char *path, dev_t dev, ino_t ino, int ret);
/* An exec's libraries are predicted at the next tick: call it once the ring is drained, when
 * the exits of processes that were already gone have arrived too. */
void gctx_libwatch__on_record(struct gctx_libwatch *w, __u32 type, const void *data, __u32 len);
/* For gctx_collector__set_early(): a forked child held for its probes is acted on as soon as
 * its record is in the ring, not after the records in front of it (stacks, exits): its hold
 * lasts only as long as that. Its hold and gap records follow in the record's turn. Runs on
 * the ring's look ahead thread, beside the main loop's calls here. */
int gctx_libwatch__early(void *ctx, void *data, size_t len);
bool gctx_libwatch__early_wants(const void *data, size_t len);
void gctx_libwatch__tick(struct gctx_libwatch *w);
/* End of the recording: mappings the kernel could not report are a gap of unknown place. */
void gctx_libwatch__finish(struct gctx_libwatch *w, __u64 apimap_lost);
/* Call after the BPF programs are detached: resumes any hold left and stops the releaser. */
void gctx_libwatch__free(struct gctx_libwatch *w);

#endif /* __GPUCTX_LIBWATCH_H */
