// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx agent: the command line of the node-wide flight recorder (agent/: the engine). Its
 * own options go to the engine; record's (devices, libraries, stacks, holds) go to the
 * recording of every process it rides on.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cli/cli.h"

#define AGENT_MAX_ARGS 64

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: gpuctx agent [--spool DIR] [--run-dir DIR] [--fail-on error|warning]\n"
	    "                    [--window SECONDS] [--window-size SIZE] [--grace SECONDS]\n"
	    "                    [--spool-max SIZE] [--spool-files N] [--metrics FILE]\n"
	    "                    [--group GROUP] [--syslog] [--device PATH:KIND]...\n"
	    "                    [--libcuda PATH] [--libhip PATH]\n"
	    "                    [--no-api] [--no-stacks] [--no-hold] [-v]\n"
	    "\n"
	    "Follow every process on this node and keep the latest events in memory; write a\n"
	    "trace of a process tree into the spool only when it has an incident at or above\n"
	    "--fail-on, or when a process holding or inheriting GPU state dies by a signal.\n"
	    "Runs until SIGTERM (a final flush); SIGHUP reopens the spool and rewrites the\n"
	    "metrics. One agent per node (per run directory).\n"
	    "\n"
	    "      --spool DIR         where dumps go (default /var/lib/gpuctx), created 0700\n"
	    "      --run-dir DIR       its lock and the socket record --from-agent asks (default\n"
	    "                          /run/gpuctx; created 0700): another for a second agent\n"
	    "      --fail-on SEV       error (default) or warning: what is worth a dump\n"
	    "      --window SECONDS    history kept in memory (default 600)\n"
	    "      --window-size SIZE  memory for that history (default 256M)\n"
	    "      --grace SECONDS     wait after an incident, so the crash or exit that follows\n"
	    "                          is in the dump (default 2)\n"
	    "      --spool-max SIZE    the dumps' total size at most; the biggest owner's oldest\n"
	    "                          go first (default "
	    "1G)\n"
	    "      --spool-files N     dumps kept at most (default 200)\n"
	    "      --metrics FILE      counters in Prometheus text format, rewritten atomically\n"
	    "      --group GROUP       dumps readable by this group (default root only)\n"
	    "      --syslog            incident lines to syslog (default standard output, which\n"
	    "                          is the journal under systemd)\n"
	    "      --device PATH:KIND  as gpuctx record: a GPU device file (KIND: nvidiactl,\n"
	    "                          nvidia, nvidia-uvm, kfd, drm-render)\n"
	    "      --libcuda PATH      as gpuctx record: probe this CUDA driver library too\n"
	    "      --libhip PATH       as gpuctx record: probe this HIP runtime library too\n"
	    "      --no-api            as gpuctx record: do not probe the CUDA/HIP libraries\n"
	    "      --no-stacks         as gpuctx record: no call stacks\n"
	    "      --no-hold           as gpuctx record: never hold a process\n"
	    "      --hold-timeout MS   as gpuctx record (default 500)\n"
	    "      --ring-size SIZE    as gpuctx record (default 8M)\n"
	    "  -v, --verbose           libbpf debug output\n"
	    "\n"
	    "EXAMPLES:\n"
	    "  gpuctx agent --metrics /var/lib/node_exporter/textfile/gpuctx.prom\n"
	    "  gpuctx report "
	    "/var/lib/gpuctx/20261128T101500Z-slurm-42.0-python3-1234-poison-fork.gctx\n");
}

static int parse_seconds(const char *opt, const char *arg, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*out) || *out < 0 || *out > max) {
		fprintf(stderr, "gpuctx: bad %s '%s': want seconds from 0 to %.0f\n", opt, arg,
			max);
		return -1;
	}
	return 0;
}

static int parse_size(const char *opt, const char *arg, __u64 min, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-')
		goto bad;
	switch (*end) {
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case 'M':
	case 'm':
		v <<= 20;
		end++;
		break;
	case 'G':
	case 'g':
		v <<= 30;
		end++;
		break;
	}
	if (*end || v < min || v > (1ull << 40))
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "gpuctx: bad %s '%s': want a size such as 64M or 2G (at least %lluK)\n",
		opt, arg, (unsigned long long)(min >> 10));
	return -1;
}

enum {
	OPT_SPOOL = 2000,
	OPT_RUN_DIR,
	OPT_FAIL_ON,
	OPT_WINDOW,
	OPT_WINDOW_SIZE,
	OPT_GRACE,
	OPT_SPOOL_MAX,
	OPT_SPOOL_FILES,
	OPT_METRICS,
	OPT_GROUP,
	OPT_SYSLOG,
	OPT_REC_VAL,
	OPT_REC_FLAG
};

/* Agent options to o; record options (and their values) to rargv after "record", "-a". */
static int parse_args(struct agent_opts *o, int argc, char **argv, char **rargv, int *rn)
{
	static const struct option opts[] = {
	    {"spool", required_argument, NULL, OPT_SPOOL},
	    {"run-dir", required_argument, NULL, OPT_RUN_DIR},
	    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	    {"window", required_argument, NULL, OPT_WINDOW},
	    {"window-size", required_argument, NULL, OPT_WINDOW_SIZE},
	    {"grace", required_argument, NULL, OPT_GRACE},
	    {"spool-max", required_argument, NULL, OPT_SPOOL_MAX},
	    {"spool-files", required_argument, NULL, OPT_SPOOL_FILES},
	    {"metrics", required_argument, NULL, OPT_METRICS},
	    {"group", required_argument, NULL, OPT_GROUP},
	    {"syslog", no_argument, NULL, OPT_SYSLOG},
	    {"device", required_argument, NULL, OPT_REC_VAL},
	    {"libcuda", required_argument, NULL, OPT_REC_VAL},
	    {"libhip", required_argument, NULL, OPT_REC_VAL},
	    {"hold-timeout", required_argument, NULL, OPT_REC_VAL},
	    {"ring-size", required_argument, NULL, OPT_REC_VAL},
	    {"no-api", no_argument, NULL, OPT_REC_FLAG},
	    {"no-stacks", no_argument, NULL, OPT_REC_FLAG},
	    {"no-hold", no_argument, NULL, OPT_REC_FLAG},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int c, idx;
	double files;

	o->spool = "/var/lib/gpuctx";
	o->run_dir = AGENT_RUN_DIR;
	o->fail_on = GCTX_SEV_ERROR;
	o->window_s = 600;
	o->window_bytes = 256ull << 20;
	o->grace_s = 2;
	o->spool_max_bytes = 1ull << 30;
	o->spool_max_files = 200;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, &idx)) != -1) {
		switch (c) {
		case OPT_SPOOL:
			o->spool = optarg;
			break;
		case OPT_RUN_DIR: {
			struct sockaddr_un sa;

			if (optarg[0] != '/' || agent_sock_addr(&sa, optarg)) {
				fprintf(stderr,
					"gpuctx: bad --run-dir '%s': want an absolute path short "
					"enough for a unix socket\n",
					optarg);
				return -1;
			}
			o->run_dir = optarg;
			break;
		}
		case OPT_FAIL_ON:
			o->fail_on = cli_parse_fail_on(optarg);
			if (o->fail_on < 0 || o->fail_on > GCTX_SEV_ERROR) {
				fprintf(stderr,
					"gpuctx: bad --fail-on '%s': want error or warning\n",
					optarg);
				return -1;
			}
			break;
		case OPT_WINDOW:
			if (parse_seconds("--window", optarg, 7 * 24 * 3600, &o->window_s))
				return -1;
			break;
		case OPT_WINDOW_SIZE:
			if (parse_size("--window-size", optarg, 1 << 20, &o->window_bytes))
				return -1;
			break;
		case OPT_GRACE:
			if (parse_seconds("--grace", optarg, 600, &o->grace_s))
				return -1;
			break;
		case OPT_SPOOL_MAX:
			if (parse_size("--spool-max", optarg, 1 << 20, &o->spool_max_bytes))
				return -1;
			break;
		case OPT_SPOOL_FILES:
			if (parse_seconds("--spool-files", optarg, 1000000, &files) || files < 1 ||
			    files != (double)(__u32)files) {
				fprintf(stderr,
					"gpuctx: bad --spool-files '%s': want 1 to 1000000\n",
					optarg);
				return -1;
			}
			o->spool_max_files = files;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case OPT_GROUP: {
			struct group *g = getgrnam(optarg);

			if (!g) {
				fprintf(stderr, "gpuctx: no such group: %s\n", optarg);
				return -1;
			}
			o->group = optarg;
			o->gid = g->gr_gid;
			break;
		}
		case OPT_SYSLOG:
			o->syslog = true;
			break;
		case OPT_REC_VAL:
		case OPT_REC_FLAG:
			/* passed on to record as given: its checks and messages apply */
			if (*rn + 2 >= AGENT_MAX_ARGS) {
				fprintf(stderr, "gpuctx: too many options\n");
				return -1;
			}
			if (asprintf(&rargv[*rn], "--%s", opts[idx].name) < 0)
				return -1; /* freed with the process: the agent runs until it stops
					    */
			(*rn)++;
			if (c == OPT_REC_VAL)
				rargv[(*rn)++] = optarg;
			break;
		case 'v':
			rargv[(*rn)++] = "-v";
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuctx: agent follows every process: no command or trace "
				"(see gpuctx agent --help)\n");
		return -1;
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct agent a = {.spool_fd = -1, .lock_fd = -1, .run_fd = -1};
	struct cli_record_hooks hooks = {
	    .ctx = &a,
	    .on_record = agent__on_record,
	    .on_finding = agent__on_finding,
	    .tick = agent__tick,
	    .finish = agent__finish,
	    .drops = &a.drops,
	    .stacks = &a.stacks,
	};
	char *rargv[AGENT_MAX_ARGS] = {"record", "-a", "--silent"}, err[512];
	int rn = 3, ret;

	if (parse_args(&a.o, argc, argv, rargv, &rn))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "gpuctx: the agent follows every process and needs root\n");
		return 1;
	}
	if (agent__start(&a, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	ret = cli_record_run(rn, rargv, &hooks);
	agent__stop(&a);
	return ret == 128 + SIGTERM || ret == 128 + SIGINT ? 0 : ret;
}
