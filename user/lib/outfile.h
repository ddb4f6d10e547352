/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files (traces, timelines) are the user's: gpuctx writes a private temporary file
 * (mode 0600) in the target's directory and renames it into place only when the output is
 * complete. It never follows a symlink at the target, never writes into a device, FIFO or
 * directory, and never truncates or deletes a file it did not create: a failure leaves what
 * was at the path untouched. A caller that created the file itself (the Slurm plugin, as the
 * job's user) hands it over as /dev/fd/N: an empty regular file open for writing, written in
 * place.
 */
#ifndef __GPUCTX_OUTFILE_H
#define __GPUCTX_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct gctx_outfile;

/* Check path (refused: "-", a symlink, a directory, a device, a FIFO, a socket) and create
 * the temporary file beside it. NULL with a one-line reason in err. */
struct gctx_outfile *gctx_outfile__new(const char *path, char *err, size_t errlen);
int gctx_outfile__fd(const struct gctx_outfile *o); /* the temporary file */
const char *gctx_outfile__tmp_path(const struct gctx_outfile *o);
/* fsync and rename the temporary file to the path. 0, or -errno with the reason in err
 * (the temporary file is then kept, and named in err: the data is not lost). */
int gctx_outfile__commit(struct gctx_outfile *o, char *err, size_t errlen);
/* Commit without the fsync: a file rewritten every few seconds whose loss in a crash costs
 * nothing (the agent's metrics), where an fsync would stall its writer on a busy disk. */
void gctx_outfile__no_fsync(struct gctx_outfile *o);
/* Close; removes the temporary file unless it was committed (or kept). NULL is a no-op. */
void gctx_outfile__free(struct gctx_outfile *o);

/* Write a whole output to path through a stdio stream: fn(out, arg) writes it (0 or -errno);
 * committed only when fn and the close succeeded. 0, or -1 with a one-line reason in err. */
int gctx_outfile__write(const char *path, int (*fn)(FILE *out, const void *arg), const void *arg,
			char *err, size_t errlen);

/* Why path may not be written to, or NULL when it is absent or a regular file. */
const char *gctx_outfile_refusal(const char *path);

#endif /* __GPUCTX_OUTFILE_H */
