// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record --from-agent: a job's trace from the running agent, without loading a second
 * set of BPF programs: the agent sends the trees' history from its window, then their records
 * as they happen (agent/proto.h); this side writes them as record would and prints the same
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

#include "agent/proto.h"
#include "cli/cli.h"
#include "cli/fromagent_keep.h"
#include "collect/discover.h"
#include "lib/outfile.h"
#include "model/model.h"
#include "output/report/print.h"
#include "trace/tracefile.h"

#define DRAIN_WAIT_NS (5 * 1000000000ull) /* after "end": the agent's last records */

static volatile sig_atomic_t stop, nstops;

static void on_stop(int sig)
{
	stop = sig;
	nstops++;
}

static int connect_agent(const char *run_dir, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	int fd;

	if (agent_sock_addr(&sa, run_dir)) {
		snprintf(err, errlen, "--run-dir %s: too long for a unix socket's path", run_dir);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen,
			 "no gpuctx agent answers on %s (%s): start it "
			 "(systemctl start gpuctx-agent) or record without --from-agent",
			 sa.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Read exactly n bytes; 0, or -1 on EOF/error, the deadline or a second stop signal; -2 when
 * stoppable and a stop signal came before the first byte (between frames: the stream stays
 * whole). */
static int read_full(int fd, void *buf, size_t n, __u64 deadline, bool stoppable)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (stoppable && !got && stop)
			return -2;
		if (nstops > 1 || (deadline && gctx_now_mono() >= deadline))
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

static void say_attached(const struct cli_from_agent *o)
{
	if (o->cgroup)
		fprintf(stderr,
			"gpuctx: attached to the agent, following cgroup %s; Ctrl-C to "
			"stop\n",
			o->cgroup);
	else
		fprintf(stderr,
			"gpuctx: attached to the agent's history of %u process%s; Ctrl-C "
			"to stop\n",
			o->npids, o->npids == 1 ? "" : "es");
}

struct sink {
	struct gctx_trace_writer *w;
	struct gctx_model *m;
	const struct cli_from_agent *o;
};

static void put(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct sink *k = ctx;

	gctx_trace_writer__append(k->w, type, data, len);
	if (!k->o->quiet)
		gctx_print_event(stdout, type, data, len, k->o->meta->start_mono_ns);
	gctx_model__feed(k->m, type, data, len);
}

static int send_request(int fd, const struct cli_from_agent *o)
{
	char req[4096];
	size_t off;

	if (o->cgroup) {
		off = snprintf(req, sizeof(req), "cgroup %s\n", o->cgroup);
		if (off >= sizeof(req)) {
			fprintf(stderr, "gpuctx: --cgroup %s: path too long\n", o->cgroup);
			return -1;
		}
	} else {
		off = snprintf(req, sizeof(req), "pids ");
		for (__u32 i = 0; i < o->npids && off < sizeof(req) - 16; i++)
			off += snprintf(req + off, sizeof(req) - off, "%s%u", i ? "," : "",
					o->pids[i]);
		req[off++] = '\n';
	}
	if (write(fd, req, off) != (ssize_t)off) {
		fprintf(stderr, "gpuctx: writing to the agent: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int cli_record_from_agent(const struct cli_from_agent *o)
{
	struct gctx_trace_writer *w = NULL;
	struct gctx_outfile *out = NULL;
	struct gctx_model *m = NULL;
	struct fa_keep *keep = NULL;
	struct sink sink = {.o = o};
	struct gctx_rec_end end = {.exit_status = -1};
	struct sigaction sa = {.sa_handler = on_stop};
	char err[512];
	__u64 records = 0, deadline = 0;
	__u32 left = 0;
	void *buf = NULL;
	int fd, ret = 1, werr = 0, r;
	bool ended = false, live = false, draining = false, told = false;

	fd = connect_agent(o->run_dir, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	if (send_request(fd, o))
		goto out;
	out = gctx_outfile__new(o->output, err, sizeof(err));
	if (!out) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto out;
	}
	w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(out), F_DUPFD_CLOEXEC, 0), o->meta,
				      &werr);
	m = gctx_model__new();
	buf = malloc(AGENT_FRAME_MAX);
	keep = fa_keep__new();
	if (!w || !m || !buf || !keep) {
		fprintf(stderr, "gpuctx: cannot write %s: %s\n", o->output,
			strerror(werr ? -werr : ENOMEM));
		goto out;
	}
	gctx_model__set_finding_cb(m, on_finding, (void *)o);
	sink.w = w;
	sink.m = m;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->duration > 0)
		deadline = gctx_now_mono() + (__u64)(o->duration * 1e9);
	for (;;) {
		struct agent_frame f;

		r = read_full(fd, &f, sizeof(f), deadline, !draining);
		if (r == -2 && live && send(fd, "end\n", 4, MSG_NOSIGNAL) == 4) {
			/* stopped: what the agent's ring buffer held until now still comes */
			draining = true;
			deadline = gctx_now_mono() + DRAIN_WAIT_NS;
			continue;
		}
		if (r)
			break;
		if (f.len > AGENT_FRAME_MAX || read_full(fd, buf, f.len, 0, false)) {
			fprintf(stderr, "gpuctx: the agent's stream broke off\n");
			break;
		}
		if (f.type == AGENT_FRAME_END) {
			ended = true;
			break;
		}
		if (f.type == AGENT_FRAME_ERROR) {
			fprintf(stderr, "gpuctx: the agent: %.*s\n", (int)f.len, (char *)buf);
			told = true;
			break;
		}
		if (f.type == AGENT_FRAME_LIVE) {
			live = true;
			say_attached(o);
			continue;
		}
		records++;
		r = fa_keep__take(keep, f.type, buf, f.len);
		if (r < 0) {
			fprintf(stderr, "gpuctx: out of memory\n");
			break;
		}
		if (!r)
			put(&sink, f.type, buf, f.len);
	}
	left = fa_keep__flush(keep, put, &sink);
	end.end_ns = gctx_now_mono();
	end.reason = stop ? 1 : ended ? 0 : 2;
	end.events = records;
	gctx_trace_writer__append_final(w, GCTX_REC_END, &end, sizeof(end));
	gctx_model__feed(m, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(m);
	werr = gctx_trace_writer__free(w);
	w = NULL;
	if (werr || !live) {
		if (werr || !told) /* the agent's refusal is the one line */
			fprintf(stderr, "gpuctx: %s: %s\n", o->output,
				werr ? strerror(-werr) : "nothing came from the agent");
		goto out;
	}
	if (gctx_outfile__commit(out, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto out;
	}
	fprintf(stderr, "gpuctx: %u processes, %llu events from the agent; trace written to %s%s\n",
		gctx_model__nprocs(m), (unsigned long long)records, o->output,
		left ? " (the agent's records of other jobs' libraries left out)" : "");
	if (!o->silent)
		cli_verdict(m, o->meta, GCTX_FAIL_NEVER, NULL, stderr, "gpuctx: ");
	ret = 0;
out:
	gctx_trace_writer__free(w);
	gctx_outfile__free(out);
	gctx_model__free(m);
	fa_keep__free(keep);
	free(buf);
	close(fd);
	return ret;
}
