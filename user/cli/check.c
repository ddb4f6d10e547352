// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx check: for CI. Records a command (as `record -q`, to -o FILE or a temporary trace
 * removed afterwards) or reads a trace, prints the verdict, and exits GCTX_EXIT_INCIDENT when
 * an incident at or above --fail-on happened; otherwise with the command's own status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/outfile.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx check [--fail-on SEV] [--junit FILE] [--html FILE] [record options] --\n"
	    "                    CMD [ARG...]\n"
	    "       gpuctx check [--fail-on SEV] [--junit FILE] [--html FILE] TRACE...\n"
	    "\n"
	    "Run CMD under gpuctx record (or read TRACE), print the verdict, and fail when GPU\n"
	    "state was misused (a poison fork, GPU fds across exec, spawned workers failing).\n"
	    "Several traces (or a merged one) of a job's hosts: each host's verdict, and\n"
	    "failure when any host has an incident.\n"
	    "\n"
	    "      --fail-on SEV       error (default), warning or never\n"
	    "      --junit FILE        write JUnit XML: one testcase per incident, failing at\n"
	    "                          or above --fail-on; one passing testcase when clean\n"
	    "      --html FILE         write one self-contained HTML page (verdict, incidents,\n"
	    "                          process tree, timeline) to keep as a CI artifact\n"
	    "  -o, --output FILE       keep the trace (default: a temporary file, removed)\n"
	    "  other options           as gpuctx record (--device, --libcuda, -p, ...)\n"
	    "\n"
	    "Exit status: %d when an incident at or above --fail-on happened; otherwise the\n"
	    "command's own status (128+N when a signal N killed it); 1 when gpuctx failed,\n"
	    "2 on bad usage.\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx check -- python -m pytest tests/\n"
	    "  gpuctx check --junit gpuctx.xml -o job.gctx -- python train.py\n"
	    "  gpuctx check --junit gpuctx.xml --html gpuctx.html -- python train.py\n"
	    "  gpuctx check --fail-on warning job.gctx\n",
	    GCTX_EXIT_INCIDENT);
}

/* A record option that takes a value as the next argument. */
static bool takes_value(const char *a)
{
	static const char *const with[] = {
	    "-o",	"--output",	  "-p",		"--pid",    "--cgroup",
	    "--device", "--duration",	  "--libcuda",	"--libhip", "--perfetto",
	    "--chrome", "--hold-timeout", "--ring-size"};

	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++)
		if (!strcmp(a, with[i]))
			return true;
	return false;
}

/* The -o/--output value among the record options (before "--"), NULL when none. */
static const char *user_output(char **rargv, int rn)
{
	const char *t = NULL;

	for (int k = 3; k < rn && strcmp(rargv[k], "--"); k++) {
		if ((!strcmp(rargv[k], "-o") || !strcmp(rargv[k], "--output")) && k + 1 < rn)
			t = rargv[++k];
		else if (!strncmp(rargv[k], "--output=", 9))
			t = rargv[k] + 9;
		else if (!strncmp(rargv[k], "-o", 2) && rargv[k][2])
			t = rargv[k] + 2;
	}
	return t;
}

static int check_traces(char **paths, int n, int fail_on, const char *junit, const char *html)
{
	struct cli_job job;
	int ret;

	if (cli_job_load(paths, n, &job))
		return 1;
	if (job.n > 1 && junit) {
		fprintf(stderr, "gpuctx: --junit takes the trace of one host\n");
		ret = 2;
	} else if (job.n > 1) {
		ret = cli_job_verdict(&job, fail_on, stderr, "gpuctx check: ");
	} else {
		ret = cli_verdict(job.models[0], &job.files[0].meta, fail_on, junit, stderr,
				  "gpuctx check: ");
	}
	if (html && ret != 2 && cli_job_html(&job, html) && ret != GCTX_EXIT_INCIDENT)
		ret = 1;
	cli_job_free(&job);
	return ret;
}

int cmd_check(int argc, char **argv)
{
	char **rargv = calloc(argc + 8, sizeof(*rargv));
	char dir[4096], path[4096 + 16];
	const char *junit = NULL, *html = NULL, *trace = NULL, *t;
	char **traces = calloc(argc + 1, sizeof(*traces));
	int ntraces = 0;
	int fail_on = GCTX_SEV_ERROR, rn = 0, i, rc, ret;
	bool has_cmd = false, has_output = false, has_opts = false;
	struct stat st;

	if (!rargv) {
		fprintf(stderr, "gpuctx: out of memory\n");
		return 1;
	}
	rargv[rn++] = "record";
	rargv[rn++] = "-q";
	rargv[rn++] = "--silent";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			has_cmd = true;
			for (; i < argc; i++)
				rargv[rn++] = argv[i];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			free(rargv);
			return 0;
		}
		if (!strcmp(a, "--fail-on") || !strncmp(a, "--fail-on=", 10)) {
			const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");

			fail_on = cli_parse_fail_on(v);
			if (fail_on < 0) {
				fprintf(stderr,
					"gpuctx: bad --fail-on '%s': want error, warning or "
					"never\n",
					v);
				free(rargv);
				return 2;
			}
			continue;
		}
		if (!strcmp(a, "--junit") || !strncmp(a, "--junit=", 8)) {
			junit = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
			if (!junit || !junit[0]) {
				fprintf(stderr, "gpuctx: --junit needs a file\n");
				free(rargv);
				return 2;
			}
			continue;
		}
		if (!strcmp(a, "--html") || !strncmp(a, "--html=", 7)) {
			html = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			if (!html || !html[0]) {
				fprintf(stderr, "gpuctx: --html needs a file\n");
				free(rargv);
				return 2;
			}
			continue;
		}
		if (a[0] != '-' && !has_opts && traces) {
			/* check TRACE..., unless record options follow */
			trace = traces[ntraces++] = (char *)a;
			continue;
		}
		has_opts = true;
		has_output |= !strcmp(a, "-o") || !strcmp(a, "--output") ||
			      !strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2]);
		rargv[rn++] = (char *)a;
		if (takes_value(a) && i + 1 < argc)
			rargv[rn++] = argv[++i];
	}
	/* refused before a job is run, not after it (lib/outfile.h says which paths) */
	if (junit && (t = gctx_outfile_refusal(junit))) {
		fprintf(stderr, "gpuctx: refusing to write %s: %s\n", junit, t);
		free(rargv);
		return 2;
	}
	if (html && (t = gctx_outfile_refusal(html))) {
		fprintf(stderr, "gpuctx: refusing to write %s: %s\n", html, t);
		free(rargv);
		return 2;
	}
	if (trace && !has_cmd && !has_opts) {
		free(rargv);
		ret = check_traces(traces, ntraces, fail_on, junit, html);
		free(traces);
		return ret;
	}
	free(traces);
	if (trace || (!has_cmd && !has_opts)) {
		fprintf(stderr, "gpuctx: check needs -- CMD [ARG...] or one trace file (see gpuctx "
				"check --help)\n");
		free(rargv);
		return 2;
	}

	path[0] = '\0';
	if (!has_output) {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/gpuctx-check.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			fprintf(stderr, "gpuctx: cannot make a temporary directory: %s\n",
				strerror(errno));
			free(rargv);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/check.gctx", dir);
		/* before the command: "-o PATH" goes with the record options */
		memmove(rargv + 5, rargv + 3, (rn - 3) * sizeof(*rargv));
		rargv[3] = "-o";
		rargv[4] = path;
		rn += 2;
	}
	rargv[rn] = NULL;
	rc = cmd_record(rn, rargv);

	/* the trace the recording left, ours or the user's -o */
	ret = rc;
	t = path[0] ? path : user_output(rargv, rn);
	if (t && !stat(t, &st)) {
		char *one[] = {(char *)t};
		int v = check_traces(one, 1, fail_on, junit, html);

		/* an incident decides; else gpuctx's own failure, else the command's status */
		ret = v == GCTX_EXIT_INCIDENT || (v && !rc) ? v : rc;
		if (!path[0])
			fprintf(stderr, "gpuctx check: details: gpuctx report %s\n", t);
		else if (v)
			fprintf(stderr,
				"gpuctx check: details: run again with -o FILE, then gpuctx "
				"report FILE\n");
	} else if (!rc) {
		ret = 1; /* no trace and no failure said: never report success for it */
	}
	if (path[0]) {
		unlink(path); /* ours: made in our own new directory */
		rmdir(dir);
	}
	free(rargv);
	return ret;
}
