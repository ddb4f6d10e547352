// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record --from-agent: a job's trace from the running agent, without loading a second
 * set of BPF programs: the agent sends the trees' history from its window, then their records
 * as they happen (agent_proto.h); this side writes them as record would and prints the same
 * live lines and verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cli/agent_proto.h"
#include "cli/cli.h"
#include "collect/discover.h"
#include "lib/outfile.h"
#include "model/model.h"
#include "output/report/print.h"
#include "trace/tracefile.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = sig;
}

static int connect_agent(char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", AGENT_SOCK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "no gpuctx agent answers on %s (%s): start it "
			 "(systemctl start gpuctx-agent) or record without --from-agent",
			 AGENT_SOCK, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Read exactly n bytes; 0, or -1 on EOF/error or a stop signal. */
static int read_full(int fd, void *buf, size_t n, __u64 deadline)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (stop || (deadline && gctx_now_mono() >= deadline))
			return -1;
		if (poll(&p, 1, 100) <= 0)
			continue;
		r = read(fd, (char *)buf + got, n - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += r;
	}
	return 0;
}

static void on_finding(const struct gctx_finding *f, void *ctx)
{
	const struct cli_from_agent *o = ctx;

	gctx_print_finding(o->quiet ? stderr : stdout, f, o->meta->start_mono_ns);
}

int cli_record_from_agent(const struct cli_from_agent *o)
{
	struct gctx_trace_writer *w = NULL;
	struct gctx_outfile *out = NULL;
	struct gctx_model *m = NULL;
	struct gctx_rec_end end = { .exit_status = -1 };
	struct sigaction sa = { .sa_handler = on_stop };
	char err[512], req[4096];
	__u64 records = 0, deadline = 0;
	size_t off;
	void *buf = NULL;
	int fd, ret = 1, werr = 0;
	bool ended = false;

	fd = connect_agent(err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	off = snprintf(req, sizeof(req), "pids ");
	for (__u32 i = 0; i < o->npids && off < sizeof(req) - 16; i++)
		off += snprintf(req + off, sizeof(req) - off, "%s%u", i ? "," : "", o->pids[i]);
	req[off++] = '\n';
	if (write(fd, req, off) != (ssize_t)off) {
		fprintf(stderr, "gpuctx: writing to the agent: %s\n", strerror(errno));
		goto out;
	}
	out = gctx_outfile__new(o->output, err, sizeof(err));
	if (!out) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto out;
	}
	w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(out), F_DUPFD_CLOEXEC, 0), o->meta,
				      &werr);
	m = gctx_model__new();
	buf = malloc(AGENT_FRAME_MAX);
	if (!w || !m || !buf) {
		fprintf(stderr, "gpuctx: cannot write %s: %s\n", o->output,
			strerror(werr ? -werr : ENOMEM));
		goto out;
	}
	gctx_model__set_finding_cb(m, on_finding, (void *)o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "gpuctx: attached to the agent's history of %u process%s; Ctrl-C to "
			"stop\n", o->npids, o->npids == 1 ? "" : "es");
	if (o->duration > 0)
		deadline = gctx_now_mono() + (__u64)(o->duration * 1e9);
	for (;;) {
		struct agent_frame f;

		if (read_full(fd, &f, sizeof(f), deadline))
			break;
		if (f.len > AGENT_FRAME_MAX || read_full(fd, buf, f.len, 0)) {
			fprintf(stderr, "gpuctx: the agent's stream broke off\n");
			break;
		}
		if (f.type == AGENT_FRAME_END) {
			ended = true;
			break;
		}
		if (f.type == AGENT_FRAME_ERROR) {
			fprintf(stderr, "gpuctx: the agent: %.*s\n", (int)f.len, (char *)buf);
			break;
		}
		records++;
		gctx_trace_writer__append(w, f.type, buf, f.len);
		if (!o->quiet)
			gctx_print_event(stdout, f.type, buf, f.len, o->meta->start_mono_ns);
		gctx_model__feed(m, f.type, buf, f.len);
	}
	end.end_ns = gctx_now_mono();
	end.reason = ended ? 0 : stop ? 1 : 2;
	end.events = records;
	gctx_trace_writer__append_final(w, GCTX_REC_END, &end, sizeof(end));
	gctx_model__feed(m, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(m);
	werr = gctx_trace_writer__free(w);
	w = NULL;
	if (werr || (!records && !ended)) {
		fprintf(stderr, "gpuctx: %s: %s\n", o->output,
			werr ? strerror(-werr) : "nothing came from the agent");
		goto out;
	}
	if (gctx_outfile__commit(out, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto out;
	}
	fprintf(stderr, "gpuctx: %u processes, %llu events from the agent; trace written to %s\n",
		gctx_model__nprocs(m), (unsigned long long)records, o->output);
	if (!o->silent)
		cli_verdict(m, o->meta, GCTX_FAIL_NEVER, NULL, stderr, "gpuctx: ");
	ret = 0;
out:
	gctx_trace_writer__free(w);
	gctx_outfile__free(out);
	gctx_model__free(m);
	free(buf);
	close(fd);
	return ret;
}
