// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The text report for people: the header, the GPU files table, the probes, the findings (errors
 * first) and the event counts, around the process tree of report_text_procs.c.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "lib/errcode.h"
#include "decode/api.h"
#include "decode/decode.h"
#include "output/report/print.h"
#include "output/report/report_priv.h"
#include "output/report/sites.h"
#include "trace/records.h"

#define NS_PER_SEC 1000000000ULL

/* Text label of a kernel record type: its JSON key, but "fd-kept". */
static const char *rep_ev_label(__u32 type)
{
	return type == GCTX_EV_FD_KEPT ? "fd-kept" : gctx_ev_type_name(type);
}

const char *rep_plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

void rep_text_time(char *dst, size_t len, const struct rep_ctx *c, __u64 ts)
{
	if (!ts)
		snprintf(dst, len, "?");
	else
		gctx_format_reltime(dst, len, ts, c->start);
}

static void rep_text_wall(char *dst, size_t len, __u64 wall_ns)
{
	time_t secs = (time_t)(wall_ns / NS_PER_SEC);
	struct tm tm;
	char date[40];

	if (!wall_ns || !gmtime_r(&secs, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(dst, len, "unknown");
		return;
	}
	snprintf(dst, len, "%s.%06lluZ", date, (unsigned long long)(wall_ns % NS_PER_SEC / 1000));
}

/* "exit 3", "killed by SIGKILL (core dumped)" from a wait status. */
static void rep_text_wait_status(char *dst, size_t len, int status)
{
	char sig[32];

	if (status & 0x7f) {
		gctx_format_signal(sig, sizeof(sig), status & 0x7f);
		snprintf(dst, len, "killed by %s%s", sig, status & 0x80 ? " (core dumped)" : "");
	} else {
		snprintf(dst, len, "exit %d", (status >> 8) & 0xff);
	}
}

/* The disk filled (or another write error) while recording: say where the trace stops. */
static void rep_text_write_loss(struct rep_ctx *c)
{
	const struct gctx_rec_write_loss *wl = gctx_model__write_loss(c->m);
	char t[32];

	if (!wl)
		return;
	rep_text_time(t, sizeof(t), c, wl->ts_ns);
	fprintf(c->out,
		"  WARNING: gpuctx stopped writing at %s s: %s; %llu record%s could not be "
		"written (the trace ends there)\n",
		t, strerror(gctx_ret_errno(wl->err)), (unsigned long long)wl->lost,
		rep_plural(wl->lost));
}

/* What the model kept of what live processes accumulate (model.h, GCTX_KEEP_*): the rest is
 * counted, and said here. */
static void rep_text_trimmed(struct rep_ctx *c)
{
	const struct gctx_model_trim *t = gctx_model__trimmed(c->m);

	if (t->currents)
		fprintf(c->out,
			"  NOTE: %llu time%s a thread made an API context current left out; kept "
			"per context: each thread's first and latest %u, for %u threads\n",
			(unsigned long long)t->currents, rep_plural(t->currents), GCTX_CUR_LATEST,
			GCTX_CUR_TIDS);
	if (t->threads || t->execs || t->objs || t->mems || t->files)
		fprintf(c->out,
			"  NOTE: left out of live processes: %llu exited thread%s, %llu exec%s, "
			"%llu destroyed object%s, %llu freed allocation%s, %llu closed GPU file%s "
			"(the oldest)\n",
			(unsigned long long)t->threads, rep_plural(t->threads),
			(unsigned long long)t->execs, rep_plural(t->execs),
			(unsigned long long)t->objs, rep_plural(t->objs),
			(unsigned long long)t->mems, rep_plural(t->mems),
			(unsigned long long)t->files, rep_plural(t->files));
}

static void rep_text_header(struct rep_ctx *c)
{
	const struct gctx_trace_meta *meta = c->meta;
	const struct gctx_rec_end *end = gctx_model__end(c->m);
	const struct gctx_rec_drops *drops = gctx_model__drops(c->m);
	char buf[GCTX_ESC_SIZE(512)], kern[GCTX_ESC_SIZE(64)], ver[GCTX_ESC_SIZE(32)];
	char t[32], st[96];
	__u64 lost = rep_drops_total(drops);

	fprintf(c->out, "gpuctx report\n");
	if (meta) {
		gctx_format_str(buf, sizeof(buf), meta->hostname, sizeof(meta->hostname));
		gctx_format_str(kern, sizeof(kern), meta->kernel, sizeof(meta->kernel));
		gctx_format_str(ver, sizeof(ver), meta->version, sizeof(meta->version));
		fprintf(c->out, "  host:      %s (kernel %s), recorded by gpuctx %s\n",
			buf[0] ? buf : "?", kern[0] ? kern : "?", ver[0] ? ver : "?");
		rep_text_wall(buf, sizeof(buf), meta->start_wall_ns);
		fprintf(c->out, "  started:   %s\n", buf);
		gctx_format_str(buf, sizeof(buf), meta->cmdline, sizeof(meta->cmdline));
		fprintf(c->out, "  traced:    %s\n", buf[0] ? buf : "?");
		rep_text_jobs(c);
	} else {
		fprintf(c->out, "  (no trace metadata)\n");
	}
	if (end) {
		rep_text_time(t, sizeof(t), c, end->end_ns);
		switch (end->reason) {
		case 0:
			if (end->exit_status == -1) {
				snprintf(st, sizeof(st), "the traced command exited");
			} else {
				rep_text_wait_status(buf, sizeof(buf), end->exit_status);
				snprintf(st, sizeof(st), "the traced command ended: %.40s", buf);
			}
			break;
		case 1:
			snprintf(st, sizeof(st), "gpuctx was interrupted");
			break;
		case 2:
			snprintf(st, sizeof(st), "duration limit reached");
			break;
		default:
			snprintf(st, sizeof(st), "reason %u", end->reason);
			break;
		}
		fprintf(c->out, "  duration:  %s s (%s)\n", t, st);
	} else if (!gctx_model__write_loss(c->m)) {
		fprintf(c->out, "  WARNING: recording did not end cleanly (collector killed?); "
				"the trace ends at its last complete record\n");
	}
	rep_text_write_loss(c);
	if (lost)
		fprintf(c->out,
			"  WARNING: %llu event%s lost; lineage and findings may be incomplete "
			"(see Drops)\n",
			(unsigned long long)lost, rep_plural(lost));
	if (drops->window_evicted)
		fprintf(c->out,
			"  WARNING: history cut: processes here are older than the agent's window, "
			"which had forgotten %llu older record%s; what they did before it is not "
			"here (they appear as at attach)\n",
			(unsigned long long)drops->window_evicted,
			rep_plural(drops->window_evicted));
	if (drops->omitted_procs)
		fprintf(
		    c->out,
		    "  NOTE: %llu exited process%s that never touched GPU state left out of "
		    "this agent dump (%llu record%s); the newest are kept\n",
		    (unsigned long long)drops->omitted_procs, drops->omitted_procs == 1 ? "" : "es",
		    (unsigned long long)drops->omitted_records, rep_plural(drops->omitted_records));
	rep_text_trimmed(c);
	fputc('\n', c->out);
}

static void rep_text_files(struct rep_ctx *c)
{
	char path[GCTX_ESC_SIZE(GCTX_PATH_LEN)], flags[256], t[32], opener[16];
	__u32 i, k;

	fprintf(c->out, "GPU files (%u):\n", c->ix.nfiles);
	if (!c->ix.nfiles) {
		fputs("  none\n\n", c->out);
		return;
	}
	fprintf(c->out, "  %-5s %-17s %-28s %-8s %s\n", "ID", "KIND", "PATH", "OPENER", "STATE");
	for (i = 0; i < c->ix.nfiles; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, i);
		char id[16];

		if (!f)
			continue;
		snprintf(id, sizeof(id), "#%u", f->id);
		gctx_format_str(path, sizeof(path), f->path, GCTX_PATH_LEN);
		if (f->opener_pid)
			snprintf(opener, sizeof(opener), "%u", f->opener_pid);
		else
			snprintf(opener, sizeof(opener), "?");
		gctx_format_open_flags(flags, sizeof(flags), f->open_flags);
		fprintf(c->out, "  %-5s %-17s %-28s %-8s ", id, gctx_dev_kind_name(f->kind), path,
			opener);
		if (f->present_at_attach)
			fputs("present at attach, ", c->out);
		if (f->closed) {
			rep_text_time(t, sizeof(t), c, f->close_ns);
			fprintf(c->out, "closed at %s", t);
		} else {
			fputs("open", c->out);
		}
		fprintf(c->out, ", %s, %llu ioctl%s, %llu mmap%s\n", flags,
			(unsigned long long)f->nioctls, rep_plural(f->nioctls),
			(unsigned long long)f->nmmaps, rep_plural(f->nmmaps));

		fprintf(c->out, "  %-5s holders:", "");
		for (k = 0; k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];
			const struct gctx_proc *p = rep_proc(c->m, h->proc_idx);
			const struct gctx_proc *from = rep_proc(c->m, h->from_proc_idx);

			fprintf(c->out, "%s %u %s", k ? "," : "", p ? p->pid : 0,
				gctx_hold_how_name(h->how));
			if (h->how == GCTX_HOLD_INHERITED && from)
				fprintf(c->out, " from %u", from->pid);
		}
		fputs(f->nholders ? "\n" : " none\n", c->out);
	}
	fputc('\n', c->out);
}

/* Every probed entry point, grouped under its library when consecutive probes share it. */
/* List every probe only when it tells something: a failure, an address cuGetProcAddress
 * handed out, or API calls in the trace. */
static bool rep_probes_worth_listing(const struct gctx_model *m, __u32 nfail)
{
	if (nfail || gctx_model__events(m, GCTX_EV_API))
		return true;
	for (__u32 i = 0; i < gctx_model__nprobes(m); i++)
		if (gctx_model__probe(m, i)->how == GCTX_PROBE_PROC_ADDRESS)
			return true;
	return false;
}

static void rep_text_probes(struct rep_ctx *c)
{
	char lib[GCTX_ESC_SIZE(GCTX_PATH_LEN)], sym[GCTX_ESC_SIZE(64)], insn[32], err[32];
	__u32 n = gctx_model__nprobes(c->m), i, nfail = 0;
	const struct gctx_rec_probe *prev = NULL;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);

		nfail += r && r->err;
	}
	fprintf(c->out, "Probes (%u", n);
	if (nfail)
		fprintf(c->out, ", %u failed", nfail);
	fputs("):\n", c->out);
	if (gctx_model__procaddr_not_found(c->m))
		fprintf(c->out,
			"  cuGetProcAddress: %llu lookup%s of optional symbols returned "
			"CUDA_ERROR_NOT_FOUND (normal, not errors)\n",
			(unsigned long long)gctx_model__procaddr_not_found(c->m),
			rep_plural(gctx_model__procaddr_not_found(c->m)));
	if (!rep_probes_worth_listing(c->m, nfail)) {
		/* nothing called them: one line per library (the JSON lists every probe) */
		__u32 count = 0;

		for (i = 0; i < n; i++) {
			const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);
			const struct gctx_rec_probe *next = gctx_model__probe(c->m, i + 1);

			count++;
			if (next && !strncmp(next->lib, r->lib, sizeof(r->lib)))
				continue;
			gctx_format_str(lib, sizeof(lib), r->lib, sizeof(r->lib));
			fprintf(c->out, "  %s: %u entry point%s, no API call seen\n",
				lib[0] ? lib : "?", count, rep_plural(count));
			count = 0;
		}
		fputc('\n', c->out);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct gctx_rec_probe *r = gctx_model__probe(c->m, i);
		const char *fn;

		if (!r)
			continue;
		if (!prev || strncmp(prev->lib, r->lib, sizeof(r->lib))) {
			gctx_format_str(lib, sizeof(lib), r->lib, sizeof(r->lib));
			fprintf(c->out, "  %s:\n", lib[0] ? lib : "?");
		}
		prev = r;
		gctx_format_str(sym, sizeof(sym), r->symbol, sizeof(r->symbol));
		if (r->how == GCTX_PROBE_NOT_PRERESOLVED) {
			fprintf(c->out, "    cuGetProcAddress %s: %s\n",
				r->err ? "not pre-resolved" : "pre-resolved in part", sym);
			continue;
		}
		fn = gctx_api_fn_name(r->fn);
		fprintf(c->out, "    %s", sym[0] ? sym : "?");
		if (strcmp(sym, fn))
			fprintf(c->out, " (%s)", fn);
		fprintf(c->out, " +0x%llx, %s", (unsigned long long)r->offset,
			r->how == GCTX_PROBE_PROC_ADDRESS ? "cuGetProcAddress address"
							  : rep_probe_how_name(r->how));
		rep_probe_insn(insn, sizeof(insn), r, " ");
		fprintf(c->out, ", first bytes %s", insn);
		if (rep_probe_endbr64_skipped(r))
			fputs(", endbr64 skipped", c->out);
		else if (r->offset != r->sym_offset)
			fprintf(c->out, ", function at +0x%llx", (unsigned long long)r->sym_offset);
		if (!strcmp(rep_probe_execution(r), "single-stepped"))
			fputs(", single-stepped (~10 us a call)", c->out);
		fprintf(c->out, ", retprobe %s", r->retprobe ? "yes" : "no");
		if (r->err) {
			gctx_format_errno(err, sizeof(err), gctx_ret_errno(r->err));
			fprintf(c->out, ", error %s", err);
		}
		fputc('\n', c->out);
	}
	fputc('\n', c->out);
}

static void rep_text_finding(struct rep_ctx *c, const struct gctx_finding *f)
{
	char t[32], detail[GCTX_ESC_SIZE(sizeof(f->detail))];
	char call[GCTX_ESC_SIZE(sizeof(f->call))], ret[GCTX_ESC_SIZE(sizeof(f->api_ret_name))];
	const struct gctx_gpu_file *file = rep_file_by_id(c->m, f->file_id);
	__u32 i;

	rep_text_time(t, sizeof(t), c, f->time_ns);
	char label[96];

	gctx_proc_label(c->m, f->proc_idx, label, sizeof(label));
	fprintf(c->out, "  #%-3u %-8s %-26s pid %u (%s)", f->id, gctx_severity_name(f->severity),
		gctx_finding_kind_name(f->kind), f->pid, label);
	if (f->tid && f->tid != f->pid)
		fprintf(c->out, " tid %u", f->tid);
	fprintf(c->out, " at %s", t);
	if (file)
		fprintf(c->out, " file #%u %s", file->id, gctx_dev_kind_name(file->kind));
	if (f->opener_pid && f->kind == GCTX_FIND_INHERITED_CONTEXT_CALL)
		fprintf(c->out, " (initialised by %u)", f->opener_pid);
	else if (f->opener_pid)
		fprintf(c->out, " (opener %u)", f->opener_pid);
	if (f->has_api_ret) {
		gctx_format_str(call, sizeof(call), f->call, sizeof(f->call));
		gctx_format_str(ret, sizeof(ret), f->api_ret_name, sizeof(f->api_ret_name));
		fprintf(c->out, " %s -> %s", call[0] ? call : "?", ret[0] ? ret : "?");
	}
	if (f->ctx_id) {
		fprintf(c->out, " context #%u", f->ctx_id);
		if (f->ctx_handle)
			fprintf(c->out, " (0x%llx)", (unsigned long long)f->ctx_handle);
	}
	if (f->kind == GCTX_FIND_API_ERROR)
		fprintf(c->out, " (%llu call%s)", (unsigned long long)f->uses, rep_plural(f->uses));
	if (f->related_finding)
		fprintf(c->out, " related to finding #%u", f->related_finding);
	fputc('\n', c->out);
	gctx_format_str(detail, sizeof(detail), f->detail, sizeof(f->detail));
	if (detail[0])
		fprintf(c->out, "        %s\n", detail);
	if (f->nchain) {
		fputs("        fork chain:", c->out);
		for (i = 0; i < f->nchain && i < GCTX_MAX_CHAIN; i++)
			fprintf(c->out, "%s %u", i ? " ->" : "", f->chain[i]);
		fprintf(c->out, "%s\n", f->exec_between ? " (exec in between)" : "");
	}
	gctx_sites_print(c->out, c->m, f);
}

static void rep_text_findings(struct rep_ctx *c)
{
	__u32 n = gctx_model__nfindings(c->m), i, nerr = 0, nwarn = 0, pass;

	for (i = 0; i < n; i++) {
		const struct gctx_finding *f = gctx_model__finding(c->m, i);

		if (f && f->severity >= GCTX_SEV_ERROR)
			nerr++;
		else if (f && f->severity == GCTX_SEV_WARNING)
			nwarn++;
	}
	if (!n && gctx_model__ngaps(c->m)) {
		fputs("No findings in what was seen, but API calls may be missing (see API "
		      "coverage): "
		      "this does not show the run is free of inherited contexts.\n\n",
		      c->out);
		return;
	}
	if (!n) {
		fputs("No findings.\n\n", c->out);
		return;
	}
	fprintf(c->out, "Findings (%u): %u error%s, %u warning%s", n, nerr, rep_plural(nerr), nwarn,
		rep_plural(nwarn));
	if (n - nerr - nwarn)
		fprintf(c->out, ", %u other", n - nerr - nwarn);
	fputs("\n", c->out);
	/* Errors first, then warnings, then the rest; id order within each. */
	for (pass = 0; pass < 3; pass++) {
		for (i = 0; i < n; i++) {
			const struct gctx_finding *f = gctx_model__finding(c->m, i);
			__u32 group;

			if (!f)
				continue;
			group = f->severity >= GCTX_SEV_ERROR	  ? 0
				: f->severity == GCTX_SEV_WARNING ? 1
								  : 2;
			if (group == pass)
				rep_text_finding(c, f);
		}
	}
	fputc('\n', c->out);
}

static void rep_text_counts(struct rep_ctx *c)
{
	const struct gctx_rec_drops *d = gctx_model__drops(c->m);
	__u64 lost = rep_drops_total(d), xu, xf;
	__u32 t;

	fprintf(c->out, "Events: %llu records (",
		(unsigned long long)gctx_model__total_events(c->m));
	for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
		fprintf(c->out, "%s%s %llu", t > 1 ? ", " : "", rep_ev_label(t),
			(unsigned long long)gctx_model__events(c->m, t));
	fputs(")\n", c->out);

	if (lost) {
		fprintf(c->out, "WARNING: %llu event%s lost:", (unsigned long long)lost,
			rep_plural(lost));
		for (t = 1; t < GCTX_EV_KERNEL_MAX; t++)
			fprintf(c->out, " %s=%llu", rep_ev_label(t),
				(unsigned long long)d->drops[t]);
		fprintf(c->out,
			"\n  the ring buffer overflowed; processes, files or findings may be "
			"missing:\n  record again with a larger --ring-size (the default is "
			"%uM)\n",
			GCTX_RING_DEFAULT >> 20);
	} else if (gctx_model__end(c->m)) {
		fputs("Drops: none\n", c->out);
	} else {
		fputs("Drops: unknown (drop counters are written when the recording ends)\n",
		      c->out);
	}
	if (d && d->missed_stash)
		fprintf(c->out, "Note: %llu syscall exit%s had no recorded entry (missed_stash)\n",
			(unsigned long long)d->missed_stash, rep_plural(d->missed_stash));
	xu = gctx_model__exec_fds_unknown(c->m, &xf);
	if (xu)
		fprintf(c->out,
			"Note: %llu exec%s without the kernel's whole list of kept GPU fds (a "
			"record lost): %llu GPU file%s held before %s not known open or closed "
			"after, and not reported as kept\n",
			(unsigned long long)xu, rep_plural(xu), (unsigned long long)xf,
			rep_plural(xf), xu == 1 ? "it" : "them");
}

int gctx_report__text(FILE *out, const struct gctx_model *m, const struct gctx_trace_meta *meta)
{
	struct rep_ctx c = {.out = out, .m = m, .meta = meta};
	int err;

	if (!out || !m)
		return -EINVAL;
	c.start = meta ? meta->start_mono_ns : 0;
	err = rep_index__build(&c.ix, m);
	if (err)
		return err;
	err = rep_api_index__build(&c.ax, m);
	if (err) {
		rep_index__free(&c.ix);
		return err;
	}
	c.an = gctx_analysis__new(m, c.start);
	if (!c.an) {
		rep_api_index__free(&c.ax);
		rep_index__free(&c.ix);
		return -ENOMEM;
	}
	rep_text_header(&c);
	rep_text_verdict(&c);
	rep_text_procs(&c);
	rep_text_files(&c);
	rep_text_probes(&c);
	rep_text_coverage(&c);
	rep_text_findings(&c);
	gctx_stack_stats_print(c.out, m);
	rep_text_caller_stats(&c);
	gctx_stacks_print(c.out, m, 16);
	rep_text_counts(&c);
	gctx_analysis__free(c.an);
	rep_api_index__free(&c.ax);
	rep_index__free(&c.ix);
	return rep_finish(out);
}
