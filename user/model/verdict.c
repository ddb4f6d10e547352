// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The words of the diagnosis: one paragraph per incident (what happened, to whom, the first
 * use, the crashes) and the verdict for the run, the first line a user reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "decode/decode.h"
#include "model/analysis_priv.h"

#define NS_PER_SEC 1000000000ULL
#define LABEL_ARGS 40 /* argv characters shown after the name */

/* Append to buf (of len, used off): cut short when full, always terminated. */
__attribute__((format(printf, 4, 5))) static void cat(char *buf, size_t len, size_t *off,
						      const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*off + 1 >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (w > 0)
		*off = *off + (size_t)w < len ? *off + (size_t)w : len - 1;
}

/* Printable copy of n bytes of s: NULs become spaces, control bytes and every byte outside
 * ASCII '?' (a verdict line goes to terminals as is: no escape, no bidi override). */
static void printable(char *dst, size_t len, const char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 1 < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		dst[o++] = !ch ? ' ' : (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
	}
	while (o && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

void gctx_proc_label(const struct gctx_model *m, __u32 proc_idx, char *buf, size_t len)
{
	const struct gctx_proc *p = gctx_model__proc(m, proc_idx);
	const char *args = NULL;
	__u32 alen = 0, a1;
	size_t off = 0;
	char tmp[LABEL_ARGS + 4];

	buf[0] = '\0';
	if (!p)
		return;
	printable(tmp, sizeof(tmp), p->comm, strnlen(p->comm, sizeof(p->comm)));
	cat(buf, len, &off, "%s", tmp[0] ? tmp : "?");
	if (p->nexecs) {
		args = p->execs[p->nexecs - 1].args;
		alen = p->execs[p->nexecs - 1].args_len;
	} else if (p->args_len) {
		args = p->args;
		alen = p->args_len;
	}
	if (alen > GCTX_ARGS_LEN)
		alen = GCTX_ARGS_LEN;
	a1 = args ? (__u32)strnlen(args, alen) + 1 : 0; /* skip argv[0] */
	if (a1 < alen) {
		/* the script by its name: /src/job/train.py -> train.py */
		__u32 e1 = a1 + (__u32)strnlen(args + a1, alen - a1);
		const char *slash = memrchr(args + a1, '/', e1 - a1);

		if (slash && slash + 1 < args + e1)
			a1 = (__u32)(slash + 1 - args);
		__u32 n = alen - a1;

		while (n && !args[a1 + n - 1])
			n--; /* argv's last NUL */
		printable(tmp, sizeof(tmp), args + a1, n);
		if (tmp[0])
			cat(buf, len, &off, " %s%s", tmp, n > sizeof(tmp) - 1 ? "..." : "");
	}
	if (p->ncomm_prev > p->ncomm_at_exec) { /* renamed since its program started */
		__u32 last = (p->ncomm_prev < GCTX_COMM_HIST ? p->ncomm_prev : GCTX_COMM_HIST) - 1;

		printable(tmp, sizeof(tmp), p->comm_prev[last], strnlen(p->comm_prev[last], 16));
		cat(buf, len, &off, ", was %s", tmp);
	}
}

static void when(const struct gctx_analysis *a, __u64 ts, char *buf, size_t len)
{
	__u64 rel = ts >= a->start ? ts - a->start : 0;

	snprintf(buf, len, "%llu.%03llu s", (unsigned long long)(rel / NS_PER_SEC),
		 (unsigned long long)(rel % NS_PER_SEC / 1000000));
}

static const char *plural(__u64 n)
{
	return n == 1 ? "" : "es";
}

static void signame(int sig, char *buf, size_t len)
{
	const char *s = gctx_signal_name(sig);

	if (s)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "signal %d", sig);
}

/* "pids 4101 4102 ... (12)" of the incident's members, at most 8 listed */
static void pid_list(const struct gctx_incident *in, char *buf, size_t len)
{
	size_t off = 0;

	cat(buf, len, &off, "pid%s", in->npids == 1 ? "" : "s");
	for (__u32 i = 0; i < in->npids && i < 8; i++)
		cat(buf, len, &off, " %u", in->pids[i]);
	if (in->npids > 8)
		cat(buf, len, &off, " ... (%u)", in->npids);
}

static void fork_text(struct gctx_analysis *a, struct gctx_incident *in, char *buf, size_t len,
		      size_t *off)
{
	const struct gctx_model *m = a->m;
	char t[32], w[64] = "", sig[24];
	const struct gctx_proc *w0 = in->npids ? gctx_model__proc(m, in->members[0]) : NULL;
	const struct gctx_proc *src = gctx_model__proc(m, in->src_idx);

	if (in->api[0])
		cat(buf, len, off, "initialised %s", in->api);
	else
		cat(buf, len, off, "opened the GPU");
	if (in->ctx_id) {
		cat(buf, len, off, " (%s", in->ctx_primary ? "primary context" : "a context");
		if (in->device >= 0)
			cat(buf, len, off, ", device %d", in->device);
		cat(buf, len, off, ")");
	}
	if (in->init_ns) {
		when(a, in->init_ns, t, sizeof(t));
		snprintf(in->init_at, sizeof(in->init_at), " at %s", t);
		cat(buf, len, off, "%s", in->init_at);
	} else if (src->present_at_attach) {
		cat(buf, len, off, " before attach");
	}
	/* the workers' own name when it differs from the parent's */
	if (w0 && strncmp(w0->comm, src->comm, sizeof(w0->comm))) {
		char l[48];

		gctx_proc_label(m, w0->idx, l, sizeof(l));
		snprintf(w, sizeof(w), " (%s)", l);
	}
	cat(buf, len, off, ", then forked %u process%s%s without exec", in->ninherited,
	    plural(in->ninherited), w);
	if (in->generations > 1)
		cat(buf, len, off, " in %u generations (re-created after the previous ones exited)",
		    in->generations);
	cat(buf, len, off, "; %u inherited its GPU state, ", in->ninherited);
	if (in->nused && (in->first_use[0] || !in->nraised))
		cat(buf, len, off, "%u used it (first use: %s)", in->nused,
		    in->first_use[0] ? in->first_use : "kernel-level");
	else if (in->nused)
		cat(buf, len, off, "%u used it", in->nused);
	else if (in->nunseen)
		cat(buf, len, off, "none was seen using it");
	else
		cat(buf, len, off, "none used it");
	if (in->nunseen)
		cat(buf, len, off, "; %u could have used it unseen (api-calls-unseen)",
		    in->nunseen);
	/* what the child raised in Python about the GPU: a framework may refuse before any
	 * driver call (any other exception is in the JSON, not in this sentence) */
	if (in->nraised && in->raised[0])
		cat(buf, len, off, "; raised %s", in->raised);
	if (in->ncrashed) {
		signame(in->crash_sig, sig, sizeof(sig));
		if (in->ncrashed == 1)
			cat(buf, len, off, "; 1 died by %s (pid %u)", sig, in->crash_pid);
		else
			cat(buf, len, off, "; %u died by a fatal signal (first: pid %u, %s)",
			    in->ncrashed, in->crash_pid, sig);
	}
	cat(buf, len, off, ".");
}

static void api_errors_text(struct gctx_analysis *a, struct gctx_incident *in, char *buf,
			    size_t len, size_t *off)
{
	for (__u32 i = 0; i < in->nfindings && i < 3; i++) {
		const struct gctx_finding *f = gctx_model__finding(a->m, in->findings[i] - 1);

		cat(buf, len, off, "%s%s -> %s (%llu call%s)", i ? "; " : "", f->call,
		    f->api_ret_name[0] ? f->api_ret_name : "error", (unsigned long long)f->uses,
		    f->uses == 1 ? "" : "s");
	}
	if (in->nfindings > 3)
		cat(buf, len, off, "; and %u more", in->nfindings - 3);
	cat(buf, len, off, ".");
}

static void spawn_text(struct gctx_analysis *a, struct gctx_incident *in, char *buf, size_t len,
		       size_t *off)
{
	const struct gctx_proc *p = gctx_model__proc(a->m, in->members[0]);
	char t[32], sig[24], pids[128];

	when(a, p->exit_ns, t, sizeof(t));
	pid_list(in, pids, sizeof(pids));
	cat(buf, len, off, "%u worker%s it spawned (%s) ", in->npids, in->npids == 1 ? "" : "s",
	    pids);
	if (p->signal) {
		signame(p->signal, sig, sizeof(sig));
		cat(buf, len, off, "died (first: pid %u by %s at %s).", p->pid, sig, t);
	} else {
		cat(buf, len, off, "exited with an error (first: pid %u, status %d at %s).", p->pid,
		    p->exit_code, t);
	}
}

void ana_incident_text(struct gctx_analysis *a, struct gctx_incident *in)
{
	char label[128], pids[128];
	size_t off = 0;
	char *buf = in->summary;
	size_t len = sizeof(in->summary);

	gctx_proc_label(a->m, in->src_idx, label, sizeof(label));
	cat(buf, len, &off, "%s: pid %u (%s) ", gctx_incident_title(in->kind), in->src_pid, label);
	pid_list(in, pids, sizeof(pids));
	switch (in->kind) {
	case GCTX_INC_POISON_FORK:
	case GCTX_INC_FORK_INHERIT:
		fork_text(a, in, buf, len, &off);
		break;
	case GCTX_INC_FOREIGN_USE:
		cat(buf, len, &off,
		    "opened GPU files that %u other process%s (%s) used without getting them by "
		    "open or fork (first use: %s).",
		    in->npids, plural(in->npids), pids, in->first_use[0] ? in->first_use : "?");
		break;
	case GCTX_INC_FD_ACROSS_EXEC:
		cat(buf, len, &off,
		    "opened GPU files that stayed open across exec in %u process%s (%s): the new "
		    "program holds the device without knowing it.",
		    in->npids, plural(in->npids), pids);
		break;
	case GCTX_INC_SPAWN_STARTUP:
		spawn_text(a, in, buf, len, &off);
		break;
	case GCTX_INC_API_ERRORS:
	default:
		api_errors_text(a, in, buf, len, &off);
		break;
	}
}

/* Why the verdict may miss something. Each source of gaps adds its clause here. */
static void coverage(struct gctx_analysis *a)
{
	struct gctx_job_summary *s = &a->sum;
	const struct gctx_rec_drops *d = gctx_model__drops(a->m);
	size_t off = 0;
	__u64 lost = 0;
	__u32 unseen = 0;

	for (__u32 t = 0; t < GCTX_EV_KERNEL_MAX; t++)
		lost += d->drops[t];
	if (lost)
		cat(s->coverage, sizeof(s->coverage), &off, "%s%llu event%s lost", off ? "; " : "",
		    (unsigned long long)lost, lost == 1 ? "" : "s");
	/* API calls a process could make unseen (library not probed in time) */
	for (__u32 i = 0; i < gctx_model__nprocs(a->m); i++)
		unseen += gctx_model__api_unseen(a->m, i) > 0;
	if (unseen)
		cat(s->coverage, sizeof(s->coverage), &off,
		    "%sCUDA/HIP calls of %u process%s could not be seen (api-calls-unseen)",
		    off ? "; " : "", unseen, plural(unseen));
	if (!gctx_model__end(a->m))
		cat(s->coverage, sizeof(s->coverage), &off, "%sthe recording did not end cleanly",
		    off ? "; " : "");
	if (d->window_evicted) /* an agent dump whose processes are older than its window */
		cat(s->coverage, sizeof(s->coverage), &off,
		    "%sthe agent's window had forgotten the history before this trace",
		    off ? "; " : "");
	s->incomplete = off > 0;
}

/* No incident, but a process with GPU state died by a signal (seed 001's exit 139 without a
 * fork): "no problem found" would send the reader away. The first one, and how many. */
static bool crash_text(struct gctx_analysis *a, size_t *off)
{
	struct gctx_job_summary *s = &a->sum;
	const struct gctx_proc *p;
	__u32 first = 0, n = 0;
	char label[128], sig[32];

	for (__u32 i = 0; i < gctx_model__nprocs(a->m); i++) {
		p = gctx_model__proc(a->m, i);
		if (p->signal && !ana_terminated_by_parent(a->m, p) &&
		    gctx_model__has_gpu_state(a->m, i) && !n++)
			first = i;
	}
	s->ncrashed = n;
	s->crash_idx = first;
	if (!n)
		return false;
	p = gctx_model__proc(a->m, first);
	gctx_proc_label(a->m, first, label, sizeof(label));
	signame(p->signal, sig, sizeof(sig));
	cat(s->verdict, sizeof(s->verdict), off,
	    "CRASH, NOT A POISON FORK: pid %u (%s) was killed by %s%s holding GPU state", p->pid,
	    label, sig, p->core_dumped ? " (core dumped)" : "");
	if (n > 1)
		cat(s->verdict, sizeof(s->verdict), off, " (+%u more process%s)", n - 1,
		    plural(n - 1));
	return true;
}

void ana_summary_text(struct gctx_analysis *a)
{
	struct gctx_job_summary *s = &a->sum;
	size_t off = 0;

	coverage(a);
	if (!a->ninc && crash_text(a, &off)) {
		cat(s->verdict, sizeof(s->verdict), &off,
		    "; no GPU state passed on through fork (%u process%s, %llu GPU context%s "
		    "created at driver level and %llu through the CUDA/HIP API).",
		    s->nprocs, plural(s->nprocs), (unsigned long long)s->drv_ctx_created,
		    s->drv_ctx_created == 1 ? "" : "s", (unsigned long long)s->ctx_created);
	} else if (!a->ninc) {
		cat(s->verdict, sizeof(s->verdict), &off,
		    "NO PROBLEM FOUND: %u process%s, %llu GPU context%s created at driver level "
		    "and %llu through the CUDA/HIP API, no GPU state passed on through fork.",
		    s->nprocs, plural(s->nprocs), (unsigned long long)s->drv_ctx_created,
		    s->drv_ctx_created == 1 ? "" : "s", (unsigned long long)s->ctx_created);
	} else {
		cat(s->verdict, sizeof(s->verdict), &off, "%s", a->inc[0].summary);
		if (a->ninc > 1)
			cat(s->verdict, sizeof(s->verdict), &off, " (+%u more incident%s)",
			    a->ninc - 1, a->ninc == 2 ? "" : "s");
	}
	if (s->incomplete)
		cat(s->verdict, sizeof(s->verdict), &off, " Coverage incomplete: %s.", s->coverage);
}
