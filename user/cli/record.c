// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record: follow a command, PIDs, a cgroup or the whole system; write every record to
 * the trace file, feed the live model, print events and findings as they happen. This file is
 * the run: the collector's set-up, the event loop, the closing records and the exit status
 * (record.h names the others).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "collect/collector.h"
#include "collect/detach.h"
#include "collect/discover.h"
#include "output/timeline/export.h"
#include "model/model.h"
#include "cli/cli.h"
#include "cli/record.h"
#include "trace/records.h"
#include "trace/tracefile.h"
#include "collect/uprobes.h"
#include "lib/outfile.h"
#include "collect/stacks.h"
#include "collect/callers.h"
#include "collect/pyprobe.h"
#include "collect/libwatch.h"
#include "collect/jobcg.h"

#define POLL_MS		10
#define SIGNAL_GRACE_NS (10 * 1000000000ull) /* -- CMD: how long a forwarded signal may take */
#define DROPS_EVERY_NS	(1000000000ull)	     /* hooks->drops refreshed this often */

static volatile sig_atomic_t stop_signal, nsignals, signal_from_tty;

static void on_stop(int sig, siginfo_t *si, void *uc)
{
	stop_signal = sig;
	nsignals++;
	/* Ctrl-C: the terminal sent it to the command's process group too */
	signal_from_tty = si && si->si_code == SI_KERNEL;
}

static bool any_alive(const struct gctx_pidset *s)
{
	for (__u32 i = 0; i < s->n; i++)
		if (gctx_proc_alive(s->pids[i]))
			return true;
	return false;
}

static void print_summary(struct record_state *st, const struct gctx_rec_drops *d,
			  const char *output)
{
	__u32 nerr = 0, nwarn = 0;
	__u64 lost = d->missed_stash + d->unfollowed, ring_lost = 0;

	for (__u32 i = 0; i < gctx_model__nfindings(st->model); i++) {
		const struct gctx_finding *f = gctx_model__finding(st->model, i);

		if (f->severity == GCTX_SEV_ERROR)
			nerr++;
		else if (f->severity == GCTX_SEV_WARNING)
			nwarn++;
	}
	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		ring_lost += d->drops[i]; /* records the ring had no room for */
	lost += ring_lost + gctx_trace_writer__lost(st->w);
	fprintf(stderr,
		"gpuctx: %u processes, %u GPU files, %llu events, %llu lost, %u findings "
		"(%u errors, %u warnings); trace written to %s (%llu bytes)\n",
		gctx_model__nprocs(st->model), gctx_model__nfiles(st->model),
		(unsigned long long)st->records, (unsigned long long)lost,
		gctx_model__nfindings(st->model), nerr, nwarn, output,
		(unsigned long long)gctx_trace_writer__bytes(st->w));
	if (gctx_trace_writer__lost(st->w))
		fprintf(stderr,
			"gpuctx: WARNING: stopped writing %s at %.3f s: %s; %llu records could not "
			"be written (the trace ends there)\n",
			output, (double)(gctx_trace_writer__error_ns(st->w) - st->start_mono) / 1e9,
			strerror(-gctx_trace_writer__error(st->w)),
			(unsigned long long)gctx_trace_writer__lost(st->w));
	if (lost > gctx_trace_writer__lost(st->w)) {
		fprintf(stderr, "gpuctx: WARNING: events lost:");
		for (int i = 1; i < GCTX_EV_KERNEL_MAX; i++)
			if (d->drops[i])
				fprintf(stderr, " %s=%llu", gctx_ev_type_name(i),
					(unsigned long long)d->drops[i]);
		if (d->missed_stash)
			fprintf(stderr, " unpaired-syscalls=%llu",
				(unsigned long long)d->missed_stash);
		if (d->unfollowed)
			fprintf(stderr, " unfollowed-children=%llu",
				(unsigned long long)d->unfollowed);
		fprintf(stderr, "\n");
		if (ring_lost) {
			__u32 now = st->env->ring_bytes ? st->env->ring_bytes : GCTX_RING_DEFAULT;
			__u64 more = 4ull * now > GCTX_RING_MAX ? GCTX_RING_MAX : 4ull * now;
			char a[16], b[16];

			fprintf(stderr,
				"gpuctx: the %s ring buffer overflowed: rerun with a larger "
				"--ring-size (such as %s)\n",
				gctx_ring_size_str(now, a, sizeof(a)),
				gctx_ring_size_str(more, b, sizeof(b)));
		}
	}
}

/* --perfetto / --chrome: export the finished trace; a failure fails the run. */
static void export_at_end(const char *trace, const char *out, int format, int *ret)
{
	char err[512] = "";

	if (!out)
		return;
	if (gctx_export_file(trace, out, format, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		if (!*ret)
			*ret = 1;
	} else {
		if (err[0])
			fprintf(stderr, "gpuctx: %s\n", err);
		fprintf(stderr, "gpuctx: timeline written to %s\n", out);
	}
}

/* --from-agent: -p's processes, or --cgroup's: the agent follows the cgroup itself (the
 * processes in it now, those that exec in it later, their descendants), as record does */
static int record_from_agent(struct record_env *env, const struct gctx_trace_meta *meta)
{
	struct cli_from_agent fa = {.output = env->output,
				    .duration = env->duration,
				    .quiet = env->quiet,
				    .silent = env->silent,
				    .meta = meta,
				    .pids = env->pids.pids,
				    .npids = env->pids.n,
				    .run_dir = env->run_dir};
	char dir[PATH_MAX];
	int ret;

	if (env->cgroup) {
		if (!realpath(env->cgroup, dir)) {
			fprintf(stderr, "gpuctx: --cgroup %s: %s\n", env->cgroup, strerror(errno));
			return 1;
		}
		fa.cgroup = dir;
	}
	ret = cli_record_from_agent(&fa);
	gctx_pidset__clear(&env->pids);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	return cli_record_run(argc, argv, NULL);
}

/* What the kernel and the API probes could not deliver so far. */
static void record_drops(struct gctx_collector *c, struct record_state *st,
			 struct gctx_rec_drops *d)
{
	__u64 api_drops, api_missed;

	gctx_collector__drops(c, d);
	gctx_uprobes__drops(st->uprobes, &api_drops, &api_missed);
	d->drops[GCTX_EV_API] += api_drops;
	d->missed_stash += api_missed;
}

int cli_record_run(int argc, char **argv, const struct cli_record_hooks *hooks)
{
	struct record_env env = {};
	struct record_state st = {.env = &env};
	struct gctx_collector_opts o = {};
	struct gctx_collector *c = NULL;
	struct gctx_trace_meta meta;
	struct gctx_rec_drops drops;
	struct gctx_rec_end end = {.exit_status = -1};
	struct gctx_pidset seeds = {};
	__u32 cg_skipped = 0;
	int cg_err;
	struct sigaction sa = {.sa_sigaction = on_stop, .sa_flags = SA_SIGINFO};
	char err[512];
	int go_fd = -1, status = 0, ret = 1, werr;
	pid_t child = 0;
	__u64 deadline = 0, grace_end = 0, drops_next = 0;
	bool child_done = false;
	__u32 npresent = 0;

	if (record_parse_args(&env, argc, argv))
		return 2;
	env.hooks = hooks;

	st.start_mono = gctx_now_mono();
	if (env.cgroup)
		gctx_cgroup_rel(env.cgroup, st.cgroup_rel, sizeof(st.cgroup_rel));
	record_fill_meta(&meta, &env, st.start_mono);
	if (hooks)
		goto no_trace_file; /* the agent writes its own files */
	if (env.from_agent)
		return record_from_agent(&env, &meta);
	/* a private temporary file beside the output, renamed over it at the end: a failed
	 * start leaves whatever was at the path untouched */
	st.out = gctx_outfile__new(env.output, err, sizeof(err));
	if (!st.out) {
		fprintf(stderr, "gpuctx: %s\n", err);
		return 1;
	}
	/* CLOEXEC: the traced command must not inherit the trace */
	st.w = gctx_trace_writer__new_fd(fcntl(gctx_outfile__fd(st.out), F_DUPFD_CLOEXEC, 0), &meta,
					 &werr);
	if (!st.w) {
		fprintf(stderr, "gpuctx: cannot write %s: %s\n", env.output, strerror(-werr));
		gctx_outfile__free(st.out);
		return 1;
	}
no_trace_file:
	st.model = gctx_model__new();
	if (!st.model) {
		fprintf(stderr, "gpuctx: out of memory\n");
		goto cleanup_writer;
	}
	gctx_model__set_finding_cb(st.model, record_on_finding, &st);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (env.cmd) {
		child = record_spawn_stopped(env.cmd, &go_fd);
		if (child < 0) {
			fprintf(stderr, "gpuctx: cannot fork: %s\n", strerror(errno));
			goto cleanup_model;
		}
		gctx_pidset__add(&seeds, child);
	}

	o.follow_all = env.all;
	o.cgroup = env.cgroup;
	o.devs = env.devs;
	o.ndevs = env.ndevs;
	o.self_tgid = getpid();
	o.verbose = env.verbose;
	o.track_libs = !env.no_api;
	o.no_stacks = env.no_stacks;
	o.hold = !env.no_hold;
	o.ring_bytes = env.ring_bytes;
	o.cb = record_feed;
	o.cb_ctx = &st;
	gctx_read_majors(&o.uvm_major, &o.kfd_major);
	c = gctx_collector__new(&o, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "gpuctx: %s\n", err);
		goto cleanup_child;
	}
	st.cgpaths = gctx_cgpaths__new(); /* NULL: /proc alone tells the jobs */
	if (env.verbose) {
		char nodes[2 * GCTX_PATH_LEN + 256];

		gctx_gpu_nodes_describe("/dev", nodes, sizeof(nodes));
		fprintf(stderr, "gpuctx: %s\ngpuctx: GPU device nodes: %s\n",
			gctx_collector__features(c), nodes);
	}

	for (__u32 i = 0; i < env.ndevs; i++)
		record_feed(&st, GCTX_REC_DEVICE, &env.devs[i], sizeof(env.devs[i]));

	/* Who is followed from the start. Descendants are rescanned once to catch the
	 * children forked while the first scan ran. */
	for (__u32 i = 0; i < env.pids.n; i++)
		gctx_pidset__add(&seeds, env.pids.pids[i]);
	if (env.cgroup && (cg_err = gctx_add_cgroup_procs(&seeds, env.cgroup, &cg_skipped))) {
		fprintf(stderr, "gpuctx: cannot read %s/cgroup.procs: %s\n", env.cgroup,
			strerror(-cg_err));
		goto cleanup_collector;
	}
	if (cg_skipped)
		fprintf(stderr,
			"gpuctx: warning: %u cgroups under %s not read (over %u, or paths over "
			"PATH_MAX): processes already in them are not followed\n",
			cg_skipped, env.cgroup, GCTX_CGROUP_WALK_MAX);
	if (env.all)
		gctx_add_all_procs(&seeds);
	for (int pass = 0; pass < 2; pass++) {
		if (env.pids.n || env.cgroup)
			gctx_add_descendants(&seeds);
		for (__u32 i = 0; !env.all && i < seeds.n; i++)
			if (seeds.pids[i] != (__u32)getpid()) /* -p 1: never gpuctx itself */
				gctx_collector__follow(c, seeds.pids[i]);
	}
	st.stacks = env.no_stacks ? NULL : gctx_stacks__new();
	st.pyprobe = env.no_stacks
			 ? NULL
			 : gctx_pyprobe__new(gctx_collector__map_fd(c, "pyinfo"),
					     gctx_collector__map_fd(c, "pyexe"), env.verbose);
	gctx_pyprobe__set_found_cb(st.pyprobe, record_watch_python, &st);
	st.callers = env.no_api ? NULL : gctx_callers__new(st.stacks, record_feed, &st);
	if (!env.no_api && !st.callers)
		fprintf(stderr,
			"gpuctx: warning: out of memory: API call sites are not recorded\n");
	for (__u32 i = 0; i < seeds.n; i++)
		gctx_pyprobe__scan_pid(st.pyprobe, seeds.pids[i]);
	if (env.cmd)
		gctx_pyprobe__learn_cmd(st.pyprobe, env.cmd[0]);
	if (!env.no_api && record_start_uprobes(&st, c, &seeds))
		goto cleanup_collector;
	if (env.cmd) {
		/* The command's fork by gpuctx, as the kernel would have reported it. */
		struct gctx_ev_fork f = {
		    .hdr = {.type = GCTX_EV_FORK,
			    .tid = getpid(),
			    .tgid = getpid(),
			    .ts_ns = gctx_now_mono()},
		    .child_tid = child,
		    .child_tgid = child,
		};

		snprintf(f.hdr.comm, sizeof(f.hdr.comm), "gpuctx");
		record_feed(&st, GCTX_EV_FORK, &f, sizeof(f));
		record_note_cgroup(&st, child, 0);
	} else {
		ret = record_present(&st, c, &seeds, &npresent);
		if (ret) {
			fprintf(stderr, "gpuctx: attach discovery failed: %s\n", strerror(-ret));
			ret = 1;
			goto cleanup_collector;
		}
		ret = 1;
		if (env.pids.n && !npresent) {
			fprintf(stderr,
				"gpuctx: process %u is gone (it exited during attach): "
				"nothing to trace\n",
				env.pids.pids[0]);
			goto cleanup_collector;
		}
		fprintf(stderr, "gpuctx: attached to %u process%s; Ctrl-C to stop\n", npresent,
			npresent == 1 ? "" : "es");
	}

	st.started = true;
	if (env.duration > 0)
		deadline = gctx_now_mono() + (__u64)(env.duration * 1e9);
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1)
			fprintf(stderr, "gpuctx: cannot start %s: %s\n", env.cmd[0],
				strerror(errno));
		close(go_fd);
		go_fd = -1;
	}

	for (;;) {
		int n;

		if (stop_signal && !grace_end) {
			if (!child || child_done)
				break;
			/* -- CMD: the command gets the signal (Ctrl-C already reached it) and the
			 * trace covers its end; a second signal or the grace period stops now */
			if (!signal_from_tty)
				kill(child, stop_signal);
			fprintf(stderr,
				"gpuctx: %s passed on to %s (pid %d): recording until it "
				"exits (10 s at most; a second signal stops now)\n",
				strsignal(stop_signal), env.cmd[0], child);
			grace_end = gctx_now_mono() + SIGNAL_GRACE_NS;
		}
		if (nsignals > 1 || (grace_end && gctx_now_mono() >= grace_end)) {
			fprintf(stderr, "gpuctx: stopped recording; %s (pid %d) goes on untraced\n",
				env.cmd[0], child);
			break;
		}
		n = gctx_collector__poll(c, POLL_MS);
		if (n < 0) {
			fprintf(stderr, "gpuctx: polling the ring buffer: %s\n", strerror(-n));
			break;
		}
		gctx_callers__tick(st.callers, false);
		record_next_stacks(&st);
		gctx_libwatch__tick(st.libwatch);
		if (st.w)
			gctx_trace_writer__flush(st.w);
		if (hooks && hooks->drops && gctx_now_mono() >= drops_next) {
			record_drops(c, &st,
				     hooks->drops); /* the agent's dumps say what was lost */
			drops_next = gctx_now_mono() + DROPS_EVERY_NS;
		}
		if (hooks && hooks->stacks)
			gctx_stacks__progress(st.stacks, hooks->stacks);
		if (hooks)
			hooks->tick(hooks->ctx, st.model);
		gctx_pyprobe__tick(st.pyprobe);
		gctx_stacks__tick(st.stacks);
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = true;
			break;
		}
		if (!env.cmd && env.pids.n && !any_alive(&seeds))
			break;
		if (deadline && gctx_now_mono() >= deadline) {
			end.reason = 2;
			break;
		}
	}
	if (stop_signal && !child_done)
		end.reason = 1;
	/* Everything the kernel produced up to now. */
	gctx_collector__poll(c, 0);
	gctx_callers__tick(st.callers, true);
	gctx_stacks__flush(st.stacks);
	record_next_stacks(&st);
	/* the live lines before the closing warnings and summary on stderr: with both streams
	 * sent to one file, a buffered line must not be cut by them */
	fflush(stdout);

	record_drops(c, &st, &drops);
	gctx_libwatch__finish(st.libwatch, gctx_collector__apimap_lost(c));
	gctx_uprobes__finish(st.uprobes);
	record_feed(&st, GCTX_REC_DROPS, &drops, sizeof(drops));
	if (st.stacks) {
		struct gctx_rec_stack_drops sd;

		gctx_stacks__stats(st.stacks, &sd);
		sd.lost = gctx_collector__stack_lost(c);

		record_feed(&st, GCTX_REC_STACK_DROPS, &sd, sizeof(sd));
		if (gctx_collector__vmas_lost(c))
			fprintf(
			    stderr,
			    "gpuctx: WARNING: %llu stacks came without their mappings (ring "
			    "buffer full or address space locked): /proc/PID/maps was used while "
			    "the process lived\n",
			    (unsigned long long)gctx_collector__vmas_lost(c));
	}
	if (st.callers) {
		struct gctx_rec_caller_drops cd;

		gctx_callers__stats(st.callers, &cd);
		record_feed(&st, GCTX_REC_CALLER_DROPS, &cd, sizeof(cd));
	}
	if (child && !child_done && waitpid(child, &status, WNOHANG) == child)
		child_done = true;
	end.end_ns = gctx_now_mono();
	end.exit_status = child_done ? status : -1;
	end.events = st.records;
	/* after a write error (disk full), one last try to close the file with the final loss
	 * count and the end record */
	gctx_trace_writer__append_final(st.w, GCTX_REC_WRITE_LOSS, NULL, 0);
	st.records++;
	gctx_trace_writer__append_final(st.w, GCTX_REC_END, &end, sizeof(end));
	gctx_model__feed(st.model, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(st.model);
	if (hooks)
		hooks->finish(hooks->ctx, st.model);
	if (!env.silent) {
		print_summary(&st, &drops, env.output);
		cli_verdict(st.model, &meta, GCTX_FAIL_NEVER, NULL, stderr, "gpuctx: ");
	}

	if (child_done && stop_signal && WIFSIGNALED(status) && WTERMSIG(status) == stop_signal)
		ret = 128 + stop_signal;
	else if (child_done)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	else if (stop_signal)
		ret = child ? 128 + stop_signal : 0;
	else
		ret = 0;
	gctx_detach_after_exit(); /* the links are released after we return */

cleanup_collector:
	gctx_collector__stop_early(c); /* it uses the probes freed below */
	gctx_cgpaths__free(st.cgpaths);
	gctx_uprobes__free(st.uprobes);
	gctx_callers__free(st.callers);
	gctx_stacks__free(st.stacks);
	gctx_pyprobe__free(st.pyprobe);
	gctx_collector__free(c);
	gctx_libwatch__free(st.libwatch); /* after the programs are gone: no hold is left */
cleanup_child:
	if (go_fd >= 0)
		close(go_fd); /* the stopped child sees EOF and exits */
	if (child > 0 && !child_done && ret == 1)
		waitpid(child, NULL, 0);
cleanup_model:
	gctx_model__free(st.model);
cleanup_writer:
	werr = gctx_trace_writer__free(st.w);
	if (werr || st.write_err) {
		fprintf(stderr, "gpuctx: writing %s failed: %s\n", env.output,
			strerror(-(werr ? werr : st.write_err)));
		if (!ret)
			ret = 1;
	}
	/* what was recorded, even cut short by a full disk, replaces the output; nothing
	 * traced: the temporary file goes and the path is left as it was */
	if (st.started && st.out && gctx_outfile__commit(st.out, err, sizeof(err))) {
		fprintf(stderr, "gpuctx: %s\n", err);
		if (!ret)
			ret = 1;
	}
	gctx_outfile__free(st.out);
	if (st.started) {
		export_at_end(env.output, env.perfetto, GCTX_EXPORT_PERFETTO, &ret);
		export_at_end(env.output, env.chrome, GCTX_EXPORT_CHROME, &ret);
	}
	gctx_pidset__clear(&seeds);
	gctx_pidset__clear(&env.pids);
	return ret;
}
