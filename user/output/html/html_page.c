// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The page: its head (the Content-Security-Policy that allows only its own style, by hash, and
 * no script), the style, one section per host (side by side for a job of several), and writing
 * it to a file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/outfile.h"
#include "lib/sha256.h"
#include "model/jobattr.h"
#include "output/html/html_priv.h"

#define JOBS_MAX 8 /* distinct jobs named in a host's header */

/* One style for the page; its hash is the only style the page's policy allows. No rule
 * fetches anything (no url(), no @import, no web font). */
static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 1.2em 2em;color:#1b1b1b;background:#fff}"
    "h1{font-size:1.4em;margin:.6em 0 .2em}h2{font-size:1.15em;margin:1.2em 0 .4em}"
    "h3{font-size:1em;margin:.2em 0}"
    ".hosts{display:flex;gap:1.5em;align-items:flex-start;overflow-x:auto}"
    ".host{flex:1 1 0;min-width:40em}"
    ".meta{color:#444;margin:.2em 0}.meta dt{float:left;clear:left;width:7em;color:#777}"
    ".meta dd{margin:0 0 0 7.5em}"
    ".jobhosts{margin:.3em 0}"
    ".verdict{border-left:6px solid #2e7d32;background:#f1f8f1;padding:.6em .9em;"
    "font-size:1.05em}"
    ".verdict.error{border-color:#c62828;background:#fdf0f0}"
    ".verdict.warning{border-color:#ef8f00;background:#fff7e6}"
    ".incident{border:1px solid #ddd;border-left:6px solid #ef8f00;margin:.8em 0;"
    "padding:.5em .9em}.incident.error{border-left-color:#c62828}"
    ".incident dl{display:grid;grid-template-columns:max-content 1fr;gap:.25em .8em;"
    "margin:.4em 0}.incident dt{font-weight:600}.incident dd{margin:0}"
    ".incident ul{margin:0;padding-left:1.1em}.incident p{margin:.3em 0}"
    ".fix{background:#eef5ff;padding:.3em .5em}"
    "code,pre{font:12px/1.35 ui-monospace,monospace}"
    "pre{background:#f6f6f6;padding:.5em;overflow-x:auto;margin:.3em 0}"
    "summary{cursor:pointer;color:#1a4f9c}"
    ".note{color:#555;font-style:italic}"
    ".svgbox{overflow:auto;max-height:80vh;border:1px solid #eee}"
    "svg text{font:12px ui-monospace,monospace;fill:#1b1b1b}"
    "svg .tag{fill:#555}svg .inctag{fill:#b71c1c;font-weight:600}"
    "svg .edge{stroke:#888;fill:none}svg .edge.noexec{stroke:#c62828;stroke-dasharray:4 3}"
    "svg .hl{fill:#ffe9a8}svg .dot{fill:#bbb}svg .dot.gpu{fill:#1a4f9c}"
    "svg .dot.inc{fill:#c62828}svg .x{stroke:#000;stroke-width:2}"
    "svg .bar{fill:#d5d5d5}svg .bar.gpu{fill:#9bb7e0}svg .bar.inc{fill:#f0a3a3}"
    "svg .hold{fill:#1a4f9c}svg .hold.inh{fill:#ef8f00}svg .file{fill:#7e57c2}"
    "svg .mark{stroke:#c62828;stroke-dasharray:3 3}svg .marktext{fill:#c62828}"
    "svg .find{fill:#c62828}svg .axis{stroke:#999}svg .grid{stroke:#eee}"
    "svg .fold{fill:#777;font-style:italic}svg .foldbar{fill:#9e9e9e}"
    ".legend span{margin-right:1.2em}.sw{display:inline-block;width:.9em;height:.9em;"
    "vertical-align:-.1em;margin-right:.3em}"
    ".sw.gpu{background:#1a4f9c}.sw.inh{background:#ef8f00}.sw.inc{background:#ffe9a8;"
    "border:1px solid #c62828}.sw.noexec{border-top:2px dashed #c62828;height:0}"
    ".sw.file{background:#7e57c2}"
    "footer{margin-top:2em;color:#777;font-size:.9em}";

void html_time(char *dst, size_t len, const struct html_host_ctx *c, __u64 ts)
{
	if (!ts)
		snprintf(dst, len, "?");
	else if (ts < c->start)
		snprintf(dst, len, "-%.3f", (c->start - ts) / 1e9);
	else
		snprintf(dst, len, "%.3f", (ts - c->start) / 1e9);
}

void html_proc_label(struct html_host_ctx *c, __u32 idx)
{
	char buf[160];

	gctx_proc_label(c->m, idx, buf, sizeof(buf));
	gctx_html_str(c->out, buf);
}

static void wall(char *dst, size_t len, __u64 ns)
{
	time_t t = ns / 1000000000ull;
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm) || !strftime(dst, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(dst, len, "?");
}

/* The end of what the trace saw: its END record, else its last event the model kept. */
static __u64 trace_end(const struct gctx_model *m, __u64 start)
{
	const struct gctx_rec_end *end = gctx_model__end(m);
	__u64 t = start;

	if (end && end->end_ns)
		return end->end_ns;
	for (__u32 i = 0; i < gctx_model__nprocs(m); i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (p && p->exit_ns > t)
			t = p->exit_ns;
		if (p && p->start_ns > t)
			t = p->start_ns;
	}
	for (__u32 i = 0; i < gctx_model__nfindings(m); i++)
		if (gctx_model__finding(m, i)->time_ns > t)
			t = gctx_model__finding(m, i)->time_ns;
	return t;
}

static void jobs(struct html_host_ctx *c)
{
	char labels[JOBS_MAX][160], buf[160];
	__u32 n = 0, more = 0;

	for (__u32 i = 0; i < gctx_model__nprocs(c->m); i++) {
		const struct gctx_proc *p = gctx_model__proc(c->m, i);
		struct gctx_job_attr a;
		__u32 k;

		if (!p || !p->cgroup || gctx_job_attr_parse(p->cgroup, &a) == GCTX_JOB_NONE)
			continue;
		a.task[0] = '\0';
		gctx_job_attr_format(&a, buf, sizeof(buf));
		for (k = 0; k < n && strcmp(labels[k], buf); k++)
			;
		if (k < n)
			continue;
		if (n == JOBS_MAX) {
			more++;
			continue;
		}
		memcpy(labels[n++], buf, sizeof(buf));
	}
	if (!n)
		return;
	fputs("<dt>job</dt><dd class=\"jobs\">", c->out);
	for (__u32 k = 0; k < n; k++) {
		fputs(k ? "; " : "", c->out);
		gctx_html_str(c->out, labels[k]);
	}
	if (more)
		fprintf(c->out, "; %u more", more);
	fputs("</dd>", c->out);
}

static void host_name(FILE *out, const struct gctx_html_host *h)
{
	if (h->label)
		gctx_html_str(out, h->label);
	else if (h->meta)
		gctx_html_esc(out, h->meta->hostname, sizeof(h->meta->hostname));
}

static void header(struct html_host_ctx *c, const struct gctx_html_host *h)
{
	const struct gctx_trace_meta *meta = c->meta;
	const struct gctx_rec_drops *d = gctx_model__drops(c->m);
	bool dump = meta && !strncmp(meta->cmdline, "agent: ", 7);
	char a[64], b[64], t[32];
	__u64 end;

	fprintf(c->out, "<h2 class=\"hostname\">");
	host_name(c->out, h);
	fputs("</h2>\n<dl class=\"meta\">", c->out);
	if (meta) {
		fputs("<dt>host</dt><dd>", c->out);
		gctx_html_esc(c->out, meta->hostname, sizeof(meta->hostname));
		fputs(" (kernel ", c->out);
		gctx_html_esc(c->out, meta->kernel, sizeof(meta->kernel));
		fputs("), recorded by gpuctx ", c->out);
		gctx_html_esc(c->out, meta->version, sizeof(meta->version));
		fputs("</dd><dt>traced</dt><dd><code>", c->out);
		gctx_html_esc(c->out, meta->cmdline, sizeof(meta->cmdline));
		fputs("</code></dd>", c->out);
		wall(a, sizeof(a), meta->start_wall_ns);
		end = trace_end(c->m, c->start);
		wall(b, sizeof(b),
		     meta->start_wall_ns ? meta->start_wall_ns + (end - c->start) : 0);
		html_time(t, sizeof(t), c, end);
		fprintf(c->out, "<dt>%s</dt><dd class=\"window\">%s to %s (%s s)</dd>",
			dump ? "window" : "recorded", a, b, t);
	}
	if (h->source) {
		fputs("<dt>trace</dt><dd><code>", c->out);
		gctx_html_str(c->out, h->source);
		fputs("</code></dd>", c->out);
	}
	jobs(c);
	fputs("</dl>\n", c->out);
	if (!gctx_model__end(c->m) && !gctx_model__write_loss(c->m))
		fputs(
		    "<p class=\"note\">The recording did not end cleanly (collector killed?): the "
		    "trace ends at its last complete record.</p>\n",
		    c->out);
	if (d->window_evicted)
		fprintf(c->out,
			"<p class=\"note\">History cut: the agent's window had forgotten %llu "
			"older records; what these processes did before it is not here.</p>\n",
			(unsigned long long)d->window_evicted);
	if (d->omitted_procs)
		fprintf(c->out,
			"<p class=\"note\">%llu exited processes that never touched GPU state were "
			"left out of this agent dump.</p>\n",
			(unsigned long long)d->omitted_procs);
}

static int host(FILE *out, const struct gctx_html_host *h, __u32 i, __u64 T0, __u64 T1)
{
	struct html_host_ctx c = {.out = out, .host = i, .m = h->m, .meta = h->meta};
	__s64 off = h->clock ? h->clock->offset_ns : 0;

	c.start = h->meta ? h->meta->start_mono_ns : 0;
	c.t0 = T0 - off;
	c.t1 = T1 - off;
	c.an = gctx_analysis__new(h->m, c.start);
	if (!c.an || html_sel__build(&c.sel, h->m, c.an)) {
		gctx_analysis__free(c.an);
		return -ENOMEM;
	}
	fprintf(out, "<section class=\"host\" id=\"h%u\">\n", i);
	header(&c, h);
	html_verdict(&c);
	html_tree(&c);
	html_timeline(&c);
	fputs("</section>\n", out);
	html_sel__free(&c.sel);
	gctx_analysis__free(c.an);
	return 0;
}

/* A job of several hosts: the verdict over them (the worst), then each host's in one line. */
static int job(FILE *out, const struct gctx_html_host *h, __u32 n)
{
	struct gctx_analysis **an = calloc(n, sizeof(*an));
	__u32 hit = 0, nerr = 0, nwarn = 0;
	int worst = -1;

	if (!an)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_job_summary *s;

		an[i] = gctx_analysis__new(h[i].m, h[i].meta ? h[i].meta->start_mono_ns : 0);
		if (!an[i]) {
			while (i--)
				gctx_analysis__free(an[i]);
			free(an);
			return -ENOMEM;
		}
		s = gctx_analysis__summary(an[i]);
		hit += s->nincidents > 0;
		nerr += s->nerrors;
		nwarn += s->nwarnings;
		if (s->nincidents && (int)s->worst > worst)
			worst = s->worst;
	}
	fprintf(out,
		"<section class=\"verdict %s\" id=\"job-verdict\"><b>Job:</b> %u hosts, side by "
		"side below; %u with incidents (%u error%s, %u warning%s).<ul class=\"jobhosts\">",
		worst >= GCTX_SEV_ERROR	    ? "error"
		: worst == GCTX_SEV_WARNING ? "warning"
					    : "clean",
		n, hit, nerr, nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s");
	for (__u32 i = 0; i < n; i++) {
		fputs("<li><b>", out);
		host_name(out, &h[i]);
		fputs("</b>: ", out);
		gctx_html_str(out, gctx_analysis__summary(an[i])->verdict);
		fputs("</li>", out);
		gctx_analysis__free(an[i]);
	}
	fputs("</ul>Their timelines share one clock (aligned by their wall clocks).</section>\n",
	      out);
	free(an);
	return 0;
}

/* The axis of every host's timeline: the job's clock when several, from the earliest start to
 * the latest end. */
static void axis(const struct gctx_html_host *h, __u32 n, __u64 *T0, __u64 *T1)
{
	*T0 = ~0ull;
	*T1 = 0;
	for (__u32 i = 0; i < n; i++) {
		__s64 off = h[i].clock ? h[i].clock->offset_ns : 0;
		__u64 s = h[i].meta ? h[i].meta->start_mono_ns : 0, e = trace_end(h[i].m, s);

		if (!s && gctx_model__nprocs(h[i].m))
			s = gctx_model__proc(h[i].m, 0)->start_ns;
		if (s + off < *T0)
			*T0 = s + off;
		if (e + off > *T1)
			*T1 = e + off;
	}
	if (*T1 <= *T0)
		*T1 = *T0 + 1000000; /* an empty trace: 1 ms */
}

int gctx_html__write(FILE *out, const struct gctx_html_host *h, __u32 n)
{
	char hash[45], vbuf[96];
	__u64 T0, T1;
	int ret = 0;

	gctx_sha256_b64(css, sizeof(css) - 1, hash);
	axis(h, n, &T0, &T1);
	fprintf(out,
		"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'sha256-%s'; script-src 'none'; img-src 'none'; base-uri 'none'; "
		"form-action 'none'\">\n"
		"<meta name=\"referrer\" content=\"no-referrer\">\n"
		"<meta name=\"viewport\" content=\"width=device-width\">\n<title>gpuctx: ",
		hash);
	if (n == 1 && h[0].meta) {
		gctx_html_esc(out, h[0].meta->hostname, sizeof(h[0].meta->hostname));
		fputs(" ", out);
	}
	snprintf(vbuf, sizeof(vbuf), "%u host%s", n, n == 1 ? "" : "s");
	fprintf(out, "(%s)</title>\n<style>%s</style>\n</head>\n<body>\n<h1>gpuctx report</h1>\n",
		vbuf, css);
	if (n > 1)
		ret = job(out, h, n);
	fprintf(out, "<div class=\"hosts\">\n");
	for (__u32 i = 0; i < n && !ret; i++)
		ret = host(out, &h[i], i, T0, T1);
	fputs("</div>\n<footer>Written by gpuctx from the trace alone: no script, nothing "
	      "fetched. Every name and argument on this page is what the traced processes "
	      "wrote.</footer>\n</body></html>\n",
	      out);
	if (ret)
		return ret;
	if (fflush(out) == EOF)
		return errno ? -errno : -EIO;
	return ferror(out) ? -EIO : 0;
}

struct page_args {
	const struct gctx_html_host *h;
	__u32 n;
};

static int write_page(FILE *out, const void *arg)
{
	const struct page_args *a = arg;

	return gctx_html__write(out, a->h, a->n);
}

int gctx_html__write_file(const char *path, const struct gctx_html_host *h, __u32 n, char *err,
			  size_t errlen)
{
	struct page_args a = {h, n};

	return gctx_outfile__write(path, write_page, &a, err, errlen);
}
