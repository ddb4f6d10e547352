/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli/: the gpuctx command line, one file per subcommand (main.c dispatches). The top of the
 * data path: it may include every other stage; nothing includes it.
 */
#ifndef __GPUCTX_CLI_H
#define __GPUCTX_CLI_H

#include <stdio.h>

struct gctx_model;
struct gctx_trace_meta;

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* Exit status of `check` (and `report --fail-on`) when an incident at or above the fail-on
 * severity occurred. Chosen clear of 1-2 (usage, errors), 126-127 (shell) and 128+N (signals). */
#define GCTX_EXIT_INCIDENT 86
#define GCTX_FAIL_NEVER	   3 /* --fail-on never: beyond every severity */

/* report.c: read a whole trace into a finished model. 0, or 1 with a one-line error printed. */
int cli_load_trace(const char *path, struct gctx_model **out, struct gctx_trace_meta *meta);

/* check.c: "error", "warning", "never" -> severity (GCTX_FAIL_NEVER); -1 when unknown. */
int cli_parse_fail_on(const char *arg);
/* check.c: the diagnosis of a finished model: the verdict and fixes to out after prefix (out
 * NULL: none), JUnit to junit (NULL: none). Returns GCTX_EXIT_INCIDENT when an incident is at
 * or above fail_on, 1 when the analysis or the JUnit file failed, else 0. */
int cli_verdict(const struct gctx_model *m, const struct gctx_trace_meta *meta, int fail_on,
		const char *junit, FILE *out, const char *prefix);

#endif /* __GPUCTX_CLI_H */
